public import Foundation

extension PhoneApp {
    /// Performs `effects` in order through the given I/O, the one interpreter of `PhoneEffect`
    /// that the phone process and tests share.
    ///
    /// Consecutive writes before the next send are collapsed: only the last one goes to disk. A
    /// failed write stops the list there, so nothing is sent on the strength of state that is not
    /// on disk, and returns the sync state to what is on disk without going back on any seq
    /// already issued (`PhoneCore.persistFailed()`).
    ///
    /// - Parameters:
    ///   - save: writes the state durably; returns false when it failed (it reports the failure
    ///     itself, e.g. a `persist.failed` event).
    ///   - send: sends a message to the watch (reporting `*.sent` or `send.failed` itself).
    ///   - resend: arms the resend timer `after` wall seconds, or cancels it (nil).
    ///   - emit: writes an event.
    /// - Returns: false when a write failed and the rest of the list was dropped.
    @discardableResult
    public mutating func perform(
        _ effects: [PhoneEffect], save: (PhoneSyncState) -> Bool, send: (WireMessage) -> Void,
        resend: (TimeInterval?) -> Void, emit: (Event) -> Void
    ) -> Bool {
        for (index, effect) in effects.enumerated() {
            switch effect {
            case .persist(let state):
                let laterPersist = effects[(index + 1)...].prefix { if case .send = $0 { false } else { true } }
                    .contains { if case .persist = $0 { true } else { false } }
                if laterPersist { continue }
                guard save(state) else {
                    persistFailed()
                    return false
                }
                persisted(state)
            case .send(let message):
                send(message)
            case .armResend(let seconds):
                resend(seconds)
            case .cancelResend:
                resend(nil)
            case .emit(let event):
                emit(event)
            case .fetchWeather:
                continue  // only a `.deferred` app asks; `PhoneNode` serves it
            }
        }
        return true
    }
}

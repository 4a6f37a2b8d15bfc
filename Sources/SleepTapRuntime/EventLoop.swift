// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import ZeroMQ

/// The single-threaded poll loop both executables run: it owns the sockets, waits in `zmq_poll`
/// on them, on the mailbox pipe and on the error condition of the event output (a pipe whose
/// reader went away), and fires timers. Never busy-polls: the poll timeout is the time to the
/// nearest timer (capped at 1 s).
///
/// Due timers come first: after each wait, every timer due by then fires (earliest first)
/// before the sockets and the mailbox are read, and again before each socket and each mailbox
/// item, and again while a timer fired in the pass armed another that is already due. A timer's
/// due instant is earlier than anything read after it was due: handled the other way round, a
/// line read in the same turn as a timer that fell due while the loop was busy (a write with
/// fsync takes wall milliseconds, virtual minutes at high `--clock-speed`) would change the
/// state the timer's step then reads. A driver stamps a virtual-time timer (the phone's OS
/// launch, the watch's bed tap) at its planned instant, which this order keeps from going back
/// past an input (the phone's node also never stamps a launch before an input it handled, and
/// says in `clock.behind` how late it was).
///
/// Timers run on the monotonic clock (`ContinuousClock`): a jump of the wall clock (NTP, a user
/// setting the date) neither fires nor starves them. A timer armed for a wall `Date` (a virtual
/// instant mapped through the process clock) is converted to a monotonic deadline when armed.
///
/// Thread-safety: create, use and drop on one thread (the sockets' owner).
final class EventLoop<Timer: Hashable> {
    /// Armed timers and their monotonic deadlines.
    private var timers: [Timer: ContinuousClock.Instant] = [:]
    private let clock = ContinuousClock()
    private let mailbox: Mailbox
    private let sockets: [Socket]
    private let output: EventOutput?
    /// The output's descriptor while it may still report its reader gone.
    private var outputDescriptor: Int32?
    private(set) var stopping = false
    /// The `timer` handler of the `run` in progress.
    private var firing: ((Timer) -> Void)?

    /// - Parameters:
    ///   - sockets: polled for input, in this order (`readable` gets the index).
    ///   - mailbox: polled for stdin lines and signals.
    ///   - output: the event output; when its reader goes away it is marked closed (which posts
    ///     a stop through its `whenClosed` action).
    init(sockets: [Socket], mailbox: Mailbox, output: EventOutput? = nil) {
        self.sockets = sockets
        self.mailbox = mailbox
        self.output = output
        outputDescriptor = output?.pollableDescriptor
    }

    /// Arms `timer` for the wall instant `wall` (re-arming replaces the earlier deadline).
    func arm(_ timer: Timer, at wall: Date) { arm(timer, after: wall.timeIntervalSinceNow) }
    /// Arms `timer` to fire `seconds` from now on the monotonic clock (≤ 0: at the next turn).
    func arm(_ timer: Timer, after seconds: TimeInterval) {
        let delay = seconds.isFinite ? max(0, min(seconds, 1e9)) : 1e9
        timers[timer] = clock.now.advanced(by: .nanoseconds(Int64(delay * 1e9)))
    }
    func cancel(_ timer: Timer) { timers[timer] = nil }
    func isArmed(_ timer: Timer) -> Bool { timers[timer] != nil }
    func stop() { stopping = true }

    /// Runs until `stop()`.
    /// - Parameters:
    ///   - readable: called with the index of a socket that has input.
    ///   - input: called for each mailbox item.
    ///   - timer: called with a due timer (already disarmed), earliest first, before any input
    ///     read after it was due.
    ///   - weather: called for each weather result posted to the mailbox.
    /// - Throws: a `ZeroMQError` from `zmq_poll` other than EINTR (which is retried).
    func run(
        readable: (Int) -> Void, input: (LoopInput) -> Void, timer: (Timer) -> Void,
        weather: (WeatherOutcome) -> Void = { _ in }
    ) throws {
        try withoutActuallyEscaping(timer) { timer in
            firing = timer
            defer { firing = nil }
            try loop(readable: readable, input: input, timer: timer, weather: weather)
        }
    }

    /// Fires the timers due by now, as the loop does before each input: for a driver between
    /// the messages of one socket read (a batch of messages from `readable`), so that a timer
    /// that fell due while one was handled comes before the next.
    /// - Returns: whether the loop was stopped.
    func fireDueTimersBeforeNextInput() -> Bool {
        guard let firing else { return stopping }
        return fireDueTimers(firing)
    }

    private func loop(
        readable: (Int) -> Void, input: (LoopInput) -> Void, timer: (Timer) -> Void,
        weather: (WeatherOutcome) -> Void
    ) throws {
        while !stopping {
            var items = sockets.map { PollItem.socket($0, events: .readable) }
            items.append(.fileDescriptor(mailbox.readFD, events: .readable))
            if let outputDescriptor {
                // No condition asked for: poll(2) reports POLLERR and POLLHUP regardless.
                items.append(.fileDescriptor(outputDescriptor, events: []))
            }
            var timeout = 1000
            if let next = timers.values.min() {
                let (seconds, attoseconds) = clock.now.duration(to: next).components
                let milliseconds = Double(seconds) * 1000 + Double(attoseconds) / 1e15
                timeout = max(0, min(timeout, Int(milliseconds.rounded(.up))))
            }
            _ = try poll(&items, timeoutMilliseconds: timeout)
            if fireDueTimers(timer) { return }
            for index in sockets.indices where items[index].returnedEvents.contains(.readable) {
                if fireDueTimers(timer) { return }
                readable(index)
                if stopping { return }
            }
            if items[sockets.count].returnedEvents.contains(.readable) {
                for item in mailbox.drain() {
                    if fireDueTimers(timer) { return }
                    input(item)
                    if stopping { return }
                }
                for outcome in mailbox.drainWeather() {
                    if fireDueTimers(timer) { return }
                    weather(outcome)
                    if stopping { return }
                }
            }
            if outputDescriptor != nil, !items[sockets.count + 1].returnedEvents.isEmpty {
                outputDescriptor = nil  // reported once; polling it again would return at once
                output?.noteClosed()
            }
            if fireDueTimers(timer) { return }
        }
    }

    /// Fires every timer due by now, earliest first (each disarmed before its call); a timer
    /// that an earlier one re-armed or cancelled in the same pass is left as that one left it.
    /// A timer armed for an instant already passed while the pass ran (the phone's next OS
    /// launch, planned when a slow step ended) is due too: passes repeat until none is due, so
    /// an input read before it was armed is not handled before it (at most
    /// `maximumPasses`, so that a timer re-armed into the past again and again cannot starve input).
    /// - Returns: whether the loop was stopped.
    private func fireDueTimers(_ timer: (Timer) -> Void) -> Bool {
        for _ in 0..<Self.maximumPasses {
            let due = clock.now
            var fired = false
            for (name, at) in timers.sorted(by: { $0.value < $1.value }) where at <= due {
                guard timers[name] == at else { continue }
                timers[name] = nil
                fired = true
                timer(name)
                if stopping { return true }
            }
            if !fired || !timers.values.contains(where: { $0 <= clock.now }) { break }
        }
        return stopping
    }

    /// Passes of `fireDueTimers` before input is read again.
    static var maximumPasses: Int { 8 }
}

// SPDX-License-Identifier: Apache-2.0

package import Foundation
package import SleepTapOS

/// What a `PhoneDriver` performs the phone node's actions on: the link to the watch (and to
/// strangers), the ZAP handler, the state files, the timers, the event output, the weather
/// provider, the run records, the schedule file and the process's end.
///
/// The `phone` process gives the ZeroMQ ROUTER and ZAP socket, its state files, the poll loop's
/// timers, the Open-Meteo client or the offline provider, `RunRecordWriter` and the schedule
/// file; the embedded twin gives its `FaultyLink`, `FlakyStore`s and `VirtualScheduler`. A port
/// performs and reports; it decides nothing (the node does).
package protocol PhonePorts {
    /// Both time bases now (virtual now, monotonic wall seconds): what the node's next input
    /// carries.
    mutating func now() -> NodeTime
    /// Whether the process is stopping: once true, no further action is performed (`*.stopping`
    /// is the last line).
    var isStopping: Bool { get }
    /// Sends `message` to the paired watch without waiting.
    /// - Returns: nil when it was queued, or why not in words (`watch not connected
    ///   (EHOSTUNREACH)`).
    mutating func send(_ message: WireMessage) -> String?
    /// Sends `message` to another routing id, best effort (an ERROR to a stranger).
    /// - Parameters:
    ///   - routingID: the peer's routing id.
    ///   - message: the message.
    mutating func reply(to routingID: [UInt8], _ message: WireMessage)
    /// Sends the ZAP reply (RFC 27) for the request just handled.
    mutating func zapReply(_ frames: [[UInt8]])
    /// Writes the phone's sync state durably (written and fsync'd before it returns).
    /// - Returns: `.succeeded`, or the failure with its errno.
    mutating func save(_ state: PhoneSyncState) -> PersistResult
    /// Writes the simulated OS's state to its own file (`os.json`); a port may skip a write of
    /// the bytes it last wrote.
    /// - Returns: `.succeeded` (written or unchanged), or the failure with its errno.
    mutating func saveOS(_ os: SimulatedOS) -> PersistResult
    /// Arms `timer` at `deadline`, replacing an earlier deadline of the same timer. A wall
    /// duration (`.after`) counts from now; a virtual instant (`.at`) is mapped through the
    /// port's clock.
    mutating func arm(_ timer: PhoneTimer, _ deadline: TimerDeadline)
    /// Disarms `timer`; one not armed stays unarmed.
    mutating func cancel(_ timer: PhoneTimer)
    /// Writes `event` as one event line stamped with the virtual `instant`.
    mutating func emit(_ event: Event, at instant: Date)
    /// Asks for a forecast for `location` at the virtual `instant`.
    /// - Returns: the outcome when it is at hand (a pure provider: the driver hands it to the
    ///   node after the current action list, as a fetch off the socket thread would come), or nil
    ///   when it comes later as the input `PhoneDriver.weatherArrived(_:)`.
    mutating func fetchWeather(for location: Coordinate, at instant: Date) -> WeatherOutcome?
    /// Keeps a run record (docs/metrics.md). A failed write is the port's to say.
    mutating func record(_ record: RunRecord)
    /// Reads and checks the schedule file at `path`.
    /// - Returns: the schedule, or the reason it was refused.
    mutating func loadSchedule(_ path: String) -> Result<WakeSchedule, ScheduleLoadError>
    /// Stops the process cleanly: `isStopping` is true from now on.
    mutating func stop()
}

/// The one interpreter of `PhoneAction`, for the `phone` process and the embedded twin alike:
/// it hands the node each input at the ports' now, performs the actions it returns in order,
/// and feeds each result back (a send, a write, a schedule read) as the node's next input
/// before the rest. It decides nothing itself.
///
/// A forecast at hand is given to the node only once the whole action list that asked for it
/// (and every list nested in it) is done: that list's later actions were computed before the
/// forecast, and must not run after the forecast's newer ones (a launch timer re-armed or
/// cancelled, `os.json` written with the OS from before the job completed).
package struct PhoneDriver<Ports: PhonePorts> {
    /// The machine. Replacing it is a new process on the same ports (the twin's restart).
    package var node: PhoneNode
    /// What the actions are performed on.
    package var ports: Ports
    /// Forecasts at hand, for the node once the current action list is done.
    @usableFromInline
    var weatherInFlight: [WeatherOutcome] = []
    /// How deep the action lists are nested (a result fed back runs its own list).
    @usableFromInline
    var depth = 0

    /// A driver of `node` on `ports`; nothing runs until the first input (`start`).
    /// - Parameters:
    ///   - node: the phone node, built from its configuration and stored state.
    ///   - ports: the link, state files, timers, output, weather and stop of its host.
    @inlinable
    package init(node: PhoneNode, ports: Ports) {
        self.node = node
        self.ports = ports
    }

    // MARK: Inputs

    /// The process started (`PhoneNode.start(at:)`).
    @inlinable
    package mutating func start() {
        let time = ports.now()
        run(node.start(at: time))
    }

    /// A message on the ROUTER, its frames (routing id first).
    /// - Parameter frames: the message's frames.
    @inlinable
    package mutating func messageReceived(_ frames: [[UInt8]]) {
        let time = ports.now()
        run(node.messageReceived(frames, at: time))
    }

    /// A message from the paired watch already decoded (the twin's typed link), with a HELLO's
    /// optional fields.
    /// - Parameters:
    ///   - message: the message.
    ///   - hello: the HELLO's `sentAt` and `instance`, nil for other messages.
    @inlinable
    package mutating func messageReceived(_ message: WireMessage, hello: WireCodec.Hello?) {
        let time = ports.now()
        run(node.messageReceived(message, hello: hello, at: time))
    }

    /// A ZAP request (RFC 27).
    /// - Parameter frames: the request's frames.
    @inlinable
    package mutating func zapRequest(_ frames: [[UInt8]]) {
        let time = ports.now()
        run(node.zapRequest(frames, at: time))
    }

    /// A line of the phone's stdin language.
    /// - Parameter line: the line, without its newline.
    @inlinable
    package mutating func commandLine(_ line: String) {
        let time = ports.now()
        run(node.commandLine(line, at: time))
    }

    /// An armed timer is due (already disarmed by the port).
    /// - Parameter timer: the timer.
    @inlinable
    package mutating func timerFired(_ timer: PhoneTimer) {
        let time = ports.now()
        run(node.timerFired(timer, at: time))
    }

    /// A forecast that came later than its `fetchWeather` (a fetch off the socket thread).
    /// - Parameter outcome: the forecast or the provider's error, and what it cost.
    @inlinable
    package mutating func weatherArrived(_ outcome: WeatherOutcome) {
        let time = ports.now()
        run(node.weatherArrived(outcome, at: time))
    }

    /// A signal, a closed output or Ctrl-D on a terminal.
    /// - Parameter cause: why the process stops.
    @inlinable
    package mutating func stop(_ cause: StopCause) {
        let time = ports.now()
        run(node.stop(cause, at: time))
    }

    // MARK: The interpreter

    /// Performs `actions` in order (one loop, so each action is copied once); at the outermost
    /// list, then gives the node the forecasts at hand, one at a time.
    @inlinable
    mutating func run(_ actions: [PhoneAction]) {
        depth += 1
        for action in actions {
            // `phone.stopping` is the last line: once the process stops, nothing more is done.
            guard !ports.isStopping else { break }
            switch action {
            case .send(let message):
                let failure = ports.send(message)
                run(node.sent(message, failure: failure, at: ports.now()))
            case .reply(let routingID, let message):
                ports.reply(to: routingID, message)
            case .zapReply(let frames):
                ports.zapReply(frames)
            case .persist(let state):
                let result = ports.save(state)
                run(node.persisted(result, at: ports.now()))
            case .persistOS(let os):
                let result = ports.saveOS(os)
                run(node.osPersisted(result, at: ports.now()))
            case .arm(let timer, let deadline):
                ports.arm(timer, deadline)
            case .cancel(let timer):
                ports.cancel(timer)
            case .emit(let event, let instant):
                ports.emit(event, at: instant)
            case .fetchWeather(let location, let instant):
                if let outcome = ports.fetchWeather(for: location, at: instant) { weatherInFlight.append(outcome) }
            case .record(let record):
                ports.record(record)
            case .loadSchedule(let path):
                let result = ports.loadSchedule(path)
                run(node.scheduleLoaded(result, at: ports.now()))
            case .stop:
                ports.stop()
            }
        }
        depth -= 1
        guard depth == 0 else { return }
        while !weatherInFlight.isEmpty {
            let outcome = weatherInFlight.removeFirst()
            guard !ports.isStopping else { continue }
            let time = ports.now()
            run(node.weatherArrived(outcome, at: time))
        }
    }
}

extension PhoneDriver: Sendable where Ports: Sendable {}

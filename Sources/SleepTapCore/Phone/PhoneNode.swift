// SPDX-License-Identifier: Apache-2.0

public import Foundation
public import SleepTapOS

/// The phone process's timers.
public enum PhoneTimer: Hashable, Sendable, CaseIterable {
    /// Send the unacknowledged batch again (transport timing, wall seconds).
    case resend
    /// Ping the watch and check its liveness, every `LinkLiveness.interval` (wall seconds).
    case heartbeat
    /// The simulated OS's next background launch of the app (domain timing, a virtual instant).
    case osLaunch
    /// Write the newest batch again after a failed state write (transport timing, wall seconds,
    /// backing off: `PhoneNode.writeRetryDelay(attempt:)`).
    case writeRetry
    /// The simulated OS's next timed activity: an alarm fires, Doze ends before an alarm clock,
    /// or Doze changes phase by itself (`SimulatedOS.nextTimedActivity()`; domain timing, a
    /// virtual instant; Android).
    case osAlarm
}

/// A forecast, or why there is none, and the virtual seconds the provider took.
public struct WeatherOutcome: Equatable, Sendable {
    /// The forecast, or why the provider gave none.
    public var result: Result<Forecast, WeatherError>
    /// Virtual seconds the fetch took, charged against the background task's budget.
    public var cost: TimeInterval

    /// An outcome `result` that took `cost` virtual seconds.
    public init(result: Result<Forecast, WeatherError>, cost: TimeInterval) {
        self.result = result
        self.cost = cost
    }
}

/// A schedule file that could not be used, as one printable message naming the file, field and
/// value.
public struct ScheduleLoadError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    /// An error printed as `description`.
    public init(_ description: String) { self.description = description }
}

/// What the phone asks its driver to do: the one vocabulary of the phone node, its app
/// (`PhoneApp`), the sync state machine (`PhoneCore`) and the bedtime notices. The driver
/// performs each action in order and reports the result of those that have one through the input
/// named. The node passes on what the app returns up to the first `persist`, holds the rest until
/// the write's result, and when the write fails drops them and restores the sync core's state on
/// disk (`PhoneCore.persistFailed()`), so nothing is sent on the strength of state that is not on
/// disk.
public enum PhoneAction: Equatable, Sendable {
    /// Send to the paired watch; report with `PhoneNode.sent(_:failure:at:)`.
    case send(WireMessage)
    /// Send to another routing id, best effort, no report (an ERROR to a stranger).
    case reply(routingID: [UInt8], WireMessage)
    /// The ZAP reply frames for the request just given (RFC 27).
    case zapReply([[UInt8]])
    /// Write the state durably; report with `PhoneNode.persisted(_:at:)`. The node holds every
    /// later action of the step until then. Boxed (`indirect`), as `persistOS` is: the state is
    /// the next largest payload (216 bytes unboxed).
    indirect case persist(PhoneSyncState)
    /// Write the simulated OS's state (its own file) when it differs from what was last written;
    /// report a failure with `PhoneNode.osPersisted(_:at:)`. Boxed (`indirect`): the OS value is
    /// the largest payload, and every other action would otherwise be copied at its size.
    indirect case persistOS(SimulatedOS)
    /// Arm (or re-arm) a timer; report its firing with `PhoneNode.timerFired(_:at:)`.
    case arm(PhoneTimer, TimerDeadline)
    /// Disarm `timer`; a timer not armed stays unarmed.
    case cancel(PhoneTimer)
    /// Write an event stamped with virtual instant `at`.
    case emit(Event, at: Date)
    /// Ask the weather provider for a forecast for `location` at virtual instant `at`, off the
    /// socket thread; report with `PhoneNode.weatherArrived(_:at:)`. The job waits at its weather
    /// step until then (`PhoneApp.WeatherFetch.deferred` only).
    case fetchWeather(location: Coordinate, at: Date)
    /// Keep a run record (`--metrics-dir`: append it to its day's file; the twin collects it).
    /// Nothing is reported back: a failed write is the driver's to say. Boxed (`indirect`): a
    /// record is 137 bytes, and the emits, most of the actions, would be copied at its size.
    indirect case record(RunRecord)
    /// Read and check the schedule file; report with `PhoneNode.scheduleLoaded(_:at:)`.
    case loadSchedule(path: String)
    /// Stop the process cleanly.
    case stop
}

extension PhoneAction {
    /// The event an `emit` action writes, nil for the other actions.
    public var event: Event? {
        if case .emit(let event, _) = self { event } else { nil }
    }
}

/// The phone node's settings that do not change while it runs.
public struct PhoneNodeConfiguration: Sendable {
    /// The paired watch's routing id (`--watch-id`).
    public var watchID: String
    /// The paired watch's CURVE public key (32 bytes); nil when the link has no CURVE.
    public var pairedWatchKey: [UInt8]?
    /// `--schedule`: read again before every user and background launch.
    public var schedulePath: String?
    /// `--time-zone`.
    public var timeZone: TimeZone?
    /// The machine's zone, the last resort.
    public var machineZone: TimeZone
    /// The state file's path, for `persist.failed`.
    public var statePath: String
    /// The simulated OS's state file, for `persist.failed`.
    public var osStatePath: String
    /// Device settings given as flags, applied in order at start (`lowPower`, `backgroundRefresh`,
    /// `charging`, `bucket`).
    public var settings: [PhoneCommand]
    /// The `phone.started` fields about the process: endpoint, pid, bound endpoint, security,
    /// and whether the OS state was new or stored.
    public var endpoint: String
    /// The endpoint libzmq reports after binding (`ZMQ_LAST_ENDPOINT`: the port a `tcp://…:*` got).
    public var boundEndpoint: String
    /// The process id (`getpid()` in the process; 1 in the twin).
    public var pid: Int64
    /// The link's security, ``LinkSecurity``.
    public var security: LinkSecurity
    /// Whether the simulated OS is new or was read from `os.json`, ``OSStateOrigin``.
    public var osState: OSStateOrigin
    /// `--clock-speed` (virtual seconds per wall second): how old a HELLO may be from waiting on
    /// its way before `clock.skew` says the clocks disagree. 1 by default.
    public var clockSpeed: Double = 1

    /// The configuration from the phone's options; each parameter sets the property of its name.
    public init(
        watchID: String, pairedWatchKey: [UInt8]? = nil, schedulePath: String? = nil, timeZone: TimeZone? = nil,
        machineZone: TimeZone, statePath: String, osStatePath: String, settings: [PhoneCommand] = [],
        endpoint: String, boundEndpoint: String, pid: Int64, security: LinkSecurity, osState: OSStateOrigin
    ) {
        self.watchID = watchID
        self.pairedWatchKey = pairedWatchKey
        self.schedulePath = schedulePath
        self.timeZone = timeZone
        self.machineZone = machineZone
        self.statePath = statePath
        self.osStatePath = osStatePath
        self.settings = settings
        self.endpoint = endpoint
        self.boundEndpoint = boundEndpoint
        self.pid = pid
        self.security = security
        self.osState = osState
    }

    /// The configuration of a phone with no process around it, as the embedded twin runs one:
    /// endpoint `twin`, pid 1, no CURVE, a new simulated OS, state files named `phone.json` and
    /// `os.json`, and `zone` as both the `--time-zone` and the machine's zone.
    ///
    /// - Parameters:
    ///   - zone: the device's zone (its IANA identifier names it in `phone.started`).
    ///   - watchID: the paired watch's routing id.
    public static func embedded(zone: TimeZone, watchID: String = "watch") -> PhoneNodeConfiguration {
        PhoneNodeConfiguration(
            watchID: watchID, timeZone: zone, machineZone: zone, statePath: "phone.json", osStatePath: "os.json",
            endpoint: "twin", boundEndpoint: "twin", pid: 1, security: .none, osState: .new)
    }
}

/// The phone link's security, as `phone.started` reports it.
public enum LinkSecurity: String, Sendable, Equatable {
    /// No CURVE keys: the link is plain ZMTP (any local process that can reach the endpoint may
    /// connect).
    case none
    /// CURVE keys were given: ZMTP's CurveZMQ handshake (RFC 26, zmq_curve(7)) authenticates and
    /// encrypts the link.
    case curve
}

/// Where the simulated OS's state came from when the phone started, as `phone.started` reports it.
public enum OSStateOrigin: String, Sendable, Equatable {
    /// No `os.json` was found: a new OS with a fresh seed.
    case new
    /// The OS was read back from `os.json` (the device outlives the app).
    case stored
}

/// The phone process, sans I/O: one method per input (a message, a ZAP request, a stdin line, a
/// timer, the result of a write, a send, a weather fetch or a schedule read), each returning the
/// actions for the driver to perform in order. No clock, no I/O, no randomness of its own: time
/// comes with every input.
///
/// Decisions it owns: frame checks and ERROR replies (never an ERROR for an ERROR), ZAP verdicts,
/// liveness and heartbeats, the stdin language, zone precedence (travel, then `--time-zone`, then
/// the schedule file's zone, then the machine's), schedule reloads, the OS launch timer, held-back
/// repeats (`EventRateLimiter`), the status counters and the rollback after a failed write.
///
/// Durable before sent: a `persist` action ends the actions a step releases; the rest waits for
/// `persisted(_:at:)`. The writes of one step collapse into its last one, and the sends and
/// events between them wait for it. A failed write returns the sync state to what is on disk (never below a
/// seq already issued, `PhoneCore.persistFailed`) and drops the rest, so nothing goes out on the
/// strength of state that is not on disk. While a write, a schedule read or (for what starts or
/// changes a job) a weather fetch is outstanding, later inputs that need the app wait, in order.
public struct PhoneNode: Sendable {
    /// Counts since start, for `phone.status`.
    public struct Counters: Equatable, Sendable {
        /// Messages refused (bad frames, bad JSON, strangers).
        public var rejectedMessages = 0
        /// CURVE clients the ZAP handler refused.
        public var refusedPeers = 0
        /// Sends that failed (no watch connected, or not accepting).
        public var sendFailures = 0
        /// Messages from the paired watch that decoded (PINGs aside): one `message.received` each,
        /// written or held back.
        public var receivedMessages = 0
        /// REQUESTs from the paired watch: one `request.received` each, written or held back.
        public var receivedRequests = 0
    }

    /// An input that may have to wait until the app is free.
    enum Pending: Sendable {
        case frames([[UInt8]])
        /// A message from the paired watch, decoded (the twin's typed link).
        case message(WireMessage, WireCodec.Hello?)
        case command(PhoneCommand)
        case timer(PhoneTimer)
        case weather(WeatherOutcome)
        /// A device setting from the flags at start (no platform check: the options did it).
        case setting(PhoneCommand)
        /// The first user launch at start (the schedule was read by the start-up checks).
        case firstLaunch
        /// The paired watch's REQUEST: the OS may wake the app to run the job.
        case watchRequest(DateRequest)
    }

    /// Where the node stands between two inputs: free, reading the schedule file before a
    /// launch, or waiting for the result of a write. The job's own wait for a forecast is the
    /// app's (`PhoneApp.awaitsWeather`).
    enum State: Sendable {
        /// Free: a waiting input runs when the app can take it.
        case idle
        /// The schedule file is being read (`loadSchedule`); `then` runs once it is.
        case readingSchedule(then: AfterSchedule)
        /// A write is with the driver (`persist`); what its step said after it is held, with
        /// the time of that step, until the result (`persisted(_:at:)`).
        case writing(PhoneSyncState, held: [(PhoneAction, NodeTime)])
    }

    /// What runs once the schedule file is read.
    enum AfterSchedule: Equatable, Sendable {
        case open
        case backgroundLaunch(due: Date)
        case watchRequest(DateRequest)
        case push(PushPriority)
    }

    /// The phone app: its sync state machine, the simulated OS, the schedule, zone and location.
    public private(set) var app: PhoneApp
    /// The settings this node was made with.
    public let configuration: PhoneNodeConfiguration
    /// Counts of rejected messages, refused peers and failed sends since start, for `phone.status`.
    public private(set) var counters = Counters()
    /// The OS's next background launch, as last armed.
    public private(set) var nextLaunch: Date?
    /// The instant the `osAlarm` timer is armed for, nil when disarmed.
    public private(set) var nextAlarm: Date?
    /// The latest virtual instant of an outside input handled so far (a stdin line, a message,
    /// a setting; not the node's own timers, nor a running job's forecast): no background
    /// launch is stamped before it.
    private var handledUpTo: Date?

    private mutating func noteInput(at instant: Date) {
        handledUpTo = max(handledUpTo ?? instant, instant)
    }
    private var limiter = EventRateLimiter()
    /// The valid traffic a peer can send at will and what answers it (`message.received`,
    /// `request.received`, `ack.duplicate`, `ack.stale`, `batch.sent`, `up_to_date.sent`), limited
    /// on virtual time: `PhoneNode.trafficLimiter`.
    private var traffic = PhoneNode.trafficLimiter()
    private var liveness = LinkLiveness()
    /// The paired routing id's process as its last HELLO named it, and the wall seconds of the
    /// last message from that routing id.
    private var watchInstance: UInt64?
    /// The instances replaced behind the routing id, newest last (at most 16).
    private var replacedInstances: [UInt64] = []
    private var lastHeardWall: TimeInterval?
    private let watchID: [UInt8]
    /// Free, reading the schedule, or writing (`State`).
    private var state: State = .idle
    private var waiting: [Pending] = []
    /// The `SimulatedOS.revision` of the OS last handed to a write (`persistOS()`), nil before
    /// the first and after a failed one (`osPersisted(_:at:)`), so the next step writes again.
    private var writtenOSRevision: UInt64?
    /// True once `phone.stopping` was said: the last line; nothing waiting runs after it.
    public private(set) var isStopping = false

    /// A batch the user's last change made that could not be written, so it is not on the watch:
    /// the phone writes it again with back-off (`writeRetry`) and sends it once it is on disk.
    public struct UnsavedBatch: Equatable, Sendable {
        /// The seq of the newest batch that could not be written.
        public var seq: UInt64
        /// The seq on disk (and so the newest the watch can hold), nil when none.
        public var keptSeq: UInt64?
        /// Why the write failed, in words, and the errno's name (`ENOSPC`) when a system call failed.
        public var reason: String
        /// The errno's name, nil when no system call failed.
        public var errno: String?
        /// Failed writes of it so far (≥ 1).
        public var attempts: Int
    }

    /// The newest batch that is not on disk (and so not on the watch), nil when there is none.
    public private(set) var unsaved: UnsavedBatch?

    /// How far behind virtual time the phone handled its OS launches: a process whose loop is
    /// busy (writes with fsync take wall milliseconds, virtual minutes at a high `--clock-speed`)
    /// handles a launch after its planned instant.
    public struct Behind: Equatable, Sendable {
        /// Launches handled more than `PhoneNode.behindThreshold` virtual seconds late.
        public var count = 0
        /// The largest lateness of those, virtual seconds (0 when none).
        public var maxLateSeconds: TimeInterval = 0
        /// `count` when `clock.behind` was last said.
        var saidCount = 0
        /// `maxLateSeconds` when `clock.behind` was last said.
        var saidMax: TimeInterval = 0
    }

    /// How far behind virtual time the phone fell (`clock.behind`, `phone.status`).
    public private(set) var behind = Behind()

    /// Virtual seconds after its planned instant beyond which a handled launch counts as the
    /// phone falling behind virtual time (`clock.behind`): 10 minutes.
    public static let behindThreshold: TimeInterval = 600

    /// Wall seconds before write retry number `attempt` (1-based): 1 s doubling to 60 s.
    package static func writeRetryDelay(attempt: Int) -> TimeInterval {
        min(60, pow(2, Double(max(0, min(attempt - 1, 10)))))
    }

    /// - Parameters:
    ///   - app: the phone app as loaded (its weather step is switched to `.deferred`).
    ///   - configuration: the node's settings.
    public init(app: PhoneApp, configuration: PhoneNodeConfiguration) {
        var app = app
        app.weatherFetch = .deferred
        self.configuration = configuration
        self.watchID = Array(configuration.watchID.utf8)
        // The device's zone outlives the app (os.json): `PhoneZone`'s rule, and a `--time-zone`
        // given at this start becomes the device's.
        app.zones = PhoneZone(
            flag: configuration.timeZone, device: app.scheduler.timeZone, machine: configuration.machineZone)
        if let flag = configuration.timeZone { app.scheduler.setTimeZone(flag) }
        self.app = app
    }

    /// The zone the phone lives in (`PhoneZone`'s precedence).
    public var currentZone: TimeZone { app.zone }

    /// Where `currentZone` comes from: `time-zone` (travel in this run), `os.json` (the device's
    /// zone as left by travel before this start), `--time-zone`, `schedule` or `machine`.
    public var timeZoneSource: String { app.zoneSource.rawValue }

    // MARK: inputs

    /// The process started: `phone.started`, resume resending, the settings from the flags, the
    /// heartbeat, and the user's first launch.
    public mutating func start(at time: NodeTime) -> [PhoneAction] {
        var actions: [PhoneAction] = [
            .emit(
                Event(
                    .phoneStarted,
                    [
                        ("endpoint", .string(configuration.endpoint)), ("timeZone", .string(currentZone.identifier)),
                        ("timeZoneSource", .string(timeZoneSource)),
                        ("lastSeq", .int(Int64(clamping: app.state.lastSeq))), ("pid", .int(configuration.pid)),
                        ("platform", .string(app.scheduler.platform.rawValue)),
                        ("registration", .string(app.scheduler.registrationMode.rawValue)),
                        ("osState", .string(configuration.osState.rawValue)),
                        ("boundEndpoint", .string(configuration.boundEndpoint)),
                        ("security", .string(configuration.security.rawValue)),
                        ("tzdata", .string(ZoneDatabase.current.version)),
                    ]), at: time.now),
            .arm(.heartbeat, .after(LinkLiveness.interval)),
        ]
        actions += step(time) { $0.start() }
        waiting += configuration.settings.map { .setting($0) } + [.firstLaunch]
        return actions + drain(time)
    }

    /// A message on the ROUTER: its frames, routing id first.
    public mutating func messageReceived(_ frames: [[UInt8]], at time: NodeTime) -> [PhoneAction] {
        offer(.frames(frames), at: time)
    }

    /// A message from the paired watch, already decoded: what `messageReceived(_:at:)` does
    /// with the frames `[watch's routing id, WireCodec.encode(message)]` once `WireCodec.decode`
    /// accepted them. The embedded twin's typed link delivers messages this way
    /// (`WireCodec.delivered(_:)` gives the value the frame would decode to).
    public mutating func messageReceived(_ message: WireMessage, at time: NodeTime) -> [PhoneAction] {
        offer(.message(message, nil), at: time)
    }

    /// A decoded message from the paired watch with its HELLO's optional fields: what
    /// `messageReceived(_:at:)` does, plus the `clock.skew` and `peer.replaced` checks that a
    /// HELLO frame carrying `sentAt` and `instance` gets (`WireCodec.Hello`).
    public mutating func messageReceived(
        _ message: WireMessage, hello: WireCodec.Hello?, at time: NodeTime
    ) -> [PhoneAction] {
        offer(.message(message, hello), at: time)
    }

    /// A ZAP request (RFC 27): version, request id, domain, address, identity, mechanism,
    /// credentials.
    /// - Returns: the reply, admitting only CURVE with the paired watch's key.
    public mutating func zapRequest(_ frames: [[UInt8]], at time: NodeTime) -> [PhoneAction] {
        guard frames.count >= 6 else { return [] }
        let mechanism = String(decoding: frames[5], as: UTF8.self)
        let admitted = mechanism == "CURVE" && frames.count >= 7 && frames[6] == configuration.pairedWatchKey
        var actions: [PhoneAction] = []
        if !admitted {
            counters.refusedPeers += 1
            let reason = mechanism == "CURVE" ? "key not paired with this phone" : "CURVE required"
            actions += limited(
                Event(
                    .peerRefused,
                    [
                        ("mechanism", .string(mechanism)),
                        ("address", .string(clipped(String(decoding: frames[3], as: UTF8.self)))),
                        ("reason", .string(reason)),
                    ]), time)
        }
        let reply: [[UInt8]] = [
            Array("1.0".utf8), frames[1], Array((admitted ? "200" : "400").utf8),
            Array((admitted ? "OK" : "not paired").utf8), Array((admitted ? "watch" : "").utf8), [],
        ]
        return actions + [.zapReply(reply)]
    }

    /// One stdin line.
    public mutating func commandLine(_ line: String, at time: NodeTime) -> [PhoneAction] {
        do {
            guard let command = try PhoneCommand.parse(line, platform: app.scheduler.platform) else { return [] }
            if case .clockSet(let delta) = command {
                // The wall clock stays within the instants a state file holds (`ClockRange`):
                // a date before 1970 in os.json would be refused at the next start.
                let wall = app.scheduler.wallClock(at: time.now).addingTimeInterval(delta)
                guard wall >= ClockRange.earliest, wall <= ClockRange.latest else {
                    let reason =
                        "the wall clock would read \(Self.yearText(wall)), outside 1970-01-01T00:00:00Z to "
                        + "2199-12-31T23:59:59Z"
                    return [.emit(PhoneCommand.Rejection(input: line, reason: reason).event, at: time.now)]
                }
            }
            return self.command(command, at: time)
        } catch {
            return [.emit(error.event, at: time.now)]
        }
    }

    /// `1969-01-01T00:00:00Z`, or the year alone when the instant is too far for the format.
    private static func yearText(_ instant: Date) -> String {
        let seconds = instant.timeIntervalSince1970
        guard abs(seconds) < 2.5e11 else { return "the year \(ClockRange.year(of: seconds))" }
        return ISO8601.string(instant)
    }

    /// One parsed stdin command.
    public mutating func command(_ command: PhoneCommand, at time: NodeTime) -> [PhoneAction] {
        offer(.command(command), at: time)
    }

    /// A timer the node armed is due.
    public mutating func timerFired(_ timer: PhoneTimer, at time: NodeTime) -> [PhoneAction] {
        guard timer == .heartbeat else { return offer(.timer(timer), at: time) }
        var actions: [PhoneAction] = [.send(.ping)]
        actions.reserveCapacity(2)
        for line in limiter.flush(at: Self.wallDate(time)) { actions.append(.emit(line, at: time.now)) }
        for line in traffic.flush(at: time.now) { actions.append(.emit(line, at: time.now)) }
        if let silence = liveness.check(at: time.wall) {
            actions.append(
                .emit(
                    Event(
                        .peerOffline,
                        [("id", .string(configuration.watchID)), ("silentFor", .double(silence.rounded()))]),
                    at: time.now))
        }
        actions.append(.arm(.heartbeat, .after(LinkLiveness.interval)))
        return actions
    }

    /// The write asked for with `persist` ended.
    public mutating func persisted(_ result: PersistResult, at time: NodeTime) -> [PhoneAction] {
        let written: PhoneSyncState
        let rest: [(PhoneAction, NodeTime)]
        switch state {
        case .writing(let value, let held):
            (written, rest) = (value, held)
            state = .idle
        case .idle, .readingSchedule:
            return []  // no write was asked for: a driver's stray report changes nothing
        }
        var actions: [PhoneAction] = []
        switch result {
        case .succeeded:
            app.persisted(written)
            if let lost = unsaved, written.outbox?.seq != lost.keptSeq {
                // A newer batch than the one kept is on disk now (a retry, or the user's next
                // change); what follows sends it.
                unsaved = nil
                actions.append(.cancel(.writeRetry))
            }
            actions += release(rest)
        case .failed(let errno, let reason, let path):
            let stamp = rest.first?.1.now ?? time.now
            app.persistFailed()
            var fields: [(String, EventValue)] = [
                ("path", .string(path ?? configuration.statePath)), ("reason", .string(reason)),
                ("errno", errno.flatMap(PersistResult.errnoName).map { .string($0) } ?? .null),
            ]
            // A batch the write carried is not on disk, so not on the watch: write it again
            // with back-off and send it then, without waiting for the user.
            if let batch = written.outbox, batch.ref != app.state.outbox?.ref {
                let attempts = (unsaved?.attempts ?? 0) + 1
                unsaved = UnsavedBatch(
                    seq: batch.seq, keptSeq: app.state.outbox?.seq, reason: reason,
                    errno: errno.flatMap(PersistResult.errnoName), attempts: attempts)
                let delay = Self.writeRetryDelay(attempt: attempts)
                fields += [("unsavedSeq", .int(Int64(clamping: batch.seq))), ("retryIn", .double(delay))]
                actions.append(.arm(.writeRetry, .after(delay)))
            } else {
                fields += [("unsavedSeq", .null), ("retryIn", .null)]
            }
            actions.insert(.emit(Event(.persistFailed, fields), at: stamp), at: 0)
            // The run happened whatever the disk says: its run records are kept.
            actions += rest.compactMap { if case .record(let record) = $0.0 { .record(record) } else { nil } }
            // The job's weather step will not run: end the run as failed.
            if rest.contains(where: { if case .fetchWeather = $0.0 { true } else { false } }) {
                actions += release(app.abandonJob(at: time.now).map { ($0, time) })
            }
            actions += persistOS() + armBackgroundLaunch(at: time.now)
        }
        return actions + drain(time)
    }

    /// A write of the OS's state ended (only a failure needs reporting: the next step writes
    /// again).
    public mutating func osPersisted(_ result: PersistResult, at time: NodeTime) -> [PhoneAction] {
        guard case .failed(_, let reason, _) = result else { return [] }
        writtenOSRevision = nil
        return [
            .emit(
                Event(.persistFailed, [("path", .string(configuration.osStatePath)), ("reason", .string(reason))]),
                at: time.now)
        ]
    }

    /// A `send` to the watch ended: `failure` names why it did not go (nil: sent).
    public mutating func sent(_ message: WireMessage, failure: String?, at time: NodeTime) -> [PhoneAction] {
        if message == .ping { return [] }  // heartbeats: an absent watch is fine
        guard let failure else {
            // The watch is there again: what was held back is said, the next failure at once.
            var actions = limiter.end(.sendFailed).map { PhoneAction.emit($0, at: time.now) }
            guard let sent = WireEvents.sent(message) else { return actions }
            switch message {
            case .error: actions += limited(sent, time)
            // A HELLO, which a peer can send at will, is answered with one of these.
            case .batch, .upToDate: actions += trafficLimited(sent, time)
            default: actions.append(.emit(sent, at: time.now))
            }
            return actions
        }
        counters.sendFailures += 1
        return limited(
            Event(.sendFailed, [("type", .string(message.typeName)), ("reason", .string(failure))]), time)
    }

    /// The forecast asked for with `fetchWeather` arrived: the job goes on.
    public mutating func weatherArrived(_ outcome: WeatherOutcome, at time: NodeTime) -> [PhoneAction] {
        offer(.weather(outcome), at: time)
    }

    /// The schedule file asked for with `loadSchedule` was read: a good one replaces the schedule
    /// (`schedule.changed` when it differs), a bad one is reported and the previous one kept
    /// (`schedule.rejected`); then the launch that asked for it runs.
    public mutating func scheduleLoaded(
        _ result: Result<WakeSchedule, ScheduleLoadError>, at time: NodeTime
    ) -> [PhoneAction] {
        guard case .readingSchedule(let next) = state, let path = configuration.schedulePath else { return [] }
        state = .idle
        var actions: [PhoneAction] = []
        switch result {
        case .success(let loaded):
            if loaded != app.schedule {
                app.schedule = loaded
                actions.append(.emit(Event(.scheduleChanged, [("path", .string(path))]), at: time.now))
            }
        case .failure(let error):
            actions.append(
                .emit(
                    Event(
                        .scheduleRejected,
                        [
                            ("path", .string(path)), ("reason", .string(error.description)),
                            ("kept", .string("previous")),
                        ]), at: time.now))
        }
        if case .backgroundLaunch = next {
        } else {
            noteInput(at: time.now)  // the open or REQUEST runs now, with what it carries
        }
        actions += launch(after: next, at: time)
        return actions + drain(time)
    }

    /// The process is asked to stop: a signal, end of terminal input, a closed output.
    public mutating func stop(_ cause: StopCause, at time: NodeTime) -> [PhoneAction] {
        stopping(cause.eventFields, time)
    }

    // MARK: waiting for the app

    private func canRun(_ pending: Pending) -> Bool {
        switch state {
        case .writing:
            return false
        case .readingSchedule:
            if case .command(let command) = pending { return !command.touchesApp }
            return false
        case .idle:
            switch pending {
            case .command(let command) where !command.touchesApp: return true
            case .frames, .message, .weather, .timer(.resend), .timer(.heartbeat): return true
            case .command, .timer(.osLaunch), .timer(.osAlarm), .timer(.writeRetry), .setting, .firstLaunch,
                .watchRequest:
                return !app.awaitsWeather
            }
        }
    }

    private mutating func offer(_ pending: Pending, at time: NodeTime) -> [PhoneAction] {
        waiting.append(pending)
        return drain(time)
    }

    /// Commands and launches keep their order: one waits while an earlier one waits.
    private func mustQueueBehind(_ pending: Pending) -> Bool {
        switch pending {
        case .frames, .message, .weather, .timer(.resend), .timer(.heartbeat): false
        case .command(let command): command.touchesApp
        case .timer(.osLaunch), .timer(.osAlarm), .timer(.writeRetry), .setting, .firstLaunch, .watchRequest: true
        }
    }

    /// Runs the waiting inputs that can run now, in order.
    private mutating func drain(_ time: NodeTime) -> [PhoneAction] {
        var actions: [PhoneAction] = []
        var index = 0
        var blockedOrdered = false
        while index < waiting.count {
            let pending = waiting[index]
            if canRun(pending) && !(blockedOrdered && mustQueueBehind(pending)) {
                waiting.remove(at: index)
                actions += handle(pending, at: time)
                if isStopping { break }
                index = 0
                blockedOrdered = false
            } else {
                if mustQueueBehind(pending) { blockedOrdered = true }
                index += 1
            }
        }
        return actions
    }

    private mutating func handle(_ pending: Pending, at time: NodeTime) -> [PhoneAction] {
        switch pending {
        case .timer, .weather:
            // The node's own timers (a launch, a resend, a write retry) and the forecast a
            // running job waits for (its own step, late only because the driver is) are no
            // outside input.
            break
        default:
            noteInput(at: time.now)
        }
        switch pending {
        case .frames(let frames): return received(frames, time)
        case .message(let message, let hello):
            var notes: [PhoneAction] = []
            if let hello, case .hello = message { notes = checked(hello, time) }
            return notes + received(message, time)
        case .command(let command): return run(command, time)
        case .setting(let command): return apply(command, time)
        case .firstLaunch:
            return step(time) { $0.launch(at: time.now, byUser: true) }
        case .weather(let outcome):
            return step(time) { $0.weatherArrived(outcome.result, cost: outcome.cost, at: time.now) }
        case .timer(.resend):
            return step(time) { $0.resendDue() }
        case .timer(.osLaunch):
            guard let due = nextLaunch else { return [] }
            return readSchedule(then: .backgroundLaunch(due: due), time)
        case .timer(.osAlarm):
            // At the alarm's own instant, as a launch: unless an input was handled after it.
            guard let due = nextAlarm else { return [] }
            let at = max(due, handledUpTo ?? due)
            nextAlarm = nil
            return step(NodeTime(now: at, wall: time.wall)) { $0.alarmsDue(at: at) }
        case .timer(.heartbeat):
            return timerFired(.heartbeat, at: time)
        case .timer(.writeRetry):
            // The batch of the user's last change, made again for now (a new seq: none is
            // issued twice), and written; once on disk it is sent.
            guard unsaved != nil else { return [] }
            return step(time) { $0.republish(at: time.now) }
        case .watchRequest(let request):
            return readSchedule(then: .watchRequest(request), time)
        }
    }

    // MARK: messages

    private mutating func received(_ frames: [[UInt8]], _ time: NodeTime) -> [PhoneAction] {
        guard frames.count == 2 else {
            let reason = "expected 2 frames (routing id, message), got \(frames.count)"
            counters.rejectedMessages += 1
            var actions = limited(Event(.messageRejected, [("reason", .string(reason))]), time)
            if frames.first == watchID { actions.append(.send(.error(reason: reason))) }
            return actions
        }
        guard frames[0] == watchID else {
            let peer = clipped(String(decoding: frames[0], as: UTF8.self))
            let reason = "unknown peer routing id \"\(peer)\""
            counters.rejectedMessages += 1
            // Tell the stranger (a watch with the wrong --id) why nothing happens.
            return limited(Event(.messageRejected, [("reason", .string(reason))]), time) + [
                .reply(routingID: frames[0], .error(reason: reason + "; this phone delivers to another id"))
            ]
        }
        let message: WireMessage
        let hello: WireCodec.Hello?
        do throws(ProtocolError) {
            (message, hello) = try WireCodec.decodeWithHello(frames[1])
        } catch {
            counters.rejectedMessages += 1
            var actions = limited(Event(.messageRejected, [("reason", .string(error.reason))]), time)
            // Never answer an ERROR with an ERROR: two peers would echo each other forever.
            if !WireCodec.claimsToBeError(frames[1]) { actions.append(.send(.error(reason: error.reason))) }
            return actions
        }
        var notes: [PhoneAction] = []
        if let hello { notes = checked(hello, time) }
        return notes + received(message, time)
    }

    /// The clock check of a HELLO's `sentAt` (`clock.skew`), and `peer.replaced` when its
    /// `instance` is not the process that spoke behind the routing id before.
    private mutating func checked(_ hello: WireCodec.Hello, _ time: NodeTime) -> [PhoneAction] {
        var actions: [PhoneAction] = []
        if let sentAt = hello.sentAt,
            let skew = ClockSkew.check(
                sentAt: sentAt, now: time.now, message: "HELLO", clockSpeed: configuration.clockSpeed)
        {
            actions += limited(skew, time)
        }
        if let instance = hello.instance {
            if let previous = watchInstance, previous != instance {
                let silent = lastHeardWall.map { max(0, time.wall - $0) }
                // A process that was replaced and speaks again: two watches share the routing id
                // (ROUTER_HANDOVER gives it to the newest connection, and the other reconnects
                // and takes it back). A restart never brings back an instance (64 random bits).
                let secondWatch = replacedInstances.contains(instance)
                replacedInstances.removeAll { $0 == previous }
                replacedInstances.append(previous)
                if replacedInstances.count > 16 { replacedInstances.removeFirst() }
                actions += limited(
                    Event(
                        .peerReplaced,
                        [
                            ("id", .string(configuration.watchID)), ("instance", .string(Hex64.string(instance))),
                            ("previousInstance", .string(Hex64.string(previous))),
                            ("previousSilentFor", silent.map { .double(($0 * 10).rounded() / 10) } ?? .null),
                            ("secondWatch", .bool(secondWatch)),
                            (
                                "reason",
                                .string(
                                    secondWatch
                                        ? "two watch processes use this routing id and take it from each other "
                                            + "(ROUTER_HANDOVER): give each watch its own --id"
                                        : "another watch process took this routing id: a restart, or a second watch")
                            ),
                        ]), time)
            }
            watchInstance = instance
        }
        return actions
    }

    /// A message from the paired watch that `WireCodec.decode` accepted.
    private mutating func received(_ message: WireMessage, _ time: NodeTime) -> [PhoneAction] {
        var actions: [PhoneAction] = []
        lastHeardWall = time.wall
        if liveness.heard(at: time.wall) {
            actions.append(.emit(Event(.peerOnline, [("id", .string(configuration.watchID))]), at: time.now))
        }
        if message == .ping { return actions }
        counters.receivedMessages += 1
        actions += trafficLimited(Event(.messageReceived, [("type", .string(message.typeName))]), time)
        if case .request(let request) = message {
            // The OS and the app decide, when the app is free: behind a job that waits for the
            // weather, a write, or commands and launches given before.
            counters.receivedRequests += 1
            actions += trafficLimited(Event(.requestReceived, WireEvents.requestFields(request)), time)
            waiting.append(.watchRequest(request))
            return actions
        }
        return actions + step(time) { $0.receive(message, at: time.now) }
    }

    // MARK: commands

    private mutating func run(_ command: PhoneCommand, _ time: NodeTime) -> [PhoneAction] {
        let now = time.now
        switch command {
        case .open:
            return readSchedule(then: .open, time)
        case .status:
            return [.emit(status(at: now), at: now)]
        case .why:
            let processing = app.scheduler.whyProcessing(at: now).map { [PhoneAction.emit(Event($0.event), at: now)] }
            return [.emit(Event(app.scheduler.why(at: now).event), at: now)] + (processing ?? [])
        case .history:
            return app.state.refreshLog.history.map { .emit($0.event, at: now) }
        case .notifications:
            return app.pendingNotifications(at: now).map { record in
                .emit(
                    Event(
                        .notificationPending,
                        [
                            ("id", .string(record.id)), ("fireDate", .date(record.fireDate)),
                            ("text", .string(record.text)),
                        ]), at: now)
            }
        case .timeZone(let zone):
            let from = currentZone.identifier
            let changed = Event(.timezoneChanged, [("from", .string(from)), ("to", .string(zone.identifier))])
            return [.emit(changed, at: now)] + step(time) { $0.travel(to: zone, at: now) }
        case .move(let location):
            let moved = app.location.distance(to: location)
            app.location = location
            return [
                .emit(
                    Event(
                        .locationChanged,
                        [
                            ("latitude", .double(location.latitude)), ("longitude", .double(location.longitude)),
                            ("moved", .double(moved.rounded())),
                        ]), at: now)
            ]
        case .lowPower, .backgroundRefresh, .charging, .bucket, .doze, .forceQuit, .registration, .reboot,
            .simulateLaunch, .simulateExpiration, .network, .batteryLow, .battery, .storageLow, .testDriver, .stop,
            .notificationPermission, .notificationAuthorization, .clockSet, .exactAlarmPermission, .push:
            return apply(command, time)
        case .quit:
            return stopping([("reason", .string("quit"))], time)
        }
    }

    /// A command that changes the OS's settings or asks the debugger for a launch.
    private mutating func apply(_ command: PhoneCommand, _ time: NodeTime) -> [PhoneAction] {
        let now = time.now
        switch command {
        case .lowPower(let on): return step(time) { $0.setLowPowerMode(on, at: now) }
        case .backgroundRefresh(let on): return step(time) { $0.setBackgroundRefreshEnabled(on, at: now) }
        case .charging(let on): return step(time) { $0.setCharging(on, at: now) }
        case .bucket(let bucket): return step(time) { $0.setStandbyBucket(bucket, at: now) }
        case .doze(let input): return step(time) { $0.doze(input, at: now) }
        case .network(let on): return step(time) { $0.setNetwork(on, at: now) }
        case .batteryLow(let on): return step(time) { $0.setBatteryLow(on, at: now) }
        case .battery(let level): return step(time) { $0.setBatteryLevel(level, at: now) }
        case .push(let priority): return readSchedule(then: .push(priority), time)
        case .storageLow(let on): return step(time) { $0.setStorageLow(on, at: now) }
        case .testDriver(let control): return step(time) { $0.testDriver(control, at: now) }
        case .stop(let reason): return step(time) { $0.stopWork(reason: reason, at: now) }
        case .notificationPermission(let granted):
            return step(time) { $0.setNotificationPermission(granted, at: now) }
        case .notificationAuthorization(let state):
            return step(time) { $0.setNotificationAuthorization(state, at: now) }
        case .clockSet(let delta): return step(time) { $0.setClock(by: delta, at: now) }
        case .exactAlarmPermission(let granted):
            return step(time) { $0.setExactAlarmPermission(granted, at: now) }
        case .forceQuit: return step(time) { $0.forceQuit(at: now) }
        case .registration(let mode): return step(time) { $0.installUpdate(registration: mode, at: now) }
        case .reboot: return step(time) { $0.reboot(at: now) }
        case .simulateLaunch: return step(time) { $0.simulateLaunch(at: now) }
        case .simulateExpiration: return step(time) { $0.simulateExpiration(at: now) }
        default: return run(command, time)
        }
    }

    /// `phone.stopping`, the last line: what the rate limit still holds back is said before it
    /// (the counts add up to every occurrence), and nothing runs after it.
    private mutating func stopping(_ fields: [(String, EventValue)], _ time: NodeTime) -> [PhoneAction] {
        isStopping = true
        var actions = (limiter.endAll() + traffic.endAll()).map { PhoneAction.emit($0, at: time.now) }
        // Falling behind counted since the last `clock.behind`: the totals, before the last line.
        if behind.count > behind.saidCount {
            actions.append(.emit(behindEvent(plannedAt: nil, late: nil), at: time.now))
        }
        return actions + [.emit(Event(.phoneStopping, fields), at: time.now), .stop]
    }

    private func status(at now: Date) -> Event {
        let state = app.state
        var fields: [(String, EventValue)] = [
            // Acknowledged describes the schedule the user last set: not while its batch is unsaved.
            ("lastSeq", .int(Int64(clamping: state.lastSeq))), ("acked", .bool(state.acked && unsaved == nil)),
            ("notOnWatch", unsaved.map { .string(Self.notOnWatch($0)) } ?? .null),
            ("count", .int(Int64(state.outbox?.entries.count ?? 0))),
            ("coverageEnd", state.outbox?.coverageEnd.map { .date($0) } ?? .null),
            ("timeZone", .string(app.zone.identifier)), ("timeZoneSource", .string(timeZoneSource)),
            ("pendingNotifications", .int(Int64(app.pendingNotifications(at: now).count))),
            (
                "earliestBeginDate",
                RefreshPlanner.earliestBeginDate(after: now, schedule: app.schedule, in: app.zone).map { .date($0) }
                    ?? .null
            ),
            ("nextBackgroundLaunch", nextLaunch.map { .date($0) } ?? .null),
            ("runs", .int(Int64(state.refreshLog.history.count))),
            ("lastRunAt", state.refreshLog.lastRunAt.map { .date($0) } ?? .null),
            // Hours for people: two decimals (36 s), not the division's sixteen digits.
            ("stalenessHours", state.refreshLog.stalenessHours(at: now).map { .double(Self.hundredths($0)) } ?? .null),
            ("dataAgeHours", state.refreshLog.dataAgeHours(at: now).map { .double(Self.hundredths($0)) } ?? .null),
            ("platform", .string(app.scheduler.platform.rawValue)),
            ("crashed", app.crashed.map { .string($0.message) } ?? .null),
            ("rejectedMessages", .int(Int64(counters.rejectedMessages))),
            ("refusedPeers", .int(Int64(counters.refusedPeers))),
            ("sendFailures", .int(Int64(counters.sendFailures))),
            ("receivedMessages", .int(Int64(counters.receivedMessages))),
            ("receivedRequests", .int(Int64(counters.receivedRequests))),
            (
                "behind",
                .object(
                    EventObject([
                        ("count", .int(Int64(behind.count))),
                        ("maxLateSeconds", .double(Self.tenths(behind.maxLateSeconds))),
                        ("thresholdSeconds", .double(Self.behindThreshold)),
                    ]))
            ),
        ]
        // iOS: the battery's charge now (null: never set, full) and the usage model's budgets.
        fields.append(
            ("batteryLevel", app.scheduler.batteryLevel(at: now).map { .double(Self.hundredths($0)) } ?? .null))
        fields.append(
            (
                "budgets",
                app.scheduler.budgetBalances(at: now).map { balances in
                    .object(
                        EventObject([
                            ("energySeconds", .double(Self.hundredths(balances.energy))),
                            ("dataBytes", .int(Int64(balances.data.rounded(.down)))),
                        ]))
                } ?? .null
            ))
        fields.append(("os", .object(EventObject(app.scheduler.status()))))
        fields.append(("why", .object(EventObject(app.scheduler.why(at: now).fields))))
        if let processing = app.scheduler.whyProcessing(at: now) {
            fields.append(("processingWhy", .object(EventObject(processing.fields))))
        }
        return Event(.phoneStatus, fields)
    }

    /// `value` rounded to two decimals.
    private static func hundredths(_ value: Double) -> Double { (value * 100).rounded() / 100 }

    /// Why the current schedule is not on the watch, in words.
    private static func notOnWatch(_ lost: UnsavedBatch) -> String {
        let cause = lost.errno.map { "\($0): \(lost.reason)" } ?? lost.reason
        let kept = lost.keptSeq.map { "the watch can hold at most batch \($0)" } ?? "the watch holds no batch of it"
        return "batch \(lost.seq) of the current schedule could not be written (\(cause)); \(kept); "
            + "writing again (\(lost.attempts) failed)"
    }

    // MARK: launches

    /// Reads the schedule file again (when there is one) before a launch.
    private mutating func readSchedule(then next: AfterSchedule, _ time: NodeTime) -> [PhoneAction] {
        guard let path = configuration.schedulePath else { return launch(after: next, at: time) }
        state = .readingSchedule(then: next)
        return [.loadSchedule(path: path)]
    }

    private mutating func launch(after next: AfterSchedule, at time: NodeTime) -> [PhoneAction] {
        switch next {
        case .open:
            return step(time) { $0.launch(at: time.now, byUser: true) }
        case .backgroundLaunch(let due):
            // The run happens at its planned virtual instant, whenever the driver woke (as the
            // twin runs it): the driver fires a due timer before any input read after it, so the
            // state is that of its own instant. Should a step have run after that instant all
            // the same (an input the driver handled first), the run is at that step's instant
            // instead: no event is stamped before an input whose effect it carries.
            let late = time.now.timeIntervalSince(due)
            var actions: [PhoneAction] = []
            let at = max(due, handledUpTo ?? due)
            if late > Self.behindThreshold {
                actions += noteBehind(plannedAt: due, late: late, NodeTime(now: at, wall: time.wall))
            }
            if at > due { nextLaunch = nil }  // moved: the OS is asked again from the run's instant
            return actions
                + step(NodeTime(now: at, wall: time.wall)) {
                    $0.backgroundLaunchDue(at: at)
                }
        case .watchRequest(let request):
            return step(time) { $0.watchRequest(request, at: time.now) }
        case .push(let priority):
            return step(time) { $0.pushReceived(priority, at: time.now) }
        }
    }

    /// Counts a launch handled `late` virtual seconds after `plannedAt` and says so
    /// (`clock.behind`): the first time, then each time the count doubles or the lateness is
    /// more than twice the largest said, so a phone that stays behind writes a few lines, not
    /// one per launch (the rest are counted, and said before `phone.stopping`).
    private mutating func noteBehind(plannedAt: Date, late: TimeInterval, _ time: NodeTime) -> [PhoneAction] {
        behind.count += 1
        behind.maxLateSeconds = max(behind.maxLateSeconds, late)
        let count = behind.count
        guard count == 1 || count & (count - 1) == 0 || late > 2 * behind.saidMax else { return [] }
        return [.emit(behindEvent(plannedAt: plannedAt, late: late), at: time.now)]
    }

    /// `clock.behind` for a launch planned at `plannedAt` (nil: the summary before stopping)
    /// and handled `late` seconds after it; marks the counts as said.
    private mutating func behindEvent(plannedAt: Date?, late: TimeInterval?) -> Event {
        behind.saidCount = behind.count
        behind.saidMax = behind.maxLateSeconds
        return Event(
            .clockBehind,
            [
                ("timer", .string("osLaunch")), ("plannedAt", plannedAt.map { .date($0) } ?? .null),
                ("lateSeconds", late.map { .double(Self.tenths($0)) } ?? .null),
                ("count", .int(Int64(behind.count))), ("maxLateSeconds", .double(Self.tenths(behind.maxLateSeconds))),
                ("thresholdSeconds", .double(Self.behindThreshold)),
            ])
    }

    /// `value` rounded to one decimal.
    private static func tenths(_ value: Double) -> Double { (value * 10).rounded() / 10 }

    // MARK: the app's actions

    /// Applies `body` to the app, writes the OS's state (`persistOS()`), releases the app's
    /// actions (up to the first write), then re-arms the OS launch timer.
    private mutating func step(_ time: NodeTime, _ body: (inout PhoneApp) -> [PhoneAction]) -> [PhoneAction] {
        // Whatever the OS traced in this step is written in it (the app drains after each call
        // into the OS; this catches the rest), never at the next OS activity.
        let actions = body(&app) + app.drainTrace(at: time.now)
        return persistOS() + release(actions.map { ($0, time) }) + armBackgroundLaunch(at: time.now)
    }

    /// The write of the OS's state as the step left it, before anything the step writes or
    /// sends; none when the OS holds what was last written (`SimulatedOS.revision`, no encoding
    /// needed to tell), so a step that did not touch the OS, such as an ACK's, writes nothing.
    ///
    /// The OS keeps its own records whatever happens to the app's writes, and a request is the
    /// OS's once `submit` returns (Apple: `BGTaskScheduler.submit(_:)`,
    /// <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/submit(_:)>),
    /// so the step's renewal is on disk before its batch leaves: a phone killed after the send
    /// does not come back with the request the launch had already taken. The value is the
    /// step's last, so a later step's write is always newer (never a stale tail).
    private mutating func persistOS() -> [PhoneAction] {
        guard app.scheduler.revision != writtenOSRevision else { return [] }
        writtenOSRevision = app.scheduler.revision
        return [.persistOS(app.scheduler)]
    }

    /// Re-arms (or cancels) the OS launch timer, and the alarm timer when it changed.
    ///
    /// A launch already due whose timer has not been handled yet (the driver woke late, or the
    /// timer waits behind a write) keeps its instant: the OS asked from that instant on gives it
    /// back, where asked from `now` it would answer "now" and move the run to whatever input came
    /// first.
    private mutating func armBackgroundLaunch(at now: Date) -> [PhoneAction] {
        nextLaunch = app.nextBackgroundLaunch(after: min(now, nextLaunch ?? now))
        var actions: [PhoneAction] = [nextLaunch.map { .arm(.osLaunch, .at($0)) } ?? .cancel(.osLaunch)]
        // The alarm timer only when it changes (none is ever armed on iOS, nor without alarms
        // and Doze).
        let alarm = app.scheduler.nextTimedActivity()
        if alarm != nextAlarm {
            nextAlarm = alarm
            actions.append(alarm.map { .arm(.osAlarm, .at($0)) } ?? .cancel(.osAlarm))
        }
        return actions
    }

    /// The app's `actions` up to the first write, then one write; everything after the first
    /// write is held until its result.
    ///
    /// The writes of one step collapse into its last one: each `persist` carries the whole sync
    /// state as it stands at that point, so the last holds every earlier one's changes. The
    /// sends and events between them wait for that write, in their order, so nothing goes out
    /// and nothing is said before the state behind it is on disk. A job that goes on without a
    /// weather fetch thus writes once (renew, notices, dates, weather, sunlight, its history),
    /// then sends its batch, and the disk is free for the watch's write and the ACK's.
    private mutating func release(_ actions: [(PhoneAction, NodeTime)]) -> [PhoneAction] {
        var released: [PhoneAction] = []
        for (index, (action, time)) in actions.enumerated() {
            switch action {
            case .persist(let first):
                var last = first
                var rest: [(PhoneAction, NodeTime)] = []
                for later in actions[(index + 1)...] {
                    if case .persist(let newer) = later.0 { last = newer } else { rest.append(later) }
                }
                state = .writing(last, held: rest)
                return released + [.persist(last)]
            case .emit(let event, _) where event.name == .peerError || event.name == .requestRefused:
                // What the watch can cause at will is rate-limited: its ERRORs, refused REQUESTs.
                released += limited(event, time)
            case .emit(let event, _) where event.name == .ackDuplicate || event.name == .ackStale:
                released += trafficLimited(event, time)
            default:
                released.append(action)
            }
        }
        return released
    }

    /// `event` through the rate limiter (events a peer can cause at will).
    private mutating func limited(_ event: Event, _ time: NodeTime) -> [PhoneAction] {
        limiter.admit(event, at: Self.wallDate(time)).map { [.emit($0, at: time.now)] } ?? []
    }

    /// `event` through the traffic limiter (valid messages a peer can send at will).
    private mutating func trafficLimited(_ event: Event, _ time: NodeTime) -> [PhoneAction] {
        traffic.admit(event, at: time.now).map { [.emit($0, at: time.now)] } ?? []
    }

    /// The limiter for valid traffic a peer can send at will: 30 lines per event and message type
    /// in a minute of virtual time (wall time at `--clock-speed 1`), then repeats held back and
    /// counted until the minute ends (docs/protocol.md, "Events").
    ///
    /// Virtual time, not wall time as for refusals: a paired watch's normal traffic follows the
    /// app's policy, in virtual time (a REQUEST a night, an ACK a batch), so it stays far below the
    /// limit at any clock speed, and the twin and the processes write the same lines.
    static func trafficLimiter() -> EventRateLimiter {
        EventRateLimiter(interval: 60, maximumInterval: 60, burst: 30, keyField: "type")
    }

    /// The monotonic wall seconds as an instant for `EventRateLimiter` (which only compares them).
    private static func wallDate(_ time: NodeTime) -> Date { Date(timeIntervalSinceReferenceDate: time.wall) }
}

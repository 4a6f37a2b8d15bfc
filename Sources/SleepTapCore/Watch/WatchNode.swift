// SPDX-License-Identifier: Apache-2.0

public import Foundation
import SleepTapOS

/// The watch's timers. Transport timers run on wall time, the bed tap on virtual time.
public enum WatchTimer: Hashable, Sendable, CaseIterable {
    /// No reply to HELLO yet: say it again (`WatchCore.helloRetry` wall seconds).
    case helloRetry
    /// Every `LinkLiveness.interval`: PING the phone, check its liveness, flush held-back events.
    case heartbeat
    /// No handshake with the phone yet: say why (5 s after start or a drop, then every 30 s).
    case handshake
    /// The link stayed down: reconnect by hand (2 s, doubling to 30 s).
    case relink
    /// The simulated user's nightly bed tap (`--bed-at`, local time in the zone in force).
    case bed
    /// `--request-dates`: `requestSpacing` after the last REQUEST (virtual); ask again if the
    /// nights left are still low and the link is up.
    case request
    /// The alarm's next moment (virtual): a set alarm's instant, the end of a snooze, or the
    /// simulated user's stop (`WatchAlarm.nextDue`).
    case alarm
}

/// The watch's alarm: the wake-up instants it was set to and has not rung yet, and the one
/// ringing (rules: `WatchNode`, "Alarm"; docs/protocol.md, "The alarm").
package struct WatchAlarm: Equatable, Sendable {
    /// An alarm that is ringing, or snoozed between two rings.
    package struct Ringing: Equatable, Sendable {
        /// The wake-up instant it was set to (virtual, UTC).
        package var alarmTime: Date
        /// When it started ringing this time (its instant, or the end of the last snooze).
        package var since: Date
        /// While snoozed: when it rings again; nil while it rings.
        package var snoozedUntil: Date?
        /// Snoozes so far.
        package var snoozes: Int
    }

    /// The instants set and not yet rung, in time order, without repeats.
    package private(set) var set: [Date] = []
    /// The alarm ringing or snoozed, nil when none is.
    package var ringing: Ringing?

    /// An alarm with nothing set and nothing ringing.
    package init() {}

    /// Sets the alarm at `instant` (one already set there stays one).
    package mutating func add(_ instant: Date) {
        guard !set.contains(instant) else { return }
        set.append(instant)
        set.sort()
    }

    /// Takes the earliest set instant out.
    mutating func removeFirst() -> Date? { set.isEmpty ? nil : set.removeFirst() }

    /// The next instant something happens: the earliest set alarm, the end of a snooze, or
    /// `userStop` seconds after a ring began (the simulated user's stop; nil: nobody stops it).
    package func nextDue(userStop: TimeInterval?) -> Date? {
        var candidates = set.prefix(1).map { $0 }
        if let ringing {
            if let until = ringing.snoozedUntil {
                candidates.append(until)
            } else if let userStop {
                candidates.append(ringing.since.addingTimeInterval(userStop))
            }
        }
        return candidates.min()
    }
}

/// What the transport reports about the link to the phone (from the socket monitor,
/// zmq_socket_monitor(3)).
public enum WatchLinkEvent: Equatable, Sendable {
    /// A TCP or ipc connection was made (`ZMQ_EVENT_CONNECTED`).
    case connected
    /// A connect attempt found nobody (`ZMQ_EVENT_CONNECT_RETRIED`).
    case connectRetried
    /// The ZMTP handshake completed (`ZMQ_EVENT_HANDSHAKE_SUCCEEDED`): the link is up.
    case handshakeSucceeded
    /// The connection went away (`ZMQ_EVENT_DISCONNECTED`).
    case disconnected
    /// The handshake failed (`ZMQ_EVENT_HANDSHAKE_FAILED_*`).
    /// - Parameters:
    ///   - code: the event's value (a ZAP status, a protocol error code or an errno).
    ///   - authentication: whether the phone's authentication handler refused this watch
    ///     (`ZMQ_EVENT_HANDSHAKE_FAILED_AUTH`).
    ///   - description: the failure in plain words.
    case handshakeFailed(code: UInt32, authentication: Bool, description: String)
}

/// What the watch node asks its driver to do, performed in order.
public enum WatchAction: Equatable, Sendable {
    /// Send to the phone, then feed `WatchNode.sent(_:_:at:)` with the result.
    case send(WireMessage)
    /// Write the state durably, then feed `WatchNode.persisted(_:at:)` with the result before
    /// any other input: the actions that depend on it come from there.
    case persist(WatchSyncState)
    /// Arm `timer` (re-arming replaces the earlier deadline); feed `WatchNode.timerFired(_:at:)`
    /// when it is due.
    case arm(WatchTimer, TimerDeadline)
    /// Disarm `timer`; a timer not armed stays unarmed.
    case cancel(WatchTimer)
    /// Write an event stamped with the virtual instant `at`.
    case emit(Event, at: Date)
    /// Write a line to stderr (the driver prefixes the program name).
    case diagnose(String)
    /// Disconnect from the endpoint and connect again, then feed `WatchNode.reconnected(_:at:)`.
    case reconnect
    /// Stop the process cleanly (exit 0).
    case stop
}

/// The watch process's protocol policy, sans I/O: `WatchCore` (sync and bed taps) plus frame
/// validation and ERROR replies, liveness, the relink back-off, the handshake diagnosis, the
/// zone the watch lives in, the stdin command language, the simulated user, status counters
/// and the persist-failure rollback.
///
/// One method per input, each returning the actions to perform in order. Time comes in with
/// every input; the node reads no clock and does no I/O, so a driver over real sockets and an
/// in-process twin on virtual time run the same decisions.
public struct WatchNode: Sendable {
    /// What the node is told once, at start.
    public struct Configuration: Sendable {
        /// The phone's endpoint, as given (for events and messages).
        public var endpoint: String
        /// This watch's routing id.
        public var id: String
        /// The state file's path (for `persist.failed`).
        public var statePath: String
        /// `--keys`: the directory of this watch's certificate and the phone's, nil without CURVE.
        public var keysDirectory: String?
        /// `--time-zone`, if given.
        public var flagZone: TimeZone?
        /// The machine's zone.
        public var systemZone: TimeZone
        /// The simulated user taps bed every night at this local time.
        public var bedAt: LocalTime?
        /// The simulated user answers a manual-entry prompt with this time.
        public var manualWake: LocalTime?
        /// `--warn-nights`: `coverage.low` when the nights left fall to this many or fewer; 0
        /// never warns.
        public var warnNights: Int
        /// `--request-dates`: while coverage is low (as for `coverage.low`) and the link is up,
        /// send the phone a REQUEST (docs/protocol.md, "REQUEST").
        public var requestDates: Bool
        /// `--snooze-minutes`, as seconds: how long `snooze` silences a ringing alarm.
        public var snooze: TimeInterval
        /// `--stop-alarm-after`, virtual seconds: the simulated user stops a ringing alarm this
        /// long after it began (nil: only a `stop` line does).
        public var userStopsAlarmAfter: TimeInterval?
        /// `--complication-budget`: the complication's reloads allowed in any 24 h (`Complication`).
        public var complicationBudget: Int
        /// `--active-seconds`, virtual seconds: how long the watch app stays active after the
        /// user touches it (a bed tap, a typed wake time, stop, snooze); a REQUEST goes out only
        /// while it is active (`WatchNode`, "Reachability").
        public var activeSeconds: TimeInterval

        /// The default snooze, 9 minutes: the Clock app's on iPhone and Apple Watch ("Set an
        /// alarm on Apple Watch", support.apple.com/guide/watch/apd3a8a3f2e9).
        public static let defaultSnooze: TimeInterval = 9 * 60
        /// The simulated user's default stop, 60 virtual seconds after a ring began.
        public static let defaultUserStop: TimeInterval = 60

        /// The default `--warn-nights`: two nights leave the phone a day and a night to refresh.
        public static let defaultWarnNights = 2
        /// The default `--active-seconds`, 10: this model's assumption of how long a watch app
        /// stays in the foreground after a tap (watchOS returns to the clock face when the wrist
        /// drops; Apple publishes no figure).
        public static let defaultActiveSeconds: TimeInterval = 10

        /// The configuration from the watch's options; each parameter sets the property of its name
        /// (`warnNights` 0 never warns).
        public init(
            endpoint: String, id: String = "watch", statePath: String, keysDirectory: String? = nil,
            flagZone: TimeZone? = nil, systemZone: TimeZone = .current, bedAt: LocalTime? = nil,
            manualWake: LocalTime? = nil, warnNights: Int = Configuration.defaultWarnNights,
            requestDates: Bool = false, snooze: TimeInterval = Configuration.defaultSnooze,
            userStopsAlarmAfter: TimeInterval? = nil, complicationBudget: Int = Complication.defaultBudget,
            activeSeconds: TimeInterval = Configuration.defaultActiveSeconds
        ) {
            self.endpoint = endpoint
            self.id = id
            self.statePath = statePath
            self.keysDirectory = keysDirectory
            self.flagZone = flagZone
            self.systemZone = systemZone
            self.bedAt = bedAt
            self.manualWake = manualWake
            self.warnNights = warnNights
            self.requestDates = requestDates
            self.snooze = snooze
            self.userStopsAlarmAfter = userStopsAlarmAfter
            self.complicationBudget = complicationBudget
            self.activeSeconds = activeSeconds
        }
    }

    /// How a send ended.
    public enum SendResult: Equatable, Sendable {
        /// The message was queued for the phone.
        case sent
        /// The send failed (no phone connected, the queue full, …), in words.
        case failed(reason: String)
    }

    /// How a reconnect ended.
    public enum ReconnectResult: Equatable, Sendable {
        /// The socket disconnected and connected again (`link.reconnect`); the handshake may still be
        /// to come.
        case succeeded
        /// The disconnect or the connect failed, in words (`link.reconnect_failed`).
        case failed(reason: String)
    }

    /// Wall seconds to wait for the first handshake (after start or a drop) before saying why.
    public static let handshakeDeadline: TimeInterval = 5
    /// Wall seconds between later handshake diagnoses while the link stays down.
    public static let handshakeRepeat: TimeInterval = 30
    /// The first relink delay, wall seconds; it doubles at each relink up to `maximumRelinkDelay`
    /// and is reset by a handshake.
    public static let firstRelinkDelay: TimeInterval = 2
    /// The longest relink delay, wall seconds.
    public static let maximumRelinkDelay: TimeInterval = 30
    /// Virtual seconds after a REQUEST before the next may be sent (a REQUEST whose send failed
    /// does not count): at most one an hour, however often the checks come.
    public static let requestSpacing: TimeInterval = 3_600

    /// The settings this node was made with.
    public let configuration: Configuration
    /// The sync state machine.
    public private(set) var core: WatchCore
    /// Which zone the watch lives in (travel > --time-zone > the newest batch's > the machine's).
    public private(set) var zones: WatchZone
    /// The zone the local-time plans (the bed tap) were last made in.
    public private(set) var plannedZone: TimeZone
    /// The next simulated bed tap (virtual), nil without `--bed-at`.
    public private(set) var nextBed: Date?
    /// Wall seconds the link may stay down before the next reconnect by hand.
    public private(set) var relinkDelay = WatchNode.firstRelinkDelay
    /// Whether the ZMTP handshake with the phone completed and the link has not dropped since.
    public private(set) var linkUp = false
    /// Whether the phone is online, from what arrives (`peer.online` / `peer.offline`).
    package private(set) var liveness = LinkLiveness()
    /// Messages refused since start.
    public private(set) var rejectedMessages = 0
    /// Sends that failed since start.
    public private(set) var sendFailures = 0
    /// Since the handshake deadline was armed: connections made and connect attempts that found
    /// nobody. No connection at all means the phone is not there; a connection without a
    /// handshake means it refused this watch.
    public private(set) var connectionsMade = 0
    /// Connect attempts that found nobody since the handshake deadline was armed.
    public private(set) var attemptsFailed = 0
    /// Whether `coverage.low` was said for the current low spell: set when it is said, cleared
    /// when the nights left rise above `--warn-nights` again (one warning per crossing).
    public private(set) var coverageLowSaid = false
    /// REQUESTs sent since start (the last one's `id`).
    public private(set) var requestsSent: UInt64 = 0
    /// The REQUEST checks since start that found a batch, the link up and the nights left at or
    /// below `--warn-nights`: the ones that send (or hold) a REQUEST with `--request-dates`, and
    /// do nothing without it. 0 with `--request-dates` off means that flag, at the same
    /// `--warn-nights`, would have changed nothing in this run (`requestIfLow(at:)` acts on
    /// nothing else). Not stored.
    public private(set) var requestChecksLow = 0
    /// When the last REQUEST went out (virtual), nil when none did or its send failed.
    public private(set) var lastRequestAt: Date?
    /// The end of the watch app's active spell after the user's last touch (virtual), nil
    /// before any.
    public private(set) var activeUntil: Date?
    /// Whether the user looks at the watch (stdin `wrist up` until `wrist down`).
    public private(set) var wristUp = false
    /// Whether a REQUEST was due while the app was not active and is still waiting
    /// (`request.held` said once per wait).
    public private(set) var requestHeld = false
    /// The timers armed and not yet fired or cancelled.
    public private(set) var armed: Set<WatchTimer> = []
    /// The alarm: set by each answered bed tap and typed wake time, rung at its instant.
    package private(set) var alarm = WatchAlarm()
    /// Repeats of the events a peer can cause at will (failed handshakes, rejected messages and
    /// the ERROR replies to them, the peer's ERRORs, failed sends) are held back and counted
    /// (docs/protocol.md, "Events").
    private var limiter = EventRateLimiter()
    /// The valid traffic the phone can send at will and what answers it (`message.received`,
    /// `batch.duplicate`, `batch.stale`, `sync.up_to_date`, `ack.sent`), limited as the phone
    /// limits its own
    /// (`PhoneNode.trafficLimiter`).
    private var traffic = PhoneNode.trafficLimiter()
    /// Messages from the phone that decoded (PINGs aside): one `message.received` each, written or
    /// held back.
    public private(set) var receivedMessages = 0
    /// Whether the phone refused this watch's CURVE key (ZAP status 400) since the last handshake.
    private var refusedByPhone = false
    /// The actions waiting for a persist result, and the state to return to if it failed.
    private var pending: PendingPersist?

    /// The watch face's complication: the next alarm, from the cached dates.
    public private(set) var complication: Complication

    /// The alarms the state file holds (as far as this process knows: loaded, or last written).
    private var writtenAlarms: [Date]?
    /// The alarms whose write failed (`persist.failed`), nil when none did: not tried again
    /// until they change (`.some(nil)`: a write of no alarms failed).
    private var failedAlarms: [Date]??

    private struct PendingPersist: Sendable {
        var rest: [WatchEffect]
        var rollback: WatchCore
        var eventTime: Date
        /// The alarms the state being written holds.
        var alarms: [Date]?
    }

    /// - Parameters:
    ///   - configuration: endpoint, zones and the simulated user.
    ///   - state: the state loaded from disk, nil for a clean start.
    public init(configuration: Configuration, state: WatchSyncState? = nil) {
        self.configuration = configuration
        core = WatchCore(state: state ?? WatchSyncState())
        for instant in state?.alarms ?? [] { alarm.add(instant) }
        writtenAlarms = core.state.alarms
        zones = WatchZone(flag: configuration.flagZone, system: configuration.systemZone)
        plannedZone = zones.resolve(batch: core.state.batch).zone
        complication = Complication(budget: configuration.complicationBudget)
    }

    /// The zone typed wake times and the simulated user's bed time are meant in.
    public var userZone: TimeZone { zones.resolve(batch: core.state.batch).zone }

    // MARK: Inputs

    /// The process started: `watch.started`, the alarms the state file held re-armed (one whose
    /// instant passed while the watch was down rings now: `lateAlarms(at:)`), the first bed tap,
    /// the handshake deadline and the heartbeat.
    /// - Parameters:
    ///   - processID: this process's pid, for `watch.started`.
    ///   - time: the moment of the start.
    public mutating func start(processID: Int32, at time: NodeTime) -> [WatchAction] {
        storingAlarms(startNow(processID: processID, at: time), at: time.now)
    }

    private mutating func startNow(processID: Int32, at time: NodeTime) -> [WatchAction] {
        var actions: [WatchAction] = [
            .emit(
                Event(
                    .watchStarted,
                    [
                        ("endpoint", .string(configuration.endpoint)), ("id", .string(configuration.id)),
                        ("lastSeq", .int(Int64(clamping: core.state.lastAppliedSeq))),
                        ("pid", .int(Int64(processID))), ("timeZone", .string(plannedZone.identifier)),
                        ("timeZoneSource", .string(zones.resolve(batch: core.state.batch).source.rawValue)),
                        ("tzdata", .string(ZoneDatabase.current.version)),
                        ("alarms", .int(Int64(alarm.set.count))),
                    ]), at: time.now)
        ]
        actions += lateAlarms(at: time.now) + armAlarm()
        actions += complicationOffer(at: time.now)
        actions += armBed(after: time.now)
        actions += armHandshakeDeadline(after: Self.handshakeDeadline)
        actions += arm(.heartbeat, .after(LinkLiveness.interval))
        return actions
    }

    /// One message from the phone, decoded at the edge (`WatchInbound(frames:)`, by the driver).
    /// A valid message is a sign of life; a refused one is counted, reported
    /// (`message.rejected`) and, when `answer`, answered with ERROR. A bed tap already due at
    /// `time.now` is taken first, at its own instant (`dueBedTaps(before:)`).
    public mutating func received(_ inbound: WatchInbound, at time: NodeTime) -> [WatchAction] {
        switch inbound {
        case .message(let message):
            return received(message: message, at: time)
        case .refused(let reason, let answer):
            let due = dueBedTaps(before: time)
            return storingAlarms(due + reject(reason, answer: answer, time), at: time.now)
        }
    }

    /// One message from the phone, already decoded: a message that passed `WireCodec.decode`
    /// at the edge, or the embedded twin's typed link (`WireCodec.delivered(_:)` gives the value
    /// the frame would decode to).
    public mutating func received(message: WireMessage, at time: NodeTime) -> [WatchAction] {
        storingAlarms(receivedNow(message: message, at: time), at: time.now)
    }

    private mutating func receivedNow(message: WireMessage, at time: NodeTime) -> [WatchAction] {
        var actions = dueBedTaps(before: time)
        if liveness.heard(at: time.wall) {
            actions.append(.emit(Event(.peerOnline, [("endpoint", .string(configuration.endpoint))]), at: time.now))
        }
        if message == .ping { return actions }
        receivedMessages += 1
        if let line = traffic.admit(Event(.messageReceived, [("type", .string(message.typeName))]), at: time.now) {
            actions.append(.emit(line, at: time.now))
        }
        if case .batch(let batch) = message, let skew = ClockSkew.check(generatedAt: batch.generatedAt, now: time.now) {
            actions += emitLimited(skew, time, eventTime: time.now)
        }
        return actions + step(time, eventTime: time.now) { $0.receive(message) }
    }

    /// What the socket monitor reported about the link (after any bed tap already due, as for
    /// `received(_:at:)`).
    public mutating func link(_ event: WatchLinkEvent, at time: NodeTime) -> [WatchAction] {
        let due = dueBedTaps(before: time)
        return storingAlarms(due + linkNow(event, at: time), at: time.now)
    }

    private mutating func linkNow(_ event: WatchLinkEvent, at time: NodeTime) -> [WatchAction] {
        let endpoint = configuration.endpoint
        switch event {
        case .connected:
            connectionsMade += 1
            return []
        case .connectRetried:
            attemptsFailed += 1
            return []
        case .handshakeSucceeded:
            refusedByPhone = false
            var actions: [WatchAction] = [.emit(Event(.linkUp, [("endpoint", .string(endpoint))]), at: time.now)]
            actions += cancel(.relink) + cancel(.handshake)
            linkUp = true
            relinkDelay = Self.firstRelinkDelay
            actions += step(time, eventTime: time.now) { $0.connected() }
            // Back in reach while low: ask at once (after the HELLO).
            return actions + requestIfLow(at: time.now)
        case .disconnected:
            var actions: [WatchAction] = []
            // A failing handshake disconnects at every reconnect: report a link that was up.
            if linkUp {
                actions.append(.emit(Event(.linkDown, [("endpoint", .string(endpoint))]), at: time.now))
            }
            linkUp = false
            // libzmq does not reconnect after some protocol errors (an oversized frame): if the
            // link stays down, reconnect by hand.
            if !armed.contains(.relink) { actions += arm(.relink, .after(relinkDelay)) }
            if !armed.contains(.handshake) { actions += armHandshakeDeadline(after: Self.handshakeDeadline) }
            return actions
        case .handshakeFailed(let code, let authentication, let description):
            if authentication { refusedByPhone = true }
            let reason =
                authentication
                ? "the phone refused this watch (status \(code)): its key is not paired with the phone"
                : configuration.keysDirectory == nil
                    ? "the handshake failed: \(description); the phone may require CURVE; pass --keys DIR"
                    : "the handshake failed: \(description); check that phone.key is the phone's current public certificate"
            // libzmq retries at every reconnect interval: repeats are held back.
            let failed = Event(
                .linkHandshakeFailed,
                [("endpoint", .string(endpoint)), ("code", .int(Int64(code))), ("reason", .string(reason))])
            var actions = emitLimited(failed, time, eventTime: time.now)
            if !actions.isEmpty { actions.append(.diagnose("\(endpoint): \(reason)")) }
            return actions
        }
    }

    /// An armed timer is due. `time.now` for the bed timer is ignored: the tap happens at its
    /// planned virtual instant, whenever the driver woke. Before any other timer, a bed tap
    /// already due is taken first (`dueBedTaps(before:)`).
    public mutating func timerFired(_ timer: WatchTimer, at time: NodeTime) -> [WatchAction] {
        storingAlarms(timerFiredNow(timer, at: time), at: time.now)
    }

    private mutating func timerFiredNow(_ timer: WatchTimer, at time: NodeTime) -> [WatchAction] {
        armed.remove(timer)
        switch timer {
        case .bed:
            // An alarm due before the tap rings first, at its own instant.
            let alarms = nextBed.map { dueAlarms(through: $0, time) } ?? []
            return alarms + bedTap(time)
        case .alarm:
            armed.insert(.alarm)
            guard let due = alarm.nextDue(userStop: configuration.userStopsAlarmAfter) else { return [] }
            let taps = dueBedTaps(before: NodeTime(now: due.addingTimeInterval(-0.001), wall: time.wall))
            return taps + dueAlarms(through: due, time)
        default:
            break
        }
        let due = dueBedTaps(before: time)
        return due.isEmpty ? fired(timer, at: time) : due + fired(timer, at: time)
    }

    private mutating func fired(_ timer: WatchTimer, at time: NodeTime) -> [WatchAction] {
        switch timer {
        case .helloRetry:
            return step(time, eventTime: time.now) { $0.helloRetryDue() }
        case .heartbeat:
            var actions: [WatchAction] = []
            actions.reserveCapacity(2)
            if linkUp { actions.append(.send(.ping)) }
            for line in limiter.flush(at: Self.limiterInstant(time)) { actions.append(.emit(line, at: time.now)) }
            for line in traffic.flush(at: time.now) { actions.append(.emit(line, at: time.now)) }
            actions += complicationRetry(at: time.now)
            if let silence = liveness.check(at: time.wall) {
                actions.append(
                    .emit(
                        Event(
                            .peerOffline,
                            [("endpoint", .string(configuration.endpoint)), ("silentFor", .double(silence.rounded()))]),
                        at: time.now))
            }
            armed.insert(.heartbeat)
            actions.append(.arm(.heartbeat, .after(LinkLiveness.interval)))
            return actions
        case .handshake:
            let reason = handshakeTimeoutReason
            return [
                .emit(
                    Event(
                        .linkHandshakeTimeout,
                        [("endpoint", .string(configuration.endpoint)), ("reason", .string(reason))]), at: time.now),
                .diagnose(reason),
            ] + armHandshakeDeadline(after: Self.handshakeRepeat)
        case .relink:
            relinkDelay = min(relinkDelay * 2, Self.maximumRelinkDelay)
            return [.reconnect] + arm(.relink, .after(relinkDelay))
        case .request:
            return requestIfLow(at: time.now)
        case .bed:
            return bedTap(time)
        case .alarm:
            return dueAlarms(through: time.now, time)
        }
    }

    /// The simulated user's nightly tap at its planned instant `nextBed` (not `time.now`), the
    /// manual entry when no cached date covers it, and the next night's tap planned.
    private mutating func bedTap(_ time: NodeTime) -> [WatchAction] {
        guard let at = nextBed else { return [] }
        touched(at: at)
        let zone = userZone
        var actions = step(time, eventTime: at) { $0.bedTap(at: at, in: zone) }
        if core.awaitingManualEntry, let manual = configuration.manualWake {
            actions += step(time, eventTime: at) { $0.manualWakeTime(manual.description, at: at, in: zone) }
        }
        return actions + armBed(after: at)
    }

    /// The bed taps whose planned instant is at or before `time.now` while their timer has not
    /// been handled yet, taken first, each at its own instant, before the input that came at
    /// `time`. A driver that woke late, or was busy with a write or another message, may hold
    /// a due timer behind a message read in the same turn (at 172,800× a wall millisecond is
    /// three virtual minutes): without this, a BATCH that arrived after the tap's instant would
    /// be applied first, and the tap, stamped at its instant, would read dates the watch did
    /// not yet hold then. So the tap reads what the watch held at its instant, as in the twin's
    /// timer heap (timers fire in deadline order), and the events stay in time order.
    private mutating func dueBedTaps(before time: NodeTime) -> [WatchAction] {
        var actions: [WatchAction] = []
        while true {
            let bed = armed.contains(.bed) ? nextBed.flatMap { $0 <= time.now ? $0 : nil } : nil
            let ring =
                armed.contains(.alarm)
                ? alarm.nextDue(userStop: configuration.userStopsAlarmAfter).flatMap { $0 <= time.now ? $0 : nil }
                : nil
            if let ring, bed.map({ ring <= $0 }) ?? true {
                actions += dueAlarms(through: ring, time)
            } else if bed != nil {
                armed.remove(.bed)
                actions += bedTap(time)
            } else {
                return actions
            }
        }
    }

    // MARK: Alarm

    /// What the alarm does up to `instant`, each at its own instant: a set alarm rings
    /// (`alarm.fired`), a snooze ends and it rings again, the simulated user stops it
    /// (`alarm.stopped`); then its timer is armed for the next moment.
    ///
    /// The rule users expect of an alarm: it rings at its instant and goes on ringing until
    /// someone stops or snoozes it; no gesture, sound or attention state ends it unattended.
    /// A newer alarm that comes due while one rings takes its place (one alarm rings at a time).
    private mutating func dueAlarms(through instant: Date, _ time: NodeTime) -> [WatchAction] {
        var actions: [WatchAction] = []
        let userStop = configuration.userStopsAlarmAfter
        while let due = alarm.nextDue(userStop: userStop), due <= instant {
            if let first = alarm.set.first, first == due {
                _ = alarm.removeFirst()
                if let replaced = alarm.ringing {
                    // One alarm rings at a time: the one it replaces ends here, said so.
                    actions.append(.emit(stoppedEvent(replaced, at: first, by: "replaced"), at: first))
                }
                alarm.ringing = WatchAlarm.Ringing(alarmTime: first, since: first, snoozedUntil: nil, snoozes: 0)
                actions.append(
                    .emit(alarmEvent(.alarmFired, first, [("snoozes", .int(0)), ("late", .double(0))]), at: first))
            } else if var ringing = alarm.ringing, let until = ringing.snoozedUntil, until == due {
                ringing.snoozedUntil = nil
                ringing.since = until
                alarm.ringing = ringing
                actions.append(
                    .emit(
                        alarmEvent(
                            .alarmFired, ringing.alarmTime,
                            [("snoozes", .int(Int64(ringing.snoozes))), ("late", .double(0))]),
                        at: until))
            } else if let ringing = alarm.ringing {
                alarm.ringing = nil
                actions.append(.emit(stoppedEvent(ringing, at: due, by: "simulated user"), at: due))
            } else {
                break
            }
        }
        return actions + armAlarm()
    }

    /// At start, the alarms loaded from the state file whose instant is at or before `now` (they
    /// came due while no watch process ran): each rings now, stamped `now`, with `late` the
    /// seconds since its instant, in time order, each later one taking the place of the one
    /// before (`alarm.stopped` by `replaced`), so the newest rings until someone stops it.
    /// Apple documents no rule for an alarm whose time passed while the watch app was not
    /// running; ringing it late and saying how late is this model's assumption (a late ring
    /// wakes the user, a silent one does not; docs/protocol.md, "The alarm").
    private mutating func lateAlarms(at now: Date) -> [WatchAction] {
        var actions: [WatchAction] = []
        while let first = alarm.set.first, first <= now {
            _ = alarm.removeFirst()
            if let replaced = alarm.ringing {
                actions.append(.emit(stoppedEvent(replaced, at: now, by: "replaced"), at: now))
            }
            alarm.ringing = WatchAlarm.Ringing(alarmTime: first, since: now, snoozedUntil: nil, snoozes: 0)
            let late = now.timeIntervalSince(first).rounded()
            actions.append(
                .emit(alarmEvent(.alarmFired, first, [("snoozes", .int(0)), ("late", .double(late))]), at: now))
        }
        return actions
    }

    /// After an input: when the alarms set differ from what the state file holds, write the
    /// state (a `.persist` after `actions`), unless a write is already waiting for its result
    /// (whose success checks again) or these very alarms failed to be written (tried again when
    /// they change). A watch killed and started again re-arms what the file holds.
    private mutating func storingAlarms(_ actions: [WatchAction], at eventTime: Date) -> [WatchAction] {
        core.noteAlarms(alarm.set)
        let alarms = core.state.alarms
        guard pending == nil, alarms != writtenAlarms, failedAlarms != .some(alarms) else {
            return actions
        }
        if actions.contains(.stop) { return actions }
        pending = PendingPersist(rest: [], rollback: core, eventTime: eventTime, alarms: alarms)
        return actions + [.persist(core.state)]
    }

    /// Sets the alarm at `instant` (`alarm.set`, stamped `at`) and arms its timer.
    private mutating func setAlarm(_ instant: Date, at eventTime: Date) -> [WatchAction] {
        alarm.add(instant)
        return [.emit(alarmEvent(.alarmSet, instant, []), at: eventTime)] + armAlarm()
    }

    /// Arms the alarm timer at the alarm's next moment, or cancels it when there is none.
    private mutating func armAlarm() -> [WatchAction] {
        core.noteAlarms(alarm.set)
        guard let due = alarm.nextDue(userStop: configuration.userStopsAlarmAfter) else {
            return armed.contains(.alarm) ? cancel(.alarm) : []
        }
        return arm(.alarm, .at(due))
    }

    /// stdin `stop` or `snooze`: what the user does to a ringing alarm.
    private mutating func alarmCommand(snooze: Bool, _ text: String, at now: Date) -> [WatchAction] {
        guard var ringing = alarm.ringing, ringing.snoozedUntil == nil || !snooze else {
            return [
                .emit(
                    Event(.inputRejected, [("input", .string(text)), ("reason", .string("no alarm is ringing"))]),
                    at: now)
            ]
        }
        if snooze {
            let until = now.addingTimeInterval(configuration.snooze)
            ringing.snoozedUntil = until
            ringing.snoozes += 1
            alarm.ringing = ringing
            return [.emit(alarmEvent(.alarmSnoozed, ringing.alarmTime, [("until", .date(until))]), at: now)]
                + armAlarm()
        }
        alarm.ringing = nil
        return [.emit(stoppedEvent(ringing, at: now, by: "user"), at: now)] + armAlarm()
    }

    /// `alarm.stopped` {alarmTime, localTime, timeZone, rangFor (seconds of ringing since the
    /// last ring began, 0 while snoozed), snoozes, by}.
    private func stoppedEvent(_ ringing: WatchAlarm.Ringing, at now: Date, by who: String) -> Event {
        let rang = ringing.snoozedUntil == nil ? max(0, now.timeIntervalSince(ringing.since)) : 0
        return alarmEvent(
            .alarmStopped, ringing.alarmTime,
            [("rangFor", .double(rang.rounded())), ("snoozes", .int(Int64(ringing.snoozes))), ("by", .string(who))])
    }

    /// An alarm event: {alarmTime, localDate, localTime and timeZone (the alarm's instant in the
    /// zone the watch lives in), then `fields`}.
    private func alarmEvent(_ name: EventName, _ alarmTime: Date, _ fields: [(String, EventValue)]) -> Event {
        let zone = userZone
        let calendar = WakeCalendar.calendar(in: zone)
        return Event(
            name,
            [
                ("alarmTime", .date(alarmTime)),
                ("localDate", .string(WakeCalendar.localDateString(alarmTime, in: calendar))),
                ("localTime", .string(WakeCalendar.localTimeString(alarmTime, in: calendar))),
                ("timeZone", .string(zone.identifier)),
            ] + fields)
    }

    /// One stdin line.
    public mutating func command(line: String, at time: NodeTime) -> [WatchAction] {
        command(WatchCommand(parsing: line), at: time)
    }

    /// One parsed stdin command (after any bed tap already due, as for `received(_:at:)`).
    public mutating func command(_ command: WatchCommand, at time: NodeTime) -> [WatchAction] {
        let due = dueBedTaps(before: time)
        return storingAlarms(due + commandNow(command, at: time), at: time.now)
    }

    private mutating func commandNow(_ command: WatchCommand, at time: NodeTime) -> [WatchAction] {
        let now = time.now
        switch command {
        case .empty:
            return []
        case .bed:
            touched(at: now)
            let zone = userZone
            return step(time, eventTime: now) { $0.bedTap(at: now, in: zone) }
        case .complication:
            return complicationTimeline(at: now)
        case .status:
            var status = core.status(at: now)
            let left = WatchCore.nightsLeft(at: now, in: core.state.batch)
            status.fields.append((key: "nightsLeft", value: .int(Int64(left))))
            let low = core.state.batch != nil && isLow(nightsLeft: left)
            status.fields.append((key: "coverageLow", value: .bool(low)))
            status.fields.append((key: "requestsSent", value: .int(Int64(clamping: requestsSent))))
            status.fields.append((key: "appActive", value: .bool(isActive(at: now))))
            status.fields.append((key: "requestHeld", value: .bool(requestHeld)))
            status.fields.append((key: "rejectedMessages", value: .int(Int64(rejectedMessages))))
            status.fields.append((key: "receivedMessages", value: .int(Int64(receivedMessages))))
            status.fields.append((key: "sendFailures", value: .int(Int64(sendFailures))))
            status.fields.append((key: "alarmSet", value: alarm.set.first.map { .date($0) } ?? .null))
            status.fields.append(
                (key: "alarmRinging", value: .bool(alarm.ringing.map { $0.snoozedUntil == nil } ?? false)))
            // The zone the watch lives in (its bed taps' zone), beside the batch's `timeZone`.
            let living = zones.resolve(batch: core.state.batch)
            status.fields.append((key: "tapTimeZone", value: .string(living.zone.identifier)))
            status.fields.append((key: "tapTimeZoneSource", value: .string(living.source.rawValue)))
            return [.emit(status, at: now)]
        case .quit:
            return stopping([("reason", .string("quit"))], time)
        case .stopAlarm:
            touched(at: now)
            return alarmCommand(snooze: false, "stop", at: now) + requestIfLow(at: now)
        case .snooze:
            touched(at: now)
            return alarmCommand(snooze: true, "snooze", at: now) + requestIfLow(at: now)
        case .wrist(let up):
            wristUp = up
            // Raised: the app is in the foreground while the user looks. Lowered: it leaves the
            // foreground at once (reachability flips when the wrist drops).
            activeUntil = nil
            let sends = up ? requestIfLow(at: now) : []
            let fields: [(String, EventValue)] = [
                ("up", .bool(up)), ("appActive", .bool(isActive(at: now))), ("requestHeld", .bool(requestHeld)),
            ]
            return [.emit(Event(.wrist, fields), at: now)] + sends
        case .timeZone(let zone):
            zones.travel = zone
            return replanIfZoneChanged(at: now, force: true)
        case .wakeTime(let wake):
            touched(at: now)
            let zone = userZone
            return step(time, eventTime: now) { $0.manualWakeTime(wake.description, at: now, in: zone) }
        case .invalid(let input, let reason):
            return [.emit(Event(.inputRejected, [("input", .string(input)), ("reason", .string(reason))]), at: now)]
        case .unrecognized(let text):
            // An unknown command, prompt or not: the prompt stays open for a wake time.
            return [
                .emit(
                    Event(
                        .inputRejected,
                        [("input", .string(echoed(text))), ("reason", .string(WatchCommand.unknownCommandReason))]),
                    at: now)
            ]
        }
    }

    /// The result of the last `.persist`. On success the actions that waited for it follow; on
    /// failure the node returns to the state before the input that asked for the write and
    /// drops them (durable before acknowledged: no ACK for a batch that is not on disk).
    public mutating func persisted(_ result: PersistResult, at time: NodeTime) -> [WatchAction] {
        guard let pending else { return [] }
        self.pending = nil
        switch result {
        case .succeeded:
            writtenAlarms = pending.alarms
            failedAlarms = nil
            let actions = perform(pending.rest, rollback: pending.rollback, time, eventTime: pending.eventTime)
            return storingAlarms(actions, at: pending.eventTime)
        case .failed(_, let reason, _):
            core = pending.rollback
            // The alarms stay set in this process (they ring); the file keeps what it had.
            failedAlarms = .some(pending.alarms)
            let failed = Event(
                .persistFailed, [("path", .string(configuration.statePath)), ("reason", .string(reason))])
            let actions = [.emit(failed, at: pending.eventTime)] + replanIfZoneChanged(at: pending.eventTime)
            return storingAlarms(actions, at: pending.eventTime)
        }
    }

    /// The result of a `.send`: `<type>.sent`, or `send.failed` (counted, repeats held back).
    /// Heartbeat PINGs are not reported either way.
    public mutating func sent(_ message: WireMessage, _ result: SendResult, at time: NodeTime) -> [WatchAction] {
        guard message != .ping else { return [] }
        switch result {
        case .sent:
            var actions: [WatchAction] = limiter.end(.sendFailed).map { .emit($0, at: time.now) }
            guard let sent = WireEvents.sent(message) else { return actions }
            switch message {
            case .error: actions += emitLimited(sent, time, eventTime: time.now)
            // The answer to each BATCH, which the phone can send at will.
            case .ack: if let line = traffic.admit(sent, at: time.now) { actions.append(.emit(line, at: time.now)) }
            default: actions.append(.emit(sent, at: time.now))
            }
            return actions
        case .failed(let reason):
            sendFailures += 1
            // A REQUEST that did not leave may go again at the next check.
            if case .request = message { lastRequestAt = nil }
            let failed = Event(
                .sendFailed, [("type", .string(message.typeName)), ("reason", .string(reason))])
            return emitLimited(failed, time, eventTime: time.now)
        }
    }

    /// The result of a `.reconnect`: `link.reconnect` or `link.reconnect_failed`.
    public mutating func reconnected(_ result: ReconnectResult, at time: NodeTime) -> [WatchAction] {
        let endpoint = ("endpoint", EventValue.string(configuration.endpoint))
        switch result {
        case .succeeded:
            return [.emit(Event(.linkReconnect, [endpoint]), at: time.now)]
        case .failed(let reason):
            return [.emit(Event(.linkReconnectFailed, [endpoint, ("reason", .string(reason))]), at: time.now)]
        }
    }

    /// A signal, a closed output or Ctrl-D on a terminal: `watch.stopping`, then stop.
    public mutating func stop(_ cause: StopCause, at time: NodeTime) -> [WatchAction] {
        stopping(cause.eventFields, time)
    }

    /// The process ends without a stop (the poll loop failed): what is still held back, so the
    /// counts add up to every occurrence. Nothing after a stop, which said it already.
    public mutating func finish(at time: NodeTime) -> [WatchAction] {
        (limiter.endAll() + traffic.endAll()).map { .emit($0, at: time.now) }
    }

    /// `watch.stopping`, the last line: what the rate limit still holds back is said before it
    /// (the counts add up to every occurrence).
    private mutating func stopping(_ fields: [(String, EventValue)], _ time: NodeTime) -> [WatchAction] {
        (limiter.endAll() + traffic.endAll()).map { .emit($0, at: time.now) } + [
            .emit(Event(.watchStopping, fields), at: time.now), .stop,
        ]
    }

    // MARK: Decisions

    /// Blame the keys only when a connection was made: CURVE with a wrong server key fails
    /// without a word on this side, but so does a phone that is not there.
    private var handshakeTimeoutReason: String {
        let endpoint = configuration.endpoint
        if refusedByPhone {
            // The phone said why (ZAP 400): this watch's key is not paired; phone.key is not the cause.
            let certificate = configuration.keysDirectory.map { "\($0)/watch.key" } ?? "watch.key"
            return "connected to \(endpoint), but the phone refused this watch's key (not paired with it): "
                + "copy \(certificate) into the phone's --keys directory and restart the phone"
        }
        if connectionsMade == 0 {
            return "the phone is not reachable at \(endpoint): no connection could be made "
                + "(\(attemptsFailed) attempts failed); is the phone running there?"
        }
        guard let keysDirectory = configuration.keysDirectory else {
            return "connected to \(endpoint), but no handshake with the phone followed: "
                + "is a SleepTap phone listening there, and does it require CURVE (--keys DIR)?"
        }
        return "connected to \(endpoint), but no CURVE handshake with the phone followed: check that "
            + "\(keysDirectory)/phone.key is the phone's certificate and this watch is paired with it"
    }

    /// A refused message: counted, reported (repeats held back) and, when `answer`, answered
    /// with ERROR.
    private mutating func reject(_ reason: String, answer: Bool, _ time: NodeTime) -> [WatchAction] {
        rejectedMessages += 1
        let actions = emitLimited(Event(.messageRejected, [("reason", .string(reason))]), time, eventTime: time.now)
        return answer ? actions + [.send(.error(reason: reason))] : actions
    }

    /// Runs one input of the core and turns its effects into actions.
    private mutating func step(
        _ time: NodeTime, eventTime: Date, _ body: (inout WatchCore) -> [WatchEffect]
    ) -> [WatchAction] {
        let before = core
        let effects = body(&core)
        return perform(effects, rollback: before, time, eventTime: eventTime)
    }

    /// The core's effects as actions, up to the first `persist`: the rest waits for its result.
    /// After the last one the nights left are checked when a batch was applied or bed tapped
    /// (`coverage.low`), then the zone: a batch in another zone moves the watch.
    private mutating func perform(
        _ effects: [WatchEffect], rollback: WatchCore, _ time: NodeTime, eventTime: Date
    ) -> [WatchAction] {
        var actions: [WatchAction] = []
        var checkCoverage = false
        var applied = false
        for (index, effect) in effects.enumerated() {
            if case .emit(let event) = effect, Self.coverageCheckpoints.contains(event.name) {
                checkCoverage = true
                applied = applied || event.name == .batchApplied
            }
            switch effect {
            case .persist(let state):
                pending = PendingPersist(
                    rest: Array(effects[(index + 1)...]), rollback: rollback, eventTime: eventTime,
                    alarms: state.alarms)
                actions.append(.persist(state))
                return actions
            case .send(let message):
                actions.append(.send(message))
            case .armHelloRetry(let seconds):
                actions += arm(.helloRetry, .after(seconds))
            case .cancelHelloRetry:
                actions += cancel(.helloRetry)
            case .emit(let event) where event.name == .peerError:
                actions += emitLimited(event, time, eventTime: eventTime)
            case .emit(let event) where Self.trafficEvents.contains(event.name):
                if let line = traffic.admit(event, at: eventTime) { actions.append(.emit(line, at: eventTime)) }
            case .emit(let event):
                actions.append(.emit(event, at: eventTime))
            case .setAlarm(let instant):
                actions += setAlarm(instant, at: eventTime)
            }
        }
        if applied { actions += complicationOffer(at: eventTime) }
        if checkCoverage {
            actions += coverageWarning(at: eventTime)
            actions += requestIfLow(at: eventTime)
        }
        return actions + replanIfZoneChanged(at: eventTime)
    }

    /// The complication offered the dates the watch holds now: `complication.reloaded` when they
    /// changed and the budget allows it, `complication.budget_exhausted` when it does not.
    private mutating func complicationOffer(at now: Date) -> [WatchAction] {
        guard let batch = core.state.batch else { return [] }
        let outcome = complication.offer(digest: batch.digest, wakes: batch.entries.map(\.wake), at: now)
        return complicationEvents(outcome, at: now)
    }

    /// The waiting dates loaded once the budget allows it (each heartbeat asks).
    private mutating func complicationRetry(at now: Date) -> [WatchAction] {
        guard let outcome = complication.loadWaiting(at: now), case .reloaded = outcome else { return [] }
        return complicationEvents(outcome, at: now)
    }

    private func complicationEvents(_ outcome: Complication.Outcome, at now: Date) -> [WatchAction] {
        let budget: (String, EventValue) = ("budget", .int(Int64(complication.budget)))
        switch outcome {
        case .unchanged:
            return []
        case .reloaded(let reloads):
            let next = complication.entry(at: now)?.wake
            return [
                .emit(
                    Event(
                        .complicationReloaded,
                        [
                            ("digest", .string(complication.digest.map(Hex64.string) ?? "")),
                            ("entries", .int(Int64(complication.timeline.count))),
                            ("nextAlarm", next.map { .date($0) } ?? .null), ("reloads", .int(Int64(reloads))), budget,
                        ]), at: now)
            ]
        case .budgetExhausted(let reloads, let retryAt):
            return [
                .emit(
                    Event(
                        .complicationBudgetExhausted,
                        [
                            ("digest", .string(complication.waiting.map { Hex64.string($0.digest) } ?? "")),
                            ("reloads", .int(Int64(reloads))), budget, ("retryAt", .date(retryAt)),
                        ]), at: now)
            ]
        }
    }

    /// Stdin `complication`: `complication.timeline`, then one `complication.entry` per entry, in
    /// the zone the watch lives in.
    private func complicationTimeline(at now: Date) -> [WatchAction] {
        let zone = userZone
        let calendar = WakeCalendar.calendar(in: zone)
        var actions: [WatchAction] = [
            .emit(
                Event(
                    .complicationTimeline,
                    [
                        ("digest", complication.digest.map { .string(Hex64.string($0)) } ?? .null),
                        ("entries", .int(Int64(complication.timeline.count))),
                        ("showing", complication.entry(at: now)?.wake.map { .date($0) } ?? .null),
                        ("reloads", .int(Int64(complication.reloadsInWindow(at: now)))),
                        ("budget", .int(Int64(complication.budget))), ("waiting", .bool(complication.waiting != nil)),
                    ]), at: now)
        ]
        for entry in complication.timeline {
            var fields: [(String, EventValue)] = [("start", .date(entry.start))]
            if let wake = entry.wake {
                fields += [
                    ("wake", .date(wake)), ("localDate", .string(WakeCalendar.localDateString(wake, in: calendar))),
                    ("localTime", .string(WakeCalendar.localTimeString(wake, in: calendar))),
                    ("text", .string("next alarm \(WakeCalendar.localTimeString(wake, in: calendar))")),
                ]
            } else {
                fields += [("wake", .null), ("text", .string("no cached date"))]
            }
            fields.append(("timeZone", .string(zone.identifier)))
            actions.append(.emit(Event(.complicationEntry, fields), at: now))
        }
        return actions
    }

    /// The events after which the nights left are checked: an applied batch (on disk: after its
    /// persist) and a bed tap, cached or not.
    private static let coverageCheckpoints: Set<EventName> = [.batchApplied, .bedWakeTime, .fallbackManualEntry]

    /// Whether `nightsLeft` is at or below a `--warn-nights` that is not 0.
    private func isLow(nightsLeft: Int) -> Bool {
        configuration.warnNights > 0 && nightsLeft <= configuration.warnNights
    }

    /// `coverage.low` {nightsLeft, coverageEnd} the first time the nights left are at or below
    /// `--warn-nights` since they were last above it; nothing otherwise.
    /// A watch that never held a batch has no coverage to run low: it is not warned (its bed tap
    /// says so in `fallback.manual_entry`).
    private mutating func coverageWarning(at now: Date) -> [WatchAction] {
        guard let batch = core.state.batch else { return [] }
        let left = WatchCore.nightsLeft(at: now, in: batch)
        guard isLow(nightsLeft: left) else {
            coverageLowSaid = false
            return []
        }
        guard !coverageLowSaid else { return [] }
        coverageLowSaid = true
        let low = Event(
            .coverageLow,
            [
                ("nightsLeft", .int(Int64(left))),
                ("coverageEnd", batch.coverageEnd.map { .date($0) } ?? .null),
            ])
        return [.emit(low, at: now)]
    }

    /// With `--request-dates`: a REQUEST {id, nightsLeft, coverageEnd} when a batch is held, the
    /// nights left are at or below `--warn-nights`, the link is up, and no REQUEST went out in
    /// the last `requestSpacing` virtual seconds; nothing otherwise. Checked where `coverage.low`
    /// is (an applied batch, a bed tap), when the link comes up, and `requestSpacing` after each
    /// REQUEST (the `request` timer).
    private mutating func requestIfLow(at now: Date) -> [WatchAction] {
        guard linkUp, let batch = core.state.batch else { return [] }
        let left = WatchCore.nightsLeft(at: now, in: batch)
        guard isLow(nightsLeft: left) else {
            requestHeld = false
            return []
        }
        requestChecksLow += 1
        guard configuration.requestDates else { return [] }
        if let last = lastRequestAt, now >= last, now.timeIntervalSince(last) < Self.requestSpacing { return [] }
        guard isActive(at: now) else {
            // Reachability: only an active watch app may send (`sendMessage`); the REQUEST waits
            // for the user's next touch or raised wrist.
            if requestHeld { return [] }
            requestHeld = true
            return [
                .emit(
                    Event(
                        .requestHeld,
                        [("nightsLeft", .int(Int64(left))), ("reason", .string("watch app not active"))]),
                    at: now)
            ]
        }
        requestHeld = false
        requestsSent += 1
        lastRequestAt = now
        // No answer is awaited as such: if the nights left are still low an hour on (the REQUEST
        // or its answer was lost, or the phone refused), the timer asks again.
        return [.send(.request(DateRequest(id: requestsSent, nightsLeft: left, coverageEnd: batch.coverageEnd)))]
            + arm(.request, .at(now.addingTimeInterval(Self.requestSpacing)))
    }

    /// The user touched the watch at `now`: the app is active for `--active-seconds` from then.
    private mutating func touched(at now: Date) {
        activeUntil = max(activeUntil ?? now, now.addingTimeInterval(configuration.activeSeconds))
    }

    /// Whether the watch app is active at `now`: while the wrist is up, and up to
    /// `--active-seconds` after the user's last touch (its end included, so a tap's own checks
    /// pass at `--active-seconds 0`).
    ///
    /// Reachability as WatchConnectivity has it (developer.apple.com/documentation/
    /// watchconnectivity/wcsession/isreachable): the watch can message the iPhone only while its
    /// app is in the foreground or running at high priority in the background. The BATCH (the
    /// phone's newest dates, application context) and the ACK (`transferUserInfo`) are
    /// delivered in the background and are not held; the REQUEST (`sendMessage`) is.
    func isActive(at now: Date) -> Bool {
        wristUp || activeUntil.map { now <= $0 } ?? false
    }

    /// Plans everything timed in local time again when the zone in force is not the one it was
    /// planned in (`force`: the user travelled, say so even to the same zone).
    private mutating func replanIfZoneChanged(at now: Date, force: Bool = false) -> [WatchAction] {
        let (zone, source) = zones.resolve(batch: core.state.batch)
        guard force || zone.identifier != plannedZone.identifier else { return [] }
        let from = plannedZone
        plannedZone = zone
        let actions = armBed(after: now)
        let changed = Event(
            .timezoneChanged,
            [
                ("from", .string(from.identifier)), ("to", .string(zone.identifier)),
                ("timeZoneSource", .string(source.rawValue)), ("nextBedTap", nextBed.map { .date($0) } ?? .null),
            ])
        return actions + [.emit(changed, at: now)]
    }

    /// Plans the next bed tap after `instant`, at `--bed-at` in the zone in force.
    private mutating func armBed(after instant: Date) -> [WatchAction] {
        guard let bedAt = configuration.bedAt else { return [] }
        nextBed = WakeCalendar.next(bedAt, after: instant, in: WakeCalendar.calendar(in: userZone))
        if let nextBed { return arm(.bed, .at(nextBed)) }
        return cancel(.bed)
    }

    private mutating func armHandshakeDeadline(after seconds: TimeInterval) -> [WatchAction] {
        connectionsMade = 0
        attemptsFailed = 0
        return arm(.handshake, .after(seconds))
    }

    private mutating func arm(_ timer: WatchTimer, _ deadline: TimerDeadline) -> [WatchAction] {
        armed.insert(timer)
        return [.arm(timer, deadline)]
    }

    private mutating func cancel(_ timer: WatchTimer) -> [WatchAction] {
        armed.remove(timer)
        return [.cancel(timer)]
    }

    /// `event` unless it is a held-back repeat (then nothing).
    private mutating func emitLimited(_ event: Event, _ time: NodeTime, eventTime: Date) -> [WatchAction] {
        guard let line = limiter.admit(event, at: Self.limiterInstant(time)) else { return [] }
        return [.emit(line, at: eventTime)]
    }

    /// The answers to valid messages the phone can send at will, held back by `traffic`.
    private static let trafficEvents: Set<EventName> = [.batchDuplicate, .batchStale, .syncUpToDate]

    /// The rate limiter's windows are wall time (transport timing): monotonic seconds as instants.
    private static func limiterInstant(_ time: NodeTime) -> Date {
        Date(timeIntervalSinceReferenceDate: time.wall)
    }
}

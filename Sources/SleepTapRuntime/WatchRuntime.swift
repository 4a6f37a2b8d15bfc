import Foundation
import SleepTapCore
import ZeroMQ

/// The `watch` process: wires `WatchCore` to a ZeroMQ DEALER (plus a socket monitor that
/// reports each completed handshake), a state file, stdin, a clock and the simulated user.
public final class WatchRuntime {
    private let options: WatchOptions
    private let program = "watch"

    public init(options: WatchOptions) { self.options = options }

    /// Runs until SIGINT, SIGTERM or `quit`.
    /// - Returns: the process exit status (`ExitStatus`).
    public func run() -> Int32 {
        let clock = options.clock.makeClock()
        let output = EventOutput(clock: clock)

        let startUp: StartUp<WatchSyncState>
        switch StartUp<WatchSyncState>.begin(
            program: program, stateDirectory: options.stateDirectory, fileName: "watch.json",
            keysDirectory: options.keysDirectory, output: output, validate: { $0.validationProblem })
        {
        case .success(let value): startUp = value
        case .failure(let exit): return exit.status
        }
        defer { startUp.close() }
        let mailbox = startUp.mailbox
        let stateFile = startUp.stateFile
        let loaded = startUp.loaded
        let keys = startUp.keys

        let context: Context
        let dealer: Socket
        let monitor: Socket
        let monitorEndpoint = "inproc://sleeptap-watch-monitor"
        do {
            context = try Context()
            dealer = try LinkSettings.makeDealer(context, routingId: options.id)
            if let keys { try dealer.setCurveClient(keys: keys.mine, serverPublicKey: keys.peerPublicKey) }
            try dealer.monitor(
                endpoint: monitorEndpoint,
                events: [.connected, .connectRetried, .handshakeSucceeded, .disconnected, .handshakeFailed])
            monitor = try Socket(context: context, type: .pair)
            try monitor.setLinger(milliseconds: 0)
            try monitor.connect(monitorEndpoint)
        } catch {
            diagnose(program, "cannot create a ZeroMQ socket: \(error)")
            return ExitStatus.software
        }
        defer {
            try? dealer.stopMonitor()
            dealer.close()
            monitor.close()
            context.terminate()
        }
        if !options.insecure, let problem = IPCDirectoryPolicy.problem(for: options.endpoint, create: false) {
            diagnose(program, "refusing \(options.endpoint): \(problem)")
            return ExitStatus.unavailable
        }
        if let problem = EndpointDiagnosis.connectProblem(options.endpoint) {
            diagnose(program, "cannot connect to \(options.endpoint): \(problem)")
            return ExitStatus.unavailable
        }
        do {
            try dealer.connect(options.endpoint)
        } catch {
            diagnose(program, "cannot connect to \(options.endpoint): \(error)")
            return ExitStatus.unavailable
        }

        StandardInputReader.start(posting: mailbox)

        let loop = EventLoop<String>(sockets: [dealer, monitor], mailbox: mailbox, output: output)
        var core = WatchCore(state: loaded ?? WatchSyncState())
        var exitStatus = ExitStatus.ok

        /// Which zone the watch lives in (travel > --time-zone > the newest batch's > the machine's).
        var zones = WatchZone(flag: options.timeZone)
        /// The zone for typed wake times and the simulated user's bed time.
        func userZone() -> TimeZone { zones.resolve(batch: core.state.batch).zone }
        /// The zone the local-time plans (the bed tap) were last made in.
        var plannedZone = userZone()

        // The simulated user: a bed tap every night at --bed-at (virtual, local), answered with
        // --manual-wake when the watch falls back to manual entry.
        var nextBed: Date?
        /// Wall seconds the link may stay down before the watch reconnects by hand.
        var relinkDelay: TimeInterval = 2
        /// Repeats of the events a peer can cause at will (failed handshakes, rejected messages and
        /// the ERROR replies to them, the peer's ERRORs, failed sends) are held back and counted
        /// (docs/protocol.md, "Events").
        var limiter = EventRateLimiter()
        /// Writes `event` unless it is a held-back repeat. - Returns: whether it was written.
        @discardableResult
        func emitLimited(_ event: Event, at time: Date? = nil) -> Bool {
            guard let line = limiter.admit(event, at: Date()) else { return false }
            output.emit(line, at: time)
            return true
        }
        /// Sends that failed since start.
        var sendFailures = 0
        /// Messages refused since start.
        var rejected = 0
        var liveness = Liveness()
        var linkUp = false
        /// Wall seconds to wait for the first (or next) handshake before saying so.
        let handshakeDeadline: TimeInterval = 5
        /// Since the handshake deadline was armed: connections made (`ZMQ_EVENT_CONNECTED`) and
        /// connect attempts that found nobody (`ZMQ_EVENT_CONNECT_RETRIED`). No connection at all
        /// means the phone is not there; a connection without a handshake means it refused us.
        var connectionsMade = 0
        var attemptsFailed = 0
        func armHandshakeDeadline(after seconds: TimeInterval) {
            connectionsMade = 0
            attemptsFailed = 0
            loop.arm("handshake", after: seconds)
        }
        func armBed(after instant: Date) {
            guard let bedAt = options.bedAt else { return }
            nextBed = WakeCalendar.next(bedAt, after: instant, in: WakeCalendar.calendar(in: userZone()))
            if let nextBed { loop.arm("bed", at: clock.wallDate(for: nextBed)) } else { loop.cancel("bed") }
        }
        /// Plans everything timed in local time again when the zone in force is not the one it
        /// was planned in (`force`: the user travelled, say so even to the same zone).
        func replanIfZoneChanged(at now: Date, force: Bool = false) {
            let (zone, source) = zones.resolve(batch: core.state.batch)
            guard force || zone.identifier != plannedZone.identifier else { return }
            let from = plannedZone
            plannedZone = zone
            armBed(after: now)
            output.emit(
                Event(
                    "timezone.changed",
                    [
                        ("from", .string(from.identifier)), ("to", .string(zone.identifier)),
                        ("source", .string(source.rawValue)),
                        ("nextBedTap", nextBed.map { .date($0) } ?? .null),
                    ]), at: now)
        }

        func perform(_ effects: [WatchEffect], rollback: WatchCore, at time: Date? = nil) {
            for effect in effects {
                switch effect {
                case .persist(let state):
                    do {
                        try stateFile.save(state)
                    } catch {
                        // Durable before acknowledged: no ACK for what is not on disk.
                        output.emit(
                            Event(
                                "persist.failed",
                                [("path", .string(stateFile.path)), ("reason", .string(error.reason))]), at: time)
                        core = rollback
                        return
                    }
                case .send(let message):
                    do {
                        try dealer.send(WireCodec.encode(message), dontWait: true)
                        for line in limiter.end("send.failed") { output.emit(line, at: time) }
                        if case .error = message {
                            emitLimited(WireEvents.sent(message), at: time)
                        } else {
                            output.emit(WireEvents.sent(message), at: time)
                        }
                    } catch {
                        sendFailures += 1
                        emitLimited(
                            Event(
                                "send.failed",
                                [("type", .string(message.typeName)), ("reason", .string(String(describing: error)))]),
                            at: time)
                    }
                case .armHelloRetry(let seconds):
                    loop.arm("hello", after: seconds)
                case .cancelHelloRetry:
                    loop.cancel("hello")
                case .emit(let event) where event.name == "peer.error":
                    emitLimited(event, at: time)
                case .emit(let event):
                    output.emit(event, at: time)
                }
            }
        }

        func step(at time: Date? = nil, _ body: (inout WatchCore) -> [WatchEffect]) {
            let before = core
            let effects = body(&core)
            perform(effects, rollback: before, at: time)
            // A batch in another zone moves the watch: plan local times again.
            replanIfZoneChanged(at: time ?? clock.now)
        }

        output.emit(
            Event(
                "watch.started",
                [
                    ("endpoint", .string(options.endpoint)), ("id", .string(options.id)),
                    ("lastSeq", .int(Int64(clamping: core.state.lastAppliedSeq))), ("pid", .int(Int64(getpid()))),
                    ("timeZone", .string(plannedZone.identifier)),
                    ("timeZoneSource", .string(zones.resolve(batch: core.state.batch).source.rawValue)),
                ]))
        armBed(after: clock.now)
        armHandshakeDeadline(after: handshakeDeadline)
        loop.arm("heartbeat", after: Liveness.interval)

        func handleLine(_ line: String) {
            switch line {
            case "": break
            case "bed": step { $0.bedTap(at: clock.now) }
            case "status":
                var status = core.status(at: clock.now)
                status.fields.append((key: "rejectedMessages", value: .int(Int64(rejected))))
                status.fields.append((key: "sendFailures", value: .int(Int64(sendFailures))))
                output.emit(status)
            case "quit":
                output.emit(Event("watch.stopping", [("reason", .string("quit"))]))
                loop.stop()
            case _ where line.split(separator: " ").first == "time-zone":
                let words = line.split(separator: " ", omittingEmptySubsequences: true)
                guard words.count == 2, let zone = WakeCalendar.zone(named: String(words[1])) else {
                    let reason =
                        words.count == 2
                        ? "\"\(clipped(String(words[1])))\" is not a known IANA time zone identifier (e.g. Asia/Tokyo)"
                        : "expected time-zone TZ with one IANA zone, e.g. time-zone Asia/Tokyo"
                    output.emit(
                        Event("input.rejected", [("input", .string(clipped(line))), ("reason", .string(reason))]))
                    return
                }
                zones.travel = zone
                replanIfZoneChanged(at: clock.now, force: true)
            default:
                if core.awaitingManualEntry || LocalTime(parsing: line) != nil {
                    // Read the zone before `step` takes `core` for writing (exclusive access).
                    let zone = userZone()
                    step { $0.manualWakeTime(line, at: clock.now, in: zone) }
                } else {
                    output.emit(
                        Event(
                            "input.rejected",
                            [
                                ("input", .string(clipped(line))),
                                (
                                    "reason",
                                    .string("unknown command; expected bed, status, time-zone TZ, HH:MM or quit")
                                ),
                            ]))
                }
            }
        }

        do {
            try loop.run(
                readable: { index in
                    if index == 1 {
                        for frames in drainMessages(monitor) {
                            guard let event = MonitorEvent(frames: frames) else { continue }
                            if event.kind.contains(.connected) {
                                connectionsMade += 1
                            } else if event.kind.contains(.connectRetried) {
                                attemptsFailed += 1
                            } else if event.kind.contains(.handshakeSucceeded) {
                                output.emit(Event("link.up", [("endpoint", .string(options.endpoint))]))
                                loop.cancel("relink")
                                loop.cancel("handshake")
                                linkUp = true
                                relinkDelay = 2
                                step { $0.connected() }
                            } else if event.kind.contains(.disconnected) {
                                // A failing handshake disconnects at every reconnect: report a link that was up.
                                if linkUp {
                                    output.emit(Event("link.down", [("endpoint", .string(options.endpoint))]))
                                }
                                linkUp = false
                                // libzmq does not reconnect after some protocol errors (an
                                // oversized frame): if the link stays down, reconnect by hand.
                                if !loop.isArmed("relink") { loop.arm("relink", after: relinkDelay) }
                                if !loop.isArmed("handshake") { armHandshakeDeadline(after: handshakeDeadline) }
                            } else {
                                let reason =
                                    event.kind.contains(.handshakeFailedAuth)
                                    ? "the phone refused this watch (status \(event.value)): its key is not paired with the phone"
                                    : keys == nil
                                        ? "the handshake failed: \(event.handshakeFailureDescription); the phone may require CURVE; pass --keys DIR"
                                        : "the handshake failed: \(event.handshakeFailureDescription); check that phone.key is the phone's current public certificate"
                                // libzmq retries at every reconnect interval: repeats are held back.
                                let failed = Event(
                                    "link.handshake_failed",
                                    [
                                        ("endpoint", .string(options.endpoint)), ("code", .int(Int64(event.value))),
                                        ("reason", .string(reason)),
                                    ])
                                if emitLimited(failed) { diagnose(program, "\(options.endpoint): \(reason)") }
                            }
                        }
                        return
                    }
                    for frames in drainMessages(dealer) {
                        guard frames.count == 1 else {
                            let reason = "expected 1 frame, got \(frames.count)"
                            rejected += 1
                            emitLimited(Event("message.rejected", [("reason", .string(reason))]))
                            perform([.send(.error(reason: reason))], rollback: core)
                            continue
                        }
                        do throws(ProtocolError) {
                            let message = try WireCodec.decode(frames[0])
                            if liveness.heard() {
                                output.emit(Event("peer.online", [("endpoint", .string(options.endpoint))]))
                            }
                            if message == .ping { continue }
                            output.emit(Event("message.received", [("type", .string(message.typeName))]))
                            step { $0.receive(message) }
                        } catch {
                            rejected += 1
                            emitLimited(Event("message.rejected", [("reason", .string(error.reason))]))
                            if !WireCodec.claimsToBeError(frames[0]) {
                                perform([.send(.error(reason: error.reason))], rollback: core)
                            }
                        }
                    }
                },
                input: { item in
                    switch item {
                    case .stop(let cause):
                        output.emit(Event("watch.stopping", cause.eventFields))
                        loop.stop()
                    case .endOfInput:
                        break
                    case .line(let raw):
                        handleLine(raw.trimmingCharacters(in: .whitespaces))
                    }
                },
                timer: { name in
                    switch name {
                    case "hello":
                        step { $0.helloRetryDue() }
                    case "heartbeat":
                        if linkUp { try? dealer.send(WireCodec.encode(.ping), dontWait: true) }
                        for line in limiter.flush(at: Date()) { output.emit(line) }
                        if let silence = liveness.check() {
                            output.emit(
                                Event(
                                    "peer.offline",
                                    [
                                        ("endpoint", .string(options.endpoint)),
                                        ("silentFor", .double(silence.rounded())),
                                    ]))
                        }
                        loop.arm("heartbeat", after: Liveness.interval)
                    case "handshake":
                        // Blame the keys only when a connection was made: CURVE with a wrong server
                        // key fails without a word on this side, but so does a phone that is not there.
                        let reason =
                            connectionsMade == 0
                            ? "the phone is not reachable at \(options.endpoint): no connection could be made "
                                + "(\(attemptsFailed) attempts failed); is the phone running there?"
                            : keys == nil
                                ? "connected to \(options.endpoint), but no handshake with the phone followed: "
                                    + "is a SleepTap phone listening there, and does it require CURVE (--keys DIR)?"
                                : "connected to \(options.endpoint), but no CURVE handshake with the phone followed: check that "
                                    + "\(options.keysDirectory ?? "")/phone.key is the phone's certificate and this watch is paired with it"
                        output.emit(
                            Event(
                                "link.handshake_timeout",
                                [("endpoint", .string(options.endpoint)), ("reason", .string(reason))]))
                        diagnose(program, reason)
                        armHandshakeDeadline(after: 30)
                    case "relink":
                        try? dealer.disconnect(options.endpoint)
                        do {
                            try dealer.connect(options.endpoint)
                            output.emit(Event("link.reconnect", [("endpoint", .string(options.endpoint))]))
                        } catch {
                            output.emit(
                                Event(
                                    "link.reconnect_failed",
                                    [("endpoint", .string(options.endpoint)), ("reason", .string("\(error)"))]))
                        }
                        relinkDelay = min(relinkDelay * 2, 30)
                        loop.arm("relink", after: relinkDelay)
                    case "bed":
                        guard let at = nextBed else { return }
                        step(at: at) { $0.bedTap(at: at) }
                        if core.awaitingManualEntry, let manual = options.manualWake {
                            let zone = userZone()
                            step(at: at) { $0.manualWakeTime(manual.description, at: at, in: zone) }
                        }
                        armBed(after: at)
                    default:
                        break
                    }
                })
        } catch {
            diagnose(program, "poll failed: \(error)")
            exitStatus = ExitStatus.software
        }
        // Say what is still held back: the counts add up to every occurrence.
        for line in limiter.endAll() { output.emit(line) }
        return exitStatus
    }
}

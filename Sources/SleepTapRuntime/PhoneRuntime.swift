import Foundation
import SleepTapCore
import ZeroMQ

/// The `phone` process: wires `PhoneApp` (the consolidated refresh job on a simulated OS
/// scheduler, and the sync state machine) to a ZeroMQ ROUTER, a state file, stdin and a clock.
public final class PhoneRuntime {
    private let options: PhoneOptions
    private let program = "phone"

    public init(options: PhoneOptions) { self.options = options }

    /// Runs until SIGINT, SIGTERM or `quit`.
    /// - Returns: the process exit status (`ExitStatus`).
    public func run() -> Int32 {
        let clock = options.clock.makeClock()
        let output = EventOutput(clock: clock)

        // A bad schedule file stops us before anything is created, bound or written.
        var schedule = WakeSchedule.everyDayAtSeven
        let startUp: StartUp<PhoneSyncState>
        switch StartUp<PhoneSyncState>.begin(
            program: program, stateDirectory: options.stateDirectory, fileName: "phone.json",
            keysDirectory: options.keysDirectory, output: output, validate: { $0.validationProblem },
            preflight: {
                guard let path = options.schedulePath else { return nil }
                switch Self.loadSchedule(path) {
                case .success(let loaded):
                    schedule = loaded
                    return nil
                case .failure(let message):
                    diagnose(program, message.description)
                    return ExitStatus.dataError
                }
            })
        {
        case .success(let value): startUp = value
        case .failure(let exit): return exit.status
        }
        defer { startUp.close() }
        let mailbox = startUp.mailbox
        let stateFile = startUp.stateFile
        let loaded = startUp.loaded
        let keys = startUp.keys

        // The simulated OS outlives the app: its own state file, read (with recovery) under the
        // state dir's lock, the flags given applied to it (docs/scheduler.md).
        let osFile = StateFile<SimulatedOS>(
            path: options.stateDirectory + "/os.json", dateFormat: .secondsSince1970)
        let storedOS: SimulatedOS?
        do {
            storedOS = try osFile.loadReportingRecovery(
                program: program, output: output, validate: { $0.validationProblem })
        } catch {
            diagnose(program, "state file \(error); left untouched.")
            return ExitStatus.dataError
        }
        let taskIdentifier = PhoneAppConfiguration().taskIdentifier
        let startOS: SimulatedOS
        do {
            startOS = try options.os.resolve(stored: storedOS, taskIdentifier: taskIdentifier, at: clock.now)
        } catch {
            diagnose(program, "\(error); \(osFile.path) left untouched")
            return ExitStatus.usage
        }
        if let storedOS, let seed = options.os.seed, seed != storedOS.seed {
            diagnose(
                program,
                "--os-seed \(seed) not used: \(osFile.path) holds an OS seeded with \(storedOS.seed), whose random "
                    + "draws go on (--os-seed seeds a new OS only)")
        }
        /// The bytes of os.json as last written by this process (nil: write at the first step).
        var savedOS: Data?

        let context: Context
        let router: Socket
        var zap: Socket?
        do {
            context = try Context()
            router = try LinkSettings.makeRouter(context)
            if let keys {
                // ZAP (RFC 27): libzmq asks this handler about every CURVE client; bind it first.
                let handler = try Socket(context: context, type: .rep)
                zap = handler
                try handler.setLinger(milliseconds: 0)
                try handler.bind("inproc://zeromq.zap.01")
                try router.setCurveServer(secretKey: keys.mine.secretKey)
            }
        } catch {
            diagnose(program, "cannot create a ZeroMQ socket: \(error)")
            return ExitStatus.software
        }
        var bound = false
        defer {
            router.close()
            zap?.close()
            context.terminate()
            if bound { SingleInstance.removeSocketFile(options.endpoint) }
        }
        if !options.insecure, let problem = IPCDirectoryPolicy.problem(for: options.endpoint, create: true) {
            diagnose(program, "refusing \(options.endpoint): \(problem)")
            return ExitStatus.unavailable
        }
        if let problem = SingleInstance.ipcBindProblem(options.endpoint) {
            diagnose(program, "cannot bind \(options.endpoint): \(problem)")
            return ExitStatus.unavailable
        }
        do {
            try router.bind(options.endpoint)
        } catch {
            diagnose(
                program,
                "cannot bind \(options.endpoint): "
                    + EndpointDiagnosis.explain(error, endpoint: options.endpoint, binding: true))
            return ExitStatus.unavailable
        }
        bound = true

        StandardInputReader.start(posting: mailbox)

        let loop = EventLoop<String>(sockets: [router] + (zap.map { [$0] } ?? []), mailbox: mailbox, output: output)
        let pairedWatchKey = keys.flatMap { CurveKeyPair.keyBytes(z85: $0.peerPublicKey) }
        let boundEndpoint = (try? router.lastEndpoint()) ?? options.endpoint
        var initial = loaded ?? PhoneSyncState(deviceSeed: UInt64.random(in: 0...UInt64.max))
        if let seed = options.deviceSeed { initial.deviceSeed = seed }
        let zone0 = options.timeZone ?? schedule.timeZoneIdentifier.flatMap(TimeZone.init(identifier:)) ?? .current
        var app = PhoneApp(
            state: initial, scheduler: startOS,
            weather: options.weather.makeProvider(seed: initial.deviceSeed), schedule: schedule, zone: zone0,
            location: options.location, configuration: options.os.appConfiguration(horizonDays: options.horizonDays),
            randomSeed: UInt64.random(in: 0...UInt64.max))
        let watchId = Array(options.watchId.utf8)
        var exitStatus = ExitStatus.ok
        /// Set by the `time-zone` command (travel); wins over the flag and the schedule file.
        var travelZone: TimeZone?
        func currentZone() -> TimeZone {
            travelZone ?? options.timeZone ?? schedule.timeZoneIdentifier.flatMap(TimeZone.init(identifier:))
                ?? .current
        }

        /// Repeats of the events a peer can cause at will (refused clients, rejected messages and
        /// the ERROR replies to them, the peer's ERRORs, sends to an absent watch) are held back and
        /// counted (docs/protocol.md, "Events").
        var limiter = EventRateLimiter()
        func emitLimited(_ event: Event, at time: Date? = nil) {
            if let line = limiter.admit(event, at: Date()) { output.emit(line, at: time) }
        }
        /// Sends that failed since start (no watch connected, or not accepting).
        var sendFailures = 0
        /// CURVE clients the ZAP handler refused since start.
        var refusedPeers = 0

        /// Performs effects through `PhoneApp.perform`: the state file, the ROUTER, the resend
        /// timer and the event output.
        func perform(_ effects: [PhoneEffect], at time: Date?) {
            app.perform(
                effects,
                save: { state in
                    do throws(FileError) {
                        try stateFile.save(state)
                        return true
                    } catch {
                        output.emit(
                            Event(
                                "persist.failed",
                                [("path", .string(stateFile.path)), ("reason", .string(error.reason))]), at: time)
                        return false
                    }
                },
                send: { message in
                    do {
                        try router.send([watchId, WireCodec.encode(message)], dontWait: true)
                        // The watch is there again: what was held back is said, the next failure at once.
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
                                [("type", .string(message.typeName)), ("reason", .string(Self.sendFailure(error)))]),
                            at: time)
                    }
                },
                resend: { seconds in
                    if let seconds { loop.arm("resend", after: seconds) } else { loop.cancel("resend") }
                },
                emit: { event in
                    if event.name == "peer.error" { emitLimited(event, at: time) } else { output.emit(event, at: time) }
                })
        }

        /// Applies `body` to the app, performs its effects, re-arms the OS launch timer and
        /// writes os.json when the OS changed.
        func step(at time: Date? = nil, _ body: (inout PhoneApp) -> [PhoneEffect]) {
            let effects = body(&app)
            perform(effects, at: time)
            armBackgroundLaunch()
            do throws(FileError) {
                try osFile.saveIfChanged(app.scheduler, last: &savedOS)
            } catch {
                output.emit(
                    Event("persist.failed", [("path", .string(osFile.path)), ("reason", .string(error.reason))]),
                    at: time)
            }
        }

        var nextLaunch: Date?
        /// Messages refused since start (bad frames, bad JSON, strangers).
        var rejected = 0
        var liveness = Liveness()
        func armBackgroundLaunch() {
            nextLaunch = app.nextBackgroundLaunch(after: clock.now)
            if let nextLaunch {
                loop.arm("os", at: clock.wallDate(for: nextLaunch))
            } else {
                loop.cancel("os")
            }
        }

        /// Re-reads the schedule file before a user launch (a bad one is reported and the previous
        /// schedule kept) and applies zone changes.
        func reloadSchedule() {
            guard let path = options.schedulePath else { return }
            switch Self.loadSchedule(path) {
            case .success(let loaded):
                if loaded != schedule {
                    schedule = loaded
                    output.emit(Event("schedule.changed", [("path", .string(path))]))
                }
            case .failure(let message):
                output.emit(
                    Event(
                        "schedule.rejected",
                        [
                            ("path", .string(path)), ("reason", .string(message.description)),
                            ("kept", .string("previous")),
                        ]))
            }
            app.schedule = schedule
            app.zone = currentZone()
        }

        func open() {
            reloadSchedule()
            let now = clock.now
            step { $0.launch(at: now, byUser: true, early: $0.registersEarly) }
        }

        func status() {
            let state = app.state
            let now = clock.now
            var fields: [(String, EventValue)] = [
                ("lastSeq", .int(Int64(clamping: state.lastSeq))), ("acked", .bool(state.acked)),
                ("count", .int(Int64(state.outbox?.entries.count ?? 0))),
                ("coverageEnd", state.outbox?.coverageEnd.map { .date($0) } ?? .null),
                ("timeZone", .string(app.zone.identifier)),
                ("pendingNotifications", .int(Int64(app.pendingNotifications(at: now).count))),
                (
                    "earliestBeginDate",
                    RefreshPlanner.earliestBeginDate(after: now, schedule: app.schedule, in: app.zone).map { .date($0) }
                        ?? .null
                ),
                ("nextBackgroundLaunch", nextLaunch.map { .date($0) } ?? .null),
                ("runs", .int(Int64(state.refreshLog.history.count))),
                ("lastRunAt", state.refreshLog.lastRunAt.map { .date($0) } ?? .null),
                ("stalenessHours", state.refreshLog.stalenessHours(at: now).map { .double($0) } ?? .null),
                ("platform", .string(app.scheduler.platform)),
                ("crashed", app.crashed.map { .string($0.message) } ?? .null),
                ("rejectedMessages", .int(Int64(rejected))), ("refusedPeers", .int(Int64(refusedPeers))),
                ("sendFailures", .int(Int64(sendFailures))),
            ]
            fields += app.scheduler.status().map { ("os.\($0.0)", $0.1) }
            output.emit(Event("phone.status", fields))
        }

        func reject(_ line: String, _ reason: String) {
            output.emit(Event("input.rejected", [("input", .string(clipped(line))), ("reason", .string(reason))]))
        }

        func onOff(_ word: String) -> Bool? {
            switch word {
            case "on": true
            case "off": false
            default: nil
            }
        }

        func command(_ line: String) {
            let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            let now = clock.now
            switch (words.first, words.count) {
            case (nil, _): break
            case ("open", 1): open()
            case ("status", 1): status()
            case ("history", 1):
                for run in app.state.refreshLog.history {
                    output.emit(
                        Event(
                            "run.record",
                            [
                                ("at", .date(run.at)), ("scheduledAt", run.scheduledAt.map { .date($0) } ?? .null),
                                ("success", .bool(run.success)), ("lowPower", .bool(run.lowPower)),
                                ("bucket", run.bucket.map { .int(Int64($0)) } ?? .null), ("kind", .string(run.kind)),
                                ("duration", .double(run.duration)),
                            ]))
                }
            case ("notifications", 1):
                for record in app.pendingNotifications(at: now) {
                    output.emit(
                        Event(
                            "notification.pending",
                            [
                                ("id", .string(record.id)), ("fireDate", .date(record.fireDate)),
                                ("text", .string(record.text)),
                            ]))
                }
            case ("time-zone", 2):
                guard let zone = WakeCalendar.zone(named: words[1]) else {
                    return reject(line, "not a known IANA time zone identifier")
                }
                let from = currentZone().identifier
                travelZone = zone
                output.emit(Event("timezone.changed", [("from", .string(from)), ("to", .string(zone.identifier))]))
                step { $0.travel(to: zone, at: now) }
            case ("move", 2):
                guard let location = PhoneOptions.parseCoordinate(words[1]) else {
                    return reject(line, "expected LAT,LON in degrees, e.g. 52.52,13.405")
                }
                let moved = app.location.distance(to: location)
                app.location = location
                output.emit(
                    Event(
                        "location.changed",
                        [
                            ("latitude", .double(location.latitude)), ("longitude", .double(location.longitude)),
                            ("moved", .double(moved.rounded())),
                        ]))
            case ("low-power", 2):
                guard let on = onOff(words[1]) else { return reject(line, "expected low-power on|off") }
                step { $0.setLowPowerMode(on, at: now) }
            case ("background-refresh", 2):
                guard let on = onOff(words[1]) else { return reject(line, "expected background-refresh on|off") }
                step { $0.setBackgroundRefreshEnabled(on, at: now) }
            case ("charging", 2) where app.scheduler.platform != "android",
                ("bucket", 2) where app.scheduler.platform != "android":
                reject(line, "\(words[0]) is an Android setting; this phone runs --platform \(app.scheduler.platform)")
            case ("charging", 2):
                guard let on = onOff(words[1]) else { return reject(line, "expected charging on|off") }
                step { $0.setCharging(on, at: now) }
            case ("bucket", 2):
                guard let bucket = StandbyBucket(name: words[1]) else {
                    return reject(line, "expected bucket active|working_set|frequent|rare|restricted")
                }
                step { $0.setStandbyBucket(bucket, at: now) }
            case ("force-quit", 1):
                step { $0.forceQuit(at: now) }
            case ("registration", 2) where app.scheduler.platform != "ios":
                reject(
                    line,
                    "registration is an iOS setting (BGTaskScheduler launch handlers); this phone runs --platform "
                        + app.scheduler.platform)
            case ("registration", 2):
                guard let mode = RegistrationMode(rawValue: words[1]) else {
                    return reject(line, "expected registration early|late-silent|late-crash")
                }
                step { $0.installUpdate(registration: mode, at: now) }
            case ("reboot", 1):
                step { $0.reboot(at: now) }
            case ("simulate-launch", 1):
                step { $0.simulateLaunch(at: now) }
            case ("simulate-expiration", 1):
                step { $0.simulateExpiration(at: now) }
            case ("quit", 1):
                output.emit(Event("phone.stopping", [("reason", .string("quit"))]))
                loop.stop()
            default:
                reject(
                    line,
                    "unknown command; expected open, status, history, notifications, time-zone TZ, move LAT,LON, "
                        + "low-power on|off, background-refresh on|off, charging on|off, bucket NAME, force-quit, "
                        + "registration MODE, reboot, simulate-launch, simulate-expiration or quit")
            }
        }

        output.emit(
            Event(
                "phone.started",
                [
                    ("endpoint", .string(options.endpoint)), ("timeZone", .string(currentZone().identifier)),
                    ("lastSeq", .int(Int64(clamping: app.state.lastSeq))), ("pid", .int(Int64(getpid()))),
                    ("platform", .string(app.scheduler.platform)),
                    ("registration", .string(app.scheduler.registrationMode.rawValue)),
                    ("osState", .string(storedOS == nil ? "new" : "stored")),
                    ("boundEndpoint", .string(boundEndpoint)),
                    ("security", .string(keys == nil ? "none" : "curve")),
                ]))
        step { $0.start() }
        let now = clock.now
        // Device settings given as flags override the stored ones, as the user changing them would.
        if let on = options.os.lowPower { step { $0.setLowPowerMode(on, at: now) } }
        if let on = options.os.backgroundRefresh { step { $0.setBackgroundRefreshEnabled(on, at: now) } }
        if let on = options.os.charging { step { $0.setCharging(on, at: now) } }
        if let bucket = options.os.bucket { step { $0.setStandbyBucket(bucket, at: now) } }
        loop.arm("heartbeat", after: Liveness.interval)
        // The user opens the app: launch, registration, foreground refresh.
        step { $0.launch(at: now, byUser: true, early: $0.registersEarly) }

        do {
            try loop.run(
                readable: { index in
                    if index == 1, let zap {
                        // ZAP request: version, request id, domain, address, identity, mechanism, credentials.
                        for frames in drainMessages(zap) {
                            guard frames.count >= 6 else { continue }
                            let mechanism = String(decoding: frames[5], as: UTF8.self)
                            let admitted = mechanism == "CURVE" && frames.count >= 7 && frames[6] == pairedWatchKey
                            let address = clipped(String(decoding: frames[3], as: UTF8.self))
                            if !admitted {
                                refusedPeers += 1
                                emitLimited(
                                    Event(
                                        "peer.refused",
                                        [
                                            ("mechanism", .string(mechanism)), ("address", .string(address)),
                                            (
                                                "reason",
                                                .string(
                                                    mechanism == "CURVE"
                                                        ? "key not paired with this phone" : "CURVE required")
                                            ),
                                        ]))
                            }
                            let reply: [[UInt8]] = [
                                Array("1.0".utf8), frames[1], Array((admitted ? "200" : "400").utf8),
                                Array((admitted ? "OK" : "not paired").utf8), Array((admitted ? "watch" : "").utf8), [],
                            ]
                            try? zap.send(reply)
                        }
                        return
                    }
                    for frames in drainMessages(router) {
                        guard frames.count == 2 else {
                            let reason = "expected 2 frames (routing id, message), got \(frames.count)"
                            rejected += 1
                            emitLimited(Event("message.rejected", [("reason", .string(reason))]))
                            if frames.first == watchId {
                                perform([.send(.error(reason: reason))], at: nil)
                            }
                            continue
                        }
                        guard frames[0] == watchId else {
                            let peer = clipped(String(decoding: frames[0], as: UTF8.self))
                            let reason = "unknown peer routing id \"\(peer)\""
                            rejected += 1
                            emitLimited(Event("message.rejected", [("reason", .string(reason))]))
                            // Tell the stranger (a watch with the wrong --id) why nothing happens.
                            let reply = WireCodec.encode(.error(reason: reason + "; this phone delivers to another id"))
                            try? router.send([frames[0], reply], dontWait: true)
                            continue
                        }
                        do throws(ProtocolError) {
                            let message = try WireCodec.decode(frames[1])
                            if liveness.heard() {
                                output.emit(Event("peer.online", [("id", .string(options.watchId))]))
                            }
                            if message == .ping { continue }
                            output.emit(Event("message.received", [("type", .string(message.typeName))]))
                            step { $0.receive(message) }
                        } catch {
                            rejected += 1
                            emitLimited(Event("message.rejected", [("reason", .string(error.reason))]))
                            if !WireCodec.claimsToBeError(frames[1]) {
                                perform([.send(.error(reason: error.reason))], at: nil)
                            }
                        }
                    }
                },
                input: { item in
                    switch item {
                    case .stop(let cause):
                        output.emit(Event("phone.stopping", cause.eventFields))
                        loop.stop()
                    case .endOfInput:
                        break
                    case .line(let raw):
                        command(raw.trimmingCharacters(in: .whitespaces))
                    }
                },
                timer: { name in
                    switch name {
                    case "resend":
                        step { $0.resendDue() }
                    case "heartbeat":
                        try? router.send([watchId, WireCodec.encode(.ping)], dontWait: true)  // absent: fine
                        for line in limiter.flush(at: Date()) { output.emit(line) }
                        if let silence = liveness.check() {
                            output.emit(
                                Event(
                                    "peer.offline",
                                    [("id", .string(options.watchId)), ("silentFor", .double(silence.rounded()))]))
                        }
                        loop.arm("heartbeat", after: Liveness.interval)
                    case "os":
                        guard let due = nextLaunch else { return }
                        reloadSchedule()
                        step(at: due) { $0.backgroundLaunchDue(at: due, early: $0.registersEarly) }
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

    /// Reads and validates a schedule file.
    /// - Returns: the schedule, or the message naming the file, field and value.
    static func loadSchedule(_ path: String) -> Result<WakeSchedule, ScheduleLoadError> {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
            let data = FileManager.default.contents(atPath: path)
        else {
            return .failure(ScheduleLoadError("schedule file \(path): cannot be read (missing or not a file)"))
        }
        guard data.count <= 1 << 20 else {
            return .failure(ScheduleLoadError("schedule file \(path): \(data.count) bytes; at most 1 MiB"))
        }
        do {
            return .success(try ScheduleFile.decode(data))
        } catch {
            return .failure(ScheduleLoadError("schedule file \(path): \(error)"))
        }
    }

    static func sendFailure(_ error: any Error) -> String {
        if let zmq = error as? ZeroMQError {
            if zmq == .hostUnreachable { return "watch not connected (EHOSTUNREACH)" }
            if zmq == .again { return "watch not accepting now (EAGAIN)" }
        }
        return String(describing: error)
    }
}

/// A schedule file that could not be used, as one printable message.
struct ScheduleLoadError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

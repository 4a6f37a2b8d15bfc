public import Foundation
public import SleepTapCore
import ZeroMQ

/// The `phone` process: wires `PhoneCore` to a ZeroMQ ROUTER, a state file, stdin and a clock.
public final class PhoneRuntime {
    private let options: PhoneOptions
    private let program = "phone"

    public init(options: PhoneOptions) { self.options = options }

    /// Runs until SIGINT, SIGTERM or `quit`.
    /// - Returns: the process exit status (`ExitStatus`).
    public func run() -> Int32 {
        let clock = options.clock.makeClock()
        let output = EventOutput(clock: clock)

        // Inputs first: a bad schedule or state file stops us before anything is bound or written.
        var schedule = WakeSchedule.everyDayAtSeven
        if let path = options.schedulePath {
            switch Self.loadSchedule(path) {
            case .success(let loaded): schedule = loaded
            case .failure(let message):
                diagnose(program, message.description)
                return ExitStatus.dataError
            }
        }
        /// Set by the `time-zone` command (travel); wins over the flag and the schedule file.
        var travelZone: TimeZone?
        func currentZone() -> TimeZone {
            travelZone ?? options.timeZone ?? schedule.timeZoneIdentifier.flatMap(TimeZone.init(identifier:))
                ?? .current
        }
        do {
            try AtomicFile.ensureDirectory(options.stateDirectory)
        } catch {
            diagnose(program, "state dir \(error)")
            return ExitStatus.cannotCreate
        }
        let stateFile = StateFile<PhoneSyncState>(path: options.stateDirectory + "/phone.json")
        let loaded: PhoneSyncState?
        do {
            loaded = try stateFile.load()
        } catch {
            diagnose(program, "state file \(error); left untouched. Move it away to start clean.")
            return ExitStatus.dataError
        }

        let context: Context
        let router: Socket
        do {
            context = try Context()
            router = try LinkSettings.makeRouter(context)
        } catch {
            diagnose(program, "cannot create a ZeroMQ socket: \(error)")
            return ExitStatus.software
        }
        defer {
            router.close()
            context.terminate()
        }
        do {
            try router.bind(options.endpoint)
        } catch {
            diagnose(program, "cannot bind \(options.endpoint): \(error)")
            return ExitStatus.unavailable
        }

        let mailbox: Mailbox
        do {
            mailbox = try Mailbox()
        } catch {
            diagnose(program, "\(error)")
            return ExitStatus.software
        }
        let signals = SignalTrap(posting: mailbox)
        defer { signals.cancel() }
        StandardInputReader.start(posting: mailbox)

        let loop = EventLoop(sockets: [router], mailbox: mailbox)
        var initial = loaded ?? PhoneSyncState(deviceSeed: UInt64.random(in: 0...UInt64.max))
        if let seed = options.deviceSeed { initial.deviceSeed = seed }
        var core = PhoneCore(state: initial)
        let watchId = Array(options.watchId.utf8)
        var exitStatus = ExitStatus.ok

        func perform(_ effects: [PhoneEffect], rollback: PhoneCore) {
            for effect in effects {
                switch effect {
                case .persist(let state):
                    do {
                        try stateFile.save(state)
                    } catch {
                        output.emit(
                            Event(
                                "persist.failed",
                                [("path", .string(stateFile.path)), ("reason", .string(error.reason))]))
                        core = rollback
                        return
                    }
                case .send(let message):
                    do {
                        try router.send([watchId, WireCodec.encode(message)], dontWait: true)
                        output.emit(WireEvents.sent(message))
                    } catch {
                        output.emit(
                            Event(
                                "send.failed",
                                [("type", .string(message.typeName)), ("reason", .string(Self.sendFailure(error)))]))
                    }
                case .armResend(let seconds):
                    loop.arm("resend", after: seconds)
                case .cancelResend:
                    loop.cancel("resend")
                case .emit(let event):
                    output.emit(event)
                }
            }
        }

        func step(_ body: (inout PhoneCore) -> [PhoneEffect]) {
            let before = core
            let effects = body(&core)
            perform(effects, rollback: before)
        }

        /// A foreground refresh (the user opened the app): re-read the schedule file (a bad one is
        /// reported and the previous schedule kept), then notices and batch.
        func refresh(reason: String) {
            if reason != "launch", let path = options.schedulePath {
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
            }
            let now = clock.now
            let zone = currentZone()
            let plan = RefreshPlan.make(
                schedule: schedule, zone: zone, now: now, horizonDays: options.horizonDays,
                deviceSeed: core.state.deviceSeed)
            output.emit(
                Event(
                    "refresh.foreground",
                    [
                        ("reason", .string(reason)), ("timeZone", .string(zone.identifier)),
                        ("earliestBeginDate", plan.earliestBeginDate.map { .date($0) } ?? .null),
                    ]))
            step { $0.refresh(plan) }
        }

        func status() {
            let state = core.state
            let zone = currentZone()
            output.emit(
                Event(
                    "phone.status",
                    [
                        ("lastSeq", .int(Int64(clamping: state.lastSeq))), ("acked", .bool(state.acked)),
                        ("count", .int(Int64(state.outbox?.entries.count ?? 0))),
                        ("coverageEnd", state.outbox?.coverageEnd.map { .date($0) } ?? .null),
                        ("timeZone", .string(zone.identifier)),
                        ("pendingNotifications", .int(Int64(state.notifications.records.count))),
                        (
                            "earliestBeginDate",
                            RefreshPlanner.earliestBeginDate(after: clock.now, schedule: schedule, in: zone).map {
                                .date($0)
                            } ?? .null
                        ),
                    ]))
        }

        func command(_ line: String) {
            let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            switch words.first {
            case nil: break
            case "open" where words.count == 1: refresh(reason: "open")
            case "status" where words.count == 1: status()
            case "notifications" where words.count == 1:
                for record in core.state.notifications.records {
                    output.emit(
                        Event(
                            "notification.pending",
                            [
                                ("id", .string(record.id)), ("fireDate", .date(record.fireDate)),
                                ("text", .string(record.text)),
                            ]))
                }
            case "time-zone" where words.count == 2:
                guard let zone = TimeZone(identifier: words[1]) else {
                    output.emit(
                        Event(
                            "input.rejected",
                            [("input", .string(line)), ("reason", .string("not a known IANA time zone identifier"))]))
                    return
                }
                let from = currentZone().identifier
                travelZone = zone
                output.emit(Event("timezone.changed", [("from", .string(from)), ("to", .string(zone.identifier))]))
                refresh(reason: "time-zone")
            case "quit" where words.count == 1:
                output.emit(Event("phone.stopping", [("reason", .string("quit"))]))
                loop.stop()
            default:
                output.emit(
                    Event(
                        "input.rejected",
                        [
                            ("input", .string(line)),
                            (
                                "reason",
                                .string("unknown command; expected open, status, notifications, time-zone TZ or quit")
                            ),
                        ]))
            }
        }

        output.emit(
            Event(
                "phone.started",
                [
                    ("endpoint", .string(options.endpoint)), ("timeZone", .string(currentZone().identifier)),
                    ("lastSeq", .int(Int64(clamping: core.state.lastSeq))), ("pid", .int(Int64(getpid()))),
                ]))
        step { $0.start() }
        refresh(reason: "launch")

        do {
            try loop.run(
                readable: { _ in
                    for frames in drainMessages(router) {
                        guard frames.count == 2 else {
                            let reason = "expected 2 frames (routing id, message), got \(frames.count)"
                            output.emit(Event("message.rejected", [("reason", .string(reason))]))
                            if frames.first == watchId { perform([.send(.error(reason: reason))], rollback: core) }
                            continue
                        }
                        guard frames[0] == watchId else {
                            let peer = String(decoding: frames[0], as: UTF8.self)
                            output.emit(
                                Event("message.rejected", [("reason", .string("unknown peer routing id \"\(peer)\""))]))
                            continue
                        }
                        do throws(ProtocolError) {
                            let message = try WireCodec.decode(frames[1])
                            output.emit(Event("message.received", [("type", .string(message.typeName))]))
                            step { $0.receive(message) }
                        } catch {
                            output.emit(Event("message.rejected", [("reason", .string(error.reason))]))
                            perform([.send(.error(reason: error.reason))], rollback: core)
                        }
                    }
                },
                input: { item in
                    switch item {
                    case .stop(let number):
                        output.emit(Event("phone.stopping", [("signal", .int(Int64(number)))]))
                        loop.stop()
                    case .endOfInput:
                        break
                    case .line(let raw):
                        command(raw.trimmingCharacters(in: .whitespaces))
                    }
                },
                timer: { name in
                    if name == "resend" { step { $0.resendDue() } }
                })
        } catch {
            diagnose(program, "poll failed: \(error)")
            exitStatus = ExitStatus.software
        }
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

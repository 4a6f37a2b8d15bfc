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
            guard let data = FileManager.default.contents(atPath: path) else {
                diagnose(program, "schedule file \(path): cannot be read (missing or not a file)")
                return ExitStatus.dataError
            }
            do {
                schedule = try ScheduleFile.decode(data)
            } catch {
                diagnose(program, "schedule file \(path): \(error)")
                return ExitStatus.dataError
            }
        }
        let zone = options.timeZone ?? schedule.timeZoneIdentifier.flatMap(TimeZone.init(identifier:)) ?? .current
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
        var core = PhoneCore(state: loaded ?? PhoneSyncState())
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

        func refresh(reason: String) {
            let now = clock.now
            let entries = BatchPlanner.entries(for: schedule, in: zone, after: now, horizonDays: options.horizonDays)
            output.emit(
                Event("refresh.foreground", [("reason", .string(reason)), ("timeZone", .string(zone.identifier))]))
            step { $0.publish(entries: entries, generatedAt: now, timeZone: zone.identifier) }
        }

        output.emit(
            Event(
                "phone.started",
                [
                    ("endpoint", .string(options.endpoint)), ("timeZone", .string(zone.identifier)),
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
                        let line = raw.trimmingCharacters(in: .whitespaces)
                        switch line {
                        case "": break
                        case "open": refresh(reason: "open")
                        case "status":
                            output.emit(
                                Event(
                                    "phone.status",
                                    [
                                        ("lastSeq", .int(Int64(clamping: core.state.lastSeq))),
                                        ("acked", .bool(core.state.acked)),
                                        ("count", .int(Int64(core.state.outbox?.entries.count ?? 0))),
                                        ("coverageEnd", core.state.outbox?.coverageEnd.map { .date($0) } ?? .null),
                                        ("timeZone", .string(zone.identifier)),
                                    ]))
                        case "quit":
                            output.emit(Event("phone.stopping", [("reason", .string("quit"))]))
                            loop.stop()
                        default:
                            output.emit(
                                Event(
                                    "input.rejected",
                                    [
                                        ("input", .string(line)),
                                        ("reason", .string("unknown command; expected open, status or quit")),
                                    ]))
                        }
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

    static func sendFailure(_ error: any Error) -> String {
        if let zmq = error as? ZeroMQError {
            if zmq == .hostUnreachable { return "watch not connected (EHOSTUNREACH)" }
            if zmq == .again { return "watch not accepting now (EAGAIN)" }
        }
        return String(describing: error)
    }
}

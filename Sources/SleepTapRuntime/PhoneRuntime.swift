// SPDX-License-Identifier: Apache-2.0

import Foundation
public import SleepTapCore
import SleepTapOS
import ZeroMQ

/// The `phone` process: wires `PhoneApp` (the consolidated refresh job on a simulated OS
/// scheduler, and the sync state machine) to a ZeroMQ ROUTER, a state file, stdin and a clock.
public final class PhoneRuntime {
    private let options: PhoneOptions
    private let program = "phone"

    public init(options: PhoneOptions) { self.options = options }

    /// Runs until SIGINT, SIGTERM or `quit`.
    /// - Returns: the process exit status.
    public func run() -> ExitCode {
        let clock = options.clock.makeClock()
        let output = EventOutput(clock: clock, process: .phone)

        // A bad schedule file stops us before anything is created, bound or written.
        var schedule = WakeSchedule.everyDayAtSeven
        let startUp: StartUp<PhoneSyncState>
        switch StartUp<PhoneSyncState>.begin(
            role: .phone, stateDirectory: options.stateDirectory, fileName: "phone.json",
            keysDirectory: options.keysDirectory, output: output, validate: { $0.validationProblem },
            preflight: {
                guard let path = options.schedulePath else { return nil }
                switch Self.loadSchedule(path) {
                case .success(let loaded):
                    schedule = loaded
                    return nil
                case .failure(let message):
                    diagnose(program, message.description)
                    return .dataError
                }
            })
        {
        case .success(let value): startUp = value
        case .failure(let exit): return exit
        }
        defer { startUp.close() }
        let mailbox = startUp.mailbox
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
            return .dataError
        }
        let taskIdentifier = PhoneAppConfiguration().taskIdentifier
        let startOS: SimulatedOS
        do {
            startOS = try options.os.resolve(stored: storedOS, taskIdentifier: taskIdentifier, at: clock.now)
        } catch {
            diagnose(program, "\(error); \(osFile.path) left untouched")
            return .usage
        }
        if let storedOS, let seed = options.os.seed, seed != storedOS.seed {
            diagnose(
                program,
                "--os-seed \(seed) not used: \(osFile.path) holds an OS seeded with \(storedOS.seed), whose random "
                    + "draws go on (--os-seed seeds a new OS only)")
        }

        // Run records: the directory must be usable before anything is bound.
        let metrics = options.metricsDirectory.map { RunRecordWriter(root: $0) }
        if let metrics {
            do throws(FileError) {
                try metrics.prepare()
            } catch {
                diagnose(program, "--metrics-dir: \(error)")
                return .cantCreate
            }
        }

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
            return .software
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
            return .unavailable
        }
        if let problem = SingleInstance.ipcBindProblem(options.endpoint) {
            diagnose(program, "cannot bind \(options.endpoint): \(problem)")
            return .unavailable
        }
        do {
            try router.bind(options.endpoint.description)
        } catch {
            diagnose(
                program,
                "cannot bind \(options.endpoint): "
                    + EndpointDiagnosis.explain(error, endpoint: options.endpoint, binding: true))
            return .unavailable
        }
        bound = true

        StandardInputReader.start(posting: mailbox)

        var initial = startUp.loaded ?? PhoneSyncState(deviceSeed: UInt64.random(in: 0...UInt64.max))
        if let seed = options.deviceSeed { initial.deviceSeed = seed }
        let machineZone = MachineZone.current
        let zone = options.timeZone ?? schedule.timeZoneIdentifier.flatMap(TimeZone.init(identifier:)) ?? machineZone
        let weather = options.weather.makeProvider(seed: initial.deviceSeed)
        let app = PhoneApp(
            state: initial, scheduler: startOS, weather: weather, schedule: schedule, zone: zone,
            location: options.location,
            configuration: options.os.appConfiguration(horizonDays: options.horizonDays),
            randomSeed: UInt64.random(in: 0...UInt64.max))
        let configuration = PhoneNodeConfiguration(
            watchID: options.watchId, pairedWatchKey: keys.flatMap { CurveKeyPair.keyBytes(z85: $0.peerPublicKey) },
            schedulePath: options.schedulePath, timeZone: options.timeZone, machineZone: machineZone,
            statePath: startUp.stateFile.path, osStatePath: osFile.path,
            // Device settings given as flags override the stored ones, as the user changing them would.
            settings: options.os.settingCommands,
            endpoint: options.endpoint.description,
            boundEndpoint: (try? router.lastEndpoint()) ?? options.endpoint.description,
            pid: Int64(getpid()), security: keys == nil ? .none : .curve, osState: storedOS == nil ? .new : .stored)
        let driver = PhoneDriver(
            node: PhoneNode(app: app, configuration: configuration), router: router, zap: zap, weather: weather,
            stateFile: startUp.stateFile, osFile: osFile, metrics: metrics, mailbox: mailbox, output: output,
            clock: clock)
        do {
            try driver.run()
            return output.failure == nil ? .ok : .ioError
        } catch {
            diagnose(program, "poll failed: \(error)")
            return .software
        }
    }

    /// Reads and validates a schedule file.
    /// - Returns: the schedule, or the message naming the file, field and value.
    static func loadSchedule(_ path: String) -> Result<WakeSchedule, ScheduleLoadError> {
        let data: Data
        do throws(BoundedFile.Failure) {
            data = try BoundedFile.read(path, limit: ScheduleFile.maxBytes)
        } catch {
            return .failure(ScheduleLoadError("schedule file \(path): \(error)"))
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

/// The phone's driver: performs `PhoneNode`'s actions on the ROUTER, the ZAP socket, the state
/// file, the poll loop's timers, the weather provider and the event output, and feeds every
/// input (messages, ZAP requests, stdin, signals, timers, results) to the node. It makes no
/// protocol decision of its own: every input goes `run(node.input(...))`.
///
/// Thread-safety: create and run on one thread, the sockets' owner. A weather fetch that can
/// block (Open-Meteo) runs on a Dispatch queue and comes back through the mailbox.
final class PhoneDriver {
    private var node: PhoneNode
    private let router: Socket
    private let zap: Socket?
    private let weather: any WeatherProvider
    private let stateFile: StateFile<PhoneSyncState>
    private let osFile: StateFile<SimulatedOS>
    /// `--metrics-dir`: where run records are appended; nil = they are dropped.
    private let metrics: RunRecordWriter?
    /// The bytes of os.json as last written (nil: write at the first step).
    private var savedOS: Data?
    /// Offline forecasts asked for by the current action list, answered once the list is done
    /// (as the twin answers them): the list's own later actions were computed before the
    /// answer, and must not run after the answer's newer ones (a launch timer armed or
    /// cancelled, `os.json` written with the OS from before the job completed).
    private var weatherInFlight: [WeatherOutcome] = []
    /// How deep the action lists are nested (a result fed back runs its own list).
    private var depth = 0
    private let mailbox: Mailbox
    private let output: EventOutput
    private let clock: any SleepTapCore.Clock
    private let loop: EventLoop<PhoneTimer>
    private lazy var times = NodeTimeSource(clock: clock)

    init(
        node: PhoneNode, router: Socket, zap: Socket?, weather: any WeatherProvider,
        stateFile: StateFile<PhoneSyncState>, osFile: StateFile<SimulatedOS>, metrics: RunRecordWriter?,
        mailbox: Mailbox, output: EventOutput, clock: any SleepTapCore.Clock
    ) {
        self.metrics = metrics
        self.node = node
        self.router = router
        self.zap = zap
        self.weather = weather
        self.stateFile = stateFile
        self.osFile = osFile
        self.mailbox = mailbox
        self.output = output
        self.clock = clock
        loop = EventLoop(sockets: [router] + (zap.map { [$0] } ?? []), mailbox: mailbox, output: output)
    }

    /// Runs until the node says stop.
    /// - Throws: a `ZeroMQError` from the poll loop.
    func run() throws {
        run(node.start(at: now()))
        try loop.run(
            readable: { index in
                if index == 1, let zap {
                    for frames in drainMessages(zap) { run(node.zapRequest(frames, at: now())) }
                } else {
                    for frames in drainMessages(router) {
                        // A timer that fell due while the previous message was handled first.
                        if loop.fireDueTimersBeforeNextInput() { return }
                        run(node.messageReceived(frames, at: now()))
                    }
                }
            },
            input: { item in
                switch item {
                case .stop(let cause): run(node.stop(cause, at: now()))
                case .endOfInput: break
                case .line(let line): run(node.commandLine(line, at: now()))
                }
            },
            timer: { timer in run(node.timerFired(timer, at: now())) },
            weather: { outcome in run(node.weatherArrived(outcome, at: now())) })
    }

    /// Now in both time bases: the process clock's virtual now and monotonic wall seconds.
    private func now() -> NodeTime { times.now() }

    private func run(_ actions: [PhoneAction]) {
        depth += 1
        for action in actions { run(action) }
        depth -= 1
        guard depth == 0 else { return }
        while !weatherInFlight.isEmpty {
            let outcome = weatherInFlight.removeFirst()
            run(node.weatherArrived(outcome, at: now()))
        }
    }

    /// The one interpreter of `PhoneAction`.
    private func run(_ action: PhoneAction) {
        // `*.stopping` is the last line: once the loop is told to stop, nothing more is done.
        guard !loop.stopping else { return }
        switch action {
        case .send(let message):
            var failure: String?
            do {
                try router.send([Array(node.configuration.watchID.utf8), WireCodec.encode(message)], dontWait: true)
            } catch {
                failure = PhoneRuntime.sendFailure(error)
            }
            run(node.sent(message, failure: failure, at: now()))
        case .reply(let routingID, let message):
            try? router.send([routingID, WireCodec.encode(message)], dontWait: true)
        case .zapReply(let frames):
            try? zap?.send(frames)
        case .persist(let state):
            do throws(FileError) {
                try stateFile.save(state)
                run(node.persisted(.succeeded, at: now()))
            } catch {
                run(node.persisted(.failed(errno: error.errno?.code, reason: error.reason), at: now()))
            }
        case .persistOS(let os):
            do throws(FileError) {
                _ = try osFile.saveIfChanged(os, last: &savedOS)
            } catch {
                run(node.osPersisted(.failed(errno: error.errno?.code, reason: error.reason), at: now()))
            }
        case .arm(let timer, .after(let seconds)):
            loop.arm(timer, after: seconds)
        case .arm(let timer, .at(let instant)):
            loop.arm(timer, at: clock.wallDate(for: instant))
        case .cancel(let timer):
            loop.cancel(timer)
        case .emit(let event, let time):
            output.emit(event, at: time)
        case .fetchWeather(let location, let time):
            if weather is OfflineWeatherProvider {
                // Pure and instant: answered on this thread, after the current action list.
                let (result, cost) = weather.forecast(for: location, now: time)
                weatherInFlight.append(WeatherOutcome(result: result, cost: cost))
            } else {
                let (weather, mailbox) = (weather, mailbox)
                DispatchQueue.global().async {
                    let (result, cost) = weather.forecast(for: location, now: time)
                    mailbox.post(weather: WeatherOutcome(result: result, cost: cost))
                }
            }
        case .record(let record):
            guard let metrics else { return }
            do throws(FileError) {
                try metrics.append([record])
            } catch {
                // The run goes on; the record is lost and said so (persist.failed, as for os.json).
                output.emit(
                    Event(.persistFailed, [("path", .string(error.path)), ("reason", .string(error.reason))]),
                    at: record.at)
            }
        case .loadSchedule(let path):
            run(node.scheduleLoaded(PhoneRuntime.loadSchedule(path), at: now()))
        case .stop:
            loop.stop()
        }
    }
}

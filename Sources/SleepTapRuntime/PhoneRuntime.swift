// SPDX-License-Identifier: Apache-2.0

import Foundation
package import SleepTapCore
import SleepTapOS
import ZeroMQ

/// The `phone` process: wires `PhoneApp` (the consolidated refresh job on a simulated OS
/// scheduler, and the sync state machine) to a ZeroMQ ROUTER, a state file, stdin and a clock.
package final class PhoneRuntime {
    private let options: PhoneOptions
    private let program = "phone"

    package init(options: PhoneOptions) { self.options = options }

    /// Runs until SIGINT, SIGTERM or `quit`.
    /// - Returns: the process exit status.
    package func run() -> ExitCode {
        let clock = options.clock.makeClock()
        let output = EventOutput(clock: clock, process: .phone)

        // A bad schedule file stops us before anything is created, bound or written.
        var schedule = WakeSchedule.everyDayAtSeven
        var osOptions = options.os
        let startUp: StartUp<PhoneSyncState>
        switch StartUp<PhoneSyncState>.begin(
            role: .phone, stateDirectory: options.stateDirectory, fileName: "phone.json",
            keysDirectory: options.keysDirectory, output: output, validate: { $0.validationProblem },
            preflight: {
                // A socket directory that would be refused is refused before the state dir is made.
                if !options.insecure, let problem = IPCDirectoryPolicy.problem(for: options.endpoint, create: false) {
                    diagnose(program, "refusing \(options.endpoint): \(problem)")
                    return .unavailable
                }
                do throws(OSModelLoadError) {
                    try osOptions.loadOSModel()
                } catch {
                    diagnose(program, error.description)
                    return .dataError
                }
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
        let stored: (state: PhoneSyncState?, files: PhoneStateFiles)
        do {
            storedOS = try osFile.loadReportingRecovery(
                program: program, output: output, validate: { $0.validationProblem })
            stored = try PhoneStateFiles.load(
                loaded: startUp.loaded, syncPath: startUp.stateFile.path, program: program, output: output)
        } catch {
            diagnose(program, "state file \(error); left untouched.")
            return .dataError
        }
        let taskIdentifier = PhoneAppConfiguration().taskIdentifier
        let startOS: SimulatedOS
        do {
            startOS = try osOptions.resolve(stored: storedOS, taskIdentifier: taskIdentifier, at: clock.now)
        } catch {
            diagnose(program, "\(error); \(osFile.path) left untouched")
            return .usage
        }
        if let storedOS, let seed = osOptions.seed, seed != storedOS.seed {
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

        let machineZone = MachineZone.current
        // The seed given wins; else the stored state's; else a fresh one for a fresh state dir.
        let deviceSeed = options.deviceSeed ?? stored.state?.deviceSeed ?? UInt64.random(in: 0...UInt64.max)
        var setup = PhoneSetup(
            os: startOS, weather: options.weather.makeProvider(seed: deviceSeed), schedule: schedule,
            location: options.location, appConfiguration: osOptions.appConfiguration(horizonDays: options.horizonDays),
            deviceSeed: deviceSeed,
            node: PhoneNodeConfiguration(
                watchID: options.watchId,
                pairedWatchKey: keys.flatMap { CurveKeyPair.keyBytes(z85: $0.peerPublicKey) },
                schedulePath: options.schedulePath, timeZone: options.timeZone, machineZone: machineZone,
                statePath: startUp.stateFile.path, osStatePath: osFile.path,
                // Device settings given as flags override the stored ones, as the user changing them would.
                settings: osOptions.settingCommands,
                endpoint: options.endpoint.description,
                boundEndpoint: (try? router.lastEndpoint()) ?? options.endpoint.description,
                pid: Int64(getpid()), security: keys == nil ? .none : .curve, osState: storedOS == nil ? .new : .stored)
        )
        setup.node.clockSpeed = options.clock.speed
        let weather = setup.weather
        let driver = PhoneLoop(
            node: setup.makeNode(state: stored.state, os: nil, randomSeed: UInt64.random(in: 0...UInt64.max)),
            router: router, zap: zap, weather: weather,
            stateFiles: stored.files, osFile: osFile, metrics: metrics, mailbox: mailbox, output: output,
            clock: clock)
        let rangeEnd = ClockRangeWatch(options.clock, mailbox: mailbox)
        do {
            try driver.run()
            if rangeEnd.reached {
                diagnose(program, ClockRangeWatch.message)
                return .usage
            }
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

/// The `phone` process's ports: the ROUTER and the ZAP socket, the state files, the poll loop's
/// timers, the weather provider, the run records, the schedule file, stdout and stderr.
/// `PhoneDriver` performs the node's actions on them.
struct PhoneProcessPorts: PhonePorts {
    let router: Socket
    let zap: Socket?
    /// The paired watch's routing id.
    let watchID: [UInt8]
    let weather: any WeatherProvider
    var stateFiles: PhoneStateFiles
    let osFile: StateFile<SimulatedOS>
    /// `--metrics-dir`: where run records are appended; nil = they are dropped.
    let metrics: RunRecordWriter?
    /// The bytes of os.json as last written (nil: write at the first step).
    var savedOS: Data?
    let mailbox: Mailbox
    let output: EventOutput
    let clock: any SleepTapCore.Clock
    let loop: EventLoop<PhoneTimer>
    /// The node's virtual now and monotonic wall seconds.
    let times: NodeTimeSource

    func now() -> NodeTime { times.now() }

    var isStopping: Bool { loop.stopping }

    func send(_ message: WireMessage) -> String? {
        do {
            try router.send([watchID, WireCodec.encode(message)], dontWait: true)
            return nil
        } catch {
            return PhoneRuntime.sendFailure(error)
        }
    }

    func reply(to routingID: [UInt8], _ message: WireMessage) {
        try? router.send([routingID, WireCodec.encode(message)], dontWait: true)
    }

    func zapReply(_ frames: [[UInt8]]) { try? zap?.send(frames) }

    mutating func save(_ state: PhoneSyncState) -> PersistResult { stateFiles.save(state) }

    mutating func saveOS(_ os: SimulatedOS) -> PersistResult {
        do throws(FileError) {
            _ = try osFile.saveIfChanged(os, last: &savedOS)
            return .succeeded
        } catch {
            return .failed(errno: error.errno?.code, reason: error.reason)
        }
    }

    func arm(_ timer: PhoneTimer, _ deadline: TimerDeadline) {
        switch deadline {
        case .after(let seconds): loop.arm(timer, after: seconds)
        case .at(let instant): loop.arm(timer, at: clock.wallDate(for: instant))
        }
    }

    func cancel(_ timer: PhoneTimer) { loop.cancel(timer) }

    func emit(_ event: Event, at instant: Date) { output.emit(event, at: instant) }

    func fetchWeather(for location: Coordinate, at instant: Date) -> WeatherOutcome? {
        if weather is OfflineWeatherProvider {
            // Pure and instant: answered on this thread, after the current action list.
            let (result, cost) = weather.forecast(for: location, now: instant)
            return WeatherOutcome(result: result, cost: cost)
        }
        // The network: off the socket thread, back through the mailbox.
        let (weather, mailbox) = (weather, mailbox)
        DispatchQueue.global().async {
            let (result, cost) = weather.forecast(for: location, now: instant)
            mailbox.post(weather: WeatherOutcome(result: result, cost: cost))
        }
        return nil
    }

    func record(_ record: RunRecord) {
        guard let metrics else { return }
        do throws(FileError) {
            try metrics.append([record])
        } catch {
            // The run goes on; the record is lost and said so (persist.failed, as for os.json).
            output.emit(
                Event(.persistFailed, [("path", .string(error.path)), ("reason", .string(error.reason))]),
                at: record.at)
        }
    }

    func loadSchedule(_ path: String) -> Result<WakeSchedule, ScheduleLoadError> { PhoneRuntime.loadSchedule(path) }

    func stop() { loop.stop() }
}

/// The `phone` process's poll loop: maps the ROUTER, the ZAP socket, the mailbox (stdin,
/// signals, forecasts) and the timers to the inputs of its `PhoneDriver`. It makes no protocol
/// decision.
///
/// Thread-safety: create, run and drop on one thread (it owns the sockets' use).
final class PhoneLoop {
    private var driver: PhoneDriver<PhoneProcessPorts>
    private let router: Socket
    private let zap: Socket?
    private let loop: EventLoop<PhoneTimer>

    init(
        node: PhoneNode, router: Socket, zap: Socket?, weather: any WeatherProvider,
        stateFiles: PhoneStateFiles, osFile: StateFile<SimulatedOS>, metrics: RunRecordWriter?,
        mailbox: Mailbox, output: EventOutput, clock: any SleepTapCore.Clock
    ) {
        self.router = router
        self.zap = zap
        let loop = EventLoop<PhoneTimer>(
            sockets: [router] + (zap.map { [$0] } ?? []), mailbox: mailbox, output: output)
        self.loop = loop
        driver = PhoneDriver(
            node: node,
            ports: PhoneProcessPorts(
                router: router, zap: zap, watchID: Array(node.configuration.watchID.utf8), weather: weather,
                stateFiles: stateFiles, osFile: osFile, metrics: metrics, mailbox: mailbox, output: output,
                clock: clock, loop: loop, times: NodeTimeSource(clock: clock)))
    }

    /// Runs until the node says stop.
    /// - Throws: a `ZeroMQError` from the poll loop.
    func run() throws {
        driver.start()
        try loop.run(
            readable: { index in
                if index == 1, let zap {
                    for frames in drainMessages(zap) { driver.zapRequest(frames) }
                } else {
                    for frames in drainMessages(router) {
                        // A timer that fell due while the previous message was handled first.
                        if loop.fireDueTimersBeforeNextInput() { return }
                        driver.messageReceived(frames)
                    }
                }
            },
            input: { item in
                switch item {
                case .stop(let cause): driver.stop(cause)
                case .endOfInput: break
                case .line(let line): driver.commandLine(line)
                }
            },
            timer: { timer in driver.timerFired(timer) },
            weather: { outcome in driver.weatherArrived(outcome) })
    }
}

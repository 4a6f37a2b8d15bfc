// SPDX-License-Identifier: Apache-2.0
package import Foundation
package import SleepTapCore
package import SleepTapEmbedded
import SleepTapOS
import SleepTapProcess

#if canImport(Glibc)
    import Glibc
#endif

/// The `phone` and `watch` executables a process run spawns.
package struct ScenarioExecutables: Sendable {
    package var phone: URL
    package var watch: URL

    package init(phone: URL, watch: URL) {
        self.phone = phone
        self.watch = watch
    }

    /// The built executables: next to the running binary (where SwiftPM puts every product),
    /// else in `.build/debug` or `.build/release` below the working directory.
    /// - Throws: `ScenarioProcessError` (exit 69) naming the one that is missing.
    package static func locate() throws(ScenarioProcessError) -> ScenarioExecutables {
        guard let phone = ChildProcess.locate("phone"), let watch = ChildProcess.locate("watch") else {
            throw ScenarioProcessError(
                file: "", exitCode: .unavailable,
                reason: "the phone and watch executables are not next to \(ChildProcess.productsDirectory.path) "
                    + "nor in .build/debug or .build/release; run `swift build` first")
        }
        return ScenarioExecutables(phone: phone, watch: watch)
    }
}

/// A process run that could not be carried out: the scenario file, why, and the exit status a
/// tool should end with (69 no executables, 73 no temp dir, 70 a process that did not start or
/// stop as it should).
package struct ScenarioProcessError: Error, Sendable, CustomStringConvertible {
    package var file: String
    package var exitCode: ExitCode
    package var reason: String

    package init(file: String, exitCode: ExitCode, reason: String) {
        self.file = file
        self.exitCode = exitCode
        self.reason = reason
    }

    package var description: String { file.isEmpty ? reason : "\(file): \(reason)" }
}

/// The resident set sizes of a process run's `phone` and `watch` (`VmRSS` of /proc/PID/status,
/// KiB; proc(5)): just after both started, and at `end` just before they are told to quit. nil
/// when it could not be read.
package struct ProcessMemory: Sendable, Equatable {
    package var phoneStart: Int?
    package var watchStart: Int?
    package var phoneEnd: Int?
    package var watchEnd: Int?

    package init(phoneStart: Int? = nil, watchStart: Int? = nil, phoneEnd: Int? = nil, watchEnd: Int? = nil) {
        self.phoneStart = phoneStart
        self.watchStart = watchStart
        self.phoneEnd = phoneEnd
        self.watchEnd = watchEnd
    }

    /// `VmRSS` of a running process in KiB, nil when it is gone or the line is missing.
    package static func residentKiB(_ pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.dropFirst("VmRSS:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }
}

/// Replays a process run in the twin: the twin is given the outside inputs of the run at the
/// virtual instants they happened (when each process started, each stdin line was written, the
/// link went down and came up), so that it can be compared with the processes night by night
/// without taking wall-clock lag (a wall millisecond is minutes of virtual time) for a difference.
/// The differential tests (IntegrationTests/TwinDifferentialTests) and `--both` use it.
package enum TwinReplay {
    /// - Parameters:
    ///   - twin: the twin built from the processes' own command lines (`TwinBuilder`), not booted.
    ///   - start: the scenario's start (`--clock-start`).
    ///   - end: the virtual instant to run to.
    ///   - phoneStarted, watchStarted: the `phone.started` and `watch.started` instants.
    ///   - inputs: the outside inputs at their virtual instants; at the same instant, in order.
    /// - Returns: the twin, run to `end`.
    package static func run(
        _ twin: Twin, start: Date, end: Date, phoneStarted: Date, watchStarted: Date,
        inputs: [(at: Date, step: TwinStep)]
    ) -> Twin {
        var twin = twin
        let ordered = inputs.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }
            .map(\.element)
        // Inputs at the start instant (the link down until the first handshake) come before the boot.
        for (at, step) in ordered where at <= start { twin.schedule(step, at: at) }
        twin.boot(phoneAt: phoneStarted, watchAt: watchStarted)
        for (at, step) in ordered where at > start { twin.schedule(step, at: at) }
        twin.run(until: end)
        return twin
    }
}

extension ScenarioRun {
    /// Wall seconds to wait for a process to start or stop before giving up.
    static let processDeadline: TimeInterval = 20

    /// The processes' `--clock-anchor` for the wall instant `now`: `now` to the millisecond, as
    /// the processes read it back, rounded down, so never after the instant the executables'
    /// parsers check it at. Rounded to the nearest, it could lie half a millisecond ahead, and a
    /// scenario starting at 1970-01-01T00:00:00Z then put virtual now before 1970 (exit 65, now
    /// and then).
    package static func anchor(at now: Date) -> Date {
        Date(timeIntervalSince1970: (now.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    }

    /// Runs the scenario with the real `phone` and `watch` executables over ipc, in a temp dir,
    /// in accelerated virtual time, and checks its expectations against their events.
    ///
    /// - Both processes get the scenario's flags and the clock (`--clock-start` = `start`,
    ///   `--clock-speed` = `speed`, one `--clock-anchor`: the wall instant before the phone is
    ///   spawned), `TZ` = the scenario's `timeZone`, and the inline schedule as a file. The phone
    ///   binds `ipc://DIR/phone.sock`; the watch connects to `ipc://DIR/link.sock`, a relay that
    ///   cuts the link on `link down` and restores it on `link up` (`LinkRelay`: what was in
    ///   flight is lost, the phone keeps running, as `TwinStep.link(up:)` in the twin).
    /// - Each step is written to the process's stdin (or given to the relay) at the wall instant of
    ///   its virtual `at`; wall-clock lag makes it a little later in virtual time (a wall
    ///   millisecond is `speed` / 1000 virtual seconds: 6 virtual minutes at the default speed).
    /// - At `end` both get `quit`; every child is ended by pid on every way out (`Reaper`), and the
    ///   temp dir is removed.
    /// - The run's `comparison` holds its nights against the twin's on the processes' own instants
    ///   (`TwinReplay`).
    ///
    /// - Parameters:
    ///   - scenario: a loaded scenario file.
    ///   - speed: virtual seconds per wall second, above 0 and at most 10^7; a run takes
    ///     (end − start) / speed wall seconds.
    ///   - executables: the `phone` and `watch` to spawn (`ScenarioExecutables.locate()`).
    /// - Returns: the run, mode `.processes`.
    /// - Throws: `ScenarioError` (exit 65) when the flags are refused; `ScenarioProcessError` when
    ///   the run cannot be carried out (its `exitCode`).
    package static func processes(
        _ scenario: ScenarioFile, speed: Double = defaultSpeed, executables: ScenarioExecutables
    ) throws -> ScenarioRun {
        func failure(_ reason: String, _ code: ExitCode = .software) -> ScenarioProcessError {
            ScenarioProcessError(file: scenario.path, exitCode: code, reason: reason)
        }
        guard speed > 0, speed <= 10_000_000 else { throw failure("speed \(speed): expected 0 < N <= 10^7", .usage) }
        let directory: String
        do {
            directory = try Reaper.shared.makeTemporaryDirectory(prefix: "sleeptap-scn")
        } catch {
            throw failure(error.description, .cantCreate)
        }
        defer {
            try? FileManager.default.removeItem(atPath: directory)
            Reaper.shared.forget(directory: directory)
        }
        var schedulePath = scenario.schedulePath
        if schedulePath == nil, let data = scenario.scheduleData {
            schedulePath = directory + "/schedule.json"
            do {
                try data.write(to: URL(fileURLWithPath: directory + "/schedule.json"))
            } catch {
                throw failure("cannot write \(directory)/schedule.json: \(error.localizedDescription)", .cantCreate)
            }
        }
        let relay: LinkRelay
        do {
            relay = try LinkRelay(listenPath: directory + "/link.sock", phonePath: directory + "/phone.sock")
        } catch {
            throw failure("\(error)", .cantCreate)
        }
        defer { relay.close() }
        let anchor = Self.anchor(at: Date())
        let clock = VirtualClock(start: scenario.start, speed: speed, anchor: anchor)
        let (phoneArguments, watchArguments) = commandLines(
            scenario, speed: speed, anchor: anchor, phoneEndpoint: "ipc://\(directory)/phone.sock",
            watchEndpoint: "ipc://\(directory)/link.sock", directory: directory, schedulePath: schedulePath)
        // The flags go through the executables' parsers before anything is spawned (65).
        let twin = try makeTwin(scenario, phone: phoneArguments, watch: watchArguments)

        var children: [ChildProcess] = []
        defer {
            for child in children where child.isRunning { child.stop(signal: SIGTERM, timeout: 3) }
        }
        func spawn(_ name: String, _ executable: URL, _ arguments: [String]) throws(ScenarioProcessError)
            -> ChildProcess
        {
            do {
                // TZ through env(1): the zone both devices' systems are set to.
                let child = try ChildProcess(
                    name: name, executable: URL(fileURLWithPath: "/usr/bin/env"),
                    arguments: ["TZ=\(scenario.timeZone.identifier)", executable.path] + arguments)
                children.append(child)
                return child
            } catch {
                throw failure("cannot start \(executable.path): \(error.localizedDescription)", .unavailable)
            }
        }
        func started(_ child: ChildProcess, _ name: EventName) throws(ScenarioProcessError) -> Date {
            guard let found = child.waitFor(name, timeout: processDeadline), let at = found.event.time else {
                child.stop(signal: SIGTERM, timeout: 3)
                child.waitForOutputEnd(timeout: 2)
                throw failure(
                    "\(child.name) did not start within \(Int(processDeadline)) s; it wrote on stderr: "
                        + child.standardError.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            return at
        }

        /// The lines sent whose handled instant is read back from the log once the run is over:
        /// the index in `inputs`, the process, its event count when the line was sent and the
        /// events that answer the line.
        var echoes: [(input: Int, child: ChildProcess, from: Int, names: Set<EventName>)] = []
        /// The virtual instant a process acted on a line: the first event it wrote for it (the
        /// time in the event, not when this thread woke up), waiting up to 2 s wall to pace the
        /// steps. A process behind virtual time may answer later: `echoes` reads it back at the end.
        func echo(_ child: ChildProcess, from: Int, _ names: Set<EventName>) -> Date? {
            guard !names.isEmpty else { return nil }
            return child.waitFor(anyOf: names.union([.inputRejected]), from: from, timeout: 2)?.event.time
        }
        /// `echo`, and the line remembered in `echoes` as input `inputs.count` (the next appended).
        func echoLater(_ child: ChildProcess, from: Int, _ names: Set<EventName>) -> Date? {
            if !names.isEmpty { echoes.append((inputs.count, child, from, names)) }
            return echo(child, from: from, names)
        }

        // Both at once: the relay holds the watch's connection until the phone has bound.
        var phones = [try spawn("phone", executables.phone, phoneArguments)]
        var watches = [try spawn("watch", executables.watch, watchArguments)]
        let phoneStarted = try started(phones[0], .phoneStarted)
        let watchStarted = try started(watches[0], .watchStarted)
        var memory = ProcessMemory(
            phoneStart: ProcessMemory.residentKiB(phones[0].pid), watchStart: ProcessMemory.residentKiB(watches[0].pid))
        /// The process of a side now (the last one spawned).
        func current(_ side: EventSource) -> ChildProcess {
            side == .phone ? phones[phones.count - 1] : watches[watches.count - 1]
        }
        /// A step for a process that is not running is an error, not a step that does nothing
        /// (the file's own quit and kill steps are refused when it is read: this one exited).
        func running(_ side: EventSource, _ index: Int, _ step: ScenarioStep) throws(ScenarioProcessError)
            -> ChildProcess
        {
            let child = current(side)
            guard child.isRunning else {
                child.waitForOutputEnd(timeout: 2)
                throw failure(
                    "steps[\(index)] (\(step.text)): the \(side.rawValue) is not running: it exited early, with status "
                        + "\(child.exitStatus ?? -1); it wrote on stderr: "
                        + child.standardError.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            return child
        }
        /// `quit` and its exit 0; the instant of its `phone.stopping` or `watch.stopping`.
        func quit(_ child: ChildProcess, _ side: EventSource) throws(ScenarioProcessError) -> Date {
            let from = child.events.count
            child.send(line: "quit")
            let at = echo(child, from: from, [side == .phone ? .phoneStopping : .watchStopping]) ?? clock.now
            guard child.waitForExit(timeout: processDeadline) else {
                throw failure("\(child.name) did not exit within \(Int(processDeadline)) s of quit")
            }
            child.waitForOutputEnd(timeout: 5)
            guard child.exitStatus == 0 else {
                throw failure(
                    "\(child.name) exited with status \(child.exitStatus ?? -1) on quit; it wrote on stderr: "
                        + child.standardError.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            return at
        }
        /// SIGKILL (signal(7)): the process ends at once, without its stop; the virtual instant
        /// the signal was sent at.
        func kill(_ child: ChildProcess) -> Date {
            let at = clock.now
            child.stop(signal: SIGKILL, timeout: processDeadline)
            child.waitForOutputEnd(timeout: 5)
            return at
        }
        /// A new process for the side, on its state dir as it is or without its state files
        /// (`phone.json` and `phone-app.json`, `watch.json`; the phone's `os.json` is the
        /// device's and stays); the
        /// instant of its `phone.started` or `watch.started`.
        func start(_ side: EventSource, fresh: Bool) throws(ScenarioProcessError) -> Date {
            let name = side == .phone ? "phone" : "watch"
            if fresh {
                // The state files and their previous copies (`NAME.json.prev`, which a missing file
                // would be recovered from), and any copy moved aside as corrupt.
                let stateDirectory = "\(directory)/\(name)"
                let names = (try? FileManager.default.contentsOfDirectory(atPath: stateDirectory)) ?? []
                let prefixes = side == .phone ? ["phone.json", "phone-app.json"] : ["watch.json"]
                for file in names where prefixes.contains(where: file.hasPrefix) {
                    do {
                        try FileManager.default.removeItem(atPath: "\(stateDirectory)/\(file)")
                    } catch {
                        throw failure(
                            "cannot remove \(stateDirectory)/\(file): \(error.localizedDescription)", .cantCreate)
                    }
                }
            }
            if side == .phone {
                phones.append(try spawn(name, executables.phone, phoneArguments))
                return try started(phones[phones.count - 1], .phoneStarted)
            }
            watches.append(try spawn(name, executables.watch, watchArguments))
            return try started(watches[watches.count - 1], .watchStarted)
        }
        /// A watch start as the twin's inputs: the new watch's link is down until its own
        /// handshake (its `link.up`, read back from its log), as at the first start.
        func watchStart(_ at: Date, keepState: Bool) -> [(at: Date, step: TwinStep)] {
            [(at, .link(up: false)), (at, .startWatch(keepState: keepState))]
        }

        // The link is down until the transport's first handshake (the watch's link.up).
        var inputs: [(at: Date, step: TwinStep)] = [(scenario.start, .link(up: false))]
        for (index, step) in scenario.steps.enumerated() {
            Thread.sleep(until: clock.wallDate(for: step.at))
            switch step.step {
            case .phone(let line):
                let phone = try running(.phone, index, step)
                if case .quit? = try? PhoneCommand.parse(line, platform: .ios) {
                    inputs.append((try quit(phone, .phone), .phone(line)))
                    continue
                }
                let from = phone.events.count
                phone.send(line: line)
                inputs.append((echoLater(phone, from: from, Self.phoneEcho(line)) ?? clock.now, .phone(line)))
            case .watch(let line):
                let watch = try running(.watch, index, step)
                if case .quit = WatchCommand(parsing: line) {
                    inputs.append((try quit(watch, .watch), .watch(line)))
                    continue
                }
                let from = watch.events.count
                watch.send(line: line)
                inputs.append((echoLater(watch, from: from, Self.watchEcho(line)) ?? clock.now, .watch(line)))
            case .link(let up):
                relay.setLink(up: up)
                // The return is read back from the watch's link.up (the handshake).
                if !up { inputs.append((clock.now, .link(up: false))) }
            case .restartPhone(let keepState):
                // The watch's link.down and link.up (read back from its log) frame the restart.
                inputs.append((try quit(try running(.phone, index, step), .phone), .phone("quit")))
                inputs.append((try start(.phone, fresh: !keepState), .startPhone(keepState: keepState)))
            case .restartWatch(let keepState):
                inputs.append((try quit(try running(.watch, index, step), .watch), .watch("quit")))
                inputs += watchStart(try start(.watch, fresh: !keepState), keepState: keepState)
            case .startPhone(let keepState):
                guard !current(.phone).isRunning else {
                    throw failure("steps[\(index)] (\(step.text)): the phone is running")
                }
                inputs.append((try start(.phone, fresh: !keepState), .startPhone(keepState: keepState)))
            case .startWatch(let keepState):
                guard !current(.watch).isRunning else {
                    throw failure("steps[\(index)] (\(step.text)): the watch is running")
                }
                inputs += watchStart(try start(.watch, fresh: !keepState), keepState: keepState)
            case .killPhone:
                inputs.append((kill(try running(.phone, index, step)), .killPhone))
            case .killWatch:
                inputs.append((kill(try running(.watch, index, step)), .killWatch))
            default:
                throw failure("step \(step.text) cannot be given to processes")
            }
        }
        Thread.sleep(until: clock.wallDate(for: scenario.end))
        let (phone, watch) = (current(.phone), current(.watch))
        memory.phoneEnd = phone.isRunning ? ProcessMemory.residentKiB(phone.pid) : nil
        memory.watchEnd = watch.isRunning ? ProcessMemory.residentKiB(watch.pid) : nil
        // The file left running what runs now (its own quit and kill steps are checked when it is
        // read): one that exited before `end` did so on its own, which is a failure.
        let stoppedAtEnd = Self.stoppedAtEnd(scenario)
        for (side, child) in [(EventSource.phone, phone), (.watch, watch)] where !stoppedAtEnd.contains(side) {
            guard child.isRunning else {
                child.waitForOutputEnd(timeout: 2)
                throw failure(
                    "the \(side.rawValue) exited before end, with status \(child.exitStatus ?? -1); it wrote on stderr: "
                        + child.standardError.trimmingCharacters(in: .whitespacesAndNewlines))
            }
        }
        for child in [phone, watch] where child.isRunning { child.send(line: "quit") }
        for (side, child) in [(EventSource.phone, phone), (.watch, watch)] where !stoppedAtEnd.contains(side) {
            guard child.waitForExit(timeout: processDeadline) else {
                throw failure("\(child.name) did not exit within \(Int(processDeadline)) s of quit")
            }
            child.waitForOutputEnd(timeout: 5)
            guard child.exitStatus == 0 else {
                throw failure(
                    "\(child.name) exited with status \(child.exitStatus ?? -1); it wrote on stderr: "
                        + child.standardError.trimmingCharacters(in: .whitespacesAndNewlines))
            }
        }

        Self.resolve(
            echoes.map { echo in
                (echo.input, children.firstIndex { $0 === echo.child } ?? -1, echo.from, echo.names)
            },
            logs: children.map { $0.events.map { ($0.rawName, $0.time) } }, into: &inputs)
        let log = Self.log(of: phones + watches, before: scenario.end)
        for entry in log where entry.source == .watch {
            if entry.event.name == .linkUp { inputs.append((entry.at, .link(up: true))) }
            if entry.event.name == .linkDown { inputs.append((entry.at, .link(up: false))) }
        }
        let replay = TwinReplay.run(
            twin, start: scenario.start, end: scenario.end.addingTimeInterval(-0.001), phoneStarted: phoneStarted,
            watchStarted: watchStarted, inputs: inputs)
        let replayLog = replay.log.map { LogEntry(at: $0.at, source: $0.source, event: $0.event) }
        let nights = nights(of: log)
        let twinNights = Self.nights(of: replayLog)
        var run = ScenarioRun(
            scenario: scenario, mode: .processes, speed: speed, nights: nights,
            checks: checks(scenario.expectations, against: log), log: log,
            comparison: NightComparison.compare(
                twin: twinNights, processes: nights, against: "the twin on the processes' instants"))
        run.twinNights = twinNights
        run.twinLog = replayLog
        let linkUp = log.first { $0.source == .watch && $0.event.name == .linkUp }?.at
        run.startUp = (phoneStarted, watchStarted, linkUp)
        run.memory = memory
        // Every line the phone wrote, those after `end` too (the totals said before phone.stopping).
        run.behind = ProcessBehind(
            events: phone.events.compactMap { event in
                guard event.name == .clockBehind else { return nil }
                let fields = event.fields.filter { !Event.lineKeys.contains($0.key) }.map {
                    ($0.key, eventValue($0.value))
                }
                return Event(.clockBehind, fields)
            })
        run.handledInputs = inputs
        return run
    }

    /// Sets each echoed input's instant to the event that answered it in its process's whole log:
    /// a process reads its stdin in order, so the answer to a line is the first answering event
    /// (or `input.rejected`) after the line was sent and after the answer to the line before it.
    /// An input whose answer never came keeps the instant it had.
    /// - Parameters:
    ///   - echoes: per line sent, its index in `inputs`, its process (an index into `logs`), the
    ///     process's event count when it was sent and the events that answer it.
    ///   - logs: each process's events, as name and `time`, in the order written.
    ///   - inputs: the run's inputs, changed in place.
    static func resolve(
        _ echoes: [(input: Int, process: Int, from: Int, names: Set<EventName>)],
        logs: [[(name: String, time: Date?)]], into inputs: inout [(at: Date, step: TwinStep)]
    ) {
        var cursors = Array(repeating: 0, count: logs.count)
        for echo in echoes where logs.indices.contains(echo.process) {
            let events = logs[echo.process]
            let names = Set(echo.names.union([.inputRejected]).map(\.rawValue))
            var index = max(echo.from, cursors[echo.process])
            while index < events.count && !names.contains(events[index].name) { index += 1 }
            guard index < events.count, let at = events[index].time else { continue }
            inputs[echo.input].at = at
            cursors[echo.process] = index + 1
        }
    }

    /// The processes a scenario's steps leave stopped at `end` (a quit or kill step and no start
    /// after it).
    static func stoppedAtEnd(_ scenario: ScenarioFile) -> Set<EventSource> {
        var stopped: Set<EventSource> = []
        for step in scenario.steps {
            switch step.step {
            case .phone(let line):
                if case .quit? = try? PhoneCommand.parse(line, platform: .ios) { stopped.insert(.phone) }
            case .watch(let line):
                if case .quit = WatchCommand(parsing: line) { stopped.insert(.watch) }
            case .killPhone: stopped.insert(.phone)
            case .killWatch: stopped.insert(.watch)
            case .startPhone, .restartPhone: stopped.remove(.phone)
            case .startWatch, .restartWatch: stopped.remove(.watch)
            default: break
            }
        }
        return stopped
    }

    /// The events a phone writes when it acts on a stdin line (`PhoneCommand`); none for a line
    /// that may write nothing (`history`, `notifications`). An `open` is its own
    /// `refresh.foreground` (or the crash of a late registration), never a `handler.registered`:
    /// a background launch's cold start writes one too, and an open that waits behind that
    /// launch's job would take the launch's instant.
    static func phoneEcho(_ line: String) -> Set<EventName> {
        switch PhoneCommand.words(line).words.first {
        case "open": [.refreshForeground, .appCrashed]
        case "status": [.phoneStatus]
        case "why": [.osWhy]
        case "time-zone": [.timezoneChanged]
        case "move": [.locationChanged]
        case "low-power": [.osLowPower]
        case "background-refresh": [.osBackgroundRefresh]
        case "charging": [.osCharging]
        case "bucket": [.osStandbyBucket]
        case "screen": [.osDoze, .osScreen]
        case "motion", "idle": [.osDoze]
        case "network": [.osNetwork]
        case "battery-low": [.osBatteryLow]
        case "battery": [.osBattery]
        case "storage-low": [.osStorageLow]
        case "initial-delay-met", "period-delay-met", "constraints-met": [.osTestDriver]
        case "stop": [.osWorkStopped, .osTestDriver]
        case "permission": [.osPermission]
        case "clock-set": [.osClockSet]
        case "notifications" where PhoneCommand.words(line).words.count == 2: [.osNotifications]
        case "force-quit": [.osForceQuit]
        case "registration": [.osRegistration]
        case "reboot": [.osReboot]
        case "simulate-launch", "simulate-expiration": [.handlerEntered, .osSimulateFailed]
        case "quit": [.phoneStopping]
        default: []
        }
    }

    /// The events a watch writes when it acts on a stdin line (`WatchCommand`).
    static func watchEcho(_ line: String) -> Set<EventName> {
        switch WatchCommand(parsing: line) {
        case .bed: [.bedWakeTime, .fallbackManualEntry]
        case .status: [.cacheStatus]
        case .timeZone: [.timezoneChanged]
        case .wakeTime: [.manualWakeTime]
        case .quit: [.watchStopping]
        default: []
        }
    }

    /// The children's events before `end`, in time order (at the same millisecond, in the
    /// order of `children`, then as written).
    static func log(of children: [ChildProcess], before end: Date) -> [LogEntry] {
        var entries: [(entry: LogEntry, order: Int)] = []
        for child in children {
            for event in child.events {
                guard let name = event.name, let source = event.source, let at = event.time, at < end else { continue }
                let fields = event.fields.filter { !Event.lineKeys.contains($0.key) }.sorted { $0.key < $1.key }
                    .map { ($0.key, eventValue($0.value)) }
                entries.append((LogEntry(at: at, source: source, event: Event(name, fields)), entries.count))
            }
        }
        return entries.sorted { ($0.entry.at, $0.order) < ($1.entry.at, $1.order) }.map(\.entry)
    }

    /// A decoded JSON value as an event value (instants stay strings: they render the same).
    static func eventValue(_ value: Any) -> EventValue {
        switch value {
        case let text as String:
            return .string(text)
        case let number as NSNumber:
            switch JSONNumber(number) {
            case .bool(let value): return .bool(value)
            case .fraction(let value): return .double(value)
            case .integer(let value): return .int(value)
            case .unsignedInteger: return .int(number.int64Value)
            }
        case let object as [String: Any]:
            return .object(EventObject(object.sorted { $0.key < $1.key }.map { ($0.key, eventValue($0.value)) }))
        default:
            return .null
        }
    }
}

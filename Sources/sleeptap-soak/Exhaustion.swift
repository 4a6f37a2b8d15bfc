// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCommandLine
import SleepTapCore
import SleepTapEmbedded
import SleepTapOS
import SleepTapProcess
import SleepTapRuntime
import SleepTapScenario
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The signal that asked the soak to stop (0: none yet); the run checks it between timelines
/// (exhaustion) or steps (faults) and then prints the summary so far.
let stopSignal = Atomic<Int32>(0)

/// SIGINT, SIGTERM and SIGHUP ask the run to stop (`stopSignal`), which it does at its next
/// check (Dispatch signal sources, as `Reaper` installs them; no SIG_IGN, which children would
/// inherit). A run stuck past 2 s is ended from here by `stuck`, unless it is already exiting.
func installStopSignalHandlers(stuck: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
    let numbers = [SIGINT, SIGTERM, SIGHUP]
    let sources = numbers.map { number in
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler {
            _ = stopSignal.compareExchange(expected: 0, desired: number, ordering: .sequentiallyConsistent)
            let deadline = Date().addingTimeInterval(2)
            while Date() < deadline {
                if Reaper.shared.isExiting { return }
                usleep(10_000)
            }
            stuck(number)
        }
        source.resume()
        return source
    }
    // The handler is installed asynchronously: wait for it (at most 2 s) so that a signal right
    // after start-up is not lost.
    let deadline = Date().addingTimeInterval(2)
    while !numbers.allSatisfy(Reaper.hasHandler) && Date() < deadline { usleep(1_000) }
    return sources
}

/// `sleeptap-soak exhaustion`: K random timelines in the twin, every night checked
/// (docs/scenarios.md, "Soak").
final class Exhaustion {
    let options: ExhaustionOptions
    let seed: UInt64
    let started = ContinuousClock.now
    var tally = SoakTally()
    var scenariosRun = 0
    var nightsRun = 0
    /// The broken invariant, the timeline it broke in and the repro file written for it.
    /// The broken invariant, its timeline and scenario file, and for a process run the event
    /// logs written beside the file (the processes', and the twin's on their instants).
    var violation: (error: SoakViolation, timeline: SoakTimeline, file: String, logs: [String])?
    /// The signal that stopped the run early.
    var interruptedBy: Int32 = 0
    private var lastProgress = ContinuousClock.now
    private let progress = isatty(STDERR_FILENO) == 1

    init(options: ExhaustionOptions, seed: UInt64) {
        self.options = options
        self.seed = seed
    }

    /// SIGINT, SIGTERM and SIGHUP stop the run after the timeline in progress
    /// (`installStopSignalHandlers`); one stuck in the twin never gets there: after 2 s the
    /// summary so far is printed from the handler.
    static func installSignalHandlers() -> [any DispatchSourceSignal] {
        installStopSignalHandlers { number in Exhaustion.current?.finish(signal: number, stuck: true) }
    }

    var seconds: Double {
        let elapsed = ContinuousClock.now - started
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }

    var nightsPerSecond: Double { seconds > 0 ? Double(nightsRun) / seconds : 0 }

    /// The run in progress, for a signal that comes while a timeline is stuck.
    nonisolated(unsafe) static var current: Exhaustion?
    private let lock = NSLock()

    /// Prints the summary (and the failure report) and exits; only the first caller does, any
    /// other waits for it. `stuck`: a signal came while a timeline did not finish.
    func finish(signal: Int32 = 0, stuck: Bool = false) -> Never {
        guard Reaper.shared.claimExit() else {
            while true { pause() }
        }
        lock.lock()
        if signal != 0 { interruptedBy = signal }
        if stuck { stuckTimeline = scenariosRun }
        let status: Int32 =
            violation != nil
            ? ExitCode.failure.rawValue : interruptedBy != 0 ? 128 + interruptedBy : ExitCode.ok.rawValue
        Reaper.shared.cleanUp()
        if progress { try? FileHandle.standardError.write(contentsOf: Data("\r\u{1B}[K".utf8)) }
        if violation != nil { complain(report()) }
        if options.json {
            out(summaryEvent().jsonLine(time: Date(), process: .soak))
        } else {
            out(summary())
        }
        exit(status)
    }

    /// The timeline that was running when a signal came and did not finish within 2 s.
    var stuckTimeline: Int?

    /// Runs the timelines until one breaks an invariant, a signal comes, or all ran.
    /// - Throws: `SetupError` when a timeline cannot be made or run, or its file not written.
    func run() throws(SetupError) {
        if !options.json {
            out(
                "sleeptap-soak exhaustion: seed \(seed), \(options.scenarios) timelines of \(options.nights) nights "
                    + "in the twin"
                    + (options.processes > 0 ? ", the first \(options.processes) also as processes" : ""))
        }
        for index in 0..<options.scenarios {
            let signal = stopSignal.load(ordering: .sequentiallyConsistent)
            if signal != 0 {
                interruptedBy = signal
                break
            }
            let timeline: SoakTimeline
            do {
                timeline = try SoakTimeline.make(
                    runSeed: seed, index: index, nights: options.nights, directory: options.outDirectory)
            } catch {
                throw SetupError(message: "timeline \(index) cannot be made: \(error)", status: .software)
            }
            do {
                let result = try SoakCheck.twin(timeline.scenario, fault: index == 0 ? options.fault : nil)
                lock.withLock {
                    tally += result
                    nightsRun += result.nights.count
                    scenariosRun += 1
                }
            } catch let error as SoakViolation {
                let file = try writeRepro(timeline, error)
                lock.withLock {
                    scenariosRun += 1
                    nightsRun += error.night
                    violation = (error, timeline, file, [])
                }
                break
            } catch {
                throw SetupError(message: "timeline \(index) cannot run in the twin: \(error)", status: .software)
            }
            if index < options.processes, violation == nil {
                try runProcesses(timeline)
                if violation != nil { break }
            }
            showProgress()
        }
    }

    /// Timelines run as processes, and the nights they had.
    var processRuns = 0
    var processNights = 0
    /// Nights of the process runs that differed from the twin's within the race window of an input.
    var racedNights = 0
    /// RSS (KiB) at the start of the first process run and at the end of the last, per side, and
    /// the largest seen at any end.
    var memoryFirst: ProcessMemory?
    var memoryLast: ProcessMemory?
    var largestEndKiB = 0
    /// Per process run (its timeline's index): how far behind virtual time its phone fell
    /// (`clock.behind`: launches handled more than 600 virtual seconds late, and the largest lateness).
    var behind: [(timeline: Int, behind: ProcessBehind)] = []
    private var executables: ScenarioExecutables?

    /// Runs a timeline as the real phone and watch and checks invariants 1 to 4 on them.
    private func runProcesses(_ timeline: SoakTimeline) throws(SetupError) {
        let run: ScenarioRun
        do {
            if executables == nil { executables = try ScenarioExecutables.locate() }
            guard let executables else { return }
            run = try ScenarioRun.processes(timeline.scenario, speed: options.speed, executables: executables)
        } catch let error as ScenarioProcessError {
            if stopSignal.load(ordering: .sequentiallyConsistent) != 0 { return }
            throw SetupError(message: "timeline \(timeline.index) as processes: \(error)", status: error.exitCode)
        } catch {
            if stopSignal.load(ordering: .sequentiallyConsistent) != 0 { return }
            throw SetupError(message: "timeline \(timeline.index) as processes: \(error)", status: .software)
        }
        lock.withLock { behind.append((timeline.index, run.behind ?? ProcessBehind())) }
        do {
            let (_, raced) = try SoakCheck.processes(run)
            lock.withLock {
                racedNights += raced.count
                processRuns += 1
                processNights += run.nights.count
                if memoryFirst == nil { memoryFirst = run.memory }
                memoryLast = run.memory
                largestEndKiB = max(largestEndKiB, run.memory?.phoneEnd ?? 0, run.memory?.watchEnd ?? 0)
            }
        } catch {
            let file = try writeRepro(timeline, error, handled: run.handledInputs)
            let logs = try writeLogs(run, besides: file)
            lock.withLock {
                processRuns += 1
                violation = (error, timeline, file, logs)
            }
        }
    }

    /// Why a failing timeline's scenario file could not be written under `directory` (`--out`),
    /// nil when it could: something other than a directory there or on the way to it, or no
    /// file can be created in it (or, for a directory still to be made, in the nearest existing
    /// one above it; tried by creating and removing a temporary file, as `access(2)` says yes to
    /// root where the file system says no). Nothing is created.
    static func outProblem(_ directory: String) -> String? {
        var existing = directory
        while !FileManager.default.fileExists(atPath: existing) {
            let parent = FilePaths.directory(of: existing)
            guard parent != existing else { break }
            existing = parent
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: existing, isDirectory: &isDirectory) else {
            return "\(existing) does not exist"
        }
        guard isDirectory.boolValue else {
            return existing == directory ? "is not a directory" : "\(existing) is not a directory"
        }
        if let failure = AtomicFile.cannotWrite(existing + "/sleeptap-soak-probe.json") {
            return existing == directory ? "no file can be created in it: \(failure.reason)" : "\(failure)"
        }
        return nil
    }

    struct SetupError: Error {
        var message: String
        var status: ExitCode
    }

    /// Writes the timeline, with the expectation that fails on the broken night, to `--out`.
    /// - Parameter handled: for a process run, its inputs at the virtual instants the processes
    ///   handled them: the file's phone and watch steps are moved to those instants, and its
    ///   name says what the twin cannot replay (`SoakTimeline.asHandled(_:)`).
    private func writeRepro(
        _ timeline: SoakTimeline, _ violation: SoakViolation, handled: [(at: Date, step: TwinStep)]? = nil
    ) throws(SetupError) -> String {
        var timeline = timeline
        if let handled { timeline.json = timeline.asHandled(handled) }
        let data =
            violation.expectation.isEmpty
            ? timeline.json : timeline.adding(expectations: [SoakCheck.expectationObject(violation.expectation)])
        // An earlier run's file of the same name is kept: this one takes the next free name
        // (NAME-2.json, NAME-3.json, …), created exclusively.
        let first = timeline.scenario.path
        let stem = first.hasSuffix(".json") ? String(first.dropLast(".json".count)) : first
        var path = first
        do {
            try FileManager.default.createDirectory(
                atPath: options.outDirectory, withIntermediateDirectories: true)
            for attempt in 2... {
                do {
                    try data.write(to: URL(fileURLWithPath: path), options: .withoutOverwriting)
                    break
                } catch CocoaError.fileWriteFileExists where attempt < 1_000 {
                    path = "\(stem)-\(attempt).json"
                }
            }
        } catch {
            throw SetupError(
                message: "cannot write the scenario file \(path): \(error.localizedDescription)", status: .cantCreate)
        }
        return path
    }

    /// Writes a process run's events (both processes, merged in time order) and the twin's on
    /// the processes' instants as JSON Lines beside the scenario file `file`
    /// (`NAME.processes.jsonl`, `NAME.twin.jsonl`): the evidence a process run's failure needs,
    /// since the timing that made it does not replay.
    /// - Returns: the two paths.
    private func writeLogs(_ run: ScenarioRun, besides file: String) throws(SetupError) -> [String] {
        let base = file.hasSuffix(".json") ? String(file.dropLast(".json".count)) : file
        var paths: [String] = []
        for (suffix, log) in [("processes", run.log), ("twin", run.twinLog ?? [])] {
            let path = "\(base).\(suffix).jsonl"
            let text = log.map { $0.event.jsonLine(time: $0.at, process: $0.source) + "\n" }.joined()
            do {
                try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            } catch {
                throw SetupError(message: "cannot write \(path): \(error.localizedDescription)", status: .cantCreate)
            }
            paths.append(path)
        }
        return paths
    }

    private func showProgress() {
        guard progress, ContinuousClock.now - lastProgress >= .milliseconds(250) else { return }
        lastProgress = ContinuousClock.now
        let rate = nightsPerSecond
        let left = Double(options.scenarios - scenariosRun) * Double(options.nights)
        let eta = rate > 0 ? Int((left / rate).rounded(.up)) : 0
        let line =
            "\r\u{1B}[Ksleeptap-soak: \(scenariosRun)/\(options.scenarios) timelines, \(nightsRun) nights, "
            + "\(Int(rate)) nights/s, ETA \(eta / 60)m\(String(format: "%02d", eta % 60))s"
        try? FileHandle.standardError.write(contentsOf: Data(line.utf8))
    }

    var result: String {
        if violation != nil { return "failed" }
        if interruptedBy != 0 { return "interrupted" }
        return "passed"
    }

    /// Per process run, how often and how far its phone fell behind virtual time, in words.
    var behindText: String {
        guard !behind.isEmpty else { return "no process run" }
        let threshold = Int(PhoneNode.behindThreshold)
        return "the phone handled OS launches more than \(threshold) virtual s late: "
            + behind.map { run in
                run.behind.count == 0
                    ? "timeline \(run.timeline) never"
                    : "timeline \(run.timeline) \(run.behind.count) times, at most "
                        + "\(String(format: "%.0f", run.behind.maxLateSeconds)) s "
                        + "(\(String(format: "%.1f", run.behind.maxLateSeconds / 3600)) h; "
                        + "\(String(format: "%.0f", run.behind.maxLateSeconds / options.speed * 1000)) wall ms)"
            }.joined(separator: "; ")
    }

    /// The readable summary.
    func summary() -> String {
        func kib(_ value: Int?) -> String { value.map { "\($0) KiB" } ?? "?" }
        let processes =
            options.processes == 0
            ? "not run (--processes 0)"
            : "\(processRuns) of \(options.processes) timelines as real phone and watch (\(processNights) nights, "
                + "each the twin's night by night but \(racedNights) raced: the twin's batch reached the "
                + "processes' watch after the tap, at most \(Int(SoakCheck.raceWindow(speed: options.speed) / 60)) "
                + "virtual minutes after the twin's, or was lost at a link cut that came as soon after it was "
                + "made); RSS phone \(kib(memoryFirst?.phoneStart)) at the start of the "
                + "first, \(kib(memoryLast?.phoneEnd)) at the end of the last; watch \(kib(memoryFirst?.watchStart)) "
                + "-> \(kib(memoryLast?.watchEnd)); largest at any end \(largestEndKiB) KiB"
        var lines = [
            "timelines: \(scenariosRun) of \(options.scenarios) in the twin (seed \(seed), \(options.nights) nights each)"
                + (interruptedBy != 0 ? "; stopped by \(String(cString: strsignal(interruptedBy)))" : "")
                + (stuckTimeline.map { " while timeline \($0) had not finished 2 s later" } ?? ""),
            "nights:    \(nightsRun): cached wake-up \(tally.cached), manual entry \(tally.fallbacks) "
                + "(foreseeable \(tally.foreseeable), every one warned 24 h ahead; no batch yet \(tally.neverHeld))",
            "watch:     coverage.low \(tally.warnings); batches generated \(tally.batchesGenerated), applied "
                + "\(tally.batchesApplied); background runs \(tally.backgroundRuns)",
            "alarms:    \(tally.alarmsFired) rang at the answered wake-up"
                + (violation?.error.invariant == 5 ? "; one wrong or missed (invariant 5)" : "; 0 wrong, 0 missed")
                + (tally.alarmsLostWithRestart > 0
                    ? "; \(tally.alarmsLostWithRestart) lost with a fresh watch start (no state file)" : ""),
            "time:      \(String(format: "%.1f", seconds)) s, \(Int(nightsPerSecond)) nights/s",
            "processes: \(processes)",
        ]
        if options.processes > 0 { lines.append("behind:    \(behindText)") }
        switch result {
        case "failed": lines.append("sleeptap-soak: INVARIANT BROKEN (details on stderr)")
        case "interrupted": lines.append("sleeptap-soak: interrupted; invariants held on every night run")
        default:
            lines.append(
                "sleeptap-soak: invariants 1, 2, 4 and 5 held on every night"
                    + (options.processes > 0 ? "; 3: the processes agreed with the twin on every night" : ""))
        }
        return lines.joined(separator: "\n")
    }

    /// The summary as one JSON Lines object (`--json`): event `soak.summary`, `mode`
    /// "exhaustion", `result` (passed, failed or interrupted), `message` (the broken invariant,
    /// or null), `seed`, `scenarios` (asked), `scenariosRun`, `nightsPerScenario`, `nights`,
    /// `cached`, `manualEntries`, `foreseeable`, `noBatchYet`, `coverageLow`, `batchesGenerated`,
    /// `batchesApplied`, `backgroundRuns`, `alarmsFired`, `alarmsLostWithRestart`, `seconds`,
    /// `nightsPerSecond`, `processes`, `behind` (per process run, keyed by its timeline's index:
    /// `count` and `maxLateSeconds` of the phone's OS launches handled more than 600 virtual seconds late), `repro`
    /// (the scenario file written, or null), `signal` (or null).
    func summaryEvent() -> Event {
        func int(_ value: Int) -> EventValue { .int(Int64(value)) }
        return Event(
            .soakSummary,
            [
                ("mode", .string("exhaustion")), ("result", .string(result)),
                ("tzdata", .string(ZoneDatabase.current.version)),
                ("message", violation.map { .string($0.error.description) } ?? .null),
                ("seed", .string(String(seed))), ("scenarios", int(options.scenarios)),
                ("scenariosRun", int(scenariosRun)), ("nightsPerScenario", int(options.nights)),
                ("nights", int(nightsRun)), ("cached", int(tally.cached)), ("manualEntries", int(tally.fallbacks)),
                ("foreseeable", int(tally.foreseeable)), ("noBatchYet", int(tally.neverHeld)),
                ("coverageLow", int(tally.warnings)), ("batchesGenerated", int(tally.batchesGenerated)),
                ("batchesApplied", int(tally.batchesApplied)), ("backgroundRuns", int(tally.backgroundRuns)),
                ("alarmsFired", int(tally.alarmsFired)), ("alarmsLostWithRestart", int(tally.alarmsLostWithRestart)),
                ("seconds", .double((seconds * 10).rounded() / 10)), ("nightsPerSecond", int(Int(nightsPerSecond))),
                ("processes", int(processRuns)), ("processNights", int(processNights)),
                ("racedNights", int(racedNights)),
                (
                    "rssKiB",
                    .object(
                        EventObject([
                            ("phoneStart", memoryFirst?.phoneStart.map(int) ?? .null),
                            ("phoneEnd", memoryLast?.phoneEnd.map(int) ?? .null),
                            ("watchStart", memoryFirst?.watchStart.map(int) ?? .null),
                            ("watchEnd", memoryLast?.watchEnd.map(int) ?? .null),
                            ("largestEnd", int(largestEndKiB)),
                        ]))
                ),
                (
                    "behind",
                    .object(
                        EventObject(
                            behind.map { run in
                                (
                                    String(run.timeline),
                                    .object(
                                        EventObject([
                                            ("count", int(run.behind.count)),
                                            ("maxLateSeconds", .double(run.behind.maxLateSeconds)),
                                        ]))
                                )
                            }))
                ),
                ("repro", violation.map { .string($0.file) } ?? .null),
                ("signal", interruptedBy != 0 ? int(Int(interruptedBy)) : .null),
            ])
    }

    /// The failure report (stderr): what broke, where, how to reproduce it, the evidence.
    func report() -> String {
        guard let (error, timeline, file, logs) = violation else { return "" }
        let reproduce =
            !logs.isEmpty
            ? "sleeptap-scenario \(file) --both   (as processes; the timing that broke it may not come again)\n"
                + "  event logs: \(logs.joined(separator: ", "))"
            : error.invariant == 3
                ? "sleeptap-scenario \(file) --both   (twin and processes differ)"
                : options.fault != nil && timeline.index == 0
                    ? "the replay below (the fault was planted in this run's log, not in the file: "
                        + "`sleeptap-scenario \(file) --twin` passes)"
                    : "sleeptap-scenario \(file) --twin   (its last expectation fails on this night)"
        return """
            sleeptap-soak: INVARIANT BROKEN in timeline \(timeline.index) of \(options.scenarios) \
            (run seed \(seed), timeline seed \(timeline.seed))
            \(error.description)
            scenario file: \(file)
              reproduce: \(reproduce)
              replay:    sleeptap-soak exhaustion --seed \(seed) --scenarios \(timeline.index + 1) \
            --nights \(options.nights)\(options.fault.map { " --inject-fault \($0.rawValue)" } ?? "")
            evidence:
            \(error.evidence.map { "  \($0)" }.joined(separator: "\n"))
            """
    }
}

/// Runs `sleeptap-soak exhaustion` with the arguments after the word; never returns.
func runExhaustion(_ arguments: [String]) -> Never {
    let options = Reaper.commandLine(
        ExhaustionOptions.command, versionName: "sleeptap-soak"
    ) { () throws(UsageError) in
        try ExhaustionOptions.parse(arguments)
    }
    // --out is written only when a timeline breaks, at the end of a long run: check it first.
    if let problem = Exhaustion.outProblem(options.outDirectory) {
        Reaper.shared.finish(.cantCreate) {
            complain("sleeptap-soak exhaustion: --out \(printable(options.outDirectory)): \(printable(problem))")
        }
    }
    let soak = Exhaustion(options: options, seed: options.seed ?? UInt64.random(in: 0...UInt64.max))
    Exhaustion.current = soak
    let sources = Exhaustion.installSignalHandlers()
    do {
        try soak.run()
    } catch {
        Reaper.shared.finish(error.status) { complain("sleeptap-soak exhaustion: \(error.message)") }
    }
    withExtendedLifetime(sources) {}
    soak.finish()
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCommandLine
import SleepTapCore
import SleepTapProcess
import SleepTapRuntime
import SleepTapScenario

#if canImport(Glibc)
    import Glibc
#endif

// sleeptap-scenario: runs scenario files (docs/scenarios.md) in the embedded twin and as the real
// phone and watch processes, compares them night by night, and checks their expectations.

Reaper.requireStandardStreams()
signal(SIGPIPE, SIG_IGN)
let options = Reaper.commandLine(ScenarioOptions.command) {
    () throws(UsageError) in
    try ScenarioOptions.parse(Array(CommandLine.arguments.dropFirst()))
}

// Every file is read and checked before any runs: a bad one stops the whole run with 65.
var scenarios: [ScenarioFile] = []
for file in options.files {
    do {
        scenarios.append(try ScenarioFile.load(file))
    } catch {
        Reaper.shared.writeError("sleeptap-scenario: \(error)")
        exit(ExitCode.dataError.rawValue)
    }
}
// Where the charts go is checked before anything runs, so a bad --svg loses no run's results:
// it must not name a scenario file (or a schedule file one reads), nor anything but a regular
// file (the chart replaces its path by a rename: a device, FIFO, directory or symbolic link
// there would be replaced), and its directory must exist and be writable.
let inputPaths = Set(
    scenarios.flatMap { [$0.path] + ($0.schedulePath.map { [$0] } ?? []) }.map {
        URL(fileURLWithPath: $0).resolvingSymlinksInPath().path
    })
for path in options.svgPaths() {
    func refuse(_ code: ExitCode, _ reason: String) -> Never {
        Reaper.shared.writeError("sleeptap-scenario: --svg \(path): \(reason)")
        exit(code.rawValue)
    }
    if inputPaths.contains(URL(fileURLWithPath: path).resolvingSymlinksInPath().path) {
        refuse(.usage, "is one of the input files; the chart would replace it")
    }
    if let refusal = AtomicFile.notReplaceable(path) { refuse(.cantCreate, refusal.reason) }
    let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
    var directoryInfo = stat()
    guard stat(directory, &directoryInfo) == 0, directoryInfo.st_mode & S_IFMT == S_IFDIR else {
        refuse(.cantCreate, "its directory \(directory) does not exist")
    }
    guard access(directory, W_OK) == 0 else {
        refuse(.cantCreate, "its directory \(directory) cannot be written (\(Errno.current)))")
    }
}
let runTwin = options.mode != .processes
let runProcesses = options.mode != .twin
var executables: ScenarioExecutables?
if runProcesses {
    do {
        executables = try ScenarioExecutables.locate()
    } catch {
        Reaper.shared.writeError("sleeptap-scenario: \(error)")
        exit(error.exitCode.rawValue)
    }
    // Ctrl-C, SIGTERM and SIGHUP end the children by pid and remove the temp dirs.
    Reaper.shared.installSignalHandlers(program: "sleeptap-scenario")
}
let progress = isatty(STDERR_FILENO) == 1

var runs: [ScenarioRun] = []
/// Whether each scenario held, in every mode it ran in.
var held: [Bool] = []
let svgPaths = options.svgPaths()
for (index, scenario) in scenarios.enumerated() {
    let first = runs.count
    defer {
        held.append(runs[first...].allSatisfy(\.passed))
        // The chart of the scenario's first run (the twin's, unless --processes).
        if index < svgPaths.count, first < runs.count {
            let path = svgPaths[index]
            do {
                try Data(CoverageChart.svg(runs[first]).utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                Reaper.shared.finish(.cantCreate) {
                    Reaper.shared.writeError(
                        "sleeptap-scenario: --svg \(path): cannot write the chart (\(error.localizedDescription))")
                }
            }
        }
    }
    do {
        if runTwin {
            let run = try ScenarioRun.twin(scenario, speed: options.speed)
            runs.append(run)
            if !options.json { Reaper.shared.writeLine(run.report) }
        }
        if let executables {
            let seconds = scenario.end.timeIntervalSince(scenario.start) / options.speed
            Reaper.shared.setPosition("the processes of \(scenario.path)")
            if progress {
                Reaper.shared.writeError(
                    "sleeptap-scenario: running \(scenario.path) as processes (about \(Int(seconds.rounded(.up))) s)")
            }
            var speed = options.speed
            var run = try ScenarioRun.processes(scenario, speed: speed, executables: executables)
            var reruns: [(speed: Double, reason: String)] = []
            // A failed run whose phone fell behind virtual time is not judged: again, slower.
            while let slower = ScenarioRun.slowerSpeed(
                passed: run.passed, behind: run.behind, speed: speed, attempt: reruns.count)
            {
                reruns.append((speed, slower.reason))
                if progress || !options.json {
                    Reaper.shared.writeError("sleeptap-scenario: \(scenario.path) as processes: \(slower.reason)")
                }
                speed = slower.speed
                run = try ScenarioRun.processes(scenario, speed: speed, executables: executables)
            }
            run.slowerReruns = reruns
            runs.append(run)
            if !options.json { Reaper.shared.writeLine(run.report) }
        }
    } catch let error as ScenarioProcessError {
        Reaper.shared.finish(error.exitCode) { Reaper.shared.writeError("sleeptap-scenario: \(error)") }
    } catch {
        Reaper.shared.finish(.dataError) { Reaper.shared.writeError("sleeptap-scenario: \(error)") }
    }
}
let passed = runs.allSatisfy(\.passed)
if options.json {
    let modes = options.mode == .both ? ["twin", "processes"] : [options.mode.rawValue]
    let summary: [String: Any] = [
        "pass": passed, "modes": modes, "speed": options.speed, "scenarios": runs.map(\.summary),
        // The runner's own database (its checks and the twin's default); each run names its
        // phone's and watch's.
        "tzdata": ZoneDatabase.current.version,
    ]
    let data = (try? JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys, .withoutEscapingSlashes]))
    Reaper.shared.writeLine(data.flatMap { String(data: $0, encoding: .utf8) } ?? "{}")
} else {
    Reaper.shared.writeLine("\(ZoneDatabase.current) (the runner's; each run names its phone's and watch's)")
    Reaper.shared.writeLine(
        "\(passed ? "PASS" : "FAIL"): \(held.filter { $0 }.count) of \(held.count) scenarios hold")
}
exit(passed ? ExitCode.ok.rawValue : ExitCode.failure.rawValue)

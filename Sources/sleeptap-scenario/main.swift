import Foundation
import SleepTapCore
import SleepTapProcess
import SleepTapScenario

#if canImport(Glibc)
    import Glibc
#endif

// sleeptap-scenario: runs scenario files (docs/scenarios.md) in the embedded twin and checks
// their expectations.

Reaper.requireStandardStreams()
signal(SIGPIPE, SIG_IGN)
let options: ScenarioOptions
do {
    switch try ScenarioOptions.parse(Array(CommandLine.arguments.dropFirst())) {
    case .help:
        Reaper.shared.writeLine(ScenarioOptions.usage)
        exit(ExitCode.ok.rawValue)
    case .version:
        Reaper.shared.writeLine("sleeptap-scenario \(SleepTapVersion.string)")
        exit(ExitCode.ok.rawValue)
    case .run(let parsed):
        options = parsed
    }
} catch {
    Reaper.shared.writeError("sleeptap-scenario: \(error.message) (see sleeptap-scenario --help)")
    exit(ExitCode.usage.rawValue)
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
var runs: [ScenarioRun] = []
for scenario in scenarios {
    do {
        let run = try ScenarioRun.twin(scenario)
        runs.append(run)
        if !options.json { Reaper.shared.writeLine(run.report) }
    } catch {
        Reaper.shared.writeError("sleeptap-scenario: \(error)")
        exit(ExitCode.dataError.rawValue)
    }
}
let passed = runs.allSatisfy(\.passed)
if options.json {
    let summary: [String: Any] = ["pass": passed, "scenarios": runs.map(\.summary)]
    let data = (try? JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys, .withoutEscapingSlashes]))
    Reaper.shared.writeLine(data.flatMap { String(data: $0, encoding: .utf8) } ?? "{}")
} else {
    Reaper.shared.writeLine(
        "\(passed ? "PASS" : "FAIL"): \(runs.filter(\.passed).count) of \(runs.count) scenarios hold")
}
exit(passed ? ExitCode.ok.rawValue : ExitCode.failure.rawValue)

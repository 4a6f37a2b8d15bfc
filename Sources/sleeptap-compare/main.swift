// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCalibration
import SleepTapCommandLine
import SleepTapCore
import SleepTapFleet
import SleepTapProcess
import SleepTapRuntime

#if canImport(Glibc)
    import Glibc
#endif

// sleeptap-compare: the same seeded fleet under several refresh strategies, side by side
// (docs/fleet.md, "Comparing refresh strategies"). The work is in SleepTapFleet (CompareRun,
// CompareReport); this file reads the command line and writes the outputs.

Reaper.requireStandardStreams()
signal(SIGPIPE, SIG_IGN)

/// Bytes on stderr; a closed stderr loses them and nothing else.
func writeErr(_ text: String) {
    try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
}

func fail(_ text: String, _ code: ExitCode) -> Never {
    writeErr("sleeptap-compare: " + printable(text) + "\n")
    exit(code.rawValue)
}

let today = LocalDate(Date(), in: FleetOptions.utc)
var command = Reaper.commandLine(CompareCommand.command) {
    () throws(UsageError) in
    try CompareCommand.parse(
        Array(CommandLine.arguments.dropFirst()), today: today, cores: ProcessInfo.processInfo.activeProcessorCount,
        environment: ProcessInfo.processInfo.environment)
}

if let path = command.options.osModelFile {
    // The model file, read before anything is written: bad input changes nothing.
    do {
        let data = try BoundedFile.read(path, limit: 64 << 20)
        command.options.osModel = try CalibratedOS(json: data)
    } catch let failure as BoundedFile.Failure {
        fail("--os-model \(path): \(failure)", .dataError)
    } catch {
        fail("--os-model \(path): \(error)", .dataError)
    }
}
if let out = command.out {
    do throws(FileError) {
        try AtomicFile.ensureDirectory(out)
    } catch {
        fail("--out: \(error)", .cantCreate)
    }
}

let terminal = isatty(STDERR_FILENO) == 1
var lastShown = ContinuousClock.now
let result: CompareRun.Result
do {
    result = try await CompareRun.run(
        command.options, strategies: command.strategies, settings: command.settings, jobs: command.jobs,
        out: command.out
    ) { done, total in
        guard terminal, done == total || ContinuousClock.now - lastShown > .milliseconds(200) else { return }
        lastShown = ContinuousClock.now
        writeErr("\r\(done)/\(total) device runs (\(command.strategies.count) strategies)")
        if done == total { writeErr("\n") }
    }
} catch {
    fail("\(error)", .cantCreate)
}
let report = CompareReport(options: command.options, settings: command.settings, tallies: result.tallies)
if let out = command.out {
    do throws(FileError) {
        try AtomicFile.write(Data(report.markdown(chartName: "compare.svg").utf8), to: out + "/compare.md")
        try AtomicFile.write(Data(report.svg.utf8), to: out + "/compare.svg")
    } catch {
        fail("\(error)", .cantCreate)
    }
}
if command.json {
    Reaper.shared.writeLine(report.json)
} else {
    var text = report.text
    text += String(format: "\n  %.1f s", result.seconds)
    if let out = command.out {
        text += "\n  wrote \(out)/compare.md, \(out)/compare.svg and \(out)/<strategy>/metrics/"
    }
    Reaper.shared.writeLine(text)
}
exit(report.alarmsFailed ? ExitCode.failure.rawValue : ExitCode.ok.rawValue)

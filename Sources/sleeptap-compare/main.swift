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
        command.options.osModelDigest = Hex64.string(FNV1a64.hash(Array(data)))
    } catch let failure as BoundedFile.Failure {
        fail("--os-model \(path): \(failure)", .dataError)
    } catch {
        fail("--os-model \(path): \(error)", .dataError)
    }
    if command.options.osModel?.delay(platform: .ios, appVersion: FleetOptions.appVersion) == nil {
        writeErr(
            "sleeptap-compare: --os-model \(printable(path)): no iOS group with \(CalibratedOS.minimumSamples) or more answered requests; the iOS devices keep the "
                + "built-in draws\n")
    }
}
if let out = command.out {
    do throws(FileError) {
        try AtomicFile.ensureDirectory(out)
    } catch {
        fail("--out: \(error)", .cantCreate)
    }
    // The two files it writes at the end: a directory in their place is found now, not after
    // the whole run.
    for name in ["compare.md", "compare.svg"] {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: out + "/" + name, isDirectory: &isDirectory), isDirectory.boolValue {
            fail("--out: \(out)/\(name) is a directory; the table is written there", .cantCreate)
        }
    }
    // A strategy this run leaves out whose directory holds another run's records or tallies:
    // this run's table would sit beside them, and a --merge of DIR would take the tallies.
    for strategy in RefreshStrategy.allCases where !command.strategies.contains(strategy) {
        let root = out + "/" + strategy.rawValue
        let held = ["metrics/bg_runs", "tally"].filter { directory in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: root + "/" + directory)) ?? []
            return names.contains { $0.hasSuffix(".json") }
        }
        if let directory = held.first {
            fail(
                "--out \(printable(out)): \(printable(root))/\(directory) holds another run's files, of \(strategy.rawValue), "
                    + "which --strategies leaves out: this run's compare.md would sit beside them. Give an empty --out "
                    + "directory, or remove \(printable(root)) first",
                .cantCreate)
        }
    }
    // One run per strategy directory: an earlier run's records would mix with this one's, or
    // sit beside its table.
    for strategy in command.strategies {
        do throws(FleetOutput.Refusal) {
            let root = out + "/" + strategy.rawValue
            let options = strategy.applied(to: command.options, command.settings)
            if command.records {
                try FleetOutput.claim(root: root, options: options)
            } else {
                try FleetOutput.check(root: root, options: options)
            }
        } catch {
            fail("--out \(printable(out)): \(error)", .cantCreate)
        }
    }
}

/// Writes `out/compare.md` and `out/compare.svg` (and with `shardTallies` the run's tallies,
/// `CompareShardFile`), prints the table with `footer(written)` under it (`written`: the files
/// were written, or there were none to write; an empty footer adds nothing) or the JSON, and exits: 73 after a failed write, which still
/// prints the table (the run's work is not lost with the file), else 1 for a wrong or missed
/// alarm, else 0.
@MainActor func finish(_ report: CompareReport, out: String?, shardTallies: Bool, footer: (Bool) -> String) -> Never {
    var writeFailure: FileError?
    if let out {
        do throws(FileError) {
            try AtomicFile.write(Data(report.markdown(chartName: "compare.svg").utf8), to: out + "/compare.md")
            try AtomicFile.write(Data(report.svg.utf8), to: out + "/compare.svg")
            if shardTallies { try CompareShardFile.write(report, root: out) }
        } catch {
            writeFailure = error
        }
    }
    if command.json {
        Reaper.shared.writeLine(report.json)
    } else {
        let lines = footer(writeFailure == nil)
        Reaper.shared.writeLine(report.text + (lines.isEmpty ? "" : "\n  " + lines))
    }
    if let writeFailure { fail("\(writeFailure)", .cantCreate) }
    exit(report.alarmsFailed ? ExitCode.failure.rawValue : ExitCode.ok.rawValue)
}

if let root = command.merge {
    // No simulation: the shards' tallies, added up, make the whole fleet's table.
    var report = CompareReport(
        options: command.options, settings: command.settings,
        tallies: command.strategies.map { StrategyTally(strategy: $0) })
    do throws(CompareMergeError) {
        report.tallies = try CompareMerge.tallies(for: report, root: root)
    } catch {
        fail("--merge: \(error)", .dataError)
    }
    finish(
        report, out: root, shardTallies: false,
        footer: { $0 ? "merged the shards under \(root); wrote \(root)/compare.md, \(root)/compare.svg" : "" })
}

let terminal = isatty(STDERR_FILENO) == 1
var lastShown = ContinuousClock.now
let result: CompareRun.Result
do {
    result = try await CompareRun.run(
        command.options, strategies: command.strategies, settings: command.settings, jobs: command.jobs,
        out: command.records ? command.out : nil
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
finish(
    report, out: command.out, shardTallies: true,
    footer: { written in
        var text = String(format: "%.1f s", result.seconds)
        if let out = command.out, written {
            text +=
                "\n  wrote \(out)/compare.md, \(out)/compare.svg and \(out)/<strategy>/"
                + (command.records ? "metrics/ and tally/" : "tally/ (the records with --records)")
        }
        return text
    })

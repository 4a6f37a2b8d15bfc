// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCalibration
import SleepTapCommandLine
import SleepTapCore
import SleepTapProcess
import SleepTapRuntime

#if canImport(Glibc)
    import Glibc
#endif

// sleeptap-calibrate: fits the simulated OS to a fleet's run records (docs/calibration.md).

Reaper.requireStandardStreams()
signal(SIGPIPE, SIG_IGN)
let options = Reaper.commandLine(CalibrateOptions.command) {
    () throws(UsageError) in
    try CalibrateOptions.parse(Array(CommandLine.arguments.dropFirst()))
}

// The model must not land among the records it is fitted to: it would replace a record file,
// or be read as one (and skipped, named) at the next run.
if let out = options.out {
    let records = URL(fileURLWithPath: options.root).appendingPathComponent(RunRecordFile.directory)
        .resolvingSymlinksInPath().path
    let target = URL(fileURLWithPath: out).deletingLastPathComponent().resolvingSymlinksInPath().path
    if target == records || target.hasPrefix(records + "/") {
        Reaper.shared.writeError(
            "sleeptap-calibrate: --out \(printable(out)): is inside the input records' directory "
                + "\(printable(records)); the model would replace or join the records it is fitted to")
        exit(ExitCode.usage.rawValue)
    }
}

// The --out file's directory is checked before the work (by creating the temporary file a write
// makes there): a missing or read-only one would otherwise fail only after the whole fit.
if let out = options.out {
    let directory = FilePaths.directory(of: out)
    var isDirectory: ObjCBool = false
    let problem: String? =
        !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory)
        ? "its directory \(directory) does not exist"
        : !isDirectory.boolValue
            ? "\(directory) is not a directory"
            : AtomicFile.cannotWrite(out)?.reason
    if let problem {
        Reaper.shared.writeError("sleeptap-calibrate: --out \(printable(out)): \(printable(problem)); nothing was read")
        exit(ExitCode.cantCreate.rawValue)
    }
}

// Records are gathered per device (a device's files are adjacent in name order, but its records
// are paired across days), then fitted one device at a time.
var byDevice: [String: [RunRecord]] = [:]
// A record equal to one of an earlier file in the same device's run of files is a copy's (a file
// copied with other bytes): read once, as the report reads it (docs/metrics.md).
var copies = RecordCopies()
var repeated = 0
let input: (files: Int, skipped: [(file: String, reason: String)])
do {
    input = try FreshnessReportFiles.eachFile(root: options.root) { _, records in
        let fresh = copies.fresh(records)
        repeated += records.count - fresh.count
        for record in fresh { byDevice[record.device, default: []].append(record) }
    }
} catch {
    // One line each: the reason, then each skipped file (names made printable).
    let lines = error.description.split(separator: "\n", omittingEmptySubsequences: false)
    Reaper.shared.writeError("sleeptap-calibrate: " + lines.map { printable(String($0)) }.joined(separator: "\n"))
    exit(error.exitCode.rawValue)
}
for (file, reason) in input.skipped {
    Reaper.shared.writeError("sleeptap-calibrate: skipped \(printable(file)): \(printable(reason))")
}
if repeated > 0 {
    Reaper.shared.writeError(
        "sleeptap-calibrate: \(repeated) repeated record\(repeated == 1 ? "" : "s") read once (equal in every field to "
            + "one in an earlier file of the same device: a copy of a file)")
}
// Files that are good but hold no record (`[]`) leave nothing to fit: no input, as no file.
if byDevice.isEmpty {
    Reaper.shared.writeError(
        "sleeptap-calibrate: no run records in \(printable(options.root))/\(RunRecordFile.directory): "
            + "the \(input.files) good file(s) hold none; no model written")
    exit(ExitCode.dataError.rawValue)
}
var calibration = Calibration()
for device in byDevice.keys.sorted() { calibration.add(device: byDevice[device]!) }
byDevice = [:]
if let late = calibration.lateEnd {
    let hours = Int(late.end.timeIntervalSince(late.median) / 3_600)
    Reaper.shared.writeError(
        "sleeptap-calibrate: warning: the last record (\(ISO8601.string(late.end))) is \(hours) h after half the "
            + "devices' last records (\(ISO8601.string(late.median))); requests still pending are censored there, "
            + "which lengthens the fitted delays: check for a wrong clock or a stray file")
}
if let first = calibration.firstLaunchBeforeEligible {
    let count = calibration.launchesBeforeEligible
    Reaper.shared.writeError(
        "sleeptap-calibrate: warning: \(count) launch\(count == 1 ? "" : "es") recorded before the request "
            + "\(count == 1 ? "it" : "they") answered became eligible (the first: \(first.device) at "
            + "\(ISO8601.string(first.at)), eligible \(ISO8601.string(first.eligible))); no OS launches a task before "
            + "its earliestBeginDate, so a clock moved: their delays count as 0, which shortens the fitted delay")
}
let model = calibration.model(files: input.files, skipped: input.skipped)
if let out = options.out {
    do throws(FileError) {
        try AtomicFile.write(model.json(), to: out)
    } catch {
        Reaper.shared.writeError("sleeptap-calibrate: cannot write the model: \(error)")
        exit(ExitCode.cantCreate.rawValue)
    }
}
if options.json {
    Reaper.shared.writeLine(String(decoding: model.json().dropLast(), as: UTF8.self))
} else {
    Reaper.shared.writeLine(model.summary() + (options.out.map { "\n\nwrote \($0)" } ?? ""))
}
exit(ExitCode.ok.rawValue)

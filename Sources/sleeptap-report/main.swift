// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import SleepTapProcess
import SleepTapRuntime

#if canImport(Glibc)
    import Glibc
#endif

// sleeptap-report: the weekly background-refresh freshness report (docs/metrics.md).

Reaper.requireStandardStreams()
signal(SIGPIPE, SIG_IGN)
let options: ReportOptions
do {
    switch try ReportOptions.parse(Array(CommandLine.arguments.dropFirst())) {
    case .help:
        Reaper.shared.writeLine(ReportOptions.usage)
        exit(ExitCode.ok.rawValue)
    case .version:
        Reaper.shared.writeLine("sleeptap-report \(SleepTapVersion.string)")
        exit(ExitCode.ok.rawValue)
    case .run(let parsed):
        options = parsed
    }
} catch {
    Reaper.shared.writeError("sleeptap-report: \(error.message) (see sleeptap-report --help)")
    exit(ExitCode.usage.rawValue)
}

var utc = Calendar(identifier: .gregorian)
utc.timeZone = TimeZone(identifier: "UTC")!
let date = options.date ?? LocalDate(Date(), in: utc)
let report: FreshnessReport
let path: String
do {
    report = try FreshnessReportFiles.read(root: options.root, date: date)
    path = try FreshnessReportFiles.write(report, root: options.root)
} catch {
    Reaper.shared.writeError("sleeptap-report: \(error)")
    exit(error.exitCode.rawValue)
}
for (file, reason) in report.skipped {
    Reaper.shared.writeError("sleeptap-report: skipped \(file): \(reason)")
}
let summary = report.summary(path: path)
if options.json {
    let data = try? JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys, .withoutEscapingSlashes])
    Reaper.shared.writeLine(data.flatMap { String(data: $0, encoding: .utf8) } ?? "{}")
} else {
    Reaper.shared.writeLine(report.summaryLines(path: path))
}
exit(ExitCode.ok.rawValue)

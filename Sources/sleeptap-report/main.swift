// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCommandLine
import SleepTapCore
import SleepTapProcess
import SleepTapRuntime

#if canImport(Glibc)
    import Glibc
#endif

// sleeptap-report: the weekly background-refresh freshness report (docs/metrics.md).

Reaper.requireStandardStreams()
signal(SIGPIPE, SIG_IGN)
let options = Reaper.commandLine(ReportOptions.command) {
    () throws(UsageError) in
    try ReportOptions.parse(Array(CommandLine.arguments.dropFirst()))
}

var utc = Calendar(identifier: .gregorian)
utc.timeZone = TimeZone(identifier: "UTC")!
// The default date is the last UTC day that has records (a fleet ends yesterday; a phone on a
// virtual clock may be years away), else today.
let lastRecordDay = options.date == nil ? FreshnessReportFiles.lastRecordDay(root: options.root) : nil
let date = options.date ?? lastRecordDay ?? LocalDate(Date(), in: utc)
var report: FreshnessReport
let path: String
do {
    report = try FreshnessReportFiles.read(root: options.root, date: date)
    report.dateSource = options.date != nil ? .given : lastRecordDay != nil ? .lastRecordDay : .today
    path = try FreshnessReportFiles.write(report, root: options.root)
} catch {
    Reaper.shared.writeError("sleeptap-report: \(error)")
    exit(error.exitCode.rawValue)
}
for (file, reason) in report.skipped {
    Reaper.shared.writeError("sleeptap-report: skipped \(printable(file)): \(printable(reason))")
}
let summary = report.summary(path: path)
if options.json {
    let data = try? JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys, .withoutEscapingSlashes])
    Reaper.shared.writeLine(data.flatMap { String(data: $0, encoding: .utf8) } ?? "{}")
} else {
    Reaper.shared.writeLine(report.summaryLines(path: path))
}
exit(ExitCode.ok.rawValue)

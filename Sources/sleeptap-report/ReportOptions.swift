// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCommandLine
import SleepTapCore

/// `sleeptap-report`'s command line.
struct ReportOptions: Equatable, Sendable {
    var root: String
    /// The report's UTC day; nil = the last UTC day with records (`FreshnessReportFiles.lastRecordDay`), else today.
    var date: LocalDate?
    var json = false

    /// The report's options and texts; `--help` is generated from them.
    static let command = CommandSpec(
        program: "sleeptap-report",
        summary: """
            The weekly background-refresh freshness report (docs/metrics.md). Reads only
            DIR/metrics/bg_runs/*.json (run records, one file per device per UTC day) and writes
            only DIR/reports/bg_freshness_<date>.md, atomically (a re-run on the same date replaces
            it). This week is the 7 UTC days ending with --date, last week the 7 before. The report
            gives p50 and p90 staleness at app open (linear interpolation, type 7; a device with no
            background run yet counts as unbounded staleness, and a percentile that lands on such
            samples reads "never"), the execution rate (successful background runs / requests,
            submitted or refused at submit), the devices with no successful background or push run, a breakdown by
            platform, Android standby bucket and app version, failures with their usual causes, a
            daily chart, and a heading marked ⚠ when (1) this week's p90 is more than 12 h worse
            than last week's, (2) it is above the watch's 7-day cache horizon, (3) requests were
            made and no background run succeeded, (4) more than half the devices had no successful run, (5) a
            tenth or more of the devices with records in the four weeks before this week wrote
            nothing in it, (6) no device wrote anything this week, (7) an app version on a tenth or more of the devices had no
            successful run on more than half of them, (8) most devices have records only outside
            the two weeks, or (9) a hundredth or more of the files could not be read; each
            condition is printed under the heading (docs/metrics.md, "The heading"). A file that is
            not a valid run-record file is skipped and listed in the report with its reason; a link
            to a file read, or a copy of its bytes under another name, is read once.
            """,
        sections: [
            .init(
                "options:",
                [
                    OptionSpec(
                        "--root", value: "DIR", synopsis: .required, example: "/tmp/sleeptap",
                        help: "the metrics root (the directory holding metrics/bg_runs)"),
                    OptionSpec(
                        "--date", value: "YYYY-MM-DD", example: "2026-03-14",
                        help: """
                            the report's day, UTC, 1970-01-14 to 9999-12-31 (default: the last UTC day that has
                            run records: the latest day of the files' names <device>-<YYYY-MM-DD>.json whose file
                            holds a record of that day, so it agrees with sleeptap-fleet, whose last day is
                            yesterday; today when no file does)
                            """),
                    OptionSpec("--json", help: "print the summary as one JSON object instead of lines"),
                    .versionOption("print the version and exit"), .helpOption("print this help and exit"),
                ])
        ],
        footer: """
            exit status: 0 the report was written (also with files skipped, as long as one was
            good); 64 a bad command line; 65 no input (no metrics/bg_runs, no *.json file in it, no
            file that is a run-record file, or run-record files that hold no record); 73 the
            reports directory or the report cannot be written; 74 stdout cannot be written.
            """)

    /// Parses the arguments (without the program name).
    /// - Throws: `UsageError` naming the option and the value.
    static func parse(_ arguments: [String]) throws(UsageError) -> Parsed<ReportOptions> {
        if let request = Parsed<ReportOptions>.informationRequest(in: arguments) { return request }
        var reader = ArgumentReader(arguments, command: command)
        var root: String?
        var date: LocalDate?
        var json = false
        while let flag = try reader.nextFlag() {
            switch flag {
            case "--root": root = try reader.nonEmpty(flag)
            case "--date":
                let text = try reader.value(flag)
                guard let day = LocalDate(parsing: text) else {
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": expected a calendar date YYYY-MM-DD, e.g. 2026-03-14"
                    )
                }
                // Run records hold instants from 1970 to 9999 (ISO-8601 with four-digit
                // years), and last week starts 13 days before --date.
                guard let first = LocalDate(parsing: "1970-01-14"), let last = LocalDate(parsing: "9999-12-31"),
                    day >= first, day <= last
                else {
                    throw UsageError(
                        "\(flag) \(day): the two weeks must lie from 1970-01-01 to 9999-12-31 (a date from 1970-01-14)")
                }
                date = day
            case "--json": json = true
            case let operand where !operand.hasPrefix("-") && root == nil:
                // A directory given alone, as most tools take one: say which option takes it.
                throw UsageError(
                    "unknown argument \(ArgumentReader.clip(operand)): the records' directory is given as --root \(ArgumentReader.clip(operand))"
                )
            default: throw ArgumentReader.unknown(flag)
            }
        }
        guard let root else { throw UsageError("--root is required") }
        var options = ReportOptions(root: root)
        options.date = date
        options.json = json
        return .run(options)
    }
}

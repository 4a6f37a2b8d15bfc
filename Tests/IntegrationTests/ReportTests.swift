// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import SleepTapProcess
import SleepTapRuntime
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `sleeptap-report`: reads only metrics/bg_runs/*.json, writes only reports/bg_freshness_<date>.md.
@Suite("sleeptap-report")
struct ReportTests {
    static let date = "2026-03-14"

    /// Foreground records of one device on days 1...14 of March 2026 (staleness = the day).
    /// Device `a`'s files of 2026-03-01..14 (`goodFile`) under `scenario`'s `fleet` root: the root
    /// and its `metrics/bg_runs`.
    static func deviceA(in scenario: Scenario) throws -> (root: String, directory: String) {
        let root = scenario.dir + "/fleet"
        let directory = root + "/metrics/bg_runs"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for day in 1...14 {
            try goodFile("a", day: day).write(
                to: URL(fileURLWithPath: directory + String(format: "/a-2026-03-%02d.json", day)))
        }
        return (root, directory)
    }

    /// `records` as a run-record file with other bytes than `RunRecordFile.encode`'s: each on an
    /// indented line (a copy re-written by another tool).
    static func reindented(_ records: [RunRecord]) -> Data {
        Data(("[\n" + records.map { "  " + RunRecordFile.line($0) }.joined(separator: ",\n") + "\n]\n").utf8)
    }

    static func goodFile(_ device: String, day: Int) -> Data {
        let at = ISO8601.date(String(format: "2026-03-%02dT09:00:00Z", day))!
        return RunRecordFile.encode([
            RunRecord(device: device, platform: .ios, kind: .foreground, at: at, stalenessHours: Double(day)),
            RunRecord(
                device: device, platform: .ios, kind: .submitted, at: at,
                earliestBeginDate: at.addingTimeInterval(3_600)),
            RunRecord(
                device: device, platform: .ios, kind: .background, at: at.addingTimeInterval(7_200),
                earliestBeginDate: at.addingTimeInterval(3_600), success: true, expired: false, stalenessHours: 0),
        ])
    }

    /// A root with two good files and one of garbage.
    static func root(_ scenario: Scenario) throws -> String {
        let root = scenario.dir + "/fleet"
        let directory = root + "/metrics/bg_runs"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try goodFile("a", day: 3).write(to: URL(fileURLWithPath: directory + "/a-2026-03-03.json"))
        try goodFile("a", day: 10).write(to: URL(fileURLWithPath: directory + "/a-2026-03-10.json"))
        try Data("{\"not\": \"an array\"} \u{0}\u{1}garbage".utf8).write(
            to: URL(fileURLWithPath: directory + "/b-2026-03-10.json"))
        return root
    }

    /// Every entry under `path`, with its bytes (regular files), size, mode and modification time
    /// (nanoseconds).
    static func fingerprint(_ path: String) throws -> [String: String] {
        var result: [String: String] = [:]
        let entries = try #require(FileManager.default.subpathsOfDirectory(atPath: path) as [String]?)
        for entry in entries.sorted() + [""] {
            let full = entry.isEmpty ? path : path + "/" + entry
            var info = stat()
            try #require(lstat(full, &info) == 0)
            // Only regular files are read (opening a FIFO would wait for a writer).
            let bytes =
                info.st_mode & S_IFMT == S_IFREG
                ? FileManager.default.contents(atPath: full).map { $0.base64EncodedString() } ?? "-" : "-"
            result[entry] =
                "\(info.st_mode) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(bytes)"
        }
        return result
    }

    @Test(
        "A symbolic or hard link to a file read, or a copy of its bytes, is read once (report and calibrate): the figures are the links' absence's, no ⚠"
    )
    func linksReadOnce() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let (root, directory) = try Self.deviceA(in: scenario)
        let plain = try CapturedRun.run(
            "sleeptap-report", ["--root", root, "--date", Self.date, "--json"], timeout: 30)
        #expect(plain.status == 0, "\(plain.standardError)")
        // A symbolic link named before its file, one by an absolute path, and a hard link.
        #expect(symlink("a-2026-03-10.json", directory + "/0-2026-03-10.json") == 0)
        #expect(symlink(directory + "/a-2026-03-11.json", directory + "/1-2026-03-11.json") == 0)
        #expect(link(directory + "/a-2026-03-12.json", directory + "/z-2026-03-12.json") == 0)
        // A copy (a sync client's conflict copy): the same bytes in a file of its own.
        try FileManager.default.copyItem(
            atPath: directory + "/a-2026-03-13.json", toPath: directory + "/copy-2026-03-13.json")
        let linked = try CapturedRun.run(
            "sleeptap-report", ["--root", root, "--date", Self.date, "--json"], timeout: 30)
        #expect(linked.status == 0, "\(linked.standardError)")
        let before = try #require(
            try JSONSerialization.jsonObject(with: Data(plain.standardOutput.utf8)) as? [String: Any])
        let after = try #require(
            try JSONSerialization.jsonObject(with: Data(linked.standardOutput.utf8)) as? [String: Any])
        #expect(after["warning"] as? Bool == false, "\(after)")
        for key in ["thisWeek", "lastWeek"] {
            #expect(
                NSDictionary(dictionary: before[key] as? [String: Any] ?? [:])
                    == NSDictionary(dictionary: after[key] as? [String: Any] ?? [:]), "\(key)")
        }
        let skipped = (after["skipped"] as? [[String: String]])?.map { $0["file"] ?? "" }
        #expect(
            skipped == ["0-2026-03-10.json", "1-2026-03-11.json", "copy-2026-03-13.json", "z-2026-03-12.json"],
            "\(after)")
        #expect(linked.standardError.contains("the same bytes as a-2026-03-13.json (one of them a copy): read once"))
        #expect(linked.standardError.contains("the same file as a-2026-03-10.json (a link to it): read once"))
        let fit = try CapturedRun.run("sleeptap-calibrate", ["--root", root, "--json"], timeout: 30)
        #expect(fit.status == 0, "\(fit.standardError)")
        #expect(fit.standardError.contains("skipped z-2026-03-12.json: the same file as a-2026-03-12.json"))
        #expect(fit.standardError.contains("skipped copy-2026-03-13.json: the same bytes as a-2026-03-13.json"))
    }

    @Test(
        "A copy of a file with other bytes (re-indented) repeats its records: each read once, by the report and by sleeptap-calibrate; the figures unchanged"
    )
    func repeatedRecordsReadOnce() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let (root, directory) = try Self.deviceA(in: scenario)
        let plain = try CapturedRun.run(
            "sleeptap-report", ["--root", root, "--date", Self.date, "--json"], timeout: 30)
        #expect(plain.status == 0, "\(plain.standardError)")
        // This week's files again, each record on an indented line: other bytes, the same records.
        var repeated = 0
        for day in 8...14 {
            let data = Self.goodFile("a", day: day)
            let records = try RunRecordFile.decode(data)
            repeated += records.count
            try Self.reindented(records).write(
                to: URL(fileURLWithPath: directory + String(format: "/a-2026-03-%02d (1).json", day)))
        }
        let copied = try CapturedRun.run(
            "sleeptap-report", ["--root", root, "--date", Self.date, "--json"], timeout: 30)
        #expect(copied.status == 0, "\(copied.standardError)")
        let before = try #require(
            try JSONSerialization.jsonObject(with: Data(plain.standardOutput.utf8)) as? [String: Any])
        let after = try #require(
            try JSONSerialization.jsonObject(with: Data(copied.standardOutput.utf8)) as? [String: Any])
        for key in ["thisWeek", "lastWeek", "records"] {
            #expect(
                NSDictionary(dictionary: ["v": before[key] ?? NSNull()])
                    == NSDictionary(dictionary: ["v": after[key] ?? NSNull()]), "\(key)")
        }
        #expect(after["repeatedRecords"] as? Int == repeated && repeated > 0, "\(after)")
        let text = try CapturedRun.run("sleeptap-report", ["--root", root, "--date", Self.date], timeout: 30)
        #expect(text.standardOutput.contains("\(repeated) repeated records read once"), "\(text.standardOutput)")
        let fit = try CapturedRun.run("sleeptap-calibrate", ["--root", root, "--json"], timeout: 30)
        #expect(fit.status == 0, "\(fit.standardError)")
        #expect(fit.standardError.contains("\(repeated) repeated records read once"), "\(fit.standardError)")
    }

    @Test(
        "A copy named after its device without a day (D-backup.json) is read once wherever the reading threads' shares of files fall"
    )
    func backupCopiesReadOnce() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let root = scenario.dir + "/fleet"
        let directory = root + "/metrics/bg_runs"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var repeated = 0
        for device in 0..<40 {
            let name = String(format: "d%02d", device)
            for day in 8...9 {
                try Self.goodFile(name, day: day).write(
                    to: URL(fileURLWithPath: directory + String(format: "/\(name)-2026-03-%02d.json", day)))
            }
            let records = try RunRecordFile.decode(Self.goodFile(name, day: 9))
            repeated += records.count
            try Self.reindented(records).write(to: URL(fileURLWithPath: directory + "/\(name)-backup.json"))
        }
        let run = try CapturedRun.run("sleeptap-report", ["--root", root, "--date", Self.date, "--json"], timeout: 30)
        #expect(run.status == 0, "\(run.standardError)")
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        #expect(summary["repeatedRecords"] as? Int == repeated, "\(summary)")
    }

    @Test("A garbage file among good ones: skipped and listed, exit 0; the inputs are unchanged; a re-run replaces")
    func garbageAmongGood() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let root = try Self.root(scenario)
        let before = try Self.fingerprint(root + "/metrics")
        let run = try CapturedRun.run("sleeptap-report", ["--root", root, "--date", Self.date], timeout: 30)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError.contains("skipped b-2026-03-10.json: not valid JSON: line 1, column 21"))
        let path = root + "/reports/bg_freshness_\(Self.date).md"
        #expect(run.standardOutput.hasPrefix("wrote \(path)"), "\(run.standardOutput)")
        let report = try #require(
            FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) })
        // One file of three unread: its device is in no figure, and the heading warns.
        #expect(report.hasPrefix("# ⚠ Background refresh freshness, 2026-03-14\n"), "\(report)")
        #expect(report.contains("- ⚠ 1 of the input's 3 files (33.3 %) could not be read"), "\(report)")
        #expect(report.contains("- `b-2026-03-10.json`: not valid JSON: line 1, column 21: text after the end"))
        #expect(report.contains("| p90 staleness (h) | 10.0 (n = 1) | 3.0 (n = 1) |"), "\(report)")
        #expect(report.contains("| execution rate | 100.0 % (1 / 1) | 100.0 % (1 / 1) |"))
        #expect(try Self.fingerprint(root + "/metrics") == before, "the report changed an input")
        #expect(try FileManager.default.contentsOfDirectory(atPath: root).sorted() == ["metrics", "reports"])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: root + "/reports") == ["bg_freshness_2026-03-14.md"])
        // Again, on the same date: the same report replaces the old one, no temp file is left.
        let again = try CapturedRun.run(
            "sleeptap-report", ["--root", root, "--date", Self.date, "--json"], timeout: 30)
        #expect(again.status == 0)
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(again.standardOutput.utf8)) as? [String: Any])
        #expect(summary["event"] as? String == "report.summary")
        // p90 3 h -> 10 h is 7 h worse, no condition; the skipped file is one.
        #expect(summary["warning"] as? Bool == true, "\(summary)")
        #expect((summary["conditions"] as? [[String: String]])?.map { $0["condition"] } == ["filesSkipped"])
        #expect((summary["p90ChangeSeconds"] as? NSNumber)?.intValue == 7 * 3_600)
        #expect((summary["skipped"] as? [[String: String]])?.first?["file"] == "b-2026-03-10.json")
        #expect(FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) } == report)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: root + "/reports") == ["bg_freshness_2026-03-14.md"])
        #expect(try Self.fingerprint(root + "/metrics") == before)
    }

    @Test(
        "Entries that are not regular files, or that break a record, are skipped in file order naming the file, record and field; a FIFO is never opened"
    )
    func oddEntries() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let root = try Self.root(scenario)
        let directory = root + "/metrics/bg_runs"
        try FileManager.default.createDirectory(
            atPath: directory + "/c-2026-03-11.json", withIntermediateDirectories: false)
        #expect(mkfifo(directory + "/d-2026-03-12.json", 0o600) == 0)
        #expect(symlink(directory + "/nowhere", directory + "/e-2026-03-12.json") == 0)
        var records = try RunRecordFile.decode(Self.goodFile("f", day: 12))
        records[1].device = "../f"
        try RunRecordFile.encode(records).write(to: URL(fileURLWithPath: directory + "/f-2026-03-12.json"))
        let text = String(decoding: Self.goodFile("g", day: 12), as: UTF8.self)
        let unknown = text.replacingOccurrences(
            of: "{\"appVersion\":null,\"at\":\"2026-03-12T11:00",
            with: "{\"colour\":1,\"appVersion\":null,\"at\":\"2026-03-12T11:00")
        #expect(unknown != text)
        try Data(unknown.utf8).write(to: URL(fileURLWithPath: directory + "/g-2026-03-12.json"))
        // Over 16 MiB: skipped unread (a sparse file, so the test writes nothing of it).
        let big = directory + "/h-2026-03-12.json"
        #expect(FileManager.default.createFile(atPath: big, contents: nil))
        #expect(truncate(big, 16 << 20 + 1) == 0)
        // A control character in a name reaches stderr escaped, never raw.
        try Data("x".utf8).write(to: URL(fileURLWithPath: directory + "/i-\u{1B}[2J.json"))
        let before = try Self.fingerprint(root + "/metrics")
        let run = try CapturedRun.run("sleeptap-report", ["--root", root, "--date", Self.date], timeout: 30)
        #expect(run.status == 0, "\(run.standardError)")
        let skipped = run.standardError.split(separator: "\n").filter { $0.contains("skipped") }
        #expect(
            skipped == [
                "sleeptap-report: skipped b-2026-03-10.json: not valid JSON: line 1, column 21: text after the end of the JSON value: U+0000",
                "sleeptap-report: skipped c-2026-03-11.json: is a directory, not a file",
                "sleeptap-report: skipped d-2026-03-12.json: is not a regular file (a device, FIFO or socket)",
                "sleeptap-report: skipped e-2026-03-12.json: cannot be read: No such file or directory",
                "sleeptap-report: skipped f-2026-03-12.json: record 1, field device: must be 1 to 64 of A-Z a-z 0-9 . _ - and not start with '.'",
                "sleeptap-report: skipped g-2026-03-12.json: record 2, field colour: unknown key (expected appVersion, at, attempt, bucket, device, earliestBeginDate, expired, kind, lowPower, platform, reason, stalenessHours, stopReason, success)",
                "sleeptap-report: skipped h-2026-03-12.json: 16777217 bytes, over the 16 MiB (16777216-byte) limit",
                "sleeptap-report: skipped i-\\u{1b}[2J.json: not valid JSON: line 1, column 1: expected a value, found 'x' (strings need double quotes; true, false and null are lowercase)",
            ], "\(run.standardError)")
        #expect(!run.standardError.contains("\u{1B}"), "a raw escape reached stderr")
        #expect(try Self.fingerprint(root + "/metrics") == before, "the report changed an input")
    }

    @Test(
        "Without --date the report is dated the last UTC day with records and says so; most records outside the weeks is said on stdout"
    )
    func defaultDateAndOutside() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let root = try Self.root(scenario)
        let run = try CapturedRun.run("sleeptap-report", ["--root", root], timeout: 30)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(
            run.standardOutput.hasPrefix("wrote \(root)/reports/bg_freshness_2026-03-10.md"), "\(run.standardOutput)")
        let dateSentence =
            "the last UTC day with run records (no --date given; a fleet that stopped writing records reads as its "
            + "last week with records: a report run on a schedule gives --date, the day it runs)"
        #expect(run.standardOutput.contains("report date: " + dateSentence), "\(run.standardOutput)")
        let report = try String(contentsOfFile: root + "/reports/bg_freshness_2026-03-10.md", encoding: .utf8)
        #expect(report.contains("Report date: " + dateSentence + "."), "\(report)")
        // A year off: every record is outside the two weeks, and stdout and the report say where they are.
        let wrong = try CapturedRun.run("sleeptap-report", ["--root", root, "--date", "2027-03-10"], timeout: 30)
        #expect(wrong.status == 0)
        let sentence =
            "Most records (6 of 6) fall outside the two weeks: the records run from 2026-03-03 to 2026-03-10 (UTC)"
        #expect(wrong.standardOutput.contains(sentence), "\(wrong.standardOutput)")
        let text = try String(contentsOfFile: root + "/reports/bg_freshness_2027-03-10.md", encoding: .utf8)
        #expect(text.contains(sentence))
        // A later file with no record ([]) or with records of another day (misnamed) does not
        // move the default date; one with a record of its day does.
        let directory = root + "/metrics/bg_runs"
        try Data("[]\n".utf8).write(to: URL(fileURLWithPath: directory + "/notes-2099-01-01.json"))
        try Self.goodFile("c", day: 10).write(to: URL(fileURLWithPath: directory + "/c-2036-03-10.json"))
        #expect(FreshnessReportFiles.lastRecordDay(root: root) == LocalDate(parsing: "2026-03-10"))
        try Self.goodFile("d", day: 12).write(to: URL(fileURLWithPath: directory + "/d-2026-03-12.json"))
        #expect(FreshnessReportFiles.lastRecordDay(root: root) == LocalDate(parsing: "2026-03-12"))
        let help = try CapturedRun.run("sleeptap-report", ["--help"], timeout: 30)
        // The help is wrapped where the words fall: compare its words.
        let words = help.standardOutput.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("last UTC day that has run records"), "\(help.standardOutput)")
    }

    @Test(
        "No input gives 65 and writes nothing: no directory, no *.json file, only bad files, or files without a record")
    func noInput() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let root = scenario.dir + "/empty"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let missing = try scenario.runToExit("sleeptap-report", ["--root", root, "--date", Self.date])
        #expect(missing.status == 65)
        #expect(missing.stderr.contains("no input: \(root)/metrics/bg_runs is not a directory"), "\(missing.stderr)")
        try FileManager.default.createDirectory(atPath: root + "/metrics/bg_runs", withIntermediateDirectories: true)
        let none = try scenario.runToExit("sleeptap-report", ["--root", root, "--date", Self.date])
        #expect(none.status == 65)
        #expect(none.stderr.contains("no *.json file"), "\(none.stderr)")
        try Data("[1]".utf8).write(to: URL(fileURLWithPath: root + "/metrics/bg_runs/x-2026-03-10.json"))
        let bad = try scenario.runToExit("sleeptap-report", ["--root", root, "--date", Self.date])
        #expect(bad.status == 65)
        #expect(bad.stderr.contains("x-2026-03-10.json: record 0: must be an object"), "\(bad.stderr)")
        #expect(!FileManager.default.fileExists(atPath: root + "/reports"))
        // Good files that hold no record: nothing to report on, as sleeptap-calibrate says too.
        try Data("[]".utf8).write(to: URL(fileURLWithPath: root + "/metrics/bg_runs/x-2026-03-10.json"))
        try Data("[]\n".utf8).write(to: URL(fileURLWithPath: root + "/metrics/bg_runs/y-2026-03-11.json"))
        let empty = try scenario.runToExit("sleeptap-report", ["--root", root])
        #expect(empty.status == 65)
        #expect(empty.stderr.contains("the 2 good files in \(root)/metrics/bg_runs hold no record"), "\(empty.stderr)")
        // One good file without records, one bad file: the bad one is named.
        try Data("[1]".utf8).write(to: URL(fileURLWithPath: root + "/metrics/bg_runs/y-2026-03-11.json"))
        let named = try scenario.runToExit("sleeptap-report", ["--root", root])
        #expect(named.status == 65)
        #expect(
            named.stderr.contains("the 1 good file in \(root)/metrics/bg_runs holds no record; skipped:"),
            "\(named.stderr)")
        #expect(named.stderr.contains("y-2026-03-11.json: record 0: must be an object"), "\(named.stderr)")
        #expect(!FileManager.default.fileExists(atPath: root + "/reports"))
    }

    @Test("A reports dir that cannot be written gives 73 naming it; the inputs are unchanged")
    func unwritableReports() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let root = try Self.root(scenario)
        // A file where the reports directory should be (root ignores permission bits, not this).
        #expect(FileManager.default.createFile(atPath: root + "/reports", contents: Data("keep".utf8)))
        let before = try Self.fingerprint(root)
        let result = try scenario.runToExit("sleeptap-report", ["--root", root, "--date", Self.date])
        #expect(result.status == 73)
        #expect(result.stderr.contains("\(root)/reports: exists and is not a directory"), "\(result.stderr)")
        #expect(try Self.fingerprint(root) == before)
    }

    @Test("Bad command lines: 64 naming the option")
    func badCommandLine() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        for (arguments, message) in [
            (["--date", Self.date], "--root is required"),
            (["--root", scenario.dir, "--date", "2026-02-30"], "--date \"2026-02-30\": expected a calendar date"),
            (["--root", scenario.dir, "--colour"], "--colour"),
            (["--root", scenario.dir, "--json=yes"], "--json"),
            (
                ["--root", scenario.dir, "--date", "0001-01-07"],
                "--date 0001-01-07: the two weeks must lie from 1970-01-01"
            ),
            (
                ["--root", scenario.dir, "--date", "1970-01-13"],
                "--date 1970-01-13: the two weeks must lie from 1970-01-01"
            ),
        ] {
            let result = try scenario.runToExit("sleeptap-report", arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }
}

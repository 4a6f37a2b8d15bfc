// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import Testing

@testable import SleepTapScenario

/// An expectation that could never match proves nothing: its fields are checked against the
/// event catalogue when the file is read (exit 65 naming the expectation), not found vacuous
/// after the run.
@Suite("scenario expectations against the event catalogue")
struct ExpectationCatalogTests {
    /// The error of a scenario whose only expectation has `fields`, or nil when it loads.
    static func error(_ event: String, _ fields: [String: Any]) throws -> ScenarioError? {
        let data = try ScenarioFileTests.scenario {
            $0["expect"] = [["event": event, "fields": fields, "count": 0] as [String: Any]]
        }
        do {
            _ = try ScenarioFile.decode(data, path: "s.json")
            return nil
        } catch {
            return error
        }
    }

    @Test(
        "a wrong type, a malformed value or a field the event never has is refused at load, naming it",
        arguments: [
            ("bed.wake_time", "remaining", "7" as any Sendable, "bed.wake_time.remaining is int"),
            ("bed.wake_time", "wakeTime", "2026-07-21T07:00:00Z ", "an ISO 8601 instant"),
            ("bed.wake_time", "localDate", "2026-07-21 ", "a local date"),
            ("bed.wake_time", "localTime", "7:00", "a local time"),
            ("bed.wake_time", "timeZone", "Mars/Olympus", "an IANA zone"),
            ("bed.wake_time", "zoneKnown", 1, "not a number"),
            ("bed.wake_time", "remaining", 1.5, "not a fraction"),
            ("bed.wake_time", "tapTime", "07:00", "bed.wake_time has no field tapTime"),
            ("batch.sent", "epoch", "XYZ", "16 lowercase hex digits"),
            ("phone.status", "os", "x", "cannot match"),
            ("bed.wake_time", "remaining", NSNull(), "never null"),
        ] as [(String, String, any Sendable, String)])
    func refused(event: String, key: String, value: any Sendable, reason: String) throws {
        let error = try #require(try Self.error(event, [key: value]), "\(event).\(key) = \(value) was accepted")
        let text = error.description
        #expect(text.contains("expect[0].fields.\(key)"), "\(text)")
        #expect(text.contains(reason), "\(text)")
    }

    @Test("values of the documented types load: int, instant, date, time, zone, bool, null where optional")
    func accepted() throws {
        let fields: [String: Any] = [
            "remaining": 7, "wakeTime": "2026-07-21T07:00:00Z", "localDate": "2026-07-21", "localTime": "07:00",
            "timeZone": "Asia/Shanghai", "zoneKnown": true, "tapLocalDate": "2026-07-20",
            "time": "2026-07-20T23:00:00Z",
        ]
        #expect(try Self.error("bed.wake_time", fields) == nil)
        #expect(try Self.error("batch.sent", ["first": NSNull()]) == nil, "first is instant?")
    }

    @Test("the catalogue's table is docs/protocol.md's event table, row for row")
    func tableIsTheDocs() throws {
        let docs = try String(
            contentsOf: ScenarioFileTests.root.appendingPathComponent("docs/protocol.md"), encoding: .utf8)
        let rows = docs.split(separator: "\n").filter { line in
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            return line.hasPrefix("| ") && cells.count >= 3 && cells[1].hasPrefix("`")
                && cells[0].allSatisfy { $0.isLetter || $0 == "-" }
        }
        #expect(rows.joined(separator: "\n") == EventFieldCatalog.table)
        // Every event of the catalogue has a row.
        let missing = EventName.allCases.filter { EventFieldCatalog.events[$0] == nil }
        #expect(missing.isEmpty, "no fields for \(missing)")
    }
}

/// Expectations are checked in one pass over the events, not each against the whole log.
@Suite("scenario checks at scale")
struct ExpectationScaleTests {
    @Test("10,000 windowed expectations over 10,000 taps: seconds, not the quadratic minutes; same verdicts")
    func oneDayEach() throws {
        let start = try #require(ISO8601.date("2026-07-20T15:00:00Z"))
        let log = (0..<10_000).map { day in
            ScenarioRun.LogEntry(
                at: start.addingTimeInterval(Double(day) * 86_400), source: .watch,
                event: Event(.fallbackManualEntry, [("reason", .string("no batch"))]))
        }
        let expectations = (0..<10_000).map { day in
            ScenarioExpectation(
                event: .fallbackManualEntry, source: .watch, from: start.addingTimeInterval(Double(day) * 86_400),
                to: start.addingTimeInterval(Double(day) * 86_400 + 60), first: nil, count: day == 5 ? 2 : 1,
                min: nil, max: nil, fields: [("reason", "\"no batch\"")])
        }
        let began = ContinuousClock.now
        let checks = ScenarioRun.checks(expectations, against: log)
        let elapsed = ContinuousClock.now - began
        #expect(elapsed < .seconds(30), "\(elapsed)")
        #expect(checks.filter { !$0.passed }.map(\.expectation.count) == [2], "only day 5 asks for two")
        #expect(checks[5].observed.hasPrefix("count 1"), "\(checks[5].observed)")
    }
}

/// A scenario file over the limit is reported with its own size and the limit.
@Suite("scenario file size")
struct ScenarioFileSizeTests {
    @Test("a 100 MB scenario file: its size (104857600 bytes) and the 1 MiB limit, not 1048577")
    func hundredMegabytes() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("big-\(getpid()).json").path
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 100 << 20)  // sparse: no 100 MB written
        try handle.close()
        #expect {
            _ = try ScenarioFile.load(path)
        } throws: { error in
            let text = String(describing: error)
            return text.contains("104857600 bytes") && text.contains("1 MiB") && !text.contains("1048577")
        }
    }
}

/// The night table and `--json` show the zone of each tap, under the names the events use.
@Suite("scenario nights: zone and names")
struct ScenarioNightZoneTests {
    @Test("travel New York -> Tokyo: each night names its tap's zone, in the table and as tapTimeZone")
    func travelZones() throws {
        let path = ScenarioFileTests.root.appendingPathComponent("Examples/scenarios/travel-new-york-tokyo.json").path
        let run = try ScenarioRun.twin(try ScenarioFile.load(path))
        let zones = Set(run.nights.map(\.tapTimeZone))
        #expect(zones == ["America/New_York", "Asia/Tokyo"], "\(zones)")
        let night = try #require(run.nights.last?.summary)
        #expect(night["tapTimeZone"] as? String == "Asia/Tokyo")
        #expect(night["tapLocalDate"] is String && night["tapLocalTime"] is String)
        #expect(night["localDate"] == nil && night["tapTime"] == nil, "the events' names only")
        #expect(run.report.contains("  zone  ") || run.report.contains(" zone "), "the table has a zone column")
        #expect(run.report.contains("Asia/Tokyo"))
    }
}

/// The `--svg` chart's day ticks follow the zone in effect at each instant.
@Suite("scenario chart: zones")
struct CoverageChartZoneTests {
    @Test(
        "travel New York -> Tokyo: ticks at New York midnights before the watch's move and at Tokyo midnights after it, the move labelled"
    )
    func ticksFollowTheMove() throws {
        let path = ScenarioFileTests.root.appendingPathComponent("Examples/scenarios/travel-new-york-tokyo.json").path
        let run = try ScenarioRun.twin(try ScenarioFile.load(path))
        let svg = CoverageChart.svg(run)
        // Ticks carry their midnight: "midnight in ZONE, INSTANT".
        let ticks = svg.components(separatedBy: "<title>midnight in ").dropFirst().compactMap {
            $0.components(separatedBy: "</title>").first
        }
        #expect(ticks.contains("America/New_York, 2026-05-12T04:00:00Z"), "\(ticks)")
        #expect(ticks.contains("Asia/Tokyo, 2026-05-14T15:00:00Z"), "\(ticks)")
        #expect(ticks.contains("Asia/Tokyo, 2026-05-18T15:00:00Z"), "\(ticks)")
        // The watch moved at 06:00Z on 14 May: no New York midnight after it (the old chart drew
        // 2026-05-15T04:00:00Z and on, in the old zone).
        #expect(!ticks.contains { $0.hasPrefix("America/New_York, 2026-05-15") }, "\(ticks)")
        #expect(ticks.filter { $0.hasPrefix("America/New_York") }.count == 5, "10 to 14 May")
        #expect(svg.contains("<text class=\"zone\""), "the move is labelled with its zone")
        #expect(svg.contains(">Asia/Tokyo<title>"))
    }
}

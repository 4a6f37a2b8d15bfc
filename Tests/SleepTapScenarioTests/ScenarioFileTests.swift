// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import Testing

@testable import SleepTapScenario

#if canImport(Glibc)
    import Glibc
#endif

/// The scenario file format (docs/scenarios.md): strict, every error naming the file, the field
/// and the value.
@Suite("scenario files")
struct ScenarioFileTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every weekday at `time`, as a schedule file's `wake`.
    static func week(_ time: String) -> [String: String] {
        Dictionary(
            uniqueKeysWithValues: ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"].map {
                ($0, time)
            })
    }

    /// A valid scenario; `edit` changes its JSON object before it is encoded.
    static func scenario(_ edit: (inout [String: Any]) -> Void = { _ in }) throws -> Data {
        var object: [String: Any] = [
            "schemaVersion": 1, "name": "test", "start": "2026-07-20T00:00:00Z", "end": "2026-07-25T00:00:00Z",
            "timeZone": "Asia/Shanghai",
            "schedule": ["schemaVersion": 1, "wake": week("07:00")] as [String: Any],
            "phone": ["--platform", "ios"], "watch": ["--bed-at", "23:00"],
            "steps": [
                ["at": "2026-07-21T00:00:00Z", "phone": "open"], ["at": "2026-07-22T00:00:00Z", "link": "down"],
            ],
            "expect": [["event": "bed.wake_time", "min": 1] as [String: Any]],
        ]
        edit(&object)
        return try JSONSerialization.data(withJSONObject: object)
    }

    @Test("the example scenarios decode with their steps and expectations")
    func examples() throws {
        let directory = Self.root.appendingPathComponent("Examples/scenarios")
        let report = try ScenarioFile.load(directory.appendingPathComponent("field-report-shanghai.json").path)
        #expect(report.timeZone.identifier == "Asia/Shanghai")
        #expect(
            report.phone == [
                "--platform", "ios", "--opportunity-model", "legacy", "--registration", "early", "--os-seed", "1",
            ])
        #expect(report.steps.map(\.text) == ["phone: registration late-silent", "phone: open"])
        #expect(report.expectations.first?.event == .fallbackManualEntry)
        #expect(report.expectations.first?.first == ISO8601.date("2026-08-02T15:00:00Z"))
        let fix = try ScenarioFile.load(directory.appendingPathComponent("early-registration-shanghai.json").path)
        #expect(fix.steps.map(\.text) == ["phone: registration early", "phone: open"])
    }

    @Test(
        "the demo's timeline in the twin: os.why answers 'launched at 08:46, handler not registered in time' on its first night"
    )
    func demoWhy() throws {
        let path = Self.root.appendingPathComponent("Examples/scenarios/demo-late-silent-new-york.json").path
        let run = try ScenarioRun.twin(try ScenarioFile.load(path))
        let whys = run.checks.filter { $0.expectation.event == .osWhy }
        #expect(whys.count == 2 && whys.allSatisfy(\.passed), "\(run.checks.map(\.observed))")
        let first = try #require(run.log.first { $0.event.name == .osWhy && $0.event["launchedAt"] != .null })
        // 08:46 EST on Friday 7 March 2025, the demo's first morning.
        #expect(first.event["launchedAt"] == .date(try #require(ISO8601.date("2025-03-07T13:46:00Z"))))
        #expect(first.event["reason"] == .string("HANDLER_NOT_REGISTERED_IN_TIME"))
        guard case .string(let summary) = first.event["summary"] else {
            Issue.record("os.why without a summary")
            return
        }
        #expect(summary.hasPrefix("launched at 2025-03-07T13:46:00Z, handler not registered in time"))
    }

    @Test("a phone step is checked against the phone's own --platform: bucket on Android")
    func androidStep() throws {
        let data = try Self.scenario {
            $0["phone"] = ["--platform", "android"]
            $0["steps"] = [["at": "2026-07-21T00:00:00Z", "phone": "bucket rare"]]
        }
        let file = try ScenarioFile.decode(data, path: "s.json")
        #expect(file.steps.map(\.text) == ["phone: bucket rare"])
    }

    @Test("a valid scenario decodes: steps in order, the link step, expectation windows")
    func valid() throws {
        let file = try ScenarioFile.decode(try Self.scenario(), path: "s.json")
        #expect(file.steps.count == 2)
        guard case .link(up: false) = try #require(file.steps.last).step else {
            Issue.record("expected link down, got \(file.steps)")
            return
        }
        #expect(file.expectations.first?.min == 1)
    }

    /// Each bad scenario: the edit, the field the error must name, and the value it must quote.
    static let bad: [(label: String, field: String, value: String, edit: @Sendable (inout [String: Any]) -> Void)] = [
        ("unknown top-level key", "nights", "3", { $0["nights"] = 3 }),
        ("a name with an escape sequence", "name", "", { $0["name"] = "\u{1B}[2J\u{1B}[31mRED" }),
        ("a name with a right-to-left override", "name", "", { $0["name"] = "night\u{202E}" }),
        (
            "unknown step key", "steps[0].when", "\"x\"",
            { $0["steps"] = [["at": "2026-07-21T00:00:00Z", "when": "x"]] }
        ),
        (
            "unknown expect key", "expect[0].after", "1",
            { $0["expect"] = [["event": "bed.wake_time", "after": 1] as [String: Any]] }
        ),
        (
            "step out of time order", "steps[1].at", "\"2026-07-21T00:00:00Z\"",
            {
                $0["steps"] = [
                    ["at": "2026-07-22T00:00:00Z", "phone": "open"], ["at": "2026-07-21T00:00:00Z", "phone": "open"],
                ]
            }
        ),
        (
            "at before start", "steps[0].at", "\"2026-07-19T23:59:59Z\"",
            { $0["steps"] = [["at": "2026-07-19T23:59:59Z", "phone": "open"]] }
        ),
        (
            "at at end (exclusive)", "steps[0].at", "\"2026-07-25T00:00:00Z\"",
            { $0["steps"] = [["at": "2026-07-25T00:00:00Z", "phone": "open"]] }
        ),
        ("end before start", "end", "\"2026-07-01T00:00:00Z\"", { $0["end"] = "2026-07-01T00:00:00Z" }),
        ("bad instant", "start", "\"2026-07-20\"", { $0["start"] = "2026-07-20" }),
        ("unknown zone", "timeZone", "\"Mars/Olympus\"", { $0["timeZone"] = "Mars/Olympus" }),
        ("schema version 2", "schemaVersion", "2", { $0["schemaVersion"] = 2 }),
        (
            "link neither up nor down", "steps[0].link", "\"sideways\"",
            { $0["steps"] = [["at": "2026-07-21T00:00:00Z", "link": "sideways"]] }
        ),
        (
            "not a phone stdin line", "steps[0].phone", "\"dance\"",
            { $0["steps"] = [["at": "2026-07-21T00:00:00Z", "phone": "dance"]] }
        ),
        (
            "an Android command for an iOS phone", "steps[0].phone", "\"bucket rare\"",
            { $0["steps"] = [["at": "2026-07-21T00:00:00Z", "phone": "bucket rare"]] }
        ),
        (
            "an iOS command for an Android phone", "steps[0].phone", "\"registration late-silent\"",
            {
                $0["phone"] = ["--platform=android"]
                $0["steps"] = [["at": "2026-07-21T00:00:00Z", "phone": "registration late-silent"]]
            }
        ),
        (
            "a platform neither ios nor android", "phone[0]", "\"--platform\"",
            { $0["phone"] = ["--platform", "tizen"] }
        ),
        (
            "not a watch stdin line", "steps[0].watch", "\"time-zone Mars/Olympus\"",
            { $0["steps"] = [["at": "2026-07-21T00:00:00Z", "watch": "time-zone Mars/Olympus"]] }
        ),
        (
            "two actions in a step", "steps[0]", "",
            { $0["steps"] = [["at": "2026-07-21T00:00:00Z", "phone": "open", "link": "up"]] }
        ),
        ("unknown event", "expect[0].event", "\"bed.tapped\"", { $0["expect"] = [["event": "bed.tapped"]] }),
        (
            "count with min", "expect[0].count", "1",
            { $0["expect"] = [["event": "bed.wake_time", "count": 1, "min": 1] as [String: Any]] }
        ),
        (
            "negative count", "expect[0].count", "-1",
            { $0["expect"] = [["event": "bed.wake_time", "count": -1] as [String: Any]] }
        ),
        (
            "a first after the scenario's end", "expect[0].first", "\"2026-07-26T00:00:00Z\"",
            { $0["expect"] = [["event": "bed.wake_time", "first": "2026-07-26T00:00:00Z"] as [String: Any]] }
        ),
        (
            "a first before its window's from", "expect[0].first", "\"2026-07-21T00:00:00Z\"",
            {
                $0["expect"] = [
                    ["event": "bed.wake_time", "from": "2026-07-22T00:00:00Z", "first": "2026-07-21T00:00:00Z"]
                        as [String: Any]
                ]
            }
        ),
        ("a name of spaces", "name", "\"   \"", { $0["name"] = "   " }),
        (
            "a window inside the start's second (matched to the second: it holds none)", "expect[0].to",
            "\"2026-07-20T00:00:00.900Z\"",
            { $0["expect"] = [["event": "bed.wake_time", "to": "2026-07-20T00:00:00.900Z"] as [String: Any]] }
        ),
        (
            "from and to in one second", "expect[0].to", "\"2026-07-21T00:00:00.900Z\"",
            {
                $0["expect"] = [
                    ["event": "bed.wake_time", "from": "2026-07-21T00:00:00.500Z", "to": "2026-07-21T00:00:00.900Z"]
                        as [String: Any]
                ]
            }
        ),
        (
            "a count above 2^53 - 1 (not exact as a JSON number)", "expect[0].count", "9007199254740993",
            { $0["expect"] = [["event": "bed.wake_time", "count": 9_007_199_254_740_993] as [String: Any]] }
        ),
        (
            "from not before to", "expect[0].to", "\"2026-07-21T00:00:00Z\"",
            {
                $0["expect"] = [
                    ["event": "bed.wake_time", "from": "2026-07-21T00:00:00Z", "to": "2026-07-21T00:00:00Z"]
                ]
            }
        ),
        ("a flag the scenario sets", "phone[0]", "\"--clock-start\"", { $0["phone"] = ["--clock-start", "x"] }),
        (
            "run records the twin cannot write", "phone[0]", "\"--metrics-dir\"",
            { $0["phone"] = ["--metrics-dir", "/tmp/m"] }
        ),
        (
            "another routing id for the watch (the twin would pair it all the same)", "watch[0]", "\"--id\"",
            { $0["watch"] = ["--id", "other"] }
        ),
        ("another watch id for the phone", "phone[0]", "\"--watch-id=other\"", { $0["phone"] = ["--watch-id=other"] }),
        ("a phone flag its parser refuses", "phone", "", { $0["phone"] = ["--frobnicate"] }),
        ("a watch flag its parser refuses", "watch", "", { $0["watch"] = ["--bed-at", "25:00"] }),
        ("help in the flags", "watch", "", { $0["watch"] = ["--help"] }),
        (
            "a start after the clock's range", "start", "\"2500-01-01T00:00:00Z\"",
            {
                $0["start"] = "2500-01-01T00:00:00Z"
                $0["end"] = "2500-02-01T00:00:00Z"
                $0["steps"] = []
            }
        ),
        (
            "a span longer than 10 years", "end", "\"2036-07-20T00:00:01Z\"",
            { $0["end"] = "2036-07-20T00:00:01Z" }
        ),
        ("an end in year 9999", "end", "\"9999-01-01T00:00:00Z\"", { $0["end"] = "9999-01-01T00:00:00Z" }),
        (
            "an end in the clock's last two days (the processes would stop first)", "end",
            "\"2199-12-31T23:00:00Z\"",
            {
                $0["start"] = "2199-12-28T00:00:00Z"
                $0["end"] = "2199-12-31T23:00:00Z"
                $0["steps"] = []
            }
        ),
        (
            "schedule and scheduleFile", "scheduleFile", "\"s.json\"", { $0["scheduleFile"] = "s.json" }
        ),
        (
            "bad inline schedule", "schedule.wake.monday", "",
            {
                var wake = week("07:00")
                wake["monday"] = "7am"
                $0["schedule"] = ["schemaVersion": 1, "wake": wake] as [String: Any]
            }
        ),
    ]

    @Test("a bad scenario is refused with the file, the field and the value named", arguments: 0..<bad.count)
    func refused(_ index: Int) throws {
        let (label, field, value, edit) = Self.bad[index]
        let data = try Self.scenario(edit)
        let error = try #require(throws: ScenarioError.self, "\(label)") {
            try ScenarioFile.decode(data, path: "night.json")
        }
        #expect(error.file == "night.json", "\(label)")
        #expect(error.field == field, "\(label): \(error)")
        if !value.isEmpty { #expect(error.value == value, "\(label): \(error)") }
        #expect(error.description.hasPrefix("night.json: \(field)"), "\(label): \(error)")
        #expect(!error.description.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" }, "\(label)")
    }

    @Test(
        "whole numbers written with a fraction are refused as the schedule file refuses them: the scenario's schemaVersion, and its inline schedule's"
    )
    func wholeNumbers() throws {
        func text(version: String, scheduleVersion: String, target: String) -> String {
            """
            {"schemaVersion": \(version), "name": "n", "start": "2026-07-20T00:00:00Z", "end": "2026-07-25T00:00:00Z",
             "timeZone": "Asia/Shanghai",
             "schedule": {"schemaVersion": \(scheduleVersion), "sleepTargetMinutes": \(target),
                          "wake": {"monday": "07:00", "tuesday": "07:00", "wednesday": "07:00", "thursday": "07:00",
                                   "friday": "07:00", "saturday": "off", "sunday": "off"}},
             "steps": []}
            """
        }
        _ = try ScenarioFile.decode(Data(text(version: "1", scheduleVersion: "1", target: "480").utf8), path: "s.json")
        for (version, scheduleVersion, target, field) in [
            ("1.0", "1", "480", "schemaVersion"), ("1", "1.0", "480", "schedule.schemaVersion"),
            ("1", "1", "480.0", "schedule.sleepTargetMinutes"), ("1", "1", "4.8e2", "schedule.sleepTargetMinutes"),
        ] {
            let file = text(version: version, scheduleVersion: scheduleVersion, target: target)
            do {
                _ = try ScenarioFile.decode(Data(file.utf8), path: "s.json")
                Issue.record("\(field) written with a fraction was accepted: \(file)")
            } catch {
                #expect(error.field == field, "\(error)")
                #expect(error.reason.contains("without a fraction"), "\(error)")
            }
        }
        // An expectation's count, min and max too.
        for count in ["1.0", "1e0"] {
            let file = text(version: "1", scheduleVersion: "1", target: "480")
                .replacingOccurrences(
                    of: #""steps": []}"#,
                    with: #""steps": [], "expect": [{"event": "bed.wake_time", "min": \#(count)}]}"#)
            do {
                _ = try ScenarioFile.decode(Data(file.utf8), path: "s.json")
                Issue.record("min \(count) was accepted: \(file)")
            } catch {
                #expect(error.field == "expect[0].min" && error.reason.contains("without a fraction"), "\(error)")
            }
        }
    }

    @Test("exactly 10 years from start is the longest span")
    func longestSpan() throws {
        let file = try ScenarioFile.decode(
            try Self.scenario { $0["end"] = "2036-07-20T00:00:00Z" }, path: "night.json")
        #expect(file.end == ISO8601.date("2036-07-20T00:00:00Z"))
    }

    @Test("a directory, a FIFO or a missing file as the scenario or its scheduleFile is named for what it is")
    func notRegularFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sleeptap-scenario-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        for (path, reason) in [
            (directory.path, "is a directory, not a file"), (fifo, "is not a regular file"),
            (directory.appendingPathComponent("none.json").path, "cannot be read: No such file or directory"),
        ] {
            let error = try #require(throws: ScenarioError.self) { try ScenarioFile.load(path) }
            #expect(error.description.contains(reason), "\(error)")
        }
        let scenario = directory.appendingPathComponent("scenario.json").path
        for (target, reason) in [(".", "is a directory, not a file"), ("fifo", "is not a regular file")] {
            try Self.scenario {
                $0["schedule"] = nil
                $0["scheduleFile"] = target
            }.write(to: URL(fileURLWithPath: scenario))
            let error = try #require(throws: ScenarioError.self) { try ScenarioFile.load(scenario) }
            #expect(error.field == "scheduleFile" && error.description.contains(reason), "\(error)")
        }
    }

    @Test("scheduleFile is read relative to the scenario file's directory")
    func scheduleFileRelative() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sleeptap-scenario-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("schedules"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(
            #"{"schemaVersion": 1, "timeZone": "Europe/Berlin", "wake": {"monday": "off", "tuesday": "off", "wednesday": "off", "thursday": "off", "friday": "off", "saturday": "off", "sunday": "09:15"}}"#
                .utf8
        ).write(
            to: directory.appendingPathComponent("schedules/sunday.json"))
        let data = try Self.scenario {
            $0["schedule"] = nil
            $0["scheduleFile"] = "schedules/sunday.json"
        }
        let path = directory.appendingPathComponent("scenario.json").path
        let file = try ScenarioFile.decode(data, path: path)
        #expect(file.schedulePath == directory.appendingPathComponent("schedules/sunday.json").path)
        #expect(file.schedule.timeZoneIdentifier == "Europe/Berlin")
        let missing = try Self.scenario {
            $0["schedule"] = nil
            $0["scheduleFile"] = "schedules/none.json"
        }
        let error = try #require(throws: ScenarioError.self) { try ScenarioFile.decode(missing, path: path) }
        #expect(error.field == "scheduleFile" && error.value == "\"schedules/none.json\"", "\(error)")
    }

    @Test("expectations: first, count, min and max in a half-open window, to the second, with fields")
    func checks() throws {
        let at = try #require(ISO8601.date("2026-07-21T15:00:00Z"))
        func tap(_ date: String) -> Event {
            Event(.fallbackManualEntry, [("reason", .string("no batch")), ("tapLocalDate", .string(date))])
        }
        let log = [
            ScenarioRun.LogEntry(at: at.addingTimeInterval(0.4), source: .watch, event: tap("2026-07-21")),
            ScenarioRun.LogEntry(at: at.addingTimeInterval(86_400), source: .watch, event: tap("2026-07-22")),
        ]
        func check(_ json: String) throws -> ScenarioCheck {
            let scenario = try ScenarioFile.decode(
                try Self.scenario { $0["expect"] = [try? JSONSerialization.jsonObject(with: Data(json.utf8))] },
                path: "s.json")
            return ScenarioRun.check(try #require(scenario.expectations.first), against: log)
        }
        let first = try check(#"{"event": "fallback.manual_entry", "first": "2026-07-21T15:00:00Z"}"#)
        #expect(first.passed, "\(first.observed)")
        let late = try check(#"{"event": "fallback.manual_entry", "first": "2026-07-21T15:00:01Z"}"#)
        #expect(!late.passed && late.observed == "first 2026-07-21T15:00:00Z")
        // `to` is exclusive: the second tap at 2026-07-22T15:00:00Z is outside.
        let window = try check(
            #"{"event": "fallback.manual_entry", "from": "2026-07-21T15:00:00Z", "to": "2026-07-22T15:00:00Z", "count": 1}"#
        )
        #expect(window.passed, "\(window.observed)")
        let tooMany = try check(#"{"event": "fallback.manual_entry", "max": 1}"#)
        #expect(!tooMany.passed && tooMany.observed.hasPrefix("count 2"), "\(tooMany.observed)")
        let fields = try check(
            #"{"event": "fallback.manual_entry", "fields": {"tapLocalDate": "2026-07-21"}, "count": 1}"#)
        #expect(fields.passed, "\(fields.observed)")
        // A source the event never comes from, a count beyond any JSON integer and a window
        // outside the run would match nothing: refused at load, so `count: 0` cannot pass on them.
        for (json, says) in [
            (
                #"{"event": "fallback.manual_entry", "source": "phone", "count": 0}"#,
                "fallback.manual_entry comes from watch only"
            ),
            (#"{"event": "os.low_power", "source": "watch", "count": 0}"#, "os.low_power comes from os only"),
            (#"{"event": "coverage.low", "fields": {"nightsLeft": 1e300}, "count": 0}"#, "of at most 2^53 - 1"),
            (
                #"{"event": "batch.applied", "fields": {"seq": 99999999999999999999}, "count": 0}"#,
                "of at most 2^53 - 1"
            ),
            (
                #"{"event": "os.low_power", "from": "2030-01-01T00:00:00Z", "count": 0}"#,
                "at or after the scenario's end"
            ),
            (
                #"{"event": "os.low_power", "to": "2020-01-01T00:00:00Z", "count": 0}"#,
                "at or before the scenario's start"
            ),
        ] {
            do {
                _ = try check(json)
                Issue.record("accepted: \(json)")
            } catch {
                #expect("\(error)".contains(says), "\(json): \(error)")
            }
        }
        let phoneSide = try check(#"{"event": "state.recovered", "source": "phone", "count": 0}"#)
        #expect(phoneSide.passed, "\(phoneSide.observed)")
        // A misspelt field cannot pass vacuously: no fallback.manual_entry carries tapLocalDay,
        // which the file's load already says (ExpectationCatalogTests).
        #expect(throws: ScenarioError.self) {
            try check(#"{"event": "fallback.manual_entry", "fields": {"tapLocalDay": "2026-07-21"}, "count": 0}"#)
        }
    }
}

/// The twin takes every `watch` option the process takes, through the same mapping.
@Suite("the twin built from the watch's flags")
struct TwinBuilderWatchTests {
    static let clock = ["--clock-start", "2026-07-20T00:00:00Z", "--clock-speed", "3600"]
    static let phone =
        ["--endpoint", "ipc:///nonexistent/p.sock", "--state-dir", "/nonexistent/p", "--device-seed", "1"] + clock

    @Test("--warn-nights, --bed-at, --manual-wake, --time-zone and --id reach the twin's watch")
    func watchOptions() throws {
        let twin = try TwinBuilder.make(
            phone: Self.phone,
            watch: [
                "--endpoint", "ipc:///nonexistent/p.sock", "--state-dir", "/nonexistent/w", "--warn-nights", "5",
                "--bed-at", "22:15", "--manual-wake", "06:45", "--time-zone", "Asia/Tokyo", "--id", "w2",
            ] + Self.clock, machineZone: try #require(TimeZone(identifier: "Asia/Shanghai")))
        let setup = twin.watchSetup
        #expect(setup.warnNights == 5)
        #expect(setup.bedAt == LocalTime(hour: 22, minute: 15))
        #expect(setup.manualWake == LocalTime(hour: 6, minute: 45))
        #expect(setup.flagZone?.identifier == "Asia/Tokyo")
        #expect(setup.systemZone.identifier == "Asia/Shanghai")
        #expect(setup.id == "w2")
    }
}

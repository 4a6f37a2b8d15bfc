// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapTestFixtures
import Testing

@testable import SleepTapScenario

/// Zone rules in the scenario runner and the soak: the soak's oracle reads the tz database in
/// use, and a scenario can put the watch on an older database than the phone's.
@Suite("zone rules in scenarios and the soak's oracle")
struct ZoneScenarioTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let vancouver = TimeZone(identifier: "America/Vancouver")!

    /// Every day at 07:00 in Vancouver.
    static let schedule = WakeSchedule(
        wakeTimes: WakeSchedule.everyDayAtSeven.wakeTimes, timeZoneIdentifier: "America/Vancouver")

    /// The oracle's wake-up on `date` (yyyy-MM-dd), from a batch generated at noon UTC the day
    /// before, with `database` in use.
    static func oracleWake(_ date: String, on database: ZoneDatabase) throws -> String {
        let generated = try #require(ISO8601.date(date + "T00:00:00Z")).addingTimeInterval(-12 * 3600)
        let wakes = ZoneDatabase.$scoped.withValue(database) {
            var oracle = SoakOracle(schedule: Self.schedule)
            return oracle.batch(generatedAt: generated, in: Self.vancouver, horizonDays: 3)
        }
        let wake = try #require(wakes.first { $0.localDate == date }, "\(wakes)")
        #expect(wake.localTime == "07:00")
        return ISO8601.string(wake.instant)
    }

    @Test(
        "the soak's oracle: Vancouver 07:00 on 2026-12-02 is 14:00Z on new rules (zic fixture, and the machine's tz 2026b+), 15:00Z on a 2025b-like fixture; 2026-10-31 is 14:00Z on both"
    )
    func oracleVancouver() throws {
        let new = try ZoneFixture.database(ZoneFixture.vancouverNew, version: "2026b")
        let old = try ZoneFixture.database(ZoneFixture.vancouverOld, version: "2025b")
        defer {
            try? FileManager.default.removeItem(atPath: new.directory)
            try? FileManager.default.removeItem(atPath: old.directory)
        }
        #expect(try Self.oracleWake("2026-12-02", on: new) == "2026-12-02T14:00:00Z")
        #expect(try Self.oracleWake("2026-12-02", on: old) == "2026-12-02T15:00:00Z")
        #expect(try Self.oracleWake("2026-10-31", on: new) == "2026-10-31T14:00:00Z")
        #expect(try Self.oracleWake("2026-10-31", on: old) == "2026-10-31T14:00:00Z")
    }

    @Test(
        "the soak's oracle on the machine's tz database (the README's set-up installs tzdata 2026b or newer): Vancouver 2026-12-02 07:00 is 14:00Z",
        .enabled(if: ZoneDatabase.process.version >= "2026b" && ZoneDatabase.process.version != "unknown"))
    func oracleMachine() throws {
        #expect(try Self.oracleWake("2026-12-02", on: ZoneDatabase.process) == "2026-12-02T14:00:00Z")
    }

    @Test("Examples/scenarios/vancouver-permanent-pdt.json holds in the twin, and the run names its tz databases")
    func vancouverExample() throws {
        let path = Self.root.appendingPathComponent("Examples/scenarios/vancouver-permanent-pdt.json").path
        let run = try ScenarioRun.twin(try ScenarioFile.load(path))
        #expect(run.passed, "\(run.report)")
        #expect(run.tzdata.phone == ZoneDatabase.current.version)
        #expect(run.tzdata.watch == ZoneDatabase.current.version)
        let summary = try #require(run.summary["tzdata"] as? [String: Any])
        #expect(summary["phone"] as? String == ZoneDatabase.current.version)
        #expect(run.report.contains("tz database: phone \(ZoneDatabase.current.version), watch"), "\(run.report)")
    }

    /// A scenario in Vancouver across 2026-11-01 whose watch runs `--tzdata old` (a 2025b-like
    /// database beside the file) and whose phone runs on `phoneTzdata` (nil: the machine's); the
    /// link goes down on 29 October so the watch's cache runs out and it asks by hand.
    static func olderWatchScenario(directory: String, phoneTzdata: String?) throws -> String {
        let week = Dictionary(
            uniqueKeysWithValues: ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"].map {
                ($0, "07:00")
            })
        let object: [String: Any] = [
            "schemaVersion": 1, "name": "a watch on 2025b beside a phone on new rules",
            "start": "2026-10-28T07:00:00Z", "end": "2026-11-09T08:00:00Z", "timeZone": "America/Vancouver",
            "schedule": ["schemaVersion": 1, "timeZone": "America/Vancouver", "wake": week] as [String: Any],
            "phone": ["--platform", "ios", "--os-seed", "7"] + (phoneTzdata.map { ["--tzdata", $0] } ?? []),
            "watch": ["--tzdata", "old", "--bed-at", "23:00", "--manual-wake", "07:00"],
            "steps": [["at": "2026-10-29T12:00:00Z", "link": "down"]],
            "expect": [
                // The phone's batch governs the wake-up: 14:00Z; the watch taps at 23:00 on its
                // own (old) rules, PST after 1 November: 07:00Z, an hour after the phone's 23:00.
                [
                    "event": "bed.wake_time", "source": "watch",
                    "fields": ["localDate": "2026-11-03", "wakeTime": "2026-11-03T14:00:00Z", "tapLocalTime": "23:00"],
                    "first": "2026-11-03T07:00:00Z",
                ] as [String: Any],
                [
                    "event": "bed.wake_time", "source": "watch",
                    "fields": ["localDate": "2026-10-31", "wakeTime": "2026-10-31T14:00:00Z"],
                    "first": "2026-10-31T06:00:00Z",
                ],
                // The manual fallback's 07:00 is the watch's own: 15:00Z on its old rules.
                [
                    "event": "manual.wake_time", "source": "watch",
                    "fields": ["localTime": "07:00", "wakeTime": "2026-11-08T15:00:00Z"], "count": 1,
                ],
                ["event": "watch.started", "fields": ["tzdata": "2025b"], "count": 1],
            ],
        ]
        let path = directory + "/watch-on-older-tzdata.json"
        try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]).write(
            to: URL(fileURLWithPath: path))
        return path
    }

    @Test(
        "a watch on a 2025b-like database beside a phone on 2026b rules, in the twin: the phone's batches stay at 14:00Z, the watch's own taps and manual fallback run on its rules (an hour later)"
    )
    func olderWatchTwin() throws {
        let old = try ZoneFixture.build(ZoneFixture.vancouverOld, version: "2025b")
        let directory = URL(fileURLWithPath: old).deletingLastPathComponent().path + "/scenario-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(atPath: directory)
            try? FileManager.default.removeItem(atPath: old)
        }
        try FileManager.default.moveItem(atPath: old, toPath: directory + "/old")
        // The phone on new rules built here (the machine's, when it has 2026b or newer, says the same).
        let new = try ZoneFixture.build(ZoneFixture.vancouverNew, version: "2026b")
        defer { try? FileManager.default.removeItem(atPath: new) }
        let file = try ScenarioFile.load(try Self.olderWatchScenario(directory: directory, phoneTzdata: new))
        // The relative --tzdata is the one beside the scenario file.
        #expect(file.watch.prefix(2) == ["--tzdata", directory + "/old"])
        let run = try ScenarioRun.twin(file)
        #expect(run.passed, "\(run.report)")
        #expect(run.tzdata.phone == "2026b" && run.tzdata.watch == "2025b")
        // Every batch entry the phone sent is at 14:00Z (07:00 at UTC-07).
        let taps = run.log.filter { $0.event.name == .bedWakeTime }
        #expect(!taps.isEmpty)
        for tap in taps {
            guard case .date(let wake)? = tap.event["wakeTime"] else {
                Issue.record("bed.wake_time without wakeTime")
                continue
            }
            #expect(
                ISO8601.string(wake).hasSuffix("T14:00:00Z"), "\(tap.event.jsonLine(time: tap.at, process: .watch))")
        }
    }

    @Test(
        "a device's --tzdata without the scenario's timeZone (the devices' TZ) is refused at load, naming the array, the zone and the database"
    )
    func tzdataLacksZone() throws {
        let old = try ZoneFixture.build(ZoneFixture.vancouverOld, version: "2025b")
        defer { try? FileManager.default.removeItem(atPath: old) }
        let object: [String: Any] = [
            "schemaVersion": 1, "name": "lacking", "start": "2026-10-28T07:00:00Z", "end": "2026-10-30T07:00:00Z",
            "timeZone": "Europe/Berlin",
            "schedule": ["schemaVersion": 1, "wake": ScenarioFileTests.week("07:00")] as [String: Any],
            "watch": ["--tzdata", old],
        ]
        let data = try JSONSerialization.data(withJSONObject: object)
        do {
            _ = try ScenarioFile.decode(data, path: "/tmp/lacking.json")
            Issue.record("a --tzdata without the scenario's zone was accepted")
        } catch {
            #expect(error.field == "watch", "\(error)")
            #expect(
                error.reason.contains(
                    "timeZone Europe/Berlin (the devices' TZ): time zone \"Europe/Berlin\" is not in the tz database at \(old)"
                ),
                "\(error)")
        }
    }
}

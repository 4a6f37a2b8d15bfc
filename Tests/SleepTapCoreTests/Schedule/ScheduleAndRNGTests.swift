// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

@Suite("SplitMix64")
struct SplitMix64Tests {
    @Test("Seed 0 reproduces the first five outputs of the reference splitmix64.c")
    func referenceOutputs() {
        var rng = SplitMix64(state: 0)
        let outputs = (0..<5).map { _ in rng.next() }
        #expect(
            outputs == [
                16_294_208_416_658_607_535, 7_960_286_522_194_355_700, 487_617_019_471_545_679,
                17_909_611_376_780_542_444, 1_961_750_202_426_094_747,
            ])
    }
}

@Suite("Local times and schedule files")
struct ScheduleFileTests {
    @Test(
        "HH:MM parsing accepts 00:00-23:59 and nothing else",
        arguments: [
            ("00:00", true), ("23:59", true), ("07:30", true), ("7:30", false), ("24:00", false), ("07:60", false),
            ("07:00:00", false), ("", false), ("ab:cd", false), ("07-30", false), ("+7:30", false), ("０７:３０", false),
        ])
    func localTimeParsing(text: String, valid: Bool) {
        #expect((LocalTime(parsing: text) != nil) == valid)
    }

    static let valid = """
        {"schemaVersion": 1, "timeZone": "Europe/Berlin",
         "wake": {"monday": "06:30", "tuesday": "06:30", "wednesday": "06:30", "thursday": "06:30",
                  "friday": "06:30", "saturday": "off", "sunday": "08:00"}}
        """

    @Test("A valid file decodes, with days off absent from the map")
    func validFile() throws {
        let schedule = try ScheduleFile.decode(Data(Self.valid.utf8))
        #expect(schedule.timeZoneIdentifier == "Europe/Berlin")
        #expect(schedule.wakeTimes[.monday] == LocalTime(hour: 6, minute: 30))
        #expect(schedule.wakeTimes[.sunday] == LocalTime(hour: 8, minute: 0))
        #expect(schedule.wakeTimes[.saturday] == nil)
    }

    struct BadFile: Sendable, CustomTestStringConvertible {
        var text: String
        var field: String
        var value: String
        var testDescription: String { "\(field) = \(value)" }
    }

    static func replacing(_ old: String, _ new: String) -> String {
        valid.replacingOccurrences(of: old, with: new)
    }

    @Test("schemaVersion 1.0 is said to need the whole number 1; 2 is an unsupported version")
    func schemaVersionWording() {
        func reason(_ version: String) -> String? {
            do {
                _ = try ScheduleFile.decode(
                    Data(Self.replacing("\"schemaVersion\": 1", "\"schemaVersion\": \(version)").utf8))
                return nil
            } catch {
                return error.reason
            }
        }
        #expect(reason("1.0") == "must be the whole number 1, written without a fraction or quotes")
        #expect(reason("\"1\"") == "must be the whole number 1, written without a fraction or quotes")
        #expect(reason("2") == "unsupported schema version; this build reads 1")
        #expect(reason("1") == nil)
    }

    @Test(
        "Each kind of bad file names the field and the bad value",
        arguments: [
            BadFile(text: "{", field: "", value: ""),
            BadFile(text: "[1]", field: "", value: ""),
            BadFile(
                text: replacing("\"schemaVersion\": 1", "\"schemaVersion\": 2"), field: "schemaVersion", value: "2"),
            BadFile(
                text: replacing("\"schemaVersion\": 1", "\"schemaVersion\": true"), field: "schemaVersion",
                value: "true"),
            BadFile(text: replacing("\"schemaVersion\": 1, ", ""), field: "schemaVersion", value: "(missing)"),
            BadFile(text: replacing("Europe/Berlin", "Mars/Olympus"), field: "timeZone", value: "\"Mars/Olympus\""),
            BadFile(
                text: replacing("\"monday\": \"06:30\"", "\"monday\": \"6:30\""), field: "wake.monday",
                value: "\"6:30\""),
            BadFile(text: replacing("\"monday\": \"06:30\"", "\"monday\": 630"), field: "wake.monday", value: "630"),
            BadFile(text: replacing("\"monday\": \"06:30\"", "\"monday\": null"), field: "wake.monday", value: "null"),
            BadFile(text: replacing("\"monday\": \"06:30\", ", ""), field: "wake.monday", value: "(missing)"),
            BadFile(text: replacing("\"monday\"", "\"mondy\""), field: "wake.mondy", value: "\"06:30\""),
            BadFile(text: replacing("\"timeZone\"", "\"timezone\""), field: "timezone", value: "\"Europe/Berlin\""),
            BadFile(
                text: replacing("\"wake\": {", "\"wake\": [{").replacingOccurrences(of: "}}", with: "}]}"),
                field: "wake", value: ""),
        ])
    func badFile(_ bad: BadFile) {
        #expect {
            _ = try ScheduleFile.decode(Data(bad.text.utf8))
        } throws: { error in
            guard let error = error as? ScheduleError else { return false }
            return error.field == bad.field && (bad.value.isEmpty || error.value == bad.value) && !error.reason.isEmpty
        }
    }
}

@Suite("Schedule file: overrides, sleep target, notice lead")
struct ScheduleFileExtrasTests {
    static let week = """
        "wake": {"monday": "06:30", "tuesday": "06:30", "wednesday": "06:30", "thursday": "06:30",
                  "friday": "06:30", "saturday": "off", "sunday": "08:00"}
        """

    static func file(_ extra: String) -> Data {
        Data("{\"schemaVersion\": 1, \(week), \(extra)}".utf8)
    }

    @Test("Overrides, sleep target and lead decode")
    func decodes() throws {
        let schedule = try ScheduleFile.decode(
            Self.file(
                "\"overrides\": {\"2026-12-25\": \"off\", \"2026-12-31\": \"09:15\"}, \"sleepTargetMinutes\": 450, \"bedtimeNoticeLeadMinutes\": 0"
            ))
        #expect(schedule.overrides[LocalDate(parsing: "2026-12-25")!] == .off)
        #expect(schedule.overrides[LocalDate(parsing: "2026-12-31")!] == .time(LocalTime(hour: 9, minute: 15)!))
        #expect(schedule.sleepTargetMinutes == 450 && schedule.bedtimeNoticeLeadMinutes == 0)
        let defaults = try ScheduleFile.decode(Data("{\"schemaVersion\": 1, \(Self.week)}".utf8))
        #expect(defaults.sleepTargetMinutes == 480 && defaults.bedtimeNoticeLeadMinutes == 30)
    }

    @Test(
        "Each bad extra names the field and value",
        arguments: [
            ("\"overrides\": [\"2026-12-25\"]", "overrides"),
            ("\"overrides\": {\"2026-02-30\": \"off\"}", "overrides.2026-02-30"),
            ("\"overrides\": {\"25.12.2026\": \"off\"}", "overrides.25.12.2026"),
            ("\"overrides\": {\"2026-12-25\": \"late\"}", "overrides.2026-12-25"),
            ("\"overrides\": {\"2026-12-25\": false}", "overrides.2026-12-25"),
            ("\"sleepTargetMinutes\": 30", "sleepTargetMinutes"),
            ("\"sleepTargetMinutes\": 480.5", "sleepTargetMinutes"),
            ("\"sleepTargetMinutes\": \"8h\"", "sleepTargetMinutes"),
            ("\"bedtimeNoticeLeadMinutes\": -5", "bedtimeNoticeLeadMinutes"),
            ("\"bedtimeNoticeLeadMinutes\": true", "bedtimeNoticeLeadMinutes"),
        ])
    func rejects(extra: String, field: String) {
        #expect {
            _ = try ScheduleFile.decode(Self.file(extra))
        } throws: { error in
            (error as? ScheduleError)?.field == field
        }
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import SleepTapCore

/// Wake times across DST changes and publicly reported alarm bugs, with transition instants from the
/// IANA tz database (tzdata 2025b).
@Suite("Calendar cases")
struct CalendarCasesTests {
    static func utc(_ text: String) -> Date {
        guard let date = ISO8601.date(text) else { fatalError("bad test instant \(text)") }
        return date
    }

    static func zone(_ id: String) -> TimeZone {
        guard let zone = TimeZone(identifier: id) else { fatalError("unknown zone \(id)") }
        return zone
    }

    /// A noon instant on the local day `yyyy-MM-dd` in `zone`.
    static func noon(_ day: String, _ zone: TimeZone) -> Date {
        let parts = day.split(separator: "-").compactMap { Int($0) }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2], hour: 12))!
    }

    struct DayCase: Sendable, CustomTestStringConvertible {
        var zone: String
        var day: String
        var wake: String
        var expected: String
        var testDescription: String { "\(zone) \(day) \(wake) -> \(expected)" }
    }

    @Test(
        "Wake time on a transition day follows the gap and first-occurrence rule",
        arguments: [
            DayCase(zone: "America/New_York", day: "2026-03-08", wake: "02:30", expected: "2026-03-08T07:30:00Z"),
            DayCase(zone: "America/New_York", day: "2026-03-08", wake: "07:00", expected: "2026-03-08T11:00:00Z"),
            DayCase(zone: "America/New_York", day: "2026-11-01", wake: "02:30", expected: "2026-11-01T07:30:00Z"),
            DayCase(zone: "America/New_York", day: "2026-11-01", wake: "07:00", expected: "2026-11-01T12:00:00Z"),
            DayCase(zone: "Europe/Berlin", day: "2026-03-29", wake: "02:30", expected: "2026-03-29T01:30:00Z"),
            DayCase(zone: "Europe/Berlin", day: "2026-03-29", wake: "07:00", expected: "2026-03-29T05:00:00Z"),
            DayCase(zone: "Europe/Berlin", day: "2026-10-25", wake: "02:30", expected: "2026-10-25T00:30:00Z"),
            DayCase(zone: "Europe/Berlin", day: "2026-10-25", wake: "07:00", expected: "2026-10-25T06:00:00Z"),
            DayCase(zone: "America/New_York", day: "2026-11-01", wake: "01:30", expected: "2026-11-01T05:30:00Z"),
            // Gaps that are not one hour: 30 minutes at Lord Howe (02:00 -> 02:30, UTC+10:30 -> +11),
            // 2 hours at Troll (01:00 -> 03:00, UTC+0 -> +2); tzdata's australasia and antarctica files.
            DayCase(zone: "Australia/Lord_Howe", day: "2025-10-05", wake: "02:12", expected: "2025-10-04T15:42:00Z"),
            DayCase(zone: "Australia/Lord_Howe", day: "2025-10-05", wake: "02:00", expected: "2025-10-04T15:30:00Z"),
            DayCase(zone: "Antarctica/Troll", day: "2025-03-30", wake: "01:30", expected: "2025-03-30T01:30:00Z"),
            DayCase(zone: "Antarctica/Troll", day: "2025-03-30", wake: "02:59", expected: "2025-03-30T02:59:00Z"),
            // Lord Howe's 30-minute overlap (02:00 -> 01:30): the first 01:45 is at UTC+11.
            DayCase(zone: "Australia/Lord_Howe", day: "2026-04-05", wake: "01:45", expected: "2026-04-04T14:45:00Z"),
        ])
    func transitionDay(_ c: DayCase) throws {
        let zone = Self.zone(c.zone)
        let time = try #require(LocalTime(parsing: c.wake))
        let got = WakeCalendar.instant(of: time, onDayOf: Self.noon(c.day, zone), in: WakeCalendar.calendar(in: zone))
        #expect(got == Self.utc(c.expected))
    }

    @Test("Zones without transitions: Tokyo and Shanghai map 07:00 to a fixed offset every day")
    func zonesWithoutTransitions() throws {
        for (id, hourUTC) in [("Asia/Tokyo", 22), ("Asia/Shanghai", 23)] {
            let zone = Self.zone(id)
            let schedule = WakeSchedule.everyDayAtSeven
            let entries = BatchPlanner.entries(for: schedule, in: zone, after: Self.utc("2026-03-01T00:00:00Z"))
            #expect(entries.count == 7)
            var utc = Calendar(identifier: .gregorian)
            utc.timeZone = TimeZone(identifier: "UTC")!
            for entry in entries {
                #expect(utc.component(.hour, from: entry.wake) == hourUTC, "\(id) \(entry)")
                #expect(entry.localTime == "07:00")
            }
        }
    }

    static func daily(_ time: String) -> WakeSchedule {
        WakeSchedule(
            wakeTimes: Dictionary(uniqueKeysWithValues: Weekday.allCases.map { ($0, LocalTime(parsing: time)!) }))
    }

    @Test("7-day batch across spring-forward keeps 06:30 local (not 07:30 EDT)")
    func batchAcrossSpringForward() {
        let zone = Self.zone("America/New_York")
        // Just after midnight on Mar 6 local, so the batch starts with the Mar 6 wake-up.
        let entries = BatchPlanner.entries(
            for: Self.daily("06:30"), in: zone, after: Self.utc("2025-03-06T05:01:00Z"))
        #expect(
            entries.map(\.wake)
                == [
                    "2025-03-06T11:30:00Z", "2025-03-07T11:30:00Z", "2025-03-08T11:30:00Z", "2025-03-09T10:30:00Z",
                    "2025-03-10T10:30:00Z", "2025-03-11T10:30:00Z", "2025-03-12T10:30:00Z",
                ].map(Self.utc))
        #expect(entries.map(\.localDate).first == "2025-03-06")
        #expect(entries.map(\.localDate).last == "2025-03-12")
        #expect(entries.allSatisfy { $0.localTime == "06:30" })
    }

    @Test("Batch across fall-back: Oct 31 and Nov 1 at 10:30Z, Nov 2 and 3 at 11:30Z")
    func batchAcrossFallBack() {
        let zone = Self.zone("America/New_York")
        let entries = BatchPlanner.entries(
            for: Self.daily("06:30"), in: zone, after: Self.utc("2025-10-31T04:01:00Z"), horizonDays: 4)
        #expect(
            entries.map(\.wake)
                == ["2025-10-31T10:30:00Z", "2025-11-01T10:30:00Z", "2025-11-02T11:30:00Z", "2025-11-03T11:30:00Z"]
                .map(Self.utc))
    }

    @Test("Reported bug 1: Berlin 06:00 after 2025-03-29 05:00Z is 2025-03-30 04:00Z, not an hour late")
    func springForwardAlarmNotLate() throws {
        let calendar = WakeCalendar.calendar(in: Self.zone("Europe/Berlin"))
        let next = WakeCalendar.next(
            try #require(LocalTime(parsing: "06:00")), after: Self.utc("2025-03-29T05:00:00Z"), in: calendar)
        #expect(next == Self.utc("2025-03-30T04:00:00Z"))
    }

    @Test("Reported bug 2: London 09:00 after 2023-10-28 08:00Z is 2023-10-29 09:00Z, not 08:00Z")
    func fallBackReminderNotEarly() throws {
        let calendar = WakeCalendar.calendar(in: Self.zone("Europe/London"))
        let next = WakeCalendar.next(
            try #require(LocalTime(parsing: "09:00")), after: Self.utc("2023-10-28T08:00:00Z"), in: calendar)
        #expect(next == Self.utc("2023-10-29T09:00:00Z"))
    }

    @Test("Reported bug 3: a weekly Monday 08:00 Berlin alarm fires exactly once on 2024-10-28, at 07:00Z")
    func weeklyAlarmOnceAfterFallBack() throws {
        let schedule = WakeSchedule(wakeTimes: [.monday: try #require(LocalTime(parsing: "08:00"))])
        let entries = BatchPlanner.entries(
            for: schedule, in: Self.zone("Europe/Berlin"), after: Self.utc("2024-10-21T06:00:00Z"), horizonDays: 14)
        #expect(entries.map(\.wake) == [Self.utc("2024-10-28T07:00:00Z"), Self.utc("2024-11-04T07:00:00Z")])
    }

    @Test("Watch fallback boundary: 10:29Z still shows the Mar 12 wake-up, 10:31Z asks for manual entry")
    func watchFallbackBoundary() {
        let zone = Self.zone("America/New_York")
        let entries = BatchPlanner.entries(
            for: Self.daily("06:30"), in: zone, after: Self.utc("2025-03-06T05:00:00Z"))
        let batch = WakeBatch(
            seq: 1, generatedAt: Self.utc("2025-03-06T05:00:00Z"), timeZone: zone.identifier, entries: entries)
        #expect(entries.last?.localDate == "2025-03-12")
        guard
            case .cached(let entry, _, let remaining) = WatchCore.lookup(
                at: Self.utc("2025-03-12T10:29:00Z"), in: batch)
        else {
            Issue.record("expected the Mar 12 wake-up at 10:29Z")
            return
        }
        #expect(entry.localDate == "2025-03-12")
        #expect(remaining == 1, "the last cached wake-up, the one shown")
        guard case .manualEntry = WatchCore.lookup(at: Self.utc("2025-03-12T10:31:00Z"), in: batch) else {
            Issue.record("expected manual entry at 10:31Z")
            return
        }
    }

    @Test("A wake time just after midnight belongs to its own local day")
    func justAfterMidnight() {
        let zone = Self.zone("Europe/Berlin")
        let entries = BatchPlanner.entries(
            for: Self.daily("00:15"), in: zone, after: Self.utc("2026-06-01T10:00:00Z"), horizonDays: 3)
        #expect(entries.map(\.localDate) == ["2026-06-02", "2026-06-03", "2026-06-04"])
        #expect(entries.allSatisfy { $0.localTime == "00:15" })
    }

    @Test("Days off give no entry; a week of weekdays yields 5 entries")
    func daysOff() throws {
        let weekday = try #require(LocalTime(parsing: "06:45"))
        let schedule = WakeSchedule(wakeTimes: [
            .monday: weekday, .tuesday: weekday, .wednesday: weekday, .thursday: weekday, .friday: weekday,
        ])
        // Saturday 2026-06-06 noon UTC: the first wake-up is Monday the 8th.
        let entries = BatchPlanner.entries(
            for: schedule, in: Self.zone("Europe/Paris"), after: Self.utc("2026-06-06T12:00:00Z"))
        #expect(entries.map(\.localDate) == ["2026-06-08", "2026-06-09", "2026-06-10", "2026-06-11", "2026-06-12"])
        #expect(BatchPlanner.entries(for: WakeSchedule(wakeTimes: [:]), in: .gmt, after: Date()).isEmpty)
    }
}

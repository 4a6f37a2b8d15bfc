// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapTestFixtures
import Testing

@testable import SleepTapCore

/// The TZif reader (RFC 8536), its POSIX TZ footer, the database, and the wake-up values of
/// British Columbia's 2026 change on databases built with `zic`.
@Suite("Zone rules")
struct ZoneRulesTests {
    static func utc(_ text: String) -> Date {
        guard let date = ISO8601.date(text) else { fatalError("bad test instant \(text)") }
        return date
    }

    static func seconds(_ text: String) -> Int64 { Int64(utc(text).timeIntervalSince1970) }

    /// The wake-up instant of `time` on local date `day` in Vancouver, on `database`.
    static func vancouverWake(_ day: String, _ time: String, on database: ZoneDatabase) -> String? {
        ZoneDatabase.$scoped.withValue(database) {
            guard let zone = WakeCalendar.zone(named: "America/Vancouver"), let date = LocalDate(parsing: day),
                let wake = LocalTime(parsing: time)
            else { return nil }
            return WakeCalendar.instant(of: wake, onDate: date, in: WakeCalendar.calendar(in: zone)).map(ISO8601.string)
        }
    }

    @Test(
        "Vancouver 07:00 on 2026-12-02 is 14:00Z on 2026b rules and 15:00Z on 2025b rules; 2026-10-31 is 14:00Z on both"
    )
    func vancouverValues() throws {
        let new = try ZoneFixture.database(ZoneFixture.vancouverNew, version: "2026b")
        let old = try ZoneFixture.database(ZoneFixture.vancouverOld, version: "2025b")
        #expect(Self.vancouverWake("2026-12-02", "07:00", on: new) == "2026-12-02T14:00:00Z")
        #expect(Self.vancouverWake("2026-12-02", "07:00", on: old) == "2026-12-02T15:00:00Z")
        #expect(Self.vancouverWake("2026-10-31", "07:00", on: new) == "2026-10-31T14:00:00Z")
        #expect(Self.vancouverWake("2026-10-31", "07:00", on: old) == "2026-10-31T14:00:00Z")
        // Far past the file's last transition (the footer rules): July 2040 and January 2041.
        #expect(Self.vancouverWake("2041-01-15", "07:00", on: new) == "2041-01-15T14:00:00Z")
        #expect(Self.vancouverWake("2041-01-15", "07:00", on: old) == "2041-01-15T15:00:00Z")
        #expect(Self.vancouverWake("2040-07-15", "07:00", on: old) == "2040-07-15T14:00:00Z")
        #expect(new.version == "2026b" && old.version == "2025b")
    }

    @Test(
        "A batch planned on the database in use carries its offsets: Vancouver after 2026-11-01 is UTC-07 on new rules")
    func batchOffsets() throws {
        let new = try ZoneFixture.database(ZoneFixture.vancouverNew, version: "2026b")
        let old = try ZoneFixture.database(ZoneFixture.vancouverOld, version: "2025b")
        let seven = try #require(LocalTime(parsing: "07:00"))
        let schedule = WakeSchedule(
            wakeTimes: Dictionary(uniqueKeysWithValues: Weekday.allCases.map { ($0, seven) }),
            timeZoneIdentifier: "America/Vancouver")
        func plan(_ database: ZoneDatabase) -> [WakeEntry] {
            ZoneDatabase.$scoped.withValue(database) {
                let zone = WakeCalendar.zone(named: "America/Vancouver")!
                return BatchPlanner.entries(for: schedule, in: zone, after: Self.utc("2026-12-01T12:00:00Z"))
            }
        }
        #expect(plan(new).first.map { ISO8601.string($0.wake) } == "2026-12-01T14:00:00Z")
        #expect(plan(new).first?.utcOffset == -25_200)
        #expect(plan(old).first.map { ISO8601.string($0.wake) } == "2026-12-01T15:00:00Z")
        #expect(plan(old).first?.utcOffset == -28_800)
    }

    @Test("New York's gap and repeated hour on a zic-built database: 02:30 moves to 03:30 EDT, 01:30 takes the first")
    func gapAndRepeated() throws {
        let database = try ZoneFixture.database(ZoneFixture.newYork, version: "test")
        let rules = try database.rules(for: "America/New_York")
        func wall(_ text: String) -> Int64 { Self.seconds(text) }
        // The wall time written as if it were UTC.
        #expect(rules.instant(ofWall: wall("2026-03-08T02:30:00Z")) == Self.seconds("2026-03-08T07:30:00Z"))
        #expect(rules.instant(ofWall: wall("2026-11-01T01:30:00Z")) == Self.seconds("2026-11-01T05:30:00Z"))
        #expect(rules.instant(ofWall: wall("2026-11-01T07:00:00Z")) == Self.seconds("2026-11-01T12:00:00Z"))
        // 2050 is past zic's last transition (2037): the footer `EST5EDT,M3.2.0,M11.1.0` rules it.
        #expect(rules.footer != nil)
        #expect(rules.instant(ofWall: wall("2050-03-13T02:30:00Z")) == Self.seconds("2050-03-13T07:30:00Z"))
        #expect(rules.offset(at: Self.seconds("2050-11-06T05:59:59Z")) == -14_400)
        #expect(rules.offset(at: Self.seconds("2050-11-06T06:00:00Z")) == -18_000)
    }

    @Test("A local day's bounds and weekday come from the database: 2026-03-08 in New York is 23 hours")
    func dayBounds() throws {
        let database = try ZoneFixture.database(ZoneFixture.newYork, version: "test")
        ZoneDatabase.$scoped.withValue(database) {
            let calendar = WakeCalendar.calendar(in: TimeZone(identifier: "America/New_York")!)
            let day = LocalDayCache.day(containing: Self.utc("2026-03-08T16:00:00Z"), in: calendar)
            #expect(day.map { ISO8601.string($0.start) } == "2026-03-08T05:00:00Z")
            #expect(day.map { ISO8601.string($0.end) } == "2026-03-09T04:00:00Z")
            #expect(day?.weekday == 1)
            #expect(day?.date.description == "2026-03-08")
        }
    }

    @Test(
        "POSIX TZ footers: M.m.w.d, J and zero-based days, negative and 25:00-style times",
        arguments: [
            // Greenland: DST starts at -01:00 local standard time on the last Sunday of March.
            ("<-02>2<-01>,M3.5.0/-1,M10.5.0/0", "2030-03-31T00:59:59Z", Int32(-7_200)),
            ("<-02>2<-01>,M3.5.0/-1,M10.5.0/0", "2030-03-31T01:00:00Z", Int32(-3_600)),
            // Europe/Dublin: negative DST (winter is the "daylight" time, GMT, one hour back).
            ("IST-1GMT0,M10.5.0,M3.5.0/1", "2030-07-01T00:00:00Z", Int32(3_600)),
            ("IST-1GMT0,M10.5.0,M3.5.0/1", "2030-01-01T00:00:00Z", Int32(0)),
            // All-year DST (RFC 8536 3.3.1): from day 0 at 00:00 to J365 at 25:00.
            ("EST5EDT,0/0,J365/25", "2030-06-01T00:00:00Z", Int32(-14_400)),
            ("EST5EDT,0/0,J365/25", "2030-01-01T12:00:00Z", Int32(-14_400)),
            // J60 is March 1 in every year (February 29 never counted); n=59 is Feb 29 in 2028.
            ("AAA0BBB,J60/0,J300/0", "2028-03-01T00:00:00Z", Int32(3_600)),
            ("AAA0BBB,J60/0,J300/0", "2028-02-29T23:59:59Z", Int32(0)),
            ("AAA0BBB,59/0,300/0", "2028-02-29T00:00:00Z", Int32(3_600)),
            ("AAA0BBB,59/0,300/0", "2028-02-28T23:59:59Z", Int32(0)),
            // The 5th week is the last: the last Sunday of February 2030 is the 24th.
            ("AAA0BBB,M2.5.0/0,M11.1.0", "2030-02-24T00:00:00Z", Int32(3_600)),
            ("AAA0BBB,M2.5.0/0,M11.1.0", "2030-02-23T23:59:59Z", Int32(0)),
            ("<+0530>-5:30", "2030-02-23T23:59:59Z", Int32(19_800)),
        ])
    func posixFooter(text: String, at instant: String, expected: Int32) throws {
        let rule = try #require(PosixTimeZone(parsing: text))
        #expect(rule.offset(at: Self.seconds(instant)) == expected)
    }

    @Test(
        "Strings that are not POSIX TZ strings are refused",
        arguments: ["", "E5", "EST", "EST5EDT,M13.1.0,M11.1.0", "EST5EDT,M3.2.0", "<AB>5", "EST5EDT,J0,J365"])
    func badFooter(text: String) {
        #expect(PosixTimeZone(parsing: text) == nil)
    }

    @Test("A zone the database lacks, a corrupt file and a bad name are clear errors naming the zone and the directory")
    func errors() throws {
        let directory = try ZoneFixture.build(ZoneFixture.newYork, version: "test")
        let database = ZoneDatabase.directory(directory)
        #expect(throws: ZoneError.missing(zone: "Europe/Berlin", directory: directory)) {
            try database.rules(for: "Europe/Berlin")
        }
        #expect(
            ZoneError.missing(zone: "Europe/Berlin", directory: directory).description
                == "time zone \"Europe/Berlin\" is not in the tz database at \(directory)")
        try Data("TZif2 not really".utf8).write(to: URL(fileURLWithPath: directory + "/America/Broken"))
        #expect(throws: ZoneError.self) { try database.rules(for: "America/Broken") }
        do {
            _ = try database.rules(for: "America/Broken")
        } catch {
            #expect(error.description.contains("\"America/Broken\""))
        }
        #expect(throws: ZoneError.badName("../etc/passwd")) { try database.rules(for: "../etc/passwd") }
        ZoneDatabase.$scoped.withValue(database) {
            #expect(WakeCalendar.zone(named: "Europe/Berlin") == nil)
            #expect(WakeCalendar.zone(named: "America/New_York") != nil)
        }
        // Truncated: every prefix of a good file is refused, never read past its end.
        let good = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/America/New_York")))
        for length in stride(from: 0, to: good.count - 1, by: 7) {
            #expect(throws: ZoneError.self) { try ZoneRules(tzif: Array(good.prefix(length)), name: "cut") }
        }
    }

    @Test("The version is tzdata.zi's '# version' line, else unknown")
    func version() {
        #expect(ZoneDatabase(directory: "x", load: { _ in Array("# version 2026f\n# more\n".utf8) }).version == "2026f")
        #expect(ZoneDatabase(directory: "x", load: { _ in nil }).version == "unknown")
        #expect(ZoneDatabase(directory: "x", load: { _ in Array("garbage".utf8) }).version == "unknown")
    }

    @Test("A version 1 file (32-bit data, no footer) is read")
    func versionOne() throws {
        // Header with typecnt 1, timecnt 1, charcnt 4: one transition at 0 to UTC+01.
        var bytes = Array("TZif".utf8) + [0] + [UInt8](repeating: 0, count: 15)
        for count in [0, 0, 0, 1, 1, 4] as [UInt32] {
            bytes += [UInt8(count >> 24), UInt8(count >> 16 & 255), UInt8(count >> 8 & 255), UInt8(count & 255)]
        }
        bytes += [0, 0, 0, 100]  // transition at 100 s
        bytes += [0]  // type 0
        bytes += [0, 0, 0x0E, 0x10, 0, 0]  // +3600, not DST, abbreviation 0
        bytes += Array("CET\0".utf8)
        let rules = try ZoneRules(tzif: bytes, name: "Test/One")
        #expect(rules.offset(at: 99) == 3600)
        #expect(rules.offset(at: 100) == 3600)
        #expect(rules.footer == nil)
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

/// Sunrise and sunset against values published by the US Naval Observatory (UTC, minute-rounded,
/// as collected in the test data of the public solarpositioning projects), local-date semantics,
/// polar days and nights, and a seeded sweep. A sweep failure names its seed and case.
@Suite("Solar: NOAA sunrise and sunset")
struct SolarTests {
    static let seed: UInt64 = 0x50_1A12_2026_0621

    static func place(_ latitude: Double, _ longitude: Double) -> Coordinate {
        Coordinate(latitude: latitude, longitude: longitude)!
    }

    static func date(_ text: String) -> LocalDate { LocalDate(parsing: text)! }

    static func utc(_ text: String) -> Date { ISO8601.date(text)! }

    static func zone(_ identifier: String) -> TimeZone { TimeZone(identifier: identifier)! }

    static let anchorage = place(61.216667, -149.866667)
    static let auckland = place(-36.833333, 174.8)
    static let brasilia = place(-15.8, -47.85)
    static let singapore = place(1.283333, 103.833333)
    static let longyearbyen = place(78.216667, 15.633333)
    static let mcMurdo = place(-77.85, 166.666667)
    static let rovaniemi = place(66.5, 25.73)

    /// The USNO reference rows: (place, UTC date, expected events "set HH:MM, rise HH:MM").
    static let referenceRows: [(String, Coordinate, String, [(Solar.Event.Kind, String)])] = [
        ("Anchorage", anchorage, "2020-06-15", [(.sunset, "07:40"), (.sunrise, "12:21")]),
        ("Anchorage", anchorage, "2020-12-15", [(.sunset, "00:40"), (.sunrise, "19:10")]),
        ("Auckland", auckland, "2020-06-15", [(.sunset, "05:11"), (.sunrise, "19:32")]),
        ("Auckland", auckland, "2020-12-15", [(.sunset, "07:36"), (.sunrise, "16:56")]),
        ("Brasilia", brasilia, "2020-06-15", [(.sunrise, "09:36"), (.sunset, "20:48")]),
        ("Singapore", singapore, "2020-03-15", [(.sunset, "11:17"), (.sunrise, "23:10")]),
        ("Longyearbyen", longyearbyen, "2020-04-15", [(.sunrise, "00:38"), (.sunset, "21:33")]),
        ("McMurdo", mcMurdo, "2020-02-25", [(.sunset, "10:48"), (.sunrise, "15:27")]),
    ]

    @Test("Every timed USNO reference row, UTC dates, within 60 s of the minute-rounded value")
    func referenceTable() {
        var worst = 0.0
        for (name, location, day, expected) in Self.referenceRows {
            let result = Solar.day(Self.date(day), at: location, in: .gmt)
            guard case .events(let events) = result else {
                Issue.record("\(name) \(day): expected events, got \(result)")
                continue
            }
            #expect(events.map(\.kind) == expected.map(\.0), "\(name) \(day): \(events)")
            for (event, (_, time)) in zip(events, expected) {
                let want = Self.utc("\(day)T\(time):00Z")
                let error = abs(event.at.timeIntervalSince(want))
                worst = max(worst, error)
                #expect(error <= 60, "\(name) \(day) \(event): \(Int(error)) s from \(time)")
            }
        }
        #expect(worst <= 60)
        #expect(worst > 0)  // the values are computed, not copied
    }

    @Test("Polar USNO rows: Longyearbyen never sets on 2020-06-15, never rises on 2020-12-15")
    func polarRows() {
        for zone in [TimeZone.gmt, Self.zone("Arctic/Longyearbyen")] {
            #expect(Solar.day(Self.date("2020-06-15"), at: Self.longyearbyen, in: zone) == .polarDay)
            #expect(Solar.day(Self.date("2020-12-15"), at: Self.longyearbyen, in: zone) == .polarNight)
            #expect(Solar.sunrise(on: Self.date("2020-06-15"), at: Self.longyearbyen, in: zone) == nil)
            #expect(Solar.sunrise(on: Self.date("2020-12-15"), at: Self.longyearbyen, in: zone) == nil)
            #expect(Solar.sunset(on: Self.date("2020-12-15"), at: Self.longyearbyen, in: zone) == nil)
        }
        // McMurdo's polar day: two months before the table's row (mid-December).
        #expect(Solar.day(Self.date("2019-12-21"), at: Self.mcMurdo, in: Self.zone("Antarctica/McMurdo")) == .polarDay)
        #expect(
            Solar.day(Self.date("2020-06-21"), at: Self.mcMurdo, in: Self.zone("Antarctica/McMurdo")) == .polarNight)
    }

    @Test("Local dates: Anchorage 2020-06-15 in America/Anchorage holds that local day's rise and set")
    func localDate() throws {
        let zone = Self.zone("America/Anchorage")  // AKDT, UTC-8
        let result = Solar.day(Self.date("2020-06-15"), at: Self.anchorage, in: zone)
        guard case .events(let events) = result else {
            Issue.record("expected events, got \(result)")
            return
        }
        #expect(events.map(\.kind) == [.sunrise, .sunset])
        let rise = events[0].at
        let set = events[1].at
        // The rise is the table's 12:21 UTC (04:21 local); the set is the next UTC date's evening set.
        #expect(abs(rise.timeIntervalSince(Self.utc("2020-06-15T12:21:00Z"))) <= 60)
        #expect(set > Self.utc("2020-06-16T07:35:00Z") && set < Self.utc("2020-06-16T07:50:00Z"), "\(set)")
        let nextUTCDay = Solar.day(Self.date("2020-06-16"), at: Self.anchorage, in: .gmt)
        guard case .events(let utcEvents) = nextUTCDay else {
            Issue.record("expected events, got \(nextUTCDay)")
            return
        }
        #expect(utcEvents.first?.kind == .sunset)
        #expect(abs((utcEvents.first?.at ?? .distantPast).timeIntervalSince(set)) < 1)
        #expect(Solar.sunrise(on: Self.date("2020-06-15"), at: Self.anchorage, in: zone) == rise)
        #expect(Solar.sunset(on: Self.date("2020-06-15"), at: Self.anchorage, in: zone) == set)
        // The table's 07:40 UTC set on 2020-06-15 is 23:40 on the local 14th.
        let previous = Solar.day(Self.date("2020-06-14"), at: Self.anchorage, in: zone)
        guard case .events(let before) = previous else {
            Issue.record("expected events, got \(previous)")
            return
        }
        #expect(before.last?.kind == .sunset)
        #expect(abs((before.last?.at ?? .distantPast).timeIntervalSince(Self.utc("2020-06-15T07:40:00Z"))) <= 60)
    }

    @Test("Near the polar circle a local day holds set, rise, set (Rovaniemi, Europe/Helsinki, 2026-07-16)")
    func setRiseSet() throws {
        let zone = Self.zone("Europe/Helsinki")  // EEST, UTC+3: solar midnight is about 01:17 local
        let result = Solar.day(Self.date("2026-07-16"), at: Self.rovaniemi, in: zone)
        guard case .events(let events) = result else {
            Issue.record("expected events, got \(result)")
            return
        }
        #expect(events.map(\.kind) == [.sunset, .sunrise, .sunset], "\(events)")
        #expect(events.map(\.at) == events.map(\.at).sorted())
        let calendar = WakeCalendar.calendar(in: zone)
        #expect(events.map { WakeCalendar.localDateString($0.at, in: calendar) }.allSatisfy { $0 == "2026-07-16" })
        // Just after midnight the Sun dips below the horizon for a couple of hours, then sets again
        // just before the next midnight.
        #expect(WakeCalendar.localTimeString(events[0].at, in: calendar) < "00:30")
        #expect(WakeCalendar.localTimeString(events[1].at, in: calendar) < "03:30")
        #expect(WakeCalendar.localTimeString(events[2].at, in: calendar) > "23:30")
        #expect(!Solar.isUp(at: events[0].at.addingTimeInterval(600), location: Self.rovaniemi))
        #expect(Solar.isUp(at: events[1].at.addingTimeInterval(600), location: Self.rovaniemi))
        // The same instants come out of the UTC days that hold them.
        var utcEvents: [Solar.Event] = []
        for day in ["2026-07-15", "2026-07-16"] {
            if case .events(let list) = Solar.day(Self.date(day), at: Self.rovaniemi, in: .gmt) { utcEvents += list }
        }
        for event in events {
            #expect(utcEvents.contains { $0.kind == event.kind && abs($0.at.timeIntervalSince(event.at)) < 1 })
        }
        // A UTC day at Anchorage holds set then rise (the table's first row).
        let anchorage = Solar.day(Self.date("2020-06-15"), at: Self.anchorage, in: .gmt)
        guard case .events(let pair) = anchorage else {
            Issue.record("expected events, got \(anchorage)")
            return
        }
        #expect(pair.map(\.kind) == [.sunset, .sunrise])
        #expect(pair[0].at < pair[1].at)
    }

    @Test("A zone's skipped date has no instants and no events (Pacific/Apia 2011-12-30)")
    func skippedDate() {
        let apia = Self.place(-13.83, -171.76)
        #expect(Solar.day(Self.date("2011-12-30"), at: apia, in: Self.zone("Pacific/Apia")) == .events([]))
        #expect(Solar.sunrise(on: Self.date("2011-12-31"), at: apia, in: Self.zone("Pacific/Apia")) != nil)
    }

    @Test("Consecutive local days alternate rise and set across polar seasons, each event on one day")
    func yearOfDays() {
        let cases: [(String, Coordinate, TimeZone)] = [
            ("Rovaniemi", Self.rovaniemi, Self.zone("Europe/Helsinki")),
            ("Longyearbyen", Self.longyearbyen, Self.zone("Arctic/Longyearbyen")),
            ("McMurdo", Self.mcMurdo, Self.zone("Antarctica/McMurdo")),
            ("Anchorage", Self.anchorage, Self.zone("America/Anchorage")),
        ]
        for (name, location, zone) in cases {
            let calendar = WakeCalendar.calendar(in: zone)
            var noon = calendar.date(from: DateComponents(year: 2026, month: 1, day: 1, hour: 12))!
            var up: Bool?
            var last = Date.distantPast
            var counts = (polarDay: 0, polarNight: 0)
            for _ in 0..<365 {
                let day = LocalDate(noon, in: calendar)
                switch Solar.day(day, at: location, in: zone) {
                case .polarDay:
                    counts.polarDay += 1
                    #expect(up != false, "\(name) \(day): polar day after a set")
                    up = true
                case .polarNight:
                    counts.polarNight += 1
                    #expect(up != true, "\(name) \(day): polar night after a rise")
                    up = false
                case .events(let events):
                    #expect(!events.isEmpty, "\(name) \(day)")
                    for event in events {
                        #expect(event.at > last, "\(name) \(day): \(event) not after \(last)")
                        if let up { #expect(up == (event.kind == .sunset), "\(name) \(day): \(event) repeats") }
                        up = event.kind == .sunrise
                        last = event.at
                    }
                }
                noon = calendar.date(byAdding: .day, value: 1, to: noon)!
            }
            switch name {
            case "Longyearbyen", "McMurdo": #expect(counts.polarDay > 60 && counts.polarNight > 60, "\(name) \(counts)")
            case "Rovaniemi":  // midnight sun for about a month, and (with refraction) no polar night
                #expect((20...40).contains(counts.polarDay) && counts.polarNight == 0, "\(name) \(counts)")
            default: #expect(counts.polarDay == 0 && counts.polarNight == 0, "\(name) \(counts)")
            }
        }
    }

    @Test("Seeded sweep over latitudes -89...89 and dates 2020-2030: no NaN, no crash, consistent events")
    func sweep() {
        var rng = SplitMix64(state: Self.seed)
        let zones = [
            "UTC", "Europe/Berlin", "America/Anchorage", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Kolkata",
            "America/St_Johns", "Australia/Lord_Howe", "Antarctica/Troll", "America/Santiago",
        ].map(Self.zone)
        for latitude in -89...89 {
            for _ in 0..<6 {
                let longitude = Double(rng.next() % 36_000) / 100 - 180
                let daysFrom2020 = Int(rng.next() % 4_018)
                let zone = zones[Int(rng.next() % UInt64(zones.count))]
                let day = Self.localDate(daysSince2020: daysFrom2020)
                let location = Self.place(Double(latitude) + Double(rng.next() % 100) / 100, longitude)
                let label = "seed \(Self.seed): \(location) \(day) \(zone.identifier)"
                guard let (start, end) = Solar.bounds(of: day, in: zone) else {
                    Issue.record("\(label): no bounds")
                    continue
                }
                switch Solar.day(day, at: location, in: zone) {
                case .polarDay:
                    for t in stride(from: start, to: end, by: 3_600) {
                        #expect(Solar.isUp(at: t, location: location), "\(label): polar day, down at \(t)")
                    }
                case .polarNight:
                    for t in stride(from: start, to: end, by: 3_600) {
                        #expect(!Solar.isUp(at: t, location: location), "\(label): polar night, up at \(t)")
                    }
                case .events(let events):
                    #expect(!events.isEmpty, "\(label)")
                    #expect(
                        zip(events, events.dropFirst()).allSatisfy { $0.at < $1.at && $0.kind != $1.kind }, "\(label)")
                    for event in events {
                        #expect(event.at >= start && event.at <= end, "\(label): \(event) outside the day")
                        let altitude = Solar.altitude(at: event.at, location: location)
                        #expect(altitude.isFinite && abs(altitude - Solar.horizonAltitude) < 0.01, "\(label): \(event)")
                    }
                }
            }
        }
        // The poles themselves and the date line: finite altitudes, a classification, no crash.
        for latitude in [-90.0, 90.0] {
            for longitude in [-180.0, 0.0, 180.0] {
                let location = Self.place(latitude, longitude)
                #expect(Solar.altitude(at: Self.utc("2026-03-20T12:00:00Z"), location: location).isFinite)
                _ = Solar.day(Self.date("2026-03-20"), at: location, in: .gmt)
            }
        }
    }

    static func localDate(daysSince2020 days: Int) -> LocalDate {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let instant = Date(timeIntervalSince1970: 1_577_836_800 + Double(days) * 86_400 + 43_200)
        return LocalDate(instant, in: calendar)
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import SleepTapCore

@Suite("Weather policy and coordinates")
struct WeatherPolicyTests {
    static let berlinZone = TimeZone(identifier: "Europe/Berlin")!
    static let berlin = Coordinate(latitude: 52.52, longitude: 13.42)!
    static let policy = WeatherPolicy()

    static func utc(_ text: String) -> Date { ISO8601.date(text)! }

    /// The instant of local `time` on `day` in Berlin (WakeCalendar's gap/repeat rule).
    static func berlinTime(_ day: String, _ time: String) -> Date {
        let calendar = WakeCalendar.calendar(in: berlinZone)
        let noon = utc("\(day)T11:00:00Z")
        return WakeCalendar.instant(of: LocalTime(parsing: time)!, onDayOf: noon, in: calendar)!
    }

    static func cache(fetchedAt: Date, at location: Coordinate = berlin) -> Forecast {
        Forecast(fetchedAt: fetchedAt, location: location, source: "offline", hours: [])
    }

    /// `meters` due north of `origin` (along a meridian the haversine distance is exactly R·Δφ).
    static func north(of origin: Coordinate, meters: Double) -> Coordinate {
        let degrees = meters / Coordinate.meanEarthRadius * 180 / .pi
        return Coordinate(latitude: origin.latitude + degrees, longitude: origin.longitude)!
    }

    @Test("Defaults: 06:00-18:00, 6 h, 1,000 m")
    func defaults() {
        #expect(Self.policy.windowStart.description == "06:00")
        #expect(Self.policy.windowEnd.description == "18:00")
        #expect(Self.policy.maxAge == 21_600)
        #expect(Self.policy.moveThreshold == 1_000)
    }

    @Test(
        "Background window boundaries on both DST days and a normal day in Europe/Berlin",
        arguments: ["2026-03-29", "2026-10-25", "2026-06-21"])
    func window(day: String) {
        let cases: [(String, Bool)] = [("05:59", false), ("06:00", true), ("17:59", true), ("18:00", false)]
        for (time, inside) in cases {
            let now = Self.berlinTime(day, time)
            let decision = Self.policy.decide(
                now: now, zone: Self.berlinZone, location: Self.berlin, cached: nil, foreground: false)
            let expected: WeatherPolicy.Decision =
                inside ? .fetch(reason: "no cache") : .skip(reason: "outside 06:00-18:00")
            #expect(decision == expected, "\(day) \(time)")
            // 59 s later is still the same minute.
            let later = Self.policy.decide(
                now: now.addingTimeInterval(59), zone: Self.berlinZone, location: Self.berlin, cached: nil,
                foreground: false)
            #expect(later == expected, "\(day) \(time):59")
        }
    }

    @Test("The window follows the wall clock: 04:30 UTC is inside on the DST Sunday, outside the day before")
    func wallClock() {
        let before = Self.policy.decide(
            now: Self.utc("2026-03-28T04:30:00Z"), zone: Self.berlinZone, location: Self.berlin, cached: nil,
            foreground: false)
        let after = Self.policy.decide(
            now: Self.utc("2026-03-29T04:30:00Z"), zone: Self.berlinZone, location: Self.berlin, cached: nil,
            foreground: false)
        #expect(before == .skip(reason: "outside 06:00-18:00"))  // 05:30 CET
        #expect(after == .fetch(reason: "no cache"))  // 06:30 CEST
    }

    @Test("Cache age: 5 h 59 min and exactly 6 h use it, 6 h 01 min fetches; a cache from the future fetches")
    func age() {
        let now = Self.berlinTime("2026-06-21", "12:00")
        func decide(age: TimeInterval) -> WeatherPolicy.Decision {
            Self.policy.decide(
                now: now, zone: Self.berlinZone, location: Self.berlin,
                cached: Self.cache(fetchedAt: now.addingTimeInterval(-age)), foreground: false)
        }
        #expect(decide(age: 5 * 3_600 + 59 * 60) == .useCache(reason: "fresh"))
        #expect(decide(age: 6 * 3_600) == .useCache(reason: "fresh"))
        #expect(decide(age: 6 * 3_600 + 60) == .fetch(reason: "expired"))
        #expect(decide(age: -60) == .fetch(reason: "expired"))
    }

    @Test("Movement: 999 m uses the cache, 1,001 m fetches and says how far")
    func movement() {
        let now = Self.berlinTime("2026-06-21", "09:00")
        let cached = Self.cache(fetchedAt: now.addingTimeInterval(-3_600))
        func decide(_ location: Coordinate) -> WeatherPolicy.Decision {
            Self.policy.decide(now: now, zone: Self.berlinZone, location: location, cached: cached, foreground: false)
        }
        #expect(decide(Self.north(of: Self.berlin, meters: 999)) == .useCache(reason: "fresh"))
        #expect(decide(Self.north(of: Self.berlin, meters: 1_001)) == .fetch(reason: "moved 1001 m"))
        #expect(decide(Self.north(of: Self.berlin, meters: 12_345)) == .fetch(reason: "moved 12345 m"))
        // Expiry is checked before movement.
        let old = Self.cache(fetchedAt: now.addingTimeInterval(-7 * 3_600))
        #expect(
            Self.policy.decide(
                now: now, zone: Self.berlinZone, location: Self.north(of: Self.berlin, meters: 5_000), cached: old,
                foreground: false) == .fetch(reason: "expired"))
    }

    @Test("Foreground (app opened) ignores the window but keeps the cache rules")
    func foreground() {
        let night = Self.berlinTime("2026-06-21", "03:00")
        let fresh = Self.cache(fetchedAt: night.addingTimeInterval(-3_600))
        let stale = Self.cache(fetchedAt: night.addingTimeInterval(-7 * 3_600))
        func decide(_ cached: Forecast?, foreground: Bool) -> WeatherPolicy.Decision {
            Self.policy.decide(
                now: night, zone: Self.berlinZone, location: Self.berlin, cached: cached, foreground: foreground)
        }
        #expect(decide(nil, foreground: false) == .skip(reason: "outside 06:00-18:00"))
        #expect(decide(nil, foreground: true) == .fetch(reason: "no cache"))
        #expect(decide(fresh, foreground: true) == .useCache(reason: "fresh"))
        #expect(decide(stale, foreground: true) == .fetch(reason: "expired"))
    }

    @Test("A window that wraps past midnight, and a custom one named in the reason")
    func customWindow() {
        var policy = WeatherPolicy()
        policy.windowStart = LocalTime(hour: 22, minute: 0)!
        policy.windowEnd = LocalTime(hour: 2, minute: 0)!
        #expect(policy.inWindow(Self.berlinTime("2026-06-21", "23:30"), zone: Self.berlinZone))
        #expect(policy.inWindow(Self.berlinTime("2026-06-21", "01:59"), zone: Self.berlinZone))
        #expect(!policy.inWindow(Self.berlinTime("2026-06-21", "02:00"), zone: Self.berlinZone))
        #expect(
            policy.decide(
                now: Self.berlinTime("2026-06-21", "12:00"), zone: Self.berlinZone, location: Self.berlin, cached: nil,
                foreground: false) == .skip(reason: "outside 22:00-02:00"))
    }

    @Test("Coordinates: ranges validated, haversine distances on the mean radius, Codable refuses bad values")
    func coordinates() throws {
        #expect(Coordinate(latitude: 90, longitude: -180) != nil)
        #expect(Coordinate(latitude: -90, longitude: 180) != nil)
        #expect(Coordinate(latitude: 90.000_1, longitude: 0) == nil)
        #expect(Coordinate(latitude: 0, longitude: -180.000_1) == nil)
        #expect(Coordinate(latitude: .nan, longitude: 0) == nil)
        #expect(Coordinate(latitude: 0, longitude: .infinity) == nil)

        let r = Coordinate.meanEarthRadius
        let origin = Coordinate(latitude: 0, longitude: 0)!
        #expect(abs(origin.distance(to: Coordinate(latitude: 1, longitude: 0)!) - r * .pi / 180) < 1e-6)
        #expect(abs(origin.distance(to: Coordinate(latitude: 0, longitude: 90)!) - r * .pi / 2) < 1e-6)
        #expect(abs(origin.distance(to: Coordinate(latitude: 0, longitude: 180)!) - r * .pi) < 1e-6)
        #expect(abs(origin.distance(to: Coordinate(latitude: 0, longitude: -180)!) - r * .pi) < 1e-6)
        #expect(Self.berlin.distance(to: Self.berlin) == 0)
        let paris = Coordinate(latitude: 48.8566, longitude: 2.3522)!
        #expect(abs(Self.berlin.distance(to: paris) - paris.distance(to: Self.berlin)) < 1e-6)
        #expect(abs(Self.berlin.distance(to: paris) - 878_400) < 1_000)  // ~878 km
        // Across the date line is short, not half the world.
        let fiji = Coordinate(latitude: -17, longitude: 179.9)!
        let samoa = Coordinate(latitude: -17, longitude: -179.9)!
        #expect(fiji.distance(to: samoa) < 25_000)

        let data = try JSONEncoder().encode(Self.berlin)
        #expect(try JSONDecoder().decode(Coordinate.self, from: data) == Self.berlin)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Coordinate.self, from: Data(#"{"latitude": 95, "longitude": 0}"#.utf8))
        }
    }

    @Test(
        "Open-Meteo hour stamps are UTC wall times: leap days, year ends and both DST Sundays agree with Foundation; impossible ones are nil"
    )
    func openMeteoTimes() {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        for (text, parts) in [
            ("2024-02-29T23:59", (2024, 2, 29, 23, 59)), ("2026-12-31T23:00", (2026, 12, 31, 23, 0)),
            ("2027-01-01T00:00", (2027, 1, 1, 0, 0)), ("2026-03-29T01:30", (2026, 3, 29, 1, 30)),
            ("2026-10-25T02:15", (2026, 10, 25, 2, 15)), ("1969-12-31T12:00", (1969, 12, 31, 12, 0)),
        ] {
            let expected = utc.date(
                from: DateComponents(year: parts.0, month: parts.1, day: parts.2, hour: parts.3, minute: parts.4))
            #expect(OpenMeteo.parseTime(text) == expected, "\(text)")
        }
        for bad in [
            "2025-02-29T00:00", "2026-13-01T00:00", "2026-01-01T24:00", "2026-01-01 00:00", "2026-01-01T00:00Z", "",
        ] {
            #expect(OpenMeteo.parseTime(bad) == nil, "\(bad)")
        }
    }
}

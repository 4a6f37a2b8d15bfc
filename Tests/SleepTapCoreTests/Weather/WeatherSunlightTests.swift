// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapTestFixtures
import Testing

@testable import SleepTapCore

@Suite("Sunlight notice planning")
struct WeatherSunlightTests {
    static let berlinZone = TimeZone(identifier: "Europe/Berlin")!
    static let berlin = Coordinate(latitude: 52.52, longitude: 13.42)!
    static let policy = SunlightPolicy()

    static func utc(_ text: String) -> Date { ISO8601.date(text)! }

    /// The embedded Open-Meteo sample response (Berlin, 2026-06-21, 24 UTC hours).
    static func sample() throws -> Forecast {
        try OpenMeteo.decode(
            Data(OpenMeteoSample.json.utf8), fetchedAt: utc("2026-06-21T03:00:00Z"), location: berlin
        ).get()
    }

    static func plan(
        wake: String, forecast: Forecast?, location: Coordinate = berlin, zone: TimeZone = berlinZone,
        policy: SunlightPolicy = policy
    ) -> SunlightPlanner.Plan {
        SunlightPlanner.plan(wake: utc(wake), location: location, zone: zone, forecast: forecast, policy: policy)
    }

    /// A forecast of clear hours (cloud 5 %, rain 0 %, code 0) from `start`, for `count` hours.
    static func clear(from start: String, hours count: Int, at location: Coordinate) -> Forecast {
        let first = utc(start)
        let hours = (0..<count).map {
            HourlyWeather(
                time: first.addingTimeInterval(Double($0) * 3_600), cloudCover: 5, precipitationProbability: 0,
                weatherCode: 0, temperature: -5)
        }
        return Forecast(fetchedAt: first, location: location, source: "offline", hours: hours)
    }

    @Test("Defaults: cloud 70 %, rain 40 %, morning ends 12:00, WMO 51-99 are bad")
    func defaults() {
        #expect(Self.policy.maxCloudCover == 70)
        #expect(Self.policy.maxPrecipitationProbability == 40)
        #expect(Self.policy.latestHour.description == "12:00")
        #expect(Self.policy.badWeatherCodes == Set(51...99))
    }

    @Test("Berlin 2026-06-21, wake 07:00 CEST, the sample: 05:00 UTC (cloud 25, rain 0, code 1)")
    func sampleAtSeven() throws {
        // Sunrise in Berlin on the solstice is about 04:43 CEST (02:43 UTC), before the wake-up,
        // so the start is the wake-up, 05:00 UTC, and its hour passes every threshold.
        let sunrise = try #require(
            Solar.sunrise(on: LocalDate(parsing: "2026-06-21")!, at: Self.berlin, in: Self.berlinZone))
        #expect(sunrise > Self.utc("2026-06-21T02:40:00Z") && sunrise < Self.utc("2026-06-21T02:47:00Z"), "\(sunrise)")
        let plan = Self.plan(wake: "2026-06-21T05:00:00Z", forecast: try Self.sample())
        #expect(
            plan
                == .notice(
                    NotificationRecord(
                        id: "sunlight-2026-06-21", fireDate: Self.utc("2026-06-21T05:00:00Z"),
                        text: "Sunlight at 07:00: step outside for some morning light (cloud 25%, rain 0%).")))
    }

    @Test("The first hour starting at or after max(wake, sunrise)")
    func firstHourAfterStart() throws {
        let sample = try Self.sample()
        func fire(_ wake: String) -> Date? {
            guard case .notice(let record) = Self.plan(wake: wake, forecast: sample) else { return nil }
            return record.fireDate
        }
        // Wake 07:30 CEST: the 07:00 hour has begun, the next one (08:00 CEST, cloud 30, rain 3) is chosen.
        #expect(fire("2026-06-21T05:30:00Z") == Self.utc("2026-06-21T06:00:00Z"))
        // Wake 04:00 CEST, before the 04:43 sunrise: first hour after sunrise, 05:00 CEST (cloud 15).
        #expect(fire("2026-06-21T02:00:00Z") == Self.utc("2026-06-21T03:00:00Z"))
        // Wake 10:00 CEST: 08:00 UTC, cloud 18, rain 5, code 1.
        #expect(fire("2026-06-21T08:00:00Z") == Self.utc("2026-06-21T08:00:00Z"))
        // Wake 11:30 CEST: no hour starts before noon.
        #expect(Self.plan(wake: "2026-06-21T09:30:00Z", forecast: sample) == .none(reason: "no clear morning hour"))
        // Wake 12:00 CEST or later: no morning left.
        #expect(Self.plan(wake: "2026-06-21T10:00:00Z", forecast: sample) == .none(reason: "wake-up after 12:00"))
    }

    @Test("A cloudy or rainy morning moves the notice later, or cancels it")
    func cloudyMorning() throws {
        var forecast = try Self.sample()
        for index in 5...7 { forecast.hours[index].cloudCover = 90 }  // 07:00-09:59 CEST overcast
        guard case .notice(let later) = Self.plan(wake: "2026-06-21T05:00:00Z", forecast: forecast) else {
            Issue.record("expected a notice")
            return
        }
        #expect(later.fireDate == Self.utc("2026-06-21T08:00:00Z"))  // 10:00 CEST, cloud 18
        #expect(later.text.hasPrefix("Sunlight at 10:00:"))

        forecast.hours[8].weatherCode = 61  // rain at 10:00 CEST
        forecast.hours[9].precipitationProbability = 41  // 11:00 CEST just over the limit
        #expect(Self.plan(wake: "2026-06-21T05:00:00Z", forecast: forecast) == .none(reason: "no clear morning hour"))

        forecast.hours[9].precipitationProbability = 40  // exactly at the limit passes
        guard case .notice(let eleven) = Self.plan(wake: "2026-06-21T05:00:00Z", forecast: forecast) else {
            Issue.record("expected a notice")
            return
        }
        #expect(eleven.fireDate == Self.utc("2026-06-21T09:00:00Z"))

        // Cloud exactly 70 passes, 71 does not.
        var edge = try Self.sample()
        edge.hours[5].cloudCover = 70
        #expect(Self.plan(wake: "2026-06-21T05:00:00Z", forecast: edge).fireDate == Self.utc("2026-06-21T05:00:00Z"))
        edge.hours[5].cloudCover = 71
        #expect(Self.plan(wake: "2026-06-21T05:00:00Z", forecast: edge).fireDate == Self.utc("2026-06-21T06:00:00Z"))
    }

    @Test("Unknown values: a null precipitation passes; an hour with no sky information is skipped")
    func unknownValues() throws {
        var forecast = try Self.sample()
        forecast.hours[5].precipitationProbability = nil
        #expect(
            Self.plan(wake: "2026-06-21T05:00:00Z", forecast: forecast).fireDate == Self.utc("2026-06-21T05:00:00Z"))
        forecast.hours[5].cloudCover = nil
        forecast.hours[5].weatherCode = nil
        #expect(
            Self.plan(wake: "2026-06-21T05:00:00Z", forecast: forecast).fireDate == Self.utc("2026-06-21T06:00:00Z"))
    }

    @Test("No forecast, or one that does not reach the morning")
    func missingForecast() throws {
        #expect(Self.plan(wake: "2026-06-21T05:00:00Z", forecast: nil) == .none(reason: "no forecast"))
        var old = try Self.sample()
        old.hours = Array(old.hours.prefix(4))  // ends at 04:00 UTC
        #expect(
            Self.plan(wake: "2026-06-21T05:00:00Z", forecast: old)
                == .none(reason: "forecast does not cover the morning"))
    }

    @Test("Polar night (Longyearbyen, December): no notice, with the reason")
    func polarNight() {
        let longyearbyen = Coordinate(latitude: 78.216667, longitude: 15.633333)!
        let zone = TimeZone(identifier: "Arctic/Longyearbyen")!
        let forecast = Self.clear(from: "2026-12-15T00:00:00Z", hours: 48, at: longyearbyen)
        #expect(
            Self.plan(wake: "2026-12-15T06:00:00Z", forecast: forecast, location: longyearbyen, zone: zone)
                == .none(reason: "polar night"))
    }

    @Test("Polar day (Longyearbyen, June): the Sun is up, the wake-up is the start")
    func polarDay() {
        let longyearbyen = Coordinate(latitude: 78.216667, longitude: 15.633333)!
        let zone = TimeZone(identifier: "Arctic/Longyearbyen")!
        let forecast = Self.clear(from: "2026-06-21T00:00:00Z", hours: 48, at: longyearbyen)
        #expect(Solar.day(LocalDate(parsing: "2026-06-21")!, at: longyearbyen, in: zone) == .polarDay)
        // Wake 05:00 CEST (03:00 UTC), hours before any "sunrise" would be at lower latitudes.
        let plan = Self.plan(wake: "2026-06-21T03:00:00Z", forecast: forecast, location: longyearbyen, zone: zone)
        #expect(
            plan
                == .notice(
                    NotificationRecord(
                        id: "sunlight-2026-06-21", fireDate: Self.utc("2026-06-21T03:00:00Z"),
                        text: "Sunlight at 05:00: step outside for some morning light (cloud 5%, rain 0%).")))
    }

    @Test("The id uses the wake-up's local date, and the text its local time (New York)")
    func localNames() {
        let newYork = Coordinate(latitude: 40.71, longitude: -74.01)!
        let zone = TimeZone(identifier: "America/New_York")!
        // 2026-01-10 07:00 EST = 12:00 UTC; sunrise is about 07:20 EST, so 08:00 EST is chosen.
        let forecast = Self.clear(from: "2026-01-10T00:00:00Z", hours: 48, at: newYork)
        let plan = Self.plan(wake: "2026-01-10T12:00:00Z", forecast: forecast, location: newYork, zone: zone)
        guard case .notice(let record) = plan else {
            Issue.record("expected a notice, got \(plan)")
            return
        }
        #expect(record.id == "sunlight-2026-01-10")
        #expect(record.fireDate == Self.utc("2026-01-10T13:00:00Z"))
        #expect(record.text.hasPrefix("Sunlight at 08:00:"))
    }
}

extension SunlightPlanner.Plan {
    /// The notice's fire date, nil for `.none`.
    var fireDate: Date? {
        if case .notice(let record) = self { return record.fireDate }
        return nil
    }
}

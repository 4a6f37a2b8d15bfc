// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import SleepTapCore

@Suite("Offline weather provider")
struct WeatherOfflineProviderTests {
    static let berlin = Coordinate(latitude: 52.52, longitude: 13.42)!
    static let tokyo = Coordinate(latitude: 35.68, longitude: 139.77)!
    static let now = ISO8601.date("2026-06-21T04:10:00Z")!

    static func forecast(seed: UInt64, at location: Coordinate, now: Date = now) throws -> Forecast {
        try OfflineWeatherProvider(seed: seed).forecast(for: location, now: now).result.get()
    }

    @Test("Same seed, place and time give the same forecast; 48 UTC-aligned hours; plausible values")
    func deterministic() throws {
        let a = try Self.forecast(seed: 42, at: Self.berlin)
        let b = try Self.forecast(seed: 42, at: Self.berlin)
        #expect(a == b)
        #expect(a.source == "offline")
        #expect(a.fetchedAt == Self.now)
        #expect(a.location == Self.berlin)
        #expect(a.hours.count == 48)
        #expect(a.hours.first?.time == ISO8601.date("2026-06-21T04:00:00Z"))
        #expect(zip(a.hours, a.hours.dropFirst()).allSatisfy { $1.time.timeIntervalSince($0.time) == 3_600 })
        for hour in a.hours {
            #expect((0...100).contains(hour.cloudCover ?? -1))
            #expect((0...100).contains(hour.precipitationProbability ?? -1))
            #expect([0, 1, 2, 3, 61, 63, 71, 73, 80].contains(hour.weatherCode ?? -1))
            #expect((-60.0...60.0).contains(hour.temperature ?? .nan))
        }
        // Asked an hour later, the overlapping hours are the same weather.
        let later = try Self.forecast(seed: 42, at: Self.berlin, now: Self.now.addingTimeInterval(3_600))
        #expect(Array(later.hours.prefix(47)) == Array(a.hours.dropFirst()))
    }

    @Test("Different places and different seeds give different weather")
    func differs() throws {
        let berlin = try Self.forecast(seed: 42, at: Self.berlin)
        let tokyo = try Self.forecast(seed: 42, at: Self.tokyo)
        let otherSeed = try Self.forecast(seed: 43, at: Self.berlin)
        let nearby = try Self.forecast(seed: 42, at: Coordinate(latitude: 52.53, longitude: 13.42)!)
        #expect(berlin.hours.map(\.cloudCover) != tokyo.hours.map(\.cloudCover))
        #expect(berlin.hours.map(\.temperature) != tokyo.hours.map(\.temperature))
        #expect(berlin.hours.map(\.cloudCover) != otherSeed.hours.map(\.cloudCover))
        #expect(berlin.hours.map(\.cloudCover) != nearby.hours.map(\.cloudCover))
    }

    @Test("Cost is the configured simulated figure; over many seeds both sunny and overcast hours occur")
    func costAndSpread() throws {
        #expect(OfflineWeatherProvider(seed: 1).forecast(for: Self.berlin, now: Self.now).cost == 0.3)
        #expect(OfflineWeatherProvider(seed: 1, cost: 2).forecast(for: Self.berlin, now: Self.now).cost == 2)
        #expect(OfflineWeatherProvider(seed: 1).name == "offline")
        var clouds: [Int] = []
        for seed in 0..<20 as Range<UInt64> {
            clouds += try Self.forecast(seed: seed, at: Self.berlin).hours.compactMap(\.cloudCover)
        }
        #expect(clouds.contains { $0 <= 20 })
        #expect(clouds.contains { $0 >= 90 })
        let passing = clouds.filter { $0 <= SunlightPolicy().maxCloudCover }.count
        #expect(passing > clouds.count / 4 && passing < clouds.count * 9 / 10, "\(passing) of \(clouds.count)")
    }
}

// SPDX-License-Identifier: Apache-2.0

package import Foundation
import SleepTapOS

/// The default provider: a deterministic, plausible 48-hour hourly forecast with no network.
///
/// Each value is drawn from `SplitMix64` seeded by the provider's seed, the location (rounded to
/// 0.01°, about 1 km) and the UTC hour, so the same seed, place and hour always give the same
/// weather, whenever it is asked for. Cloud cover and temperature noise move smoothly (random
/// knots every 6 hours, linear in between); temperature follows a daily cycle peaking at 15:00
/// local solar time and falls with latitude; precipitation probability rises with cloud cover;
/// the WMO code is derived from both.
package struct OfflineWeatherProvider: WeatherProvider {
    /// How many hours each forecast holds: 48.
    package static let hourCount = 48

    /// The seed every value derives from.
    package let seed: UInt64
    /// The simulated seconds each call reports as its `cost`.
    package let cost: TimeInterval

    /// `"offline"`.
    package var name: String { "offline" }

    /// - Parameters:
    ///   - seed: e.g. the device seed.
    ///   - cost: simulated duration of a fetch in seconds (default 0.3), reported as `cost`.
    package init(seed: UInt64, cost: TimeInterval = 0.3) {
        self.seed = seed
        self.cost = cost
    }

    /// 48 hours starting at the UTC hour that contains `now`; `fetchedAt` = `now`, `source` =
    /// `"offline"`. Never fails.
    package func forecast(for location: Coordinate, now: Date) -> (
        result: Result<Forecast, WeatherError>, cost: TimeInterval
    ) {
        let firstHour = Int64((now.timeIntervalSince1970 / 3_600).rounded(.down))
        let hours = (0..<Int64(Self.hourCount)).map { hour(firstHour + $0, at: location) }
        let forecast = Forecast(fetchedAt: now, location: location, source: name, hours: hours)
        return (.success(forecast), cost)
    }

    /// The weather of the UTC hour number `index` (hours since 1970) at `location`.
    private func hour(_ index: Int64, at location: Coordinate) -> HourlyWeather {
        let time = Date(timeIntervalSince1970: Double(index) * 3_600)
        let cloud = min(100, max(0, smooth(index, channel: 1, at: location) * 110 - 5))
        let cloudCover = Int(cloud.rounded())

        // Daily cycle by local solar time, cooler towards the poles, plus slow noise.
        let solarHour = fmod(Double(index % 24) + location.longitude / 15 + 48, 24)
        let base = 27 - 0.45 * abs(location.latitude)
        let cycle = 5 * cos((solarHour - 15) / 24 * 2 * .pi) * (1 - cloud / 200)
        let temperature = ((base + cycle + (smooth(index, channel: 2, at: location) - 0.5) * 8) * 10).rounded() / 10

        let rain = (cloud - 55) * 2 + (smooth(index, channel: 3, at: location) - 0.5) * 30
        let precipitationProbability = Int(min(100, max(0, rain)).rounded())

        let code: Int
        switch (precipitationProbability, cloudCover) {
        case (70..., _): code = temperature < 0 ? 73 : (cloudCover > 95 ? 63 : 61)
        case (50..., _): code = temperature < 0 ? 71 : 80
        case (_, ..<10): code = 0
        case (_, ..<40): code = 1
        case (_, ..<75): code = 2
        default: code = 3
        }
        return HourlyWeather(
            time: time, cloudCover: cloudCover, precipitationProbability: precipitationProbability,
            weatherCode: code, temperature: temperature)
    }

    /// A value in 0..<1 for hour `index`: random knots every 6 hours, linear in between.
    private func smooth(_ index: Int64, channel: UInt64, at location: Coordinate) -> Double {
        let knot = index >= 0 ? index / 6 : (index - 5) / 6
        let fraction = Double(index - knot * 6) / 6
        let a = knotValue(knot, channel: channel, at: location)
        let b = knotValue(knot + 1, channel: channel, at: location)
        return a + (b - a) * fraction
    }

    /// One uniform draw in 0..<1 from SplitMix64 seeded by seed, location cell, channel and knot.
    private func knotValue(_ knot: Int64, channel: UInt64, at location: Coordinate) -> Double {
        let latCell = UInt64(bitPattern: Int64((location.latitude * 100).rounded()))
        let lonCell = UInt64(bitPattern: Int64((location.longitude * 100).rounded()))
        var mixer = SplitMix64(state: seed)
        var state = mixer.next() ^ latCell
        mixer = SplitMix64(state: state)
        state = mixer.next() ^ lonCell
        mixer = SplitMix64(state: state)
        state = mixer.next() ^ channel
        mixer = SplitMix64(state: state &+ UInt64(bitPattern: knot))
        return Double(mixer.next() >> 11) / Double(1 << 53)
    }
}

// SPDX-License-Identifier: Apache-2.0

package import Foundation
import SleepTapCommandLine
package import SleepTapCore

/// `phone` options.
package struct PhoneOptions: Equatable, Sendable {
    /// `--endpoint`: where the phone binds.
    package var endpoint: Endpoint
    package var stateDirectory: String
    /// Path of a schedule file (docs/schedule-format.md); nil = 07:00 every day.
    package var schedulePath: String?
    /// IANA zone; nil = the schedule file's, else the system zone.
    package var timeZone: TimeZone?
    /// `--tzdata DIR`: the tz database of this device; nil = the machine's (`ZoneDatabase.process`).
    package var zoneDatabase: ZoneDatabase?
    package var clock = ClockOptions()
    /// Routing id of the paired watch (default "watch").
    package var watchId = "watch"
    /// Days of wake-ups per batch (default 7).
    package var horizonDays = BatchPlanner.defaultHorizonDays
    /// Seed for the daily rotation of notice texts; nil = keep the stored one (random at first start).
    package var deviceSeed: UInt64?
    /// The simulated OS (platform, registration, conditions, budget, step costs).
    package var os = OSOptions()
    /// The weather provider.
    package var weather = WeatherOptions()
    /// Skip the ipc directory check (0700, owned by the user) and allow plaintext tcp.
    package var insecure = false
    /// Keys directory (`phone.key_secret` + `watch.key`): CURVE on the link, only the paired watch admitted.
    package var keysDirectory: String?
    /// `--metrics-dir`: the root under which run records are appended (docs/metrics.md); nil = none.
    package var metricsDirectory: String?
    /// The phone's location (default Berlin, 52.52 N 13.405 E).
    package var location = Self.defaultLocation

    /// The location when `--location` is not given: Berlin, 52.52 N 13.405 E.
    package static let defaultLocation = Coordinate(latitude: 52.52, longitude: 13.405)!

    /// Parses `LAT,LON` in decimal degrees.
    package static func parseCoordinate(_ text: String) -> Coordinate? {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let lat = ArgumentReader.decimal(String(parts[0])),
            let lon = ArgumentReader.decimal(String(parts[1]))
        else { return nil }
        return Coordinate(latitude: lat, longitude: lon)
    }
}

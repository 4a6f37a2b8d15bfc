// SPDX-License-Identifier: Apache-2.0

/// The version of the SleepTap tools, defined once for every executable's `--version`.
package enum SleepTapVersion {
    /// The release, as [Semantic Versioning](https://semver.org) `MAJOR.MINOR.PATCH`.
    package static let string = "0.2.0"

    /// What `--version` prints: the program, the release and the tz database in use
    /// (`phone 0.2.0 (tz database 2026f at /usr/share/zoneinfo)`).
    package static func line(_ program: String, zones: ZoneDatabase = .current) -> String {
        "\(program) \(string) (\(zones))"
    }
}

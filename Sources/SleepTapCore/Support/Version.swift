// SPDX-License-Identifier: Apache-2.0

/// The version of the SleepTap tools, defined once for every executable's `--version`.
public enum SleepTapVersion {
    /// The release, as [Semantic Versioning](https://semver.org) `MAJOR.MINOR.PATCH`.
    public static let string = "0.2.0"

    /// What `--version` prints: the program, the release and the tz database in use
    /// (`phone 0.2.0 (tz database 2026f at /usr/share/zoneinfo)`).
    public static func line(_ program: String, zones: ZoneDatabase = .current) -> String {
        "\(program) \(string) (\(zones))"
    }
}

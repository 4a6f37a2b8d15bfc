// SPDX-License-Identifier: Apache-2.0

/// The version of the SleepTap tools, defined once for every executable's `--version`.
public enum SleepTapVersion {
    /// The release, as [Semantic Versioning](https://semver.org) `MAJOR.MINOR.PATCH`.
    public static let string = "0.2.0"
}

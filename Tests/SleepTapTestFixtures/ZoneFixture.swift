// SPDX-License-Identifier: Apache-2.0

import Foundation
package import SleepTapCore

/// tz databases built in the tests of every test target with `zic` (Debian's libc-bin) from a few lines of tz source,
/// so no test depends on the machine's tzdata.
package enum ZoneFixture {
    /// British Columbia's rules as tz 2026b and later model them: Canada's DST until
    /// 2026-11-01 02:00, then UTC-07 all year (`MST`).
    package static let vancouverNew = """
        Rule Canada 2007 max - Mar Sun>=8 2:00 1:00 D
        Rule Canada 2007 max - Nov Sun>=1 2:00 0 S
        Zone America/Vancouver -8:00 Canada P%sT 2026 Nov 1 2:00
        \t\t\t-7:00 - MST
        """

    /// British Columbia's rules before tz 2026b (2025b): Canada's DST for ever.
    package static let vancouverOld = """
        Rule Canada 2007 max - Mar Sun>=8 2:00 1:00 D
        Rule Canada 2007 max - Nov Sun>=1 2:00 0 S
        Zone America/Vancouver -8:00 Canada P%sT
        """

    /// New York (US rules since 2007) and UTC, for the calendar's cases.
    package static let newYork = """
        Rule US 2007 max - Mar Sun>=8 2:00 1:00 D
        Rule US 2007 max - Nov Sun>=1 2:00 0 S
        Zone America/New_York -5:00 US E%sT
        Zone Etc/UTC 0 - UTC
        Link Etc/UTC UTC
        """

    /// Builds `source` with `zic` into a new temp directory with a `tzdata.zi` whose first line
    /// is `# version VERSION`, and returns the directory.
    package static func build(_ source: String, version: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sleeptap-tz-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let sourcePath = directory + "/source.txt"
        try (source + "\n").write(toFile: sourcePath, atomically: true, encoding: .utf8)
        let zic = Process()
        zic.executableURL = URL(fileURLWithPath: "/usr/sbin/zic")
        zic.arguments = ["-d", directory, sourcePath]
        try zic.run()
        zic.waitUntilExit()
        guard zic.terminationStatus == 0 else { throw FixtureError.zic(zic.terminationStatus) }
        try "# version \(version)\n".write(toFile: directory + "/tzdata.zi", atomically: true, encoding: .utf8)
        return directory
    }

    /// A database built from `source` (see `build`).
    package static func database(_ source: String, version: String) throws -> ZoneDatabase {
        ZoneDatabase.directory(try build(source, version: version))
    }

    package enum FixtureError: Error { case zic(Int32) }
}

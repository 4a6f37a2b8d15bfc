// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing

/// The zone rules come from a tz database (`--tzdata DIR`, else the machine's), end to end:
/// British Columbia's permanent UTC-07 (tz 2026b) on databases built here with zic.
@Suite("tz database over ipc", .serialized)
struct TzdataTests {
    static let schedule = """
        {"schemaVersion": 1, "timeZone": "America/Vancouver", "wake": {"monday": "07:00", "tuesday": "07:00",
        "wednesday": "07:00", "thursday": "07:00", "friday": "07:00", "saturday": "07:00", "sunday": "07:00"}}
        """

    /// The first wake-up of the phone's first batch, with `--tzdata` on a database built from `source`.
    static func firstWake(_ source: String, version: String) throws -> (first: String?, started: String?) {
        let scenario = try Scenario()
        defer { scenario.close() }
        let tzdata = try ZoneFixture.build(source, version: version)
        let path = "\(scenario.dir)/schedule.json"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(Self.schedule.utf8)))
        let phone = try scenario.phone(
            ["--schedule", path, "--tzdata", tzdata, "--device-seed", "5", "--clock-start", "2026-12-01T12:00:00Z"])
        let started = try phone.expect(.phoneStarted).event.string("tzdata")
        let batch = try phone.expect(.batchGenerated) { $0.int("seq") == 1 }
        return (batch.event.string("first"), started)
    }

    @Test(
        "Vancouver 07:00 from 2026-12-01T12:00Z: the first wake-up is 14:00Z on new rules, 15:00Z with --tzdata on old ones"
    )
    func vancouverBatch() throws {
        let new = try Self.firstWake(ZoneFixture.vancouverNew, version: "2026b")
        #expect(new.first == "2026-12-01T14:00:00Z")
        #expect(new.started == "2026b")
        let old = try Self.firstWake(ZoneFixture.vancouverOld, version: "2025b")
        #expect(old.first == "2026-12-01T15:00:00Z")
        #expect(old.started == "2025b")
    }

    @Test(
        "--version names the tz database; --tzdata on a missing directory, or a zone it lacks, exits 64 with a clear error"
    )
    func versionAndErrors() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let tzdata = try ZoneFixture.build(ZoneFixture.vancouverOld, version: "2025b")
        let version = try scenario.spawn("watch", ["--version", "--tzdata", tzdata])
        #expect(version.waitForExit(timeout: 10))
        version.waitForOutputEnd(timeout: 5)
        #expect(version.otherOutputLines == ["watch \(SleepTapVersion.string) (tz database 2025b at \(tzdata))"])
        let missing = try scenario.runToExit(
            "phone",
            ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/p", "--tzdata", "/nonexistent/tz"])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("--tzdata \"/nonexistent/tz\": no such directory"), "\(missing.stderr)")
        let lacking = try scenario.runToExit(
            "watch",
            [
                "--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/w", "--tzdata", tzdata, "--time-zone",
                "Europe/Berlin",
            ])
        #expect(lacking.status == 64)
        #expect(lacking.stderr.contains("Europe/Berlin"), "\(lacking.stderr)")
    }
}

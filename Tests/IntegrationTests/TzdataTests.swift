// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import SleepTapTestFixtures
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

    @Test(
        "TZ=:America/Vancouver (POSIX's leading colon) is the machine's zone: a schedule without a zone plans 07:00 at 14:00Z on new rules"
    )
    func colonTZ() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let tzdata = try ZoneFixture.build(ZoneFixture.vancouverNew, version: "2026b")
        defer { try? FileManager.default.removeItem(atPath: tzdata) }
        let path = "\(scenario.dir)/schedule.json"
        let plain = Self.schedule.replacingOccurrences(of: #""timeZone": "America/Vancouver", "#, with: "")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(plain.utf8)))
        let phone = try scenario.spawn(
            "phone",
            [
                "--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/phone", "--schedule", path, "--tzdata",
                tzdata, "--device-seed", "5", "--clock-start", "2026-12-01T12:00:00Z",
            ], environment: ["TZ": ":America/Vancouver"])
        let started = try phone.expect(.phoneStarted).event
        #expect(started.string("timeZone") == "America/Vancouver", "\(started)")
        let batch = try phone.expect(.batchGenerated) { $0.int("seq") == 1 }
        #expect(batch.event.string("first") == "2026-12-01T14:00:00Z")
    }

    @Test(
        "TZ naming a zone --tzdata lacks or no zone at all (unless --time-zone is given), or a TZDIR that is no tz database, ends phone and watch with 64 naming it; the tools refuse such a TZDIR too"
    )
    func environmentErrors() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let tzdata = try ZoneFixture.build(ZoneFixture.vancouverNew, version: "2026b")
        defer { try? FileManager.default.removeItem(atPath: tzdata) }
        for program in ["phone", "watch"] {
            let lacking = try scenario.spawn(
                program,
                ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/\(program)", "--tzdata", tzdata],
                environment: ["TZ": "Europe/Berlin"])
            #expect(lacking.waitForExit(timeout: 10) && lacking.waitForOutputEnd(timeout: 5))
            #expect(lacking.exitStatus == 64, "\(lacking.standardError)")
            #expect(
                lacking.standardError.contains(
                    "TZ \"Europe/Berlin\": time zone \"Europe/Berlin\" is not in the tz database at \(tzdata)"),
                "\(lacking.standardError)")
            // A TZ that is no zone name (a POSIX rule string): 64 naming it, never a silent UTC;
            // with --time-zone the machine's zone is not used, and the process starts.
            let posix = try scenario.spawn(
                program, ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/\(program)-posix"],
                environment: ["TZ": "EST5EDT,M3.2.0,M11.1.0"])
            #expect(posix.waitForExit(timeout: 10) && posix.waitForOutputEnd(timeout: 5))
            #expect(posix.exitStatus == 64, "\(posix.standardError)")
            #expect(
                posix.standardError.contains("TZ \"EST5EDT,M3.2.0,M11.1.0\": not a time-zone name"),
                "\(posix.standardError)")
            let given = try scenario.spawn(
                program,
                [
                    "--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/\(program)-given", "--time-zone",
                    "America/New_York",
                ], environment: ["TZ": "EST5EDT,M3.2.0,M11.1.0"])
            _ = try given.expect(program == "phone" ? .phoneStarted : .watchStarted)
            _ = given.stop()
            let junk = try scenario.spawn(
                program, ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/\(program)"],
                environment: ["TZDIR": "/junk"])
            #expect(junk.waitForExit(timeout: 10) && junk.waitForOutputEnd(timeout: 5))
            #expect(junk.exitStatus == 64, "\(junk.standardError)")
            #expect(junk.standardError.contains("TZDIR \"/junk\": no such directory"), "\(junk.standardError)")
        }
        let tool = try scenario.spawn(
            "sleeptap-scenario", ["--twin", "/nonexistent.json"], environment: ["TZDIR": "/junk"])
        #expect(tool.waitForExit(timeout: 10) && tool.waitForOutputEnd(timeout: 5))
        #expect(tool.exitStatus == 64, "\(tool.standardError)")
        #expect(tool.standardError.contains("sleeptap-scenario: TZDIR \"/junk\": no such directory"))
    }

    @Test("--version --tzdata=DIR names DIR's database; --version with a --tzdata that is no directory exits 64")
    func versionEqualsForm() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let tzdata = try ZoneFixture.build(ZoneFixture.vancouverOld, version: "2025b")
        defer { try? FileManager.default.removeItem(atPath: tzdata) }
        for program in ["phone", "watch"] {
            let version = try scenario.spawn(program, ["--version", "--tzdata=\(tzdata)"])
            #expect(version.waitForExit(timeout: 10) && version.waitForOutputEnd(timeout: 5))
            #expect(
                version.otherOutputLines == ["\(program) \(SleepTapVersion.string) (tz database 2025b at \(tzdata))"])
            let bad = try scenario.runToExit(program, ["--version", "--tzdata", "/nonexistent/tz"])
            #expect(bad.status == 64)
            #expect(bad.stderr.contains("--tzdata \"/nonexistent/tz\": no such directory"), "\(bad.stderr)")
        }
    }

    @Test("sleeptap-fleet's summary names the tz database its devices' rules came from, in text and --json")
    func fleetSummary() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        // The machine's zones under a database whose version line says 2099z: the summary reads it.
        let tzdir = scenario.dir + "/tz"
        try FileManager.default.createDirectory(atPath: tzdir, withIntermediateDirectories: true)
        let machine = ZoneDatabase.process.directory
        for entry in try FileManager.default.contentsOfDirectory(atPath: machine) where entry != "tzdata.zi" {
            try FileManager.default.createSymbolicLink(
                atPath: tzdir + "/" + entry, withDestinationPath: machine + "/" + entry)
        }
        try "# version 2099z\n".write(toFile: tzdir + "/tzdata.zi", atomically: true, encoding: .utf8)
        for json in [false, true] {
            let child = try scenario.spawn(
                "sleeptap-fleet",
                ["--devices", "2", "--days", "1", "--seed", "5", "--out", scenario.dir + "/f\(json)"]
                    + (json ? ["--json"] : []), environment: ["TZDIR": tzdir])
            #expect(child.waitForExit(timeout: 120) && child.waitForOutputEnd(timeout: 5))
            #expect(child.exitStatus == 0, "\(child.standardError)")
            let output = (child.otherOutputLines + child.outputLines.map(\.text)).joined(separator: "\n")
            if json {
                let object = try #require(
                    try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
                #expect(object["tzdata"] as? String == "2099z", "\(object)")
            } else {
                #expect(output.contains("  zone rules: tz database 2099z at \(tzdir)"), "\(output)")
            }
        }
    }
}

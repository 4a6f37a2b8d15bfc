// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCommandLine
import SleepTapCore
import SleepTapTestFixtures
import Testing

@testable import SleepTapRuntime

/// What is wrong with a tz database, a zone's file, `TZ` or `TZDIR` is said, naming it, never
/// read as an unknown zone or left to Foundation's own rules.
@Suite("Command-line zone errors")
struct ZoneErrorTests {
    static let base = ["--endpoint", "ipc:///tmp/s.sock", "--state-dir", "/tmp/st"]

    /// A database with Vancouver's new rules, an empty `America/Empty` and a garbage `America/Broken`.
    static func damaged() throws -> String {
        let directory = try ZoneFixture.build(ZoneFixture.vancouverNew, version: "2026b")
        #expect(FileManager.default.createFile(atPath: directory + "/America/Empty", contents: Data()))
        #expect(FileManager.default.createFile(atPath: directory + "/America/Broken", contents: Data("TZif2 no".utf8)))
        return directory
    }

    static func message(_ arguments: [String], watch: Bool = false) -> String? {
        do throws(UsageError) {
            if watch {
                _ = try CommandLineParser.parseWatch(arguments)
            } else {
                _ = try CommandLineParser.parsePhone(arguments)
            }
            return nil
        } catch {
            return error.message
        }
    }

    @Test(
        "--time-zone of a zone whose file is empty or not TZif names the file and what is wrong, not 'unknown zone'; a zone the database lacks still says so"
    )
    func corruptZoneFile() throws {
        let directory = try Self.damaged()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let empty = try #require(Self.message(Self.base + ["--tzdata", directory, "--time-zone", "America/Empty"]))
        #expect(empty.contains("\(directory)/America/Empty is empty (0 bytes)"), "\(empty)")
        #expect(!empty.contains("not a known"), "\(empty)")
        let broken = try #require(
            Self.message(Self.base + ["--tzdata", directory, "--time-zone", "America/Broken"], watch: true))
        #expect(broken.contains("not a valid TZif file (RFC 8536): \(directory)/America/Broken:"), "\(broken)")
        let lacking = try #require(Self.message(Self.base + ["--tzdata", directory, "--time-zone", "Europe/Berlin"]))
        #expect(lacking.contains("unknown time zone \"Europe/Berlin\": not in the tz database 2026b at \(directory)"))
        // The schedule file's timeZone says the same.
        let database = ZoneDatabase.directory(directory)
        ZoneDatabase.$scoped.withValue(database) {
            do {
                _ = try ScheduleFile.decode(
                    Data(#"{"schemaVersion": 1, "timeZone": "America/Empty", "wake": {"monday": "07:00"}}"#.utf8))
                Issue.record("an empty zone file was accepted")
            } catch {
                #expect("\(error)".contains("\(directory)/America/Empty is empty"), "\(error)")
            }
        }
    }

    @Test(
        "TZ naming a zone the database lacks, or no zone name the wire carries, is an error naming TZ; TZ=:Zone, a path and a link are read"
    )
    func machineZone() throws {
        let directory = try ZoneFixture.build(ZoneFixture.vancouverNew, version: "2026b")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = ZoneDatabase.directory(directory)
        #expect(throws: UsageError.self) { try MachineZone.named(in: ["TZ": "Europe/Berlin"], database: database) }
        do {
            _ = try MachineZone.named(in: ["TZ": ":Europe/Berlin"], database: database)
            Issue.record("a TZ the database lacks was accepted")
        } catch {
            #expect(error.message.contains("TZ \":Europe/Berlin\""), "\(error.message)")
            #expect(error.message.contains("\"Europe/Berlin\" is not in the tz database at \(directory)"))
        }
        // POSIX's leading colon: the name after it.
        let colon = try MachineZone.named(in: ["TZ": ":America/Vancouver"], database: database)
        #expect(colon?.identifier == "America/Vancouver")
        let file = try MachineZone.named(in: ["TZ": ":\(directory)/America/Vancouver"], database: database)
        #expect(file?.identifier == "America/Vancouver")
        // An absolute path without the colon names its zone too (Foundation would give UTC).
        let path = try MachineZone.named(in: ["TZ": "\(directory)/America/Vancouver"], database: database)
        #expect(path?.identifier == "America/Vancouver")
        // The path made canonical: `//`, `/./`, `/../`, a database named with a trailing slash.
        for spelling in ["\(directory)//America/Vancouver", "\(directory)/./America/../America/Vancouver"] {
            #expect(try MachineZone.named(in: ["TZ": spelling], database: database)?.identifier == "America/Vancouver")
        }
        let slashed = ZoneDatabase.directory(directory + "/")
        #expect(
            try MachineZone.named(in: ["TZ": "\(directory)/America/Vancouver"], database: slashed)?.identifier
                == "America/Vancouver")
        // A link outside the database into it (`TZ=:/etc/localtime`) names the zone it points to.
        let outside = directory + "-localtime"
        #expect(symlink(directory + "/America/Vancouver", outside) == 0)
        defer { unlink(outside) }
        #expect(try MachineZone.named(in: ["TZ": ":" + outside], database: database)?.identifier == "America/Vancouver")
        // A link of the database to a zone is that zone (the wire carries its name).
        #expect(symlink("America/Vancouver", directory + "/Canada") == 0)
        #expect(try MachineZone.named(in: ["TZ": "Canada"], database: database)?.identifier == "America/Vancouver")
        // Foundation's own reading stands for a plain known zone and no TZ.
        #expect(try MachineZone.named(in: ["TZ": "America/Vancouver"], database: database) == nil)
        #expect(try MachineZone.named(in: [:], database: database) == nil)
        #expect(try MachineZone.named(in: ["TZ": "UTC"], database: database) == nil)
        // What the wire cannot carry is an error naming TZ, never a silent UTC: a POSIX rule
        // string, an abbreviation, a name with a space, a path out of the database.
        for value in [
            "EST5EDT", "EST5EDT,M3.2.0,M11.1.0", "<+0330>-3:30", "America/Vancouver ", "CET", "../../../etc/passwd",
            "/etc/passwd",
        ] {
            do {
                _ = try MachineZone.named(in: ["TZ": value], database: database)
                Issue.record("TZ \(value) was accepted")
            } catch {
                #expect(error.message.hasPrefix("TZ \"\(value)\": not a time-zone name"), "\(error.message)")
            }
        }
    }

    @Test("--tzdata=DIR is read as --tzdata DIR (the database, and so --version's, is DIR's)")
    func equalsForm() throws {
        let directory = try ZoneFixture.build(ZoneFixture.vancouverOld, version: "2025b")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try zoneDatabaseFlag(in: ["--tzdata=\(directory)"])?.version == "2025b")
        #expect(try zoneDatabaseFlag(in: ["--tzdata=/elsewhere", "--tzdata", directory])?.directory == directory)
        #expect(throws: UsageError.self) { try zoneDatabaseFlag(in: ["--tzdata="]) }
        guard case .run(let options) = try CommandLineParser.parsePhone(Self.base + ["--tzdata=\(directory)"]) else {
            Issue.record("expected options")
            return
        }
        #expect(options.zoneDatabase?.version == "2025b")
    }

    @Test(
        "--tzdata on a directory with no TZif file in it or one level below exits 64, as TZDIR does; a one-zone database is taken"
    )
    func tzdataWithoutDatabase() throws {
        let root = NSTemporaryDirectory() + "sleeptap-tzdata-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root + "/America", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        func refusal() -> String? {
            do {
                _ = try zoneDatabaseFlag(in: ["--tzdata", root])
                return nil
            } catch {
                return error.message
            }
        }
        #expect(refusal()?.contains("\": holds no tz database (no TZif file in it or one directory below") == true)
        // Files that are not TZif do not make a database, whatever their names.
        try Data("not a zone".utf8).write(to: URL(fileURLWithPath: root + "/America/Vancouver"))
        try Data("hello".utf8).write(to: URL(fileURLWithPath: root + "/UTC"))
        try Data("# version 2099z".utf8).write(to: URL(fileURLWithPath: root + "/tzdata.zi"))
        #expect(refusal() != nil)
        // One TZif file one level below does (a directory zic wrote for a single zone).
        let built = try ZoneFixture.build(ZoneFixture.vancouverOld, version: "2025b")
        defer { try? FileManager.default.removeItem(atPath: built) }
        try FileManager.default.removeItem(atPath: root + "/America/Vancouver")
        try FileManager.default.copyItem(atPath: built + "/America/Vancouver", toPath: root + "/America/Vancouver")
        #expect(refusal() == nil)
        #expect(try zoneDatabaseFlag(in: ["--tzdata", "/usr/share/zoneinfo"]) != nil)
    }

    @Test(
        "A zone whose path holds a FIFO, a directory or a looping link is said as such, not as a zone the database lacks"
    )
    func unreadableZoneFile() throws {
        let root = NSTemporaryDirectory() + "sleeptap-zones-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root + "/America/Dir", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(mkfifo(root + "/America/Fifo", 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: root + "/America/Loop", withDestinationPath: "Loop")
        let database = ZoneDatabase.directory(root)
        func reason(_ zone: String) -> String {
            do {
                _ = try database.rules(for: zone)
                return "no error"
            } catch {
                return error.description
            }
        }
        #expect(reason("America/Fifo").hasSuffix("/America/Fifo is not a regular file (a FIFO, a socket or a device)"))
        #expect(reason("America/Dir").hasSuffix("/America/Dir is a directory, not a TZif file"))
        #expect(reason("America/Loop").contains("/America/Loop is a link that cannot be followed ("))
        #expect(reason("America/Nowhere") == "time zone \"America/Nowhere\" is not in the tz database at \(root)")
    }

    @Test("TZDIR that is not a directory, or a directory without a tz database, is said; unset or a real one is not")
    func tzdir() throws {
        let junk = try #require(ZoneDatabase.systemDirectoryProblem(in: ["TZDIR": "/junk/nowhere"]))
        #expect(junk.hasPrefix("TZDIR \"/junk/nowhere\": no such directory"), "\(junk)")
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("tzdir-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let hollow = try #require(ZoneDatabase.systemDirectoryProblem(in: ["TZDIR": empty]))
        #expect(hollow.contains("holds no tz database"), "\(hollow)")
        let good = try ZoneFixture.build(ZoneFixture.vancouverOld, version: "2025b")
        defer { try? FileManager.default.removeItem(atPath: good) }
        #expect(ZoneDatabase.systemDirectoryProblem(in: ["TZDIR": good]) == nil)
        #expect(ZoneDatabase.systemDirectoryProblem(in: [:]) == nil)
        #expect(ZoneDatabase.systemDirectoryProblem(in: ["TZDIR": ""]) == nil)
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapOS
import Testing

@testable import SleepTapRuntime

/// os.json, the simulated OS's own state file, and how the OS flags meet a stored OS at a restart.
@Suite("The simulated OS's state file and the flags at a restart")
struct OSStateFileTests {
    static let t0 = ISO8601.date("2026-06-01T08:00:00Z")!
    static let task = PhoneAppConfiguration().taskIdentifier

    static func options(_ extra: [String]) throws -> OSOptions {
        guard case .run(let options) = try CommandLineParser.parsePhone(OptionEffectTests.base + extra) else {
            Issue.record("\(extra) parsed as a help request")
            throw CancellationError()
        }
        return options.os
    }

    /// A launched iOS OS (seed 9) with the refresh request submitted, written to and read back
    /// from os.json in a temp dir.
    static func storedOS(_ dir: String) throws -> (stored: SimulatedOS, written: SimulatedOS) {
        var os = try options(["--os-seed", "9"]).makeOS(taskIdentifier: task)
        os.appLaunched(at: t0, byUser: true)
        #expect(try os.register(identifier: task, at: t0))
        os.finishLaunching(at: t0)
        try os.submit(identifier: task, earliestBeginDate: t0.addingTimeInterval(3_600.25), at: t0)
        let file = StateFile<SimulatedOS>(path: dir + "/os.json", dateFormat: .secondsSince1970)
        try file.save(os)
        return (try #require(try file.load()), os)
    }

    @Test("os.json keeps instants exactly: the planned launch read back is the one written")
    func exactInstants() throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (stored, written) = try Self.storedOS(dir)
        let planned = try #require(written.nextLaunch(after: Self.t0))
        #expect(stored.nextLaunch(after: Self.t0) == planned)
        #expect(stored.status().map(\.1) == written.status().map(\.1))
        // ISO 8601 to the second (the other state files' format) would move the 0.25 s.
        let rounded = StateFile<SimulatedOS>(path: dir + "/rounded.json")
        try rounded.save(written)
        let earliest = try #require(try rounded.load()).status().first { $0.0 == "earliestBeginDate" }?.1
        #expect(earliest != .date(Self.t0.addingTimeInterval(3_600.25)))
    }

    @Test("An os.json of another version is named by its version, not by a field it lacks")
    func otherVersion() throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/os.json"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(#"{"version": 99}"#.utf8)))
        let file = StateFile<SimulatedOS>(path: path, dateFormat: .secondsSince1970)
        do {
            _ = try file.load()
            Issue.record("a version-99 os.json was read")
        } catch {
            #expect(error.reason.contains("field version = 99: this build reads version 1"), "\(error.reason)")
            #expect(!error.reason.contains("missing field"), "\(error.reason)")
        }
    }

    @Test("saveIfChanged writes only when the value's bytes changed, and again after a failed write")
    func saveIfChanged() throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = StateFile<PhoneSyncState>(path: dir + "/s.json")
        var last: Data?
        #expect(try file.saveIfChanged(PhoneSyncState(lastSeq: 1), last: &last))
        #expect(try !file.saveIfChanged(PhoneSyncState(lastSeq: 1), last: &last))
        #expect(try file.saveIfChanged(PhoneSyncState(lastSeq: 2), last: &last))
        #expect(try file.load()?.lastSeq == 2)
        // A failed write leaves `last` alone: the next call writes.
        let blocked = StateFile<PhoneSyncState>(path: dir + "/missing/s.json")
        var blockedLast: Data?
        #expect(throws: FileError.self) { try blocked.saveIfChanged(PhoneSyncState(lastSeq: 3), last: &blockedLast) }
        #expect(blockedLast == nil)
    }

    @Test("Flags at a restart: none keeps the stored OS; --os-seed does not reseed it")
    func noFlagsKeepStored() throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (stored, _) = try Self.storedOS(dir)
        for extra in [[], ["--os-seed", "1"]] {
            let os = try Self.options(extra).resolve(stored: stored, taskIdentifier: Self.task, at: Self.t0)
            #expect(os.seed == 9, "\(extra)")
            #expect(os.nextLaunch(after: Self.t0) == stored.nextLaunch(after: Self.t0), "\(extra)")
            #expect(os.registrationMode == .early)
        }
        // No stored OS: the flags make a new one.
        let fresh = try Self.options(["--os-seed", "4"]).resolve(stored: nil, taskIdentifier: Self.task, at: Self.t0)
        #expect(fresh.seed == 4 && fresh.nextLaunch(after: Self.t0) == nil)
    }

    @Test("Flags at a restart override the stored value: --registration installs that app, --budget sets the budget")
    func flagsOverride() throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (stored, _) = try Self.storedOS(dir)
        var os = try Self.options(["--registration", "late-silent", "--budget", "2"]).resolve(
            stored: stored, taskIdentifier: Self.task, at: Self.t0)
        #expect(os.registrationMode == .lateSilent)
        #expect(os.drainTrace().map(\.event.name) == [.osAppUpdated, .osWhy])
        #expect(os.nextLaunch(after: Self.t0) == stored.nextLaunch(after: Self.t0), "the request is kept")
        guard case .ios(let scheduler) = os.device else { throw CancellationError() }
        #expect(scheduler.configuration.runtimeBudget == 2)
    }

    @Test("A flag that contradicts the stored device is a usage error naming both")
    func contradictions() throws {
        let dir = try StateFileTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (stored, _) = try Self.storedOS(dir)
        #expect {
            _ = try Self.options(["--platform", "android"]).resolve(
                stored: stored, taskIdentifier: Self.task, at: Self.t0)
        } throws: { error in
            "\(error)".contains("--platform android") && "\(error)".contains("holds an ios device")
        }
        let android = try Self.options(["--platform", "android"]).makeOS(taskIdentifier: Self.task)
        #expect {
            _ = try Self.options(["--registration", "late-crash"]).resolve(
                stored: android, taskIdentifier: Self.task, at: Self.t0)
        } throws: { error in
            "\(error)".contains("--registration late-crash") && "\(error)".contains("android device")
        }
    }
}

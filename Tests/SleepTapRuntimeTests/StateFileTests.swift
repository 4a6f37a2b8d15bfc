// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import Testing

@testable import SleepTapRuntime

@Suite("State files")
struct StateFileTests {
    static func tempDir() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sleeptap-\(UUID().uuidString)").path
        try AtomicFile.ensureDirectory(dir)
        return dir
    }

    @Test("Save then load returns the same state; no temp file is left behind")
    func roundTrip() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = StateFile<WatchSyncState>(path: dir + "/watch.json")
        #expect(try file.load() == nil)
        let batch = WakeBatch(
            seq: 4, generatedAt: ISO8601.date("2025-03-06T17:00:00Z")!, timeZone: "UTC",
            entries: [
                WakeEntry(
                    wake: ISO8601.date("2025-03-07T07:00:00Z")!, localDate: "2025-03-07", localTime: "07:00",
                    timeZone: "UTC")
            ])
        let state = WatchSyncState(lastAppliedSeq: 4, batch: batch)
        try file.save(state)
        #expect(try file.load() == state)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["watch.json"])
    }

    @Test(
        "phone.json stores the epoch (and the device seed, and the outbox's epoch) as the wire's 16 hex digits: 11730342539650865640 round-trips, as read by a double-based reader too; an old file with a number is read exactly"
    )
    func epochAsHex() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = StateFile<PhoneSyncState>(path: dir + "/phone.json")
        let epoch: UInt64 = 11_730_342_539_650_865_640
        let batch = WakeBatch(
            epoch: epoch, seq: 3, generatedAt: ISO8601.date("2025-03-06T17:00:00Z")!, timeZone: "UTC", entries: [])
        let state = PhoneSyncState(epoch: epoch, lastSeq: 3, outbox: batch, deviceSeed: epoch - 1)
        try file.save(state)
        #expect(try file.load() == state)
        // What JSONSerialization (doubles, as JavaScript and jq read numbers) sees in the file.
        let data = try #require(FileManager.default.contents(atPath: file.path))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["epoch"] as? String == "a2ca8c63c98b19e8")
        #expect(object["deviceSeed"] as? String == Hex64.string(epoch - 1))
        let outbox = try #require(object["outbox"] as? [String: Any])
        #expect(outbox["epoch"] as? String == "a2ca8c63c98b19e8")
        // A file from before: numbers, read from their digits.
        let old = "{\"epoch\":11730342539650865640,\"lastSeq\":3,\"acked\":false,\"deviceSeed\":11730342539650865639}"
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data(old.utf8)))
        let loaded = try #require(try file.load())
        #expect(loaded.epoch == epoch)
        #expect(loaded.deviceSeed == epoch - 1)
        // A hex string that is not 16 lower-case digits is refused, naming the value.
        let bad = "{\"epoch\":\"A2CA\",\"lastSeq\":3,\"acked\":false}"
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data(bad.utf8)))
        #expect {
            _ = try file.load()
        } throws: { error in
            (error as? FileError)?.reason.contains("A2CA") == true
        }
    }

    @Test(
        "A failed write leaves no staging file (.prev.tmp-PID) behind, nor does the next successful one: only the file and its .prev"
    )
    func noStagingAfterFailedWrite() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = StateFile<PhoneSyncState>(path: dir + "/phone.json")
        try file.save(PhoneSyncState(lastSeq: 1))
        // The temp name of the next write is taken by a directory: open(2) fails (EISDIR), as a
        // write fails on a full disk.
        let blocker = file.path + ".tmp-\(getpid())"
        try FileManager.default.createDirectory(atPath: blocker, withIntermediateDirectories: false)
        for seq in [2, 3] as [UInt64] {
            // The error names the state file (what the user knows), and the temporary file.
            let error = #expect(throws: FileError.self) { try file.save(PhoneSyncState(lastSeq: seq)) }
            #expect(error?.path == file.path && error?.reason.contains(blocker) == true, "\(String(describing: error))")
            let names = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
            #expect(names == ["phone.json", "phone.json.prev", "phone.json.tmp-\(getpid())"], "after write \(seq)")
        }
        try FileManager.default.removeItem(atPath: blocker)
        try file.save(PhoneSyncState(lastSeq: 4))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["phone.json", "phone.json.prev"])
        #expect(try file.load()?.lastSeq == 4)
    }

    @Test("An ISO 8601 state file's instants are the text of JSONEncoder's .iso8601, over 5,000 seeded instants")
    func isoText() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = StateFile<[String: Date]>(path: dir + "/dates.json")
        let plain = JSONEncoder()
        plain.outputFormatting = [.sortedKeys]
        plain.dateEncodingStrategy = .iso8601
        var state: UInt64 = 5
        var instants: [String: Date] = [:]
        for index in 0..<5_000 {
            state = state &+ 0x9e37_79b9_7f4a_7c15
            // 1970 to 2100, whole seconds and fractions (a fraction of a second is dropped).
            let seconds = Double(state % 4_102_444_800) + (index % 3 == 0 ? Double(state % 1_000) / 1_000 : 0)
            instants["i\(index)"] = Date(timeIntervalSince1970: seconds)
        }
        try file.save(instants)
        let written = try Data(contentsOf: URL(fileURLWithPath: dir + "/dates.json"))
        #expect(written == (try plain.encode(instants)))
    }

    @Test("A state file that is a symbolic link is not read: moved aside, its target untouched and never quoted")
    func symbolicLink() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let secret = dir + "/secret.txt"
        try Data("SECRET words".utf8).write(to: URL(fileURLWithPath: secret))
        let path = dir + "/phone.json"
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: secret)
        let (value, recovery) = try StateFile<PhoneSyncState>(path: path).loadRecovering(validate: { _ in nil })
        #expect(value == nil)
        let reason = try #require(recovery?.reason)
        #expect(reason.contains("a symbolic link") && !reason.contains("SECRET"), "\(reason)")
        #expect(try String(contentsOfFile: secret, encoding: .utf8) == "SECRET words")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test(
        "A dangling symbolic link in the state file's place is refused and moved aside, not read as missing: the previous copy is recovered and the next save writes a regular file"
    )
    func danglingSymbolicLink() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/os.json"
        let file = StateFile<[String: Int]>(path: path)
        try file.save(["a": 1])
        try file.save(["a": 2])  // the previous copy holds 1
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/nonexistent/x")
        let (value, recovery) = try file.loadRecovering(validate: { _ in nil })
        #expect(value == ["a": 1] && recovery?.source == .previousCopy)
        let reason = try #require(recovery?.reason)
        #expect(reason.contains("is a symbolic link") && reason.contains("which does not exist"), "\(reason)")
        let aside = try #require(recovery?.movedTo)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: aside) == "/nonexistent/x")
        // A link to itself loops, and says so.
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "os.json")
        let looped = try file.loadRecovering(validate: { _ in nil }, now: Date().addingTimeInterval(1))
        #expect(looped.recovery?.reason.contains("which loops") == true, "\(String(describing: looped.recovery))")
        try file.save(["a": 3])
        var info = stat()
        #expect(lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG)
        #expect(try file.load() == ["a": 3])
    }

    @Test("A corrupt state file is reported with its path and left untouched")
    func corrupt() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/phone.json"
        let garbage = Data("{\"lastSeq\": \"many\"".utf8)
        #expect(FileManager.default.createFile(atPath: path, contents: garbage))
        #expect {
            _ = try StateFile<PhoneSyncState>(path: path).load()
        } throws: { error in
            guard let error = error as? FileError else { return false }
            return error.path == path && error.reason.hasPrefix("not a valid state file")
        }
        #expect(FileManager.default.contents(atPath: path) == garbage)
    }

    @Test("Recovery: a corrupt file is moved aside and the previous good copy is used")
    func recoverFromPrevious() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = StateFile<PhoneSyncState>(path: dir + "/phone.json")
        try file.save(PhoneSyncState(lastSeq: 1))
        try file.save(PhoneSyncState(lastSeq: 2))  // phone.json.prev now holds lastSeq 1
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data("{\"lastS".utf8)))
        let (value, recovery) = try file.loadRecovering { _ in nil }
        #expect(value?.lastSeq == 1)
        #expect(recovery?.source == .previousCopy)
        let aside = try #require(recovery?.movedTo)
        #expect(FileManager.default.contents(atPath: aside) == Data("{\"lastS".utf8))
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test(
        "Recovery: a missing file with a previous copy (crash between renames) recovers it; nothing at all starts clean"
    )
    func recoverMissing() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = StateFile<PhoneSyncState>(path: dir + "/phone.json")
        let clean = try file.loadRecovering { _ in nil }
        #expect(clean.value == nil && clean.recovery == nil)
        try file.save(PhoneSyncState(lastSeq: 3))
        try file.save(PhoneSyncState(lastSeq: 4))
        #expect(unlink(file.path) == 0)
        let (value, recovery) = try file.loadRecovering { _ in nil }
        #expect(value?.lastSeq == 3 && recovery?.source == .previousCopy && recovery?.movedTo == nil)
    }

    @Test("Recovery: a file that fails the meaning check is moved aside too; a bad previous copy means a clean start")
    func recoverInvalid() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = StateFile<PhoneSyncState>(path: dir + "/phone.json")
        try file.save(PhoneSyncState(lastSeq: 8))
        try file.save(PhoneSyncState(lastSeq: 9))
        let (value, recovery) = try file.loadRecovering { $0.lastSeq > 5 ? "lastSeq too high" : nil }
        #expect(value == nil)
        #expect(recovery?.reason == "lastSeq too high" && recovery?.source == .cleanStart)
    }

    @Test("Two corruptions within the same second leave two copies; the earlier one is never overwritten")
    func corruptCopiesUnique() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = StateFile<PhoneSyncState>(path: dir + "/phone.json")
        let second = try #require(ISO8601.date("2026-03-01T10:00:00Z"))
        var copies: [String: Data] = [:]
        for (index, garbage) in ["{\"lastS", "{\"lastSeq\": tru", "[]"].enumerated() {
            let bytes = Data(garbage.utf8)
            #expect(FileManager.default.createFile(atPath: file.path, contents: bytes))
            let (_, recovery) = try file.loadRecovering(
                validate: { _ in nil }, now: second.addingTimeInterval(0.25 * Double(index)))
            copies[try #require(recovery?.movedTo)] = bytes
        }
        #expect(copies.count == 3, "three distinct names: \(copies.keys.sorted())")
        for (path, bytes) in copies {
            #expect(FileManager.default.contents(atPath: path) == bytes, "\(path) keeps its own bytes")
        }
        #expect(copies.keys.contains(dir + "/phone.json.corrupt-2026-03-01T100000Z"))
        #expect(copies.keys.contains(dir + "/phone.json.corrupt-2026-03-01T100000Z-2"))
    }

    @Test("A missing state file with a corrupt previous copy: a clean start that says what it discarded and where")
    func missingWithCorruptPrevious() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = StateFile<PhoneSyncState>(path: dir + "/phone.json")
        let garbage = Data("{\"lastSeq\": 3, \"ack".utf8)
        #expect(FileManager.default.createFile(atPath: file.path + ".prev", contents: garbage))
        let (value, recovery) = try file.loadRecovering { _ in nil }
        #expect(value == nil)
        let report = try #require(recovery, "a clean start that discards the previous copy must be reported")
        #expect(report.source == .cleanStart && report.reason == "missing" && report.movedTo == nil)
        #expect(report.previousReason?.hasPrefix("not a valid state file") == true, "\(report)")
        let aside = try #require(report.previousMovedTo)
        #expect(aside.hasPrefix(file.path + ".prev.corrupt-"))
        #expect(FileManager.default.contents(atPath: aside) == garbage)
        #expect(!FileManager.default.fileExists(atPath: file.path + ".prev"), "a later save cannot replace it")
    }

    @Test("A corrupt state file and a previous copy that fails the meaning check: both moved aside and reported")
    func corruptWithInvalidPrevious() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = StateFile<PhoneSyncState>(path: dir + "/phone.json")
        try file.save(PhoneSyncState(lastSeq: 8))
        try file.save(PhoneSyncState(lastSeq: 9))
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data("{".utf8)))
        let (value, recovery) = try file.loadRecovering { $0.lastSeq > 5 ? "lastSeq too high" : nil }
        #expect(value == nil)
        let report = try #require(recovery)
        #expect(report.source == .cleanStart && report.previousReason == "lastSeq too high")
        #expect(FileManager.default.contents(atPath: try #require(report.movedTo)) == Data("{".utf8))
        let previous = try StateFile<PhoneSyncState>(path: try #require(report.previousMovedTo)).load()
        #expect(previous?.lastSeq == 8)
    }

    /// The pid of a process that has exited and been reaped: `kill(pid, 0)` gives ESRCH.
    static func deadPid() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        let pid = process.processIdentifier
        #expect(kill(pid, 0) == -1 && errno == ESRCH, "pid \(pid) was reused")
        return pid
    }

    @Test("Temp files of saves whose process is gone are removed; a live process's and others' are kept")
    func staleTemporaryFiles() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = StateFile<PhoneSyncState>(path: dir + "/phone.json")
        let dead = try Self.deadPid()
        let live = getpid()
        let stale = ["phone.json.tmp-\(dead)", "phone.json.prev.tmp-\(dead)"]
        let kept = [
            "phone.json.tmp-\(live)", "phone.json.prev.tmp-\(live)", "watch.json.tmp-\(dead)",
            "phone.json.tmp-x\(dead)", "phone.json", "phone.json.tmp-+\(dead)",
        ]
        for name in stale + kept {
            #expect(FileManager.default.createFile(atPath: "\(dir)/\(name)", contents: Data("{}".utf8)))
        }
        let removed = file.removeStaleTemporaryFiles()
        #expect(Set(removed) == Set(stale.map { "\(dir)/\($0)" }))
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir)) == Set(kept))
    }

    @Test("A write into a directory that vanished fails with the path and keeps nothing half-written")
    func failedWrite() throws {
        let dir = try Self.tempDir()
        try FileManager.default.removeItem(atPath: dir)
        #expect(throws: FileError.self) {
            try AtomicFile.write(Data("x".utf8), to: dir + "/state.json")
        }
        #expect(!FileManager.default.fileExists(atPath: dir))
    }

    @Test("ensureDirectory refuses a path that is a file")
    func directoryIsFile() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/plain"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        #expect(throws: FileError(path: file, reason: "exists and is not a directory")) {
            try AtomicFile.ensureDirectory(file)
        }
    }

    @Test("The mailbox hands over inputs posted from other threads, in order, and wakes its pipe")
    func mailbox() async throws {
        let mailbox = try Mailbox()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for i in 0..<100 { mailbox.post(.line("\(i)")) } }
        }
        var buffer = [UInt8](repeating: 0, count: 1)
        #expect(read(mailbox.readFD, &buffer, 1) == 1, "the pipe must be readable after a post")
        let items = mailbox.drain()
        #expect(items == (0..<100).map { .line("\($0)") })
        #expect(mailbox.drain().isEmpty)
    }
}

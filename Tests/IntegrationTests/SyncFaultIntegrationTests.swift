// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// Faults found by trying the pair as users and attackers would: a full disk under the phone,
/// and another process speaking for one side with numbers at the top of the seq space.
@Suite("sync faults over ipc", .serialized)
struct SyncFaultIntegrationTests {
    static func schedule(_ hour: Int) -> String {
        let time = String(format: "%02d:00", hour)
        let days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        let wake = days.map { "\"\($0)\": \"\(time)\"" }.joined(separator: ", ")
        return "{\"schemaVersion\": 1, \"timeZone\": \"Asia/Shanghai\", \"wake\": {\(wake)}}"
    }

    /// Every (epoch, seq) the phone sent with more than one digest.
    static func reissued(_ phone: ChildProcess) -> [String] {
        var seen: [String: String] = [:]
        var twice: [String] = []
        for event in phone.events where event.name == .batchSent {
            let key = "\(event.string("epoch") ?? "?")/\(event.int("seq") ?? -1)"
            let digest = event.string("digest") ?? "?"
            if let earlier = seen[key], earlier != digest { twice.append(key) }
            seen[key] = digest
        }
        return twice
    }

    static var canMountTmpfs: Bool { getuid() == 0 }

    @Test(
        "A full tmpfs under the phone's state dir: no seq issued twice, and once space is back the watch holds the phone's newest dates",
        .enabled(if: canMountTmpfs, "needs root to mount a 64 KiB tmpfs"))
    func fullDiskUnderThePhone() throws {
        let scenario = try Scenario()
        let stateDir = "\(scenario.dir)/phone"
        try FileManager.default.createDirectory(atPath: stateDir, withIntermediateDirectories: false)
        guard mount("tmpfs", stateDir, "tmpfs", 0, "size=64k,mode=0700") == 0 else {
            // A container without CAP_SYS_ADMIN: say so rather than pass silently.
            Issue.record("mount tmpfs failed: \(String(cString: strerror(errno)))")
            scenario.close()
            return
        }
        defer {
            scenario.close()  // processes first, then the mount
            umount2(stateDir, Int32(MNT_DETACH))
            try? FileManager.default.removeItem(atPath: scenario.dir)
        }
        let schedulePath = "\(scenario.dir)/schedule.json"
        try Self.schedule(5).write(toFile: schedulePath, atomically: true, encoding: .utf8)
        let phone = try scenario.phone(["--schedule", schedulePath], stateDir: "phone")
        let watch = try scenario.watch()
        try phone.expect(.ackReceived)
        let filler = "\(stateDir)/filler"
        var failures = 0
        for (round, hour) in (6...10).enumerated() {
            try Self.schedule(hour).write(toFile: schedulePath, atomically: true, encoding: .utf8)
            // Leave room for some refreshes and none for others. A save first turns the previous
            // copy into a link to the current file, which frees the old copy's blocks; remove it
            // so that the room left is what the next write gets.
            try? FileManager.default.removeItem(atPath: filler)
            unlink("\(stateDir)/phone.json.prev")
            var stats = statvfs()
            guard statvfs(stateDir, &stats) == 0 else { throw CancellationError() }
            let free = Int(stats.f_bavail) * Int(stats.f_frsize)
            let leave = [0, 65_536, 4_096, 0, 65_536][round]
            let fd = open(filler, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
            #expect(fd >= 0)
            // The phone may take a page between statvfs and here: fill what is left, a page less
            // each time it does not fit.
            var size = free - leave
            while size > 0, posix_fallocate(fd, 0, off_t(size)) == ENOSPC { size -= 4_096 }
            close(fd)
            let mark = phone.events.count
            phone.send(line: "open")
            phone.send(line: "status")
            try phone.expect(.phoneStatus, from: mark)
            failures += phone.events[mark...].filter { $0.name == .persistFailed }.count
        }
        #expect(failures > 0, "the disk never filled up: the test proves nothing")
        #expect(Self.reissued(phone).isEmpty, "issued twice with other dates: \(Self.reissued(phone))")
        // Space is back.
        try FileManager.default.removeItem(atPath: filler)
        let mark = phone.events.count
        phone.send(line: "open")
        let (generated, _) = try phone.expect(.batchGenerated, from: mark)
        let digest = try #require(generated.string("digest"))
        try phone.expect(.ackReceived, from: mark) { $0.string("digest") == digest }
        try watch.expect(.batchApplied) { $0.int("seq") == generated.int("seq") }
        let stored = try JSONDecoder.sleepTap.decode(
            WatchSyncState.self, from: Data(contentsOf: URL(fileURLWithPath: "\(scenario.dir)/watch/watch.json")))
        #expect(stored.batch.map { Hex64.string($0.digest) } == digest)
        #expect(stored.batch?.entries.allSatisfy { $0.localTime == "10:00" } == true)
        #expect(Self.reissued(phone).isEmpty)
    }

    @Test(
        "Another process bound at the phone's endpoint sends BATCH seq 2^53-1: after both restart, the real phone's batches are applied"
    )
    func forgedBatchDoesNotWedgeTheWatch() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        var phone = try scenario.phone(["--time-zone", "Asia/Tokyo"])
        var watch = try scenario.watch()
        let (applied, _) = try watch.expect(.batchApplied)
        let epoch = try #require(applied.string("epoch"))
        #expect(phone.stop() == 0)

        // The impostor uses the real epoch and the largest seq the wire allows.
        let context = try Context()
        defer { context.terminate() }
        try context.withSocket(.router) { impostor in
            try impostor.setLinger(milliseconds: 1_000)
            try impostor.bind(scenario.endpoint)
            var items = [PollItem.socket(impostor, events: .readable)]
            guard try poll(&items, timeoutMilliseconds: 10_000) > 0 else {
                Issue.record("the watch never said HELLO to the impostor")
                return
            }
            let hello = try impostor.receive()
            let batch = WakeBatch(
                epoch: try #require(Hex64.parse(epoch)), seq: WireCodec.maxSeq, generatedAt: Date(), timeZone: "UTC",
                entries: [])
            try impostor.send([hello[0], WireCodec.encode(.batch(batch))])
            try watch.expect(.batchApplied) { $0.int("seq") == Int(WireCodec.maxSeq) }
        }
        #expect(watch.stop() == 0)
        SingleInstanceCleanup.removeSocket(scenario.endpoint)

        phone = try scenario.phone(["--time-zone", "Asia/Tokyo"])
        watch = try scenario.watch()
        let (epochChange, _) = try phone.expect(.epochChanged)
        #expect(epochChange.string("from") == epoch)
        let (reissued, _) = try watch.expect(.batchApplied) { $0.int("seq") != Int(WireCodec.maxSeq) }
        #expect((reissued.int("seq") ?? .max) < 10 && reissued.string("epoch") != epoch)
        let mark = phone.events.count
        phone.send(line: "open")
        let (next, _) = try phone.expect(.batchGenerated, from: mark)
        try watch.expect(.batchApplied) {
            $0.int("seq") == next.int("seq") && $0.string("epoch") == next.string("epoch")
        }
        try phone.expect(.ackReceived, from: mark) { $0.int("seq") == next.int("seq") }
    }

    @Test("A HELLO claiming lastSeq 2^53-2 does not move the phone's counter; the real watch's next batch is applied")
    func forgedHelloDoesNotMoveThePhone() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone(["--time-zone", "Asia/Tokyo"])
        let (started, _) = try phone.expect(.batchGenerated)
        let epoch = try #require(started.string("epoch"))
        let context = try Context()
        defer { context.terminate() }
        try context.withSocket(.dealer) { forger in
            try forger.setLinger(milliseconds: 1_000)
            try forger.setRoutingId(Array("watch".utf8))
            try forger.connect(scenario.endpoint)
            let claim = BatchRef(epoch: try #require(Hex64.parse(epoch)), seq: WireCodec.maxSeq - 1, digest: 7)
            try forger.send(WireCodec.encode(.hello(claim)))
            try phone.expect(.epochChanged)
        }
        let watch = try scenario.watch()
        let (applied, _) = try watch.expect(.batchApplied)
        #expect((applied.int("seq") ?? .max) < 10)
        let mark = phone.events.count
        phone.send(line: "open")
        let (next, _) = try phone.expect(.batchGenerated, from: mark)
        #expect((next.int("seq") ?? .max) < 10)
        try watch.expect(.batchApplied) { $0.int("seq") == next.int("seq") }
        try phone.expect(.ackReceived, from: mark) { $0.int("seq") == next.int("seq") }
    }
}

/// Removes a socket file a stopped process left (an impostor does not clean up after itself).
enum SingleInstanceCleanup {
    static func removeSocket(_ endpoint: String) {
        guard endpoint.hasPrefix("ipc://") else { return }
        unlink(String(endpoint.dropFirst("ipc://".count)))
    }
}

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// tcp with CURVE: only the paired watch gets in, a wrong key is said clearly, nothing applied.
@Suite("CURVE pairing over tcp", .serialized)
struct CurveLinkTests {
    /// Runs `phone pair --dir DIR` and checks it succeeded.
    static func pair(_ scenario: Scenario, _ name: String) throws -> String {
        let dir = "\(scenario.dir)/\(name)"
        let result = try scenario.runToExit("phone", ["pair", "--dir", dir])
        #expect(result.status == 0, "\(result.stderr)")
        return dir
    }

    /// Starts a CURVE phone on an ephemeral loopback port. - Returns: the phone and its endpoint.
    static func phone(_ scenario: Scenario, keys: String) throws -> (ChildProcess, String) {
        let phone = try scenario.spawn(
            "phone", ["--endpoint", "tcp://127.0.0.1:*", "--state-dir", "\(scenario.dir)/phone", "--keys", keys])
        let started = try phone.expect("phone.started").event
        #expect(started.string("security") == "curve")
        return (phone, try #require(started.string("boundEndpoint")))
    }

    @Test("phone pair writes four 0600 files in a 0700 directory and never overwrites them")
    func pairFiles() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let dir = try Self.pair(scenario, "keys")
        var info = stat()
        #expect(stat(dir, &info) == 0 && info.st_mode & 0o777 == 0o700)
        for name in ["phone.key", "watch.key", "phone.pub", "watch.pub"] {
            #expect(stat("\(dir)/\(name)", &info) == 0 && info.st_mode & 0o777 == 0o600, "\(name)")
        }
        let before = FileManager.default.contents(atPath: "\(dir)/phone.key")
        let again = try scenario.runToExit("phone", ["pair", "--dir", dir])
        #expect(again.status == 73)
        #expect(again.stderr.contains("never overwritten"))
        #expect(FileManager.default.contents(atPath: "\(dir)/phone.key") == before)
    }

    @Test("Plain tcp is refused unless --insecure; a secret key others can read is refused")
    func plaintextRefused() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let plain = try scenario.runToExit(
            "phone", ["--endpoint", "tcp://127.0.0.1:*", "--state-dir", "\(scenario.dir)/p"])
        #expect(plain.status == 64)
        #expect(plain.stderr.contains("tcp needs CURVE"), "\(plain.stderr)")
        let dir = try Self.pair(scenario, "keys")
        #expect(chmod("\(dir)/phone.key", 0o644) == 0)
        let loose = try scenario.runToExit(
            "phone", ["--endpoint", "tcp://127.0.0.1:*", "--state-dir", "\(scenario.dir)/p", "--keys", dir])
        #expect(loose.status == 65)
        #expect(loose.stderr.contains("readable by you only"), "\(loose.stderr)")
    }

    @Test("The paired watch exchanges batches over CURVE")
    func paired() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let keys = try Self.pair(scenario, "keys")
        let (phone, endpoint) = try Self.phone(scenario, keys: keys)
        let watch = try scenario.spawn(
            "watch", ["--endpoint", endpoint, "--state-dir", "\(scenario.dir)/watch", "--keys", keys])
        try watch.expect("batch.applied") { $0.int("seq") == 1 }
        try phone.expect("ack.received") { $0.int("seq") == 1 }
    }

    @Test("An unpaired watch key is refused by the phone (ZAP) and told so; nothing is applied")
    func unpairedKey() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let keys = try Self.pair(scenario, "keys")
        let other = try Self.pair(scenario, "other")
        let (phone, endpoint) = try Self.phone(scenario, keys: keys)
        let mixed = "\(scenario.dir)/mixed"
        #expect(mkdir(mixed, 0o700) == 0)
        try FileManager.default.copyItem(atPath: "\(other)/watch.key", toPath: "\(mixed)/watch.key")
        try FileManager.default.copyItem(atPath: "\(keys)/phone.pub", toPath: "\(mixed)/phone.pub")
        let watch = try scenario.spawn(
            "watch", ["--endpoint", endpoint, "--state-dir", "\(scenario.dir)/watch", "--keys", mixed])
        let failed = try watch.expect("link.handshake_failed").event
        #expect(failed.string("reason")?.contains("not paired") == true, "\(failed)")
        try phone.expect("peer.refused")
        #expect(!watch.events.contains { $0.name == "batch.applied" })
    }

    @Test("A wrong phone key gives a clear error within a bounded time; nothing is applied")
    func wrongServerKey() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let keys = try Self.pair(scenario, "keys")
        let other = try Self.pair(scenario, "other")
        let (_, endpoint) = try Self.phone(scenario, keys: keys)
        let mixed = "\(scenario.dir)/mixed"
        #expect(mkdir(mixed, 0o700) == 0)
        try FileManager.default.copyItem(atPath: "\(keys)/watch.key", toPath: "\(mixed)/watch.key")
        try FileManager.default.copyItem(atPath: "\(other)/phone.pub", toPath: "\(mixed)/phone.pub")
        let watch = try scenario.spawn(
            "watch", ["--endpoint", endpoint, "--state-dir", "\(scenario.dir)/watch", "--keys", mixed])
        let said = watch.waitFor(
            anyOf: ["link.handshake_failed", "link.handshake_timeout"], timeout: Scenario.deadline)
        #expect(said != nil, "no handshake error within \(Scenario.deadline) s")
        // Failed handshakes repeat at every reconnect; they must not flood the output.
        #expect(watch.events.filter { $0.name == "link.down" }.count <= 1)
        #expect(watch.events.filter { $0.name == "link.handshake_failed" }.count <= 2)
        watch.stop()
        watch.waitForOutputEnd(timeout: 5)
        #expect(watch.standardError.contains("phone"), "\(watch.standardError)")
        #expect(!watch.events.contains { $0.name == "batch.applied" })
    }

    @Test("A tcp peer without CURVE gets nothing in, and the phone keeps serving the paired watch")
    func plaintextPeer() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let keys = try Self.pair(scenario, "keys")
        let (phone, endpoint) = try Self.phone(scenario, keys: keys)
        let context = try Context()
        defer { context.terminate() }
        try context.withSocket(.dealer) { intruder in
            try intruder.setLinger(milliseconds: 0)
            try intruder.setRoutingId(Array("watch".utf8))
            try intruder.connect(endpoint)
            try intruder.send(WireCodec.encode(.hello(nil)))
            var items = [PollItem.socket(intruder, events: .readable)]
            // Nothing ever comes back: give it the time a real exchange takes many times over.
            #expect(try poll(&items, timeoutMilliseconds: 1_500) == 0, "the phone answered a plaintext peer")
        }
        let beforeWatch = phone.events.count
        #expect(!phone.events.contains { $0.name == "message.received" }, "a plaintext message got through")
        let watch = try scenario.spawn(
            "watch", ["--endpoint", endpoint, "--state-dir", "\(scenario.dir)/watch", "--keys", keys])
        try watch.expect("batch.applied")
        try phone.expect("message.received", from: beforeWatch)
    }
}

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

    /// The watch's link-trouble events: each says something went wrong with the link.
    static let linkTrouble: Set<String> = ["link.down", "link.handshake_failed", "link.handshake_timeout"]

    /// Counts the watch's link-trouble events from index `start` over `window` wall seconds.
    ///
    /// Waits on the event stream until the window closes, or sooner when more than `limit` arrive
    /// (a flood shows at once). Then a `status` probe: the watch writes its answer after every
    /// event before it, so once `cache.status` is read the counts are complete.
    /// - Returns: the count per event name (absent: 0).
    static func countLinkTrouble(
        _ watch: ChildProcess, from start: Int, window: TimeInterval, limit: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [String: Int] {
        let deadline = Date().addingTimeInterval(window)
        var next = start
        var seen = 0
        while seen <= limit,
            let hit = watch.waitFor(anyOf: linkTrouble, from: next, timeout: deadline.timeIntervalSinceNow)
        {
            seen += 1
            next = hit.index + 1
        }
        watch.send(line: "status")
        let probe = try watch.expect("cache.status", from: next, sourceLocation: sourceLocation)
        let events = watch.events[start..<probe.index].filter { linkTrouble.contains($0.name) }
        return Dictionary(grouping: events, by: \.name).mapValues(\.count)
    }

    /// A tcp endpoint on the loopback where nothing listens: a port the kernel just gave and took back.
    static func freeEndpoint() throws -> String {
        let context = try Context()
        defer { context.terminate() }
        return try context.withSocket(.router) { probe in
            try probe.setLinger(milliseconds: 0)
            try probe.bind("tcp://127.0.0.1:*")
            let endpoint = try probe.lastEndpoint()
            try probe.unbind(endpoint)
            return endpoint
        }
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
        let (failed, first) = try watch.expect("link.handshake_failed")
        #expect(failed.string("reason")?.contains("not paired") == true, "\(failed)")
        try phone.expect("peer.refused")
        // libzmq retries the refused handshake at every reconnect (50 ms, backing off to 1 s):
        // over 4 s a flood would print about 4; the watch says each reason once per 30 s.
        let counts = try Self.countLinkTrouble(watch, from: first, window: 4, limit: 3)
        #expect(counts["link.handshake_failed"] == 1, "\(counts)")
        #expect(counts["link.down", default: 0] == 0, "the link was never up: \(counts)")
        #expect(counts["link.handshake_timeout", default: 0] <= 1, "\(counts)")
        #expect(!watch.events.contains { $0.name == "batch.applied" })
    }

    @Test("A wrong phone key is reported within 5 s as a key problem, once, without a flood; nothing is applied")
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
        try watch.expect("watch.started")
        // docs/protocol.md promises the report within 5 s. The 1 s over it is the trip of the line
        // from the watch's stdout through a pipe to the reader thread on a loaded 2-core CI machine;
        // the watch's own timer is 5 s.
        let said = try #require(
            watch.waitFor(anyOf: ["link.handshake_failed", "link.handshake_timeout"], timeout: 5 + 1),
            "no handshake error within 5 s (+1 s margin); events: \(watch.events.map(\.name))")
        #expect(said.event.string("reason")?.contains("phone.pub") == true, "keys not blamed: \(said.event)")
        // Failed handshakes repeat at every reconnect (about 13 a second); over 3 s a flood shows.
        let counts = try Self.countLinkTrouble(watch, from: said.index, window: 3, limit: 3)
        #expect(counts["link.down", default: 0] == 0, "the link was never up: \(counts)")
        #expect(counts["link.handshake_failed", default: 0] <= 1, "\(counts)")
        #expect(counts["link.handshake_timeout", default: 0] <= 1, "\(counts)")
        watch.stop()
        watch.waitForOutputEnd(timeout: 5)
        #expect(watch.standardError.contains("phone.pub"), "\(watch.standardError)")
        #expect(!watch.events.contains { $0.name == "batch.applied" })
    }

    @Test(
        "With --keys and no phone at the endpoint, the watch says the phone is not reachable, not that the keys are wrong"
    )
    func noPhoneIsNotAKeyProblem() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let keys = try Self.pair(scenario, "keys")
        let endpoint = try Self.freeEndpoint()
        let watch = try scenario.spawn(
            "watch", ["--endpoint", endpoint, "--state-dir", "\(scenario.dir)/watch", "--keys", keys])
        let said = try watch.expect("link.handshake_timeout").event
        let reason = try #require(said.string("reason"))
        #expect(reason.contains("not reachable") && reason.contains("running"), "\(reason)")
        for blamed in ["phone.pub", "key", "paired"] {
            #expect(!reason.contains(blamed), "\(reason)")
        }
        #expect(!watch.events.contains { $0.name == "link.handshake_failed" })
        watch.stop()
        watch.waitForOutputEnd(timeout: 5)
        #expect(watch.standardError.contains("not reachable"), "\(watch.standardError)")
        #expect(!watch.standardError.contains("phone.pub"), "\(watch.standardError)")
    }

    @Test("A tcp peer without CURVE gets nothing in, and the phone keeps serving the paired watch")
    func plaintextPeer() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let keys = try Self.pair(scenario, "keys")
        let (phone, endpoint) = try Self.phone(scenario, keys: keys)
        let context = try Context()
        defer { context.terminate() }
        let intruder = try Socket(context: context, type: .dealer)
        let verdicts = try Socket(context: context, type: .pair)
        defer {
            try? intruder.stopMonitor()
            intruder.close()
            verdicts.close()
        }
        try intruder.setLinger(milliseconds: 0)
        try intruder.setRoutingId(Array("watch".utf8))
        try intruder.monitor(endpoint: "inproc://intruder-monitor", events: [.handshakeSucceeded, .handshakeFailed])
        try verdicts.setLinger(milliseconds: 0)
        try verdicts.connect("inproc://intruder-monitor")
        try intruder.connect(endpoint)
        try intruder.send(WireCodec.encode(.hello(nil)))
        // The verdict on the intruder's connection: its greeting offers NULL to a CURVE phone, so
        // the ZMTP handshake fails, and before a handshake no message passes either way.
        var items = [PollItem.socket(verdicts, events: .readable)]
        try #require(
            try poll(&items, timeoutMilliseconds: Int(Scenario.deadline * 1000)) == 1,
            "no handshake verdict on the plaintext connection within \(Scenario.deadline) s")
        let verdict = try #require(MonitorEvent(frames: try verdicts.receive()))
        #expect(MonitorEvent.Kind.handshakeFailed.contains(verdict.kind), "\(verdict)")

        // The probe, after the intruder: the paired watch. The phone handles messages in the order
        // they arrive, so an intruder's HELLO that got through would come before the watch's.
        let beforeWatch = phone.events.count
        let watch = try scenario.spawn(
            "watch", ["--endpoint", endpoint, "--state-dir", "\(scenario.dir)/watch", "--keys", keys])
        try watch.expect("batch.applied")
        let first = try phone.expect("message.received")
        #expect(first.index >= beforeWatch, "a plaintext message got through: \(first.event)")
        var intruderItems = [PollItem.socket(intruder, events: .readable)]
        #expect(try poll(&intruderItems, timeoutMilliseconds: 0) == 0, "the phone answered a plaintext peer")
    }
}

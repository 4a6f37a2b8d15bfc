// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// What a peer can make the phone print at will: each kind of event is written once, then held
/// back and counted, and the counts add up.
@Suite("Floods a peer can cause", .serialized)
struct FloodTests {
    /// Asks for `phone.status` every 0.2 s until `field` reaches `target` (or the deadline).
    /// - Returns: the last status.
    static func status(_ phone: ChildProcess, until field: String, atLeast target: Int) throws -> ChildEvent {
        let deadline = Date().addingTimeInterval(Scenario.deadline)
        var from = phone.events.count
        while true {
            phone.send(line: "status")
            let (status, index) = try phone.expect(.phoneStatus, from: from)
            from = index + 1
            if status.int(field) ?? 0 >= target || Date() > deadline { return status }
            usleep(200_000)
        }
    }

    /// Stops the phone with `quit` and waits for its last line.
    static func quit(_ phone: ChildProcess) {
        phone.send(line: "quit")
        #expect(phone.waitForExit(timeout: 10))
        phone.waitForOutputEnd(timeout: 5)
    }

    /// The lines of event `name`, and how many occurrences they stand for (each line 1 + suppressed).
    static func lines(_ phone: ChildProcess, _ name: EventName) -> (lines: Int, occurrences: Int) {
        let found = phone.events.filter { $0.name == name }
        return (found.count, found.map { 1 + ($0.int("suppressed") ?? 0) }.reduce(0, +))
    }

    @Test("400 garbage messages: one message.rejected and one error.sent line per reason, every one counted")
    func garbage() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone()
        try phone.expect(.phoneStarted)
        let context = try Context()
        defer { context.terminate() }
        try context.withSocket(.dealer) { rogue in
            try rogue.setLinger(milliseconds: 0)
            try rogue.setRoutingId(Array("watch".utf8))
            try rogue.connect(scenario.endpoint)
            for index in 0..<200 {
                try rogue.send(Array("{".utf8))
                // The version varies, the reason's class does not.
                try rogue.send(Array("{\"v\":\(index + 9),\"type\":\"HELLO\",\"lastSeq\":0}".utf8))
            }
            let status = try Self.status(phone, until: "rejectedMessages", atLeast: 400)
            #expect(status.int("rejectedMessages") == 400)
        }
        let rejected = Self.lines(phone, .messageRejected)
        #expect(rejected.lines == 2, "\(phone.events.filter { $0.name == .messageRejected }.map(\.line))")
        let reasons = phone.events.filter { $0.name == .messageRejected }.compactMap { $0.string("reason") }
        #expect(reasons.contains("not valid JSON"))
        #expect(reasons.contains("unsupported protocol version 9 (this build speaks 1)"))
        #expect(Self.lines(phone, .errorSent).lines == 2)
        Self.quit(phone)
        // At the end, the held-back counts are written: they add up to all 400.
        #expect(Self.lines(phone, .messageRejected).occurrences == 400)
        #expect(Self.lines(phone, .errorSent).occurrences == 400)
    }

    @Test("A forged watch sends 2,000 valid REQUESTs and 2,000 HELLOs: a few dozen lines, every one counted")
    func validFlood() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone()
        try phone.expect(.phoneStarted)
        let context = try Context()
        defer { context.terminate() }
        try context.withSocket(.dealer) { rogue in
            try rogue.setLinger(milliseconds: 0)
            try rogue.setRoutingId(Array("watch".utf8))
            try rogue.connect(scenario.endpoint)
            for index in 0..<2_000 {
                try rogue.send(Array("{\"v\":1,\"type\":\"REQUEST\",\"id\":\(index + 1),\"nightsLeft\":1}".utf8))
                try rogue.send(Array("{\"v\":1,\"type\":\"HELLO\",\"lastSeq\":0}".utf8))
            }
            let status = try Self.status(phone, until: "receivedMessages", atLeast: 4_000)
            #expect(status.int("receivedMessages") == 4_000)
            #expect(status.int("receivedRequests") == 2_000)
        }
        // 30 lines a minute per stream, at --clock-speed 1 (the flood takes a few seconds).
        #expect(Self.lines(phone, .requestReceived).lines <= 62, "\(Self.lines(phone, .requestReceived))")
        #expect(Self.lines(phone, .messageReceived).lines <= 124, "\(Self.lines(phone, .messageReceived))")
        #expect(phone.events.count < 600, "\(phone.events.count) lines for 4,000 messages")
        Self.quit(phone)
        #expect(Self.lines(phone, .requestReceived).occurrences == 2_000)
        #expect(Self.lines(phone, .messageReceived).occurrences == 4_000)
    }

    @Test("60 unpaired CURVE clients: peer.refused written once, refusedPeers counts every one")
    func refusedClients() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let keys = try CurveLinkTests.pair(scenario)
        let (phone, endpoint) = try CurveLinkTests.phone(scenario, keys: keys.phone)
        let context = try Context()
        defer { context.terminate() }
        var strangers: [Socket] = []
        defer { for stranger in strangers { stranger.close() } }
        // 60 clients with keys of their own (libzmq does not retry a client the ZAP handler refused).
        let serverKey = try Self.publicKey(keys.phone)
        for _ in 0..<60 {
            let stranger = try Socket(context: context, type: .dealer)
            strangers.append(stranger)
            try stranger.setLinger(milliseconds: 0)
            try stranger.setCurveClient(keys: CurveKeyPair.generate(), serverPublicKey: serverKey)
            try stranger.connect(endpoint)
        }
        let status = try Self.status(phone, until: "refusedPeers", atLeast: 60)
        let counted = try #require(status.int("refusedPeers"))
        #expect(counted >= 60)
        #expect(Self.lines(phone, .peerRefused).lines == 1, "\(phone.events.filter { $0.name == .peerRefused })")
        for stranger in strangers { stranger.close() }
        strangers = []
        Self.quit(phone)
        #expect(Self.lines(phone, .peerRefused).occurrences >= counted)
    }

    @Test("A phone with no watch says send.failed once, then counts (sendFailures), over several resends")
    func noWatch() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone()
        try phone.expect(.phoneStarted)
        // Resends back off 0.25, 0.5, 1, 2, 4 s: the fifth failure comes about 4 s in.
        let status = try Self.status(phone, until: "sendFailures", atLeast: 5)
        let counted = try #require(status.int("sendFailures"))
        #expect(counted >= 5)
        #expect(Self.lines(phone, .sendFailed).lines == 1)
        Self.quit(phone)
        #expect(Self.lines(phone, .sendFailed).occurrences >= counted)
    }

    /// The phone's public key, from its public certificate in `directory`.
    static func publicKey(_ directory: String) throws -> String {
        let text = try String(contentsOfFile: "\(directory)/phone.key", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.contains("public-key") })
        return String(try #require(line.split(separator: "\"").dropFirst().first))
    }
}

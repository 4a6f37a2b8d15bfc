// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import SleepTapCore

/// Valid messages a peer can send at will, and the answers to them: a flood is held back and
/// counted, normal traffic is not touched (docs/protocol.md, "Events").
@Suite("Peer traffic: floods held back, normal traffic untouched")
struct PeerTrafficTests {
    static func suppressed(_ event: Event) -> Int {
        if case .int(let count) = event["suppressed"] { Int(count) } else { 0 }
    }

    /// Lines of `name` in `events`, and the occurrences they stand for (each line 1 + suppressed).
    static func count(_ events: [Event], _ name: EventName) -> (lines: Int, occurrences: Int) {
        let lines = events.filter { $0.name == name }
        return (lines.count, lines.map { 1 + suppressed($0) }.reduce(0, +))
    }

    @Test("A burst limiter lets its burst through per window, holds the rest, and the counts add up")
    func burst() {
        var limiter = EventRateLimiter(interval: 60, maximumInterval: 60, burst: 30, keyField: "type")
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        var written: [Event] = []
        // 1,000 HELLOs and 10 ACKs in 10 s, then quiet until the window's end.
        for index in 0..<1_000 {
            let now = t0.addingTimeInterval(Double(index) / 100)
            if let line = limiter.admit(Event(.messageReceived, [("type", .string("HELLO"))]), at: now) {
                written.append(line)
            }
            if index % 100 == 0, let line = limiter.admit(Event(.messageReceived, [("type", .string("ACK"))]), at: now)
            {
                written.append(line)
            }
        }
        written += limiter.flush(at: t0.addingTimeInterval(59))
        #expect(written.count == 40, "30 HELLO lines and the 10 ACKs, nothing flushed before the minute ends")
        written += limiter.flush(at: t0.addingTimeInterval(60))
        let hellos = written.filter { $0["type"] == .string("HELLO") }
        #expect(hellos.count == 31)
        #expect(hellos.map { 1 + Self.suppressed($0) }.reduce(0, +) == 1_000)
        #expect(written.filter { $0["type"] == .string("ACK") }.allSatisfy { Self.suppressed($0) == 0 })
    }

    @Test("Traffic below the burst is never held back, for a long run")
    func belowBurst() {
        var limiter = PhoneNode.trafficLimiter()
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        var lines = 0
        // 29 a minute for an hour: every one is its own line, none carries `suppressed`.
        for index in 0..<(29 * 60) {
            let now = t0.addingTimeInterval(Double(index) * 60 / 29)
            if let line = limiter.admit(Event(.ackSent, [("seq", .int(1))]), at: now) {
                #expect(Self.suppressed(line) == 0)
                lines += 1
            }
            lines += limiter.flush(at: now).count
        }
        #expect(lines == 29 * 60)
    }

    @Test("A forged watch's 3,000 REQUESTs and 3,000 HELLOs in a minute: a few dozen lines, every one counted")
    func phoneFlood() throws {
        typealias M = PhoneMachineTests
        var node = M.started()
        let held = try #require(node.app.state.outbox)
        var during: [PhoneAction] = []
        for index in 0..<3_000 {
            let time = M.at(0.01 * Double(index + 1))
            for message in [
                WireMessage.request(DateRequest(id: UInt64(index + 1), nightsLeft: 1, coverageEnd: nil)),
                .hello(held.ref), .ack(held.ref, coverageEnd: held.coverageEnd),
            ] {
                during += M.answered(
                    &node, node.messageReceived(M.frames(WireCodec.encode(message)), at: time), at: time)
            }
        }
        // Everything a peer could make it say is a bounded number of lines…
        let events = during.compactMap(\.event)
        for name in [EventName.messageReceived, .requestReceived, .upToDateSent, .batchSent, .ackDuplicate] {
            #expect(Self.count(events, name).lines <= 3 * 31, "\(name): \(Self.count(events, name).lines) lines")
        }
        #expect(events.count < 400, "\(events.count) lines for 9,000 messages")
        let status = try #require(M.events(.phoneStatus, in: node.commandLine("status", at: M.at(31))).first)
        #expect([status["receivedMessages"], status["receivedRequests"]] == [.int(9_000), .int(3_000)])
        // …and at the end the held-back counts are said: they add up to every occurrence.
        let quit = node.commandLine("quit", at: M.at(31))
        let all = events + quit.compactMap(\.event)
        #expect(Self.count(all, .requestReceived).occurrences == 3_000)
        let answers = Self.count(all, .upToDateSent).occurrences + Self.count(all, .batchSent).occurrences
        // Every HELLO answered (and the batch a served REQUEST may publish).
        #expect(
            answers >= 3_000 && answers <= 3_010,
            "up_to_date.sent \(Self.count(all, .upToDateSent)), batch.sent \(Self.count(all, .batchSent))")
        let received = all.filter { $0.name == .messageReceived }
        for type in ["REQUEST", "HELLO", "ACK"] {
            let lines = received.filter { $0["type"] == .string(type) }
            #expect(lines.map { 1 + Self.suppressed($0) }.reduce(0, +) == 3_000, "\(type)")
        }
        #expect(M.shape(quit).suffix(2) == ["phone.stopping", "stop"])
    }

    @Test("A phone that sends the same BATCH 2,000 times in a minute: the watch's lines stay few, every one counted")
    func watchFlood() throws {
        var node = WatchNodeTests.node()
        let batch = WatchNodeTests.tokyoBatch()
        var events: [Event] = []
        for index in 0..<2_000 {
            let time = WatchNodeTests.at(Double(index) / 100, WatchNodeTests.t0.addingTimeInterval(Double(index) / 100))
            let actions = node.received(WatchInbound(frames: WatchNodeTests.frame(.batch(batch))), at: time)
            events += WatchNodeTests.events(WatchNodeTests.drive(&node, actions, at: time))
        }
        #expect(Self.count(events, .batchApplied).lines == 1)
        #expect(Self.count(events, .messageReceived).lines <= 31)
        #expect(Self.count(events, .batchDuplicate).lines <= 31)
        #expect(Self.count(events, .ackSent).lines <= 31)
        #expect(events.count < 150, "\(events.count) lines for 2,000 messages")
        let end = WatchNodeTests.at(30, WatchNodeTests.t0.addingTimeInterval(30))
        events += WatchNodeTests.events(node.finish(at: end))
        #expect(Self.count(events, .messageReceived).occurrences == 2_000)
        #expect(Self.count(events, .ackSent).occurrences == 2_000)
        #expect(Self.count(events, .batchDuplicate).occurrences == 1_999)
        #expect(node.receivedMessages == 2_000)
    }
}

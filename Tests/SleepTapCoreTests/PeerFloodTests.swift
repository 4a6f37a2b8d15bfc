// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import SleepTapCore

/// Every event a peer can make the phone write at will: each kind of message the paired watch
/// (or a stranger) can send, sent 200 times in a burst, gives at most one line per event and
/// stream; the rest is held back and counted (`suppressed`), and the counts add up at the end.
@Suite("Phone node: what a peer can cause at will")
struct PeerFloodTests {
    /// A phone holding an acknowledged batch, with its events cleared.
    static func ackedBench() throws -> (NodeBench, WakeBatch) {
        var bench = NodeBench()
        bench.start()
        let batch = try #require(bench.sentBatches.last)
        bench.receive(.ack(batch.ref, coverageEnd: batch.entries.last?.wake))
        bench.advance(5)
        bench.clearEvents()
        return (bench, batch)
    }

    /// An event's `suppressed` count (0 when it has none).
    static func suppressed(_ event: Event) -> Int {
        if case .int(let count) = event["suppressed"] { Int(count) } else { 0 }
    }

    /// The kinds of message a peer can repeat, by name; each gives the frames of occurrence `n`.
    static func kinds(_ batch: WakeBatch) -> [(String, (Int) -> [[UInt8]])] {
        let watch = Array(NodeBench.watchID.utf8)
        func message(_ message: WireMessage) -> (Int) -> [[UInt8]] { { _ in [watch, WireCodec.encode(message)] } }
        let stale = BatchRef(epoch: batch.epoch, seq: batch.seq + 5, digest: 1)
        let other = BatchRef(epoch: batch.epoch &+ 1, seq: 1, digest: 2)
        return [
            ("HELLO naming nothing", message(.hello(nil))),
            ("HELLO naming the newest batch", message(.hello(batch.ref))),
            ("HELLO naming another epoch", message(.hello(other))),
            ("ACK of the newest batch again", message(.ack(batch.ref, coverageEnd: nil))),
            ("ACK of a seq never sent", message(.ack(stale, coverageEnd: nil))),
            ("ERROR", { n in [watch, WireCodec.encode(.error(reason: "bad \(n)"))] }),
            ("BATCH to the phone", message(.batch(batch))),
            ("UP_TO_DATE to the phone", message(.upToDate(seq: batch.seq))),
            ("PING", message(.ping)),
            (
                "REQUEST",
                { n in
                    [
                        watch,
                        WireCodec.encode(.request(DateRequest(id: UInt64(n + 1), nightsLeft: 1, coverageEnd: nil))),
                    ]
                }
            ),
            ("not JSON", { _ in [watch, Array("{".utf8)] }),
            ("unknown type", { n in [watch, Array("{\"v\":1,\"type\":\"X\(n)\"}".utf8)] }),
            ("another version", { n in [watch, Array("{\"v\":\(n + 2),\"type\":\"HELLO\"}".utf8)] }),
            ("three frames", { _ in [watch, [1], [2]] }),
            ("a stranger's routing id", { n in [Array("m\(n)".utf8), WireCodec.encode(.hello(nil))] }),
        ]
    }

    @Test("Each kind of peer message, 100 or 300 times: the lines do not grow with the count, every one counted")
    func everyKind() throws {
        let (template, batch) = try Self.ackedBench()
        for (kind, frames) in Self.kinds(batch) {
            var counts: [[EventName: Int]] = []
            for repeats in [100, 300] {
                var bench = template
                for n in 0..<repeats {
                    bench.receive(frames(n))
                    bench.advance(0.01)
                }
                counts.append(Dictionary(bench.names().map { ($0, 1) }, uniquingKeysWith: +))
                // At the end every occurrence is accounted for: lines + suppressed.
                bench.type("quit")
                for name in [EventName.messageReceived, .requestReceived] where counts.last?[name] != nil {
                    let total = bench.events(name).map { 1 + Self.suppressed($0) }.reduce(0, +)
                    #expect(total == repeats, "\(kind): \(name.rawValue) adds up to \(total)")
                }
            }
            for name in Set(counts[1].keys) {
                #expect(
                    counts[1][name] == counts[0][name],
                    "\(kind): \(name.rawValue) \(counts[0][name] ?? 0) lines for 100, \(counts[1][name] ?? 0) for 300")
                #expect(counts[1][name] ?? 0 <= 8, "\(kind): \(counts[1][name] ?? 0) lines of \(name.rawValue)")
            }
        }
    }

    @Test("phone.status counts the messages and REQUESTs received, held back or not")
    func statusCounts() throws {
        var (bench, _) = try Self.ackedBench()
        for n in 0..<30 {
            bench.receive(.hello(nil))
            bench.receive(.request(DateRequest(id: UInt64(n + 1), nightsLeft: 1, coverageEnd: nil)))
        }
        bench.type("status")
        let status = try #require(bench.events(.phoneStatus).last)
        // The ACK at the start, then 30 HELLOs and 30 REQUESTs.
        #expect(status["receivedMessages"] == .int(61))
        #expect(status["receivedRequests"] == .int(30))
    }

    @Test("A watch's ordinary messages still each get their line: one HELLO, then one ACK per batch")
    func ordinaryExchange() throws {
        var (bench, _) = try Self.ackedBench()
        bench.advance(3_600)
        bench.type("open")
        let batch = try #require(bench.sentBatches.last)
        bench.receive(.ack(batch.ref, coverageEnd: nil))
        #expect(bench.events(.messageReceived).map { $0["type"] } == [.string("ACK")])
        #expect(bench.events(.ackReceived).count == 1)
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// 100,000 messages through the debug `phone` and `watch` (the build the README, the demo and
/// the tests run): memory stays flat and the process exits 0. Each written event used to wrap
/// the event output's close action in one more closure (a `Mutex` re-abstracting it in an
/// unoptimised build): memory grew with every line, and releasing the chain at exit overflowed
/// the stack (SIGSEGV) after about 30,000 lines.
@Suite("Long runs: flat memory, clean exit", .serialized)
struct LongRunMemoryTests {
    static let messages = 100_000
    /// The phone handles about 1,000 messages a second in debug (each re-plans the OS launch and
    /// compares os.json): 30,000, the count that used to crash it at exit, keeps the test short.
    static let phoneMessages = 30_000
    /// RSS is measured after this many, then again after all of them.
    static let warmUp = 10_000
    /// Wall seconds to wait for a flood to be handled.
    static let floodDeadline: TimeInterval = 120

    /// The resident set size of process `pid`, KiB (`VmRSS` in /proc/PID/status, proc(5)).
    static func residentKiB(_ pid: Int32) throws -> Int {
        let text = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    @Test("phone: 30,000 messages from the watch's routing id, memory flat, exit 0 after quit")
    func phone() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone()
        try phone.expect(.phoneStarted)
        let context = try Context()
        defer { context.terminate() }
        try context.withSocket(.dealer) { peer in
            try peer.setLinger(milliseconds: 0)
            try peer.setRoutingId(Array("watch".utf8))
            try peer.connect(scenario.endpoint)
            // ACKs of a batch never sent: the phone decodes, answers nothing, writes ack.stale.
            let stale = WireCodec.encode(.ack(BatchRef(epoch: 1, seq: 99, digest: 1), coverageEnd: nil))
            for _ in 0..<Self.warmUp { try peer.send(stale) }
            // The marker behind them: once it is said, every message before it was handled.
            try peer.send(WireCodec.encode(.error(reason: "warm-up done")))
            try #require(phone.waitFor(.peerError, timeout: Self.floodDeadline) != nil)
            let before = try Self.residentKiB(phone.pid)
            for _ in Self.warmUp..<Self.phoneMessages { try peer.send(stale) }
            try peer.send(WireCodec.encode(.upToDate(seq: 1)))
            try #require(
                phone.waitFor(.messageRejected, timeout: Self.floodDeadline) {
                    $0.string("reason") == "UP_TO_DATE is a phone-to-watch message"
                } != nil)
            let after = try Self.residentKiB(phone.pid)
            #expect(Double(after) < Double(before) * 1.1, "RSS \(before) KiB after 10,000, \(after) KiB after 30,000")
            phone.send(line: "quit")
            #expect(phone.waitForExit(timeout: 20))
            #expect(phone.exitStatus == 0)
        }
    }

    @Test("watch: 100,000 messages from the phone, memory flat, exit 0 after quit")
    func watch() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let context = try Context()
        defer { context.terminate() }
        try context.withSocket(.router) { router in
            try router.setLinger(milliseconds: 0)
            try router.setRouterMandatory(true)
            try router.bind(scenario.endpoint)
            let watch = try scenario.watch()
            try watch.expect(.helloSent)
            var items = [PollItem.socket(router, events: .readable)]
            guard try poll(&items, timeoutMilliseconds: 10_000) > 0 else {
                Issue.record("no HELLO reached the fake phone")
                return
            }
            _ = try router.receive()
            let id = Array("watch".utf8)
            // UP_TO_DATE for a watch that holds nothing: message.received and sync.up_to_date each.
            let upToDate = WireCodec.encode(.upToDate(seq: 0))
            for _ in 0..<Self.warmUp { try router.send([id, upToDate]) }
            try router.send([id, WireCodec.encode(.error(reason: "warm-up done"))])
            try #require(watch.waitFor(.peerError, timeout: Self.floodDeadline) != nil)
            let before = try Self.residentKiB(watch.pid)
            for _ in Self.warmUp..<Self.messages { try router.send([id, upToDate]) }
            try router.send([
                id, WireCodec.encode(.request(DateRequest(id: 1, nightsLeft: 0, coverageEnd: nil))),
            ])
            try #require(
                watch.waitFor(.messageRejected, timeout: Self.floodDeadline) {
                    $0.string("reason")?.contains("REQUEST") == true
                } != nil)
            let after = try Self.residentKiB(watch.pid)
            #expect(Double(after) < Double(before) * 1.15, "RSS \(before) KiB after 10,000, \(after) KiB after 100,000")
            watch.send(line: "quit")
            #expect(watch.waitForExit(timeout: 20))
            #expect(watch.exitStatus == 0)
        }
    }
}

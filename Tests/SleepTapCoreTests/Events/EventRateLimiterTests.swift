// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import Testing

@Suite("Event rate limiter")
struct EventRateLimiterTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func refused(_ address: String) -> Event {
        Event(.peerRefused, [("address", .string(address)), ("reason", .string("key not paired with this phone"))])
    }

    static func suppressed(_ event: Event) -> Int {
        if case .int(let count) = event["suppressed"] { Int(count) } else { 0 }
    }

    @Test("A flood of one event: the first line at once, then one line per window, and every occurrence counted")
    func flood() {
        var limiter = EventRateLimiter(interval: 30, maximumInterval: 30)
        var lines: [(Double, Event)] = []
        // 10 occurrences a second for 100 s, flushing every second as the runtimes do.
        for tick in 0..<1_000 {
            let now = Self.t0.addingTimeInterval(Double(tick) / 10)
            if let line = limiter.admit(Self.refused("10.0.0.\(tick % 250)"), at: now) {
                lines.append((Double(tick) / 10, line))
            }
            if tick % 10 == 0 { lines += limiter.flush(at: now).map { (Double(tick) / 10, $0) } }
        }
        lines += limiter.endAll().map { (100, $0) }
        #expect(lines.first?.0 == 0 && lines.first.map { Self.suppressed($0.1) } == 0)
        // Lines at 0, 30, 60, 90 and the rest at the end: never more than one per 30 s window.
        #expect(lines.count == 5, "\(lines.map(\.0))")
        #expect(lines.map(\.0) == [0, 30, 60, 90, 100], "\(lines.map(\.0))")
        #expect(lines.map { 1 + Self.suppressed($0.1) }.reduce(0, +) == 1_000)
    }

    @Test("A stream that keeps repeating backs off: its window doubles up to the maximum")
    func backoff() {
        var limiter = EventRateLimiter(interval: 30, maximumInterval: 120)
        var times: [Int] = []
        for second in 0..<600 {
            let now = Self.t0.addingTimeInterval(Double(second))
            let event = Event(.sendFailed, [("type", .string("BATCH")), ("reason", .string("watch not connected"))])
            if limiter.admit(event, at: now) != nil { times.append(second) }
            times += limiter.flush(at: now).map { _ in second }
        }
        #expect(times == [0, 30, 90, 210, 330, 450, 570], "\(times)")
    }

    @Test("Each reason class is its own stream, so the first of each is always written")
    func reasonsApart() {
        var limiter = EventRateLimiter()
        let reasons = ["not valid JSON", "unsupported protocol version 9 (this build speaks 1)", "not valid JSON"]
        let written = reasons.map { reason in
            limiter.admit(Event(.messageRejected, [("reason", .string(reason))]), at: Self.t0) != nil
        }
        #expect(written == [true, true, false])
        // Another event with the same reason is another stream.
        #expect(limiter.admit(Event(.errorSent, [("reason", .string("not valid JSON"))]), at: Self.t0) != nil)
        // Failed sends of two message types for one reason: two streams, each counting its own.
        func failed(_ type: String) -> Event {
            Event(.sendFailed, [("type", .string(type)), ("reason", .string("Resource temporarily unavailable"))])
        }
        #expect(limiter.admit(failed("HELLO"), at: Self.t0) != nil)
        #expect(limiter.admit(failed("ERROR"), at: Self.t0) != nil, "an ERROR's failure is not a HELLO's repeat")
        for _ in 0..<5 { #expect(limiter.admit(failed("ERROR"), at: Self.t0) == nil) }
        #expect(limiter.admit(failed("HELLO"), at: Self.t0) == nil)
        let summaries = limiter.endAll().filter { $0.name == .sendFailed }
        let counts = Dictionary(
            uniqueKeysWithValues: summaries.compactMap { line -> (String, Int)? in
                guard case .string(let type) = line["type"] else { return nil }
                return (type, 1 + Self.suppressed(line))
            })
        // Each summary is the last repeat held back, with the others as `suppressed`.
        #expect(counts == ["HELLO": 1, "ERROR": 5], "\(summaries)")
    }

    @Test("Varying ids and numbers in a reason stays one stream; invented reasons cannot grow it past the cap")
    func reasonClasses() {
        #expect(
            EventRateLimiter.reasonClass("unknown peer routing id \"m1\"")
                == EventRateLimiter.reasonClass("unknown peer routing id \"zz\\\"\""))
        #expect(
            EventRateLimiter.reasonClass("expected 2 frames (routing id, message), got 17")
                == "expected # frames (routing id, message), got #")
        var limiter = EventRateLimiter(maximumStreams: 4)
        var written = 0
        for index in 0..<100 {
            // Reasons that differ in letters, which the class keeps apart.
            let reason = "field " + String(repeating: "x", count: index + 1) + " is wrong"
            if limiter.admit(Event(.messageRejected, [("reason", .string(reason))]), at: Self.t0) != nil {
                written += 1
            }
        }
        #expect(written == 5, "4 streams of their own, then one shared one")
    }

    @Test("A quiet window ends the stream: the next occurrence is written at once, with no count")
    func quietWindow() {
        var limiter = EventRateLimiter(interval: 30)
        #expect(limiter.admit(Self.refused("a"), at: Self.t0) != nil)
        #expect(limiter.flush(at: Self.t0.addingTimeInterval(31)).isEmpty)
        let again = limiter.admit(Self.refused("b"), at: Self.t0.addingTimeInterval(40))
        #expect(again != nil && again?["suppressed"] == nil)
    }

    @Test("Ending a stream returns what it held back, and its next occurrence is written at once")
    func endStream() {
        var limiter = EventRateLimiter(interval: 30)
        let failed = Event(.sendFailed, [("type", .string("BATCH")), ("reason", .string("watch not connected"))])
        #expect(limiter.admit(failed, at: Self.t0) != nil)
        for second in 1...4 { #expect(limiter.admit(failed, at: Self.t0.addingTimeInterval(Double(second))) == nil) }
        let summaries = limiter.end(.sendFailed)
        // Four held back: the summary is the last of them, and says three more were held.
        #expect(summaries.count == 1 && summaries.map(Self.suppressed) == [3])
        #expect(limiter.end(.sendFailed).isEmpty)
        #expect(limiter.admit(failed, at: Self.t0.addingTimeInterval(5)) != nil)
    }
}

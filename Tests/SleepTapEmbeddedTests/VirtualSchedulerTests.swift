// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapOS
import Testing

@testable import SleepTapEmbedded

@Suite("The twin's virtual-time timer heap and faulty link")
struct VirtualSchedulerTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("Timers fire in deadline order; same-instant timers in the order they were armed")
    func order() {
        var scheduler = VirtualScheduler<String>(start: Self.t0)
        scheduler.arm("c", at: Self.t0.addingTimeInterval(5))
        scheduler.arm("a", at: Self.t0.addingTimeInterval(1))
        scheduler.arm("b1", at: Self.t0.addingTimeInterval(3))
        scheduler.arm("b2", at: Self.t0.addingTimeInterval(3))
        var fired: [String] = []
        while let (key, _) = scheduler.popDue(notAfter: Self.t0.addingTimeInterval(10)) { fired.append(key) }
        #expect(fired == ["a", "b1", "b2", "c"])
        #expect(scheduler.now == Self.t0.addingTimeInterval(10))
    }

    @Test("Re-arming replaces the deadline, cancel disarms, and now never goes backwards")
    func rearmAndCancel() {
        var scheduler = VirtualScheduler<String>(start: Self.t0)
        scheduler.arm("resend", at: Self.t0.addingTimeInterval(1))
        scheduler.arm("resend", at: Self.t0.addingTimeInterval(4))
        scheduler.arm("hello", at: Self.t0.addingTimeInterval(2))
        scheduler.cancel("hello")
        #expect(!scheduler.isArmed("hello"))
        #expect(scheduler.nextDeadline() == Self.t0.addingTimeInterval(4))
        let early = scheduler.popDue(notAfter: Self.t0.addingTimeInterval(3))
        #expect(early == nil)
        let resend = scheduler.popDue(notAfter: Self.t0.addingTimeInterval(9))
        #expect(resend?.key == "resend")
        // A deadline in the past fires at now, not before it.
        scheduler.arm("late", at: Self.t0)
        let late = scheduler.popDue(notAfter: Self.t0.addingTimeInterval(100))
        #expect(late?.at == Self.t0.addingTimeInterval(4))
    }

    @Test("Thousands of random timers come out sorted (seeded)")
    func randomHeap() {
        var rng = SplitMix64(state: 0x7123)
        var scheduler = VirtualScheduler<Int>(start: Self.t0)
        var expected: [Int: Date] = [:]
        for key in 0..<3_000 {
            let at = Self.t0.addingTimeInterval(Double(rng.next() % 100_000))
            scheduler.arm(key, at: at)
            expected[key] = at
            if rng.next() % 5 == 0 {
                scheduler.cancel(key)
                expected[key] = nil
            }
        }
        var previous = Self.t0
        var count = 0
        while let (key, at) = scheduler.popDue(notAfter: .distantFuture) {
            #expect(at >= previous && expected[key] == at, "seed 0x7123, key \(key)")
            previous = at
            count += 1
        }
        #expect(count == expected.count)
    }

    @Test("The faulty link drops, duplicates and delays by seed, and loses what is in flight when it goes down")
    func link() {
        var clean = FaultyLink<Int>(seed: 1)
        for n in 0..<10 { clean.send(n, at: Self.t0) }
        #expect(clean.receive(upTo: Self.t0) == Array(0..<10))

        var lossy = FaultyLink<Int>(faults: LinkFaults(drop: 0.3, duplicate: 0.2, delay: 0.3), seed: 42)
        for n in 0..<1_000 { lossy.send(n, at: Self.t0) }
        let received = lossy.receive(upTo: Self.t0.addingTimeInterval(10))
        #expect(lossy.dropped > 200 && lossy.dropped < 400)
        #expect(lossy.duplicated > 100 && lossy.delayed > 200)
        #expect(received.count == 1_000 - lossy.dropped + lossy.duplicated)
        #expect(received != received.sorted(), "delays should reorder some messages")
        var again = FaultyLink<Int>(faults: LinkFaults(drop: 0.3, duplicate: 0.2, delay: 0.3), seed: 42)
        for n in 0..<1_000 { again.send(n, at: Self.t0) }
        #expect(again.receive(upTo: Self.t0.addingTimeInterval(10)) == received, "the same seed replays")

        var link = FaultyLink<Int>(faults: LinkFaults(delay: 1), seed: 3)
        link.send(1, at: Self.t0)
        link.disconnect()
        let sentWhileDown = link.send(2, at: Self.t0)
        #expect(!sentWhileDown)
        let left = link.receive(upTo: .distantFuture)
        #expect(left.isEmpty && link.lostOnDisconnect == 1)
        link.reconnect()
        let sentAgain = link.send(3, at: Self.t0)
        #expect(sentAgain)
    }

    @Test("The store fails exactly the chosen writes and keeps the last good value")
    func store() {
        var store = FlakyStore<Int>(errno: 5, failing: [2])
        let first = store.write(1)
        let second = store.write(2)
        #expect(first == nil && second == 5 && store.held == 1)
        let third = store.write(3)
        #expect(third == nil && store.held == 3)
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import SleepTapCore

/// The watch face's complication: a timeline right for the whole week, reloads only when the
/// dates change, within the daily budget (docs/protocol.md, "The complication").
@Suite("Complication")
struct ComplicationTests {
    static let t0 = WatchNodeTests.t0
    static let hour: TimeInterval = 3_600

    @Test("The timeline of a week's batch shows the right next alarm at every minute of the week")
    func rightAllWeek() throws {
        let batch = WatchNodeTests.tokyoBatch()
        let wakes = batch.entries.map(\.wake)
        var complication = Complication()
        #expect(complication.offer(digest: batch.digest, wakes: wakes, at: Self.t0) == .reloaded(reloads: 1))
        #expect(complication.timeline.count == wakes.count + 1)
        // Every minute for 8 days: the face shows the first cached wake-up after that minute,
        // or "no cached date" once they are all past.
        for minute in stride(from: 0, to: 8 * 24 * 60, by: 1) {
            let instant = Self.t0.addingTimeInterval(TimeInterval(minute) * 60)
            let expected = wakes.first { $0 > instant }
            let shown = try #require(complication.entry(at: instant))
            if shown.wake != expected {
                Issue.record(
                    "at \(ISO8601.string(instant)): shows \(String(describing: shown.wake)), expected \(String(describing: expected))"
                )
                return
            }
        }
        #expect(complication.entry(at: Self.t0.addingTimeInterval(-1)) == nil)
    }

    @Test("Wake-ups already past at the reload are left out; an empty batch shows only no cached date")
    func pastLeftOut() {
        let wakes = [Self.t0.addingTimeInterval(-Self.hour), Self.t0.addingTimeInterval(Self.hour)]
        #expect(
            Complication.timeline(for: wakes, at: Self.t0) == [
                .init(start: Self.t0, wake: wakes[1]), .init(start: wakes[1], wake: nil),
            ])
        #expect(Complication.timeline(for: [], at: Self.t0) == [.init(start: Self.t0, wake: nil)])
    }

    @Test("The same digest costs nothing; past the budget the old timeline stays until retryAt")
    func budget() {
        var complication = Complication(budget: 3)
        let wakes = [Self.t0.addingTimeInterval(10 * Self.hour)]
        #expect(complication.offer(digest: 1, wakes: wakes, at: Self.t0) == .reloaded(reloads: 1))
        #expect(complication.offer(digest: 1, wakes: wakes, at: Self.t0.addingTimeInterval(60)) == .unchanged)
        #expect(
            complication.offer(digest: 2, wakes: wakes, at: Self.t0.addingTimeInterval(Self.hour))
                == .reloaded(reloads: 2))
        #expect(
            complication.offer(digest: 3, wakes: wakes, at: Self.t0.addingTimeInterval(2 * Self.hour))
                == .reloaded(reloads: 3))
        let later = [Self.t0.addingTimeInterval(30 * Self.hour)]
        #expect(
            complication.offer(digest: 4, wakes: later, at: Self.t0.addingTimeInterval(3 * Self.hour))
                == .budgetExhausted(reloads: 3, retryAt: Self.t0.addingTimeInterval(24 * Self.hour)))
        #expect(complication.digest == 3 && complication.waiting?.digest == 4)
        #expect(complication.loadWaiting(at: Self.t0.addingTimeInterval(24 * Self.hour - 1)) != .reloaded(reloads: 3))
        #expect(complication.loadWaiting(at: Self.t0.addingTimeInterval(24 * Self.hour)) == .reloaded(reloads: 3))
        #expect(complication.digest == 4 && complication.waiting == nil)
        #expect(complication.entry(at: Self.t0.addingTimeInterval(25 * Self.hour))?.wake == later[0])
    }

    @Test("The watch reloads at an applied batch, not at its duplicate, and prints its timeline")
    func watchNode() throws {
        var node = WatchNodeTests.node()
        let batch = WatchNodeTests.tokyoBatch()
        var time = WatchNodeTests.at(1)
        let first = WatchNodeTests.drive(
            &node, node.received(message: .batch(batch), at: time), at: time)
        let reloaded = try WatchNodeTests.event(.complicationReloaded, in: first)
        #expect(reloaded["digest"] == .string(Hex64.string(batch.digest)))
        #expect(reloaded["entries"] == .int(Int64(batch.entries.count + 1)))
        #expect(reloaded["nextAlarm"] == .date(batch.entries[0].wake))
        time = WatchNodeTests.at(2, Self.t0.addingTimeInterval(60))
        let again = WatchNodeTests.drive(
            &node, node.received(message: .batch(batch), at: time), at: time)
        #expect(!WatchNodeTests.names(again).contains(.complicationReloaded))
        let printed = WatchNodeTests.events(node.command(.complication, at: time))
        #expect(printed.first?.name == .complicationTimeline)
        #expect(printed.filter { $0.name == .complicationEntry }.count == batch.entries.count + 1)
        #expect(printed.last?["text"] == .string("no cached date"))
        #expect(printed[1]["localTime"] == .string("07:00") && printed[1]["timeZone"] == .string("Asia/Tokyo"))
    }

    @Test("A watch started on a held batch reloads its complication at start")
    func atStart() throws {
        let batch = WatchNodeTests.tokyoBatch()
        var node = WatchNodeTests.node(state: WatchSyncState(lastAppliedSeq: 1, batch: batch))
        let actions = node.start(processID: 1, at: WatchNodeTests.at(0))
        #expect(try WatchNodeTests.event(.complicationReloaded, in: actions)["reloads"] == .int(1))
        var fresh = WatchNodeTests.node()
        #expect(
            !WatchNodeTests.names(fresh.start(processID: 1, at: WatchNodeTests.at(0))).contains(.complicationReloaded))
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

#if canImport(Glibc)
    import Glibc
#endif

/// The phone node's states (`PhoneNode.State`: idle, reading the schedule, writing), one input
/// and the actions it gives, with no driver between: what each state lets through and what it
/// holds.
@Suite("Phone node states")
struct PhoneNodeStateTests {
    static let schedulePath = "/s/schedule.json"

    static func at(_ seconds: TimeInterval) -> NodeTime {
        NodeTime(now: PhoneFixture.start.addingTimeInterval(seconds), wall: 100 + seconds)
    }

    /// A started node whose start-up job is done (its writes succeeded, its forecast came).
    static func idleNode() -> PhoneNode {
        var node = PhoneNode(
            app: PhoneFixture.app(), configuration: PhoneFixture.configuration(schedulePath: schedulePath))
        settle(&node, node.start(at: at(0)), at: at(0))
        return node
    }

    /// Answers every write (succeeded) and forecast (offline) the actions ask for, and those of
    /// the answers, until none is left.
    static func settle(_ node: inout PhoneNode, _ actions: [PhoneAction], at time: NodeTime) {
        var queue = actions
        while !queue.isEmpty {
            let action = queue.removeFirst()
            switch action {
            case .persist: queue += node.persisted(.succeeded, at: time)
            case .fetchWeather(let location, let instant):
                let forecast = OfflineWeatherProvider(seed: 9).forecast(for: location, now: instant)
                queue += node.weatherArrived(WeatherOutcome(result: forecast.result, cost: forecast.cost), at: time)
            default: break
            }
        }
    }

    static func isBatchSend(_ action: PhoneAction) -> Bool {
        if case .send(.batch) = action { true } else { false }
    }

    @Test("Idle: a write result or a schedule read that nobody asked for changes nothing")
    func strayResults() {
        var node = Self.idleNode()
        #expect(node.persisted(.succeeded, at: Self.at(1)) == [])
        #expect(node.scheduleLoaded(.success(.everyDayAtSeven), at: Self.at(1)) == [])
    }

    @Test("Idle: open reads the schedule file first and does nothing else")
    func openReadsTheSchedule() {
        var node = Self.idleNode()
        #expect(node.command(.open, at: Self.at(1)) == [.loadSchedule(path: Self.schedulePath)])
    }

    @Test("Reading the schedule: a second open waits and a write result is ignored; status runs")
    func readingTheSchedule() throws {
        var node = Self.idleNode()
        _ = node.command(.open, at: Self.at(1))
        #expect(node.command(.open, at: Self.at(2)) == [])
        #expect(node.persisted(.succeeded, at: Self.at(2)) == [])
        let status = node.command(.status, at: Self.at(2))
        #expect(status.count == 1)
        guard case .emit(let event, _) = try #require(status.first) else {
            Issue.record("status gave \(status)")
            return
        }
        #expect(event.name == .phoneStatus)
    }

    @Test("Writing: the batch goes out only after its write is reported done, and first then")
    func writingHoldsTheSend() throws {
        var node = Self.idleNode()
        _ = node.command(.open, at: Self.at(1))
        let job = node.scheduleLoaded(.success(.everyDayAtSeven), at: Self.at(1))
        let write = try #require(job.firstIndex { if case .persist = $0 { true } else { false } })
        #expect(!job.contains(where: Self.isBatchSend), "sent before its write: \(job)")
        guard case .persist(let written) = job[write], let batch = written.outbox else {
            Issue.record("the job wrote no batch: \(job)")
            return
        }
        #expect(node.command(.open, at: Self.at(2)) == [], "an open waits for the write")
        let released = node.persisted(.succeeded, at: Self.at(2))
        #expect(released.first(where: Self.isBatchSend) == .send(.batch(batch)))
    }

    @Test("Writing: a failed write of phone-app.json is said with that file's path, and nothing is sent")
    func failedAppWrite() throws {
        var node = Self.idleNode()
        _ = node.command(.open, at: Self.at(1))
        _ = node.scheduleLoaded(.success(.everyDayAtSeven), at: Self.at(1))
        let failed = node.persisted(
            .failed(errno: ENOSPC, reason: "No space left on device", path: "/state/phone-app.json"), at: Self.at(2))
        guard case .emit(let event, _) = try #require(failed.first) else {
            Issue.record("no persist.failed first: \(failed)")
            return
        }
        #expect(event.name == .persistFailed)
        #expect(event["path"] == .string("/state/phone-app.json"))
        #expect(event["errno"] == .string("ENOSPC"))
        #expect(!failed.contains(where: Self.isBatchSend))
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOSTestFixtures
import Testing

@testable import SleepTapOS

/// The user sets the device's wall clock (docs/scheduler.md, "The user sets the clock"): iOS
/// keeps a submitted request at its true instant; Android's WorkManager replans periodic work
/// from its last enqueue time on the wall clock (androidx `WorkSpec.calculateNextRunTime`).
@Suite("The user sets the clock")
struct SchedulerClockTests {
    typealias F = SchedulerFixture
    let id = F.refreshID
    static func at(_ text: String) -> Date { try! Date(text, strategy: .iso8601) }

    @Test(
        "Android: a run at 07:00Z, interval 6 h, then the clock set back 12 h: the next run is at 01:00Z the next day, not 13:00Z"
    )
    func androidClockSetBack() throws {
        var s = F.android(interval: 6 * 3_600)
        let seven = Self.at("2025-03-06T07:00:00Z")
        try s.submit(identifier: id, earliestBeginDate: seven, at: Self.at("2025-03-06T06:00:00Z"))
        #expect(s.nextLaunch(after: seven) == seven)
        let taken = s.takeLaunch(at: seven)
        let launch = try #require(taken)
        s.complete(launch, outcome: .success, duration: 0, at: seven)
        // lastEnqueueTime 07:00 on the wall clock, next wall 13:00 (= true 13:00 while the clock is right).
        #expect(s.nextLaunch(after: seven) == Self.at("2025-03-06T13:00:00Z"))
        _ = s.drainTrace()
        let eight = Self.at("2025-03-06T08:00:00Z")
        s.wallClockChanged(by: -12 * 3_600, at: eight)
        // The wall now reads true − 12 h: wall 13:00 is true 01:00 of the next day, 12 h late.
        let late = Self.at("2025-03-07T01:00:00Z")
        #expect(s.nextLaunch(after: eight) == late)
        #expect(s.nextRunTime(of: id) == late)
        let trace = s.drainTrace()
        #expect(trace.map(\.event.name) == [.osTimeChanged, .osWorkRescheduled])
        #expect(trace.first?.event["nextRunAt"] == .date(late))
        #expect(trace.first?.event["broadcast"] == .string("android.intent.action.TIME_SET"))
        #expect(trace.first?.event["delta"] == .double(-43_200))
        // From then on the periods count on the (still wrong) wall clock: 01:00, 07:00, 13:00 true.
        let launches = F.drive(&s, from: eight, to: Self.at("2025-03-07T14:00:00Z")) { _, _ in (0, .success) }
        #expect(launches.map(\.startedAt) == ["01:00", "07:00", "13:00"].map { Self.at("2025-03-07T\($0):00Z") })
    }

    @Test("Android: a clock set forward 12 h makes the 6 h work due at once")
    func androidClockSetForward() throws {
        var s = F.android(interval: 6 * 3_600)
        let seven = Self.at("2025-03-06T07:00:00Z")
        try s.submit(identifier: id, earliestBeginDate: nil, at: seven)
        let taken = s.takeLaunch(at: seven)
        let launch = try #require(taken)
        s.complete(launch, outcome: .success, duration: 0, at: seven)
        let eight = Self.at("2025-03-06T08:00:00Z")
        s.wallClockChanged(by: 12 * 3_600, at: eight)
        // Wall 13:00 is true 01:00 today, already past: due now.
        #expect(s.nextRunTime(of: id) == Self.at("2025-03-06T01:00:00Z"))
        #expect(s.nextLaunch(after: eight) == eight)
    }

    @Test(
        "iOS: a clock change posts significantTimeChangeNotification and leaves the request and its planned launch at their true instants"
    )
    func iosKeepsTrueInstant() throws {
        let now = F.start
        var s = try F.launchedIOS(at: now)
        let earliest = now.addingTimeInterval(3_600)
        try s.submit(identifier: id, earliestBeginDate: earliest, at: now)
        let planned = try #require(s.nextLaunch(after: now))
        _ = s.drainTrace()
        s.wallClockChanged(by: -12 * 3_600, at: now.addingTimeInterval(60))
        #expect(s.nextLaunch(after: now.addingTimeInterval(60)) == planned)
        #expect(s.pendingEarliestBeginDate == earliest)
        let trace = s.drainTrace()
        #expect(trace.map(\.event.name) == [.osTimeChanged])
        #expect(trace.first?.event["notification"] == .string("UIApplication.significantTimeChangeNotification"))
        #expect(trace.first?.event["earliestBeginDate"] == .date(earliest))
        #expect(trace.first?.event["plannedLaunch"] == .date(planned))
    }

    @Test("SimulatedOS: the wall clock offset adds up over changes, is kept in os.json, and 0 leaves no field")
    func offsetKept() throws {
        var os = SimulatedOS(F.android(interval: 6 * 3_600), seed: 1)
        let now = F.start
        os.setWallClock(by: -12 * 3_600, at: now)
        os.setWallClock(by: 90 * 60, at: now)
        #expect(os.wallClockOffset == -12 * 3_600 + 5_400)
        #expect(os.wallClock(at: now) == now.addingTimeInterval(-37_800))
        let stored = try JSONDecoder().decode(SimulatedOS.self, from: JSONEncoder().encode(os))
        #expect(stored.wallClockOffset == -37_800)
        os.setWallClock(by: 37_800, at: now)
        let json = try #require(String(data: JSONEncoder().encode(os), encoding: .utf8))
        #expect(!json.contains("wallClockOffset"))
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOSTestFixtures
import Testing

@testable import SleepTapOS

/// The restricted bucket on a charger (docs/scheduler.md, "App Standby quotas"): charging frees
/// every other bucket's quota, a restricted job only while the battery is not low and the device
/// idle (AOSP `QuotaController.isQuotaFreeLocked`, `JobStatus.DYNAMIC_RESTRICTED_CONSTRAINTS`).
@Suite("Restricted bucket on a charger")
struct SchedulerRestrictedTests {
    typealias F = SchedulerFixture
    let id = F.refreshID
    let t0 = F.start

    /// A restricted app's 15-minute work on a charger, enqueued at `t0`, the screen off at `t0`
    /// when `screenOff` (so the device is idle from `t0` + 30 min), the battery low when `batteryLow`.
    func restrictedOnCharger(screenOff: Bool, batteryLow: Bool = false) throws -> AndroidWorkScheduler {
        var s = F.android(bucket: .restricted)
        s.setCharging(true, at: t0)
        if screenOff { s.setScreen(false, at: t0) }
        if batteryLow { s.setBatteryLow(true, at: t0) }
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        return s
    }

    /// Seconds from `t0` of each launch's start.
    func offsets(_ launches: [BackgroundLaunch]) -> [TimeInterval] {
        launches.map { $0.startedAt.timeIntervalSince(t0) }
    }

    @Test("Not idle: one run per rolling 24 h (restricted: 1 session, 10 min), and why says quota until it returns")
    func notIdle() throws {
        var s = try restrictedOnCharger(screenOff: false)
        let end = t0.addingTimeInterval(2 * 3600)
        let launches = F.drive(&s, from: t0, to: end) { _, _ in (60, .success) }
        #expect(offsets(launches) == [0])
        #expect(launches[0].budget == 600)
        #expect(!s.restrictedQuotaFree(at: end))
        #expect(s.quotaRemaining(at: end) == 540)
        let why = s.why(at: end)
        #expect(why.code == .quota)
        #expect(why.code.androidValue == 14)
        let quota = try #require(why.reason("quota"))
        #expect(quota.until == t0.addingTimeInterval(F.day + 60))
        #expect(
            quota.state
                == "the restricted bucket's job quota is used up (on a charger a restricted job runs outside its"
                + " quota only while the device is idle and the battery is not low)")
        #expect(why.nextLaunch == t0.addingTimeInterval(F.day + 60))
    }

    @Test("Idle with the battery not low: runs outside the quota, every 16 min, and uses none of it")
    func idleBatteryNotLow() throws {
        var s = try restrictedOnCharger(screenOff: true)
        // Before the device is idle the one session is used: why says quota until the idle instant.
        let first = F.drive(&s, from: t0, to: t0.addingTimeInterval(961)) { _, _ in (60, .success) }
        #expect(offsets(first) == [0])
        let waiting = s.why(at: t0.addingTimeInterval(961))
        #expect(waiting.code == .quota)
        #expect(waiting.reason("quota")?.until == t0.addingTimeInterval(1800))
        #expect(waiting.nextLaunch == t0.addingTimeInterval(1800))
        // Idle from 30 min after the screen went off: a run every 60 s + 15 min.
        let end = t0.addingTimeInterval(2 * 3600)
        let later = F.drive(&s, from: t0.addingTimeInterval(961), to: end) { _, _ in (60, .success) }
        #expect(offsets(later) == [1800, 2760, 3720, 4680, 5640, 6600])
        #expect(later.allSatisfy { $0.budget == nil })
        #expect(s.restrictedQuotaFree(at: end))
        #expect(s.quotaRemaining(at: end) == nil)
        let between = s.why(at: t0.addingTimeInterval(6661))
        #expect(between.code == .constraintMinimumLatency)
        #expect(between.reason("quota") == nil)
        // The screen on: not idle, limited again; only the first run counted.
        s.setScreen(true, at: end)
        #expect(s.quotaRemaining(at: end) == 540)
        #expect(s.why(at: end).reason("quota")?.until == t0.addingTimeInterval(F.day + 60))
    }

    @Test("Idle with the battery low: still limited to its quota")
    func idleBatteryLow() throws {
        var s = try restrictedOnCharger(screenOff: true, batteryLow: true)
        let end = t0.addingTimeInterval(2 * 3600)
        let launches = F.drive(&s, from: t0, to: end) { _, _ in (60, .success) }
        #expect(offsets(launches) == [0])
        #expect(s.deviceIdle(at: end))
        #expect(!s.restrictedQuotaFree(at: end))
        let why = s.why(at: end)
        #expect(why.code == .quota)
        #expect(why.reason("quota")?.until == t0.addingTimeInterval(F.day + 60))
        // The battery back above low: free at once.
        s.setBatteryLow(false, at: end)
        #expect(s.nextLaunch(after: end) == end)
    }

    @Test("Idle, battery not low, work that needs the network: free only while connected")
    func needsNetwork() throws {
        var s = try restrictedOnCharger(screenOff: true)
        s.setConstraints([.network])
        let idle = t0.addingTimeInterval(1800)
        #expect(s.restrictedQuotaFree(at: idle))
        s.setNetwork(false, at: idle)
        #expect(!s.restrictedQuotaFree(at: idle))
        // Work without the constraint does not need it.
        s.setConstraints([])
        #expect(s.restrictedQuotaFree(at: idle))
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOSTestFixtures
import Testing

@testable import SleepTapOS

/// Doze on the simulated Android (docs/scheduler.md, "Doze"): AOSP `DeviceIdleController` timings.
@Suite("Simulated Android Doze")
struct SchedulerDozeTests {
    typealias F = SchedulerFixture
    let id = F.refreshID
    let t0 = F.start

    @Test(
        "Screen off, unplugged and still: inactive 30 min, sensing 30 min, idle 1, 2, 4, 6, 6 h with windows of 5 then 10 min"
    )
    func timeline() {
        var s = F.android(interval: 3600)
        s.setScreen(false, at: t0)
        func phase(_ offset: TimeInterval) -> DozePhase { s.dozePhase(at: t0.addingTimeInterval(offset)).0 }
        #expect(phase(0) == .inactive)
        #expect(phase(1_800) == .sensing)
        #expect(phase(3_600) == .idle)
        // idle [1 h, 2 h), window [2 h, 2 h 5 min), idle 2 h, window 10 min, idle 4 h, window 10 min, idle 6 h …
        #expect(phase(7_199) == .idle && phase(7_200) == .maintenance && phase(7_499) == .maintenance)
        #expect(phase(7_500) == .idle)
        let second = 7_500.0 + 7_200
        #expect(phase(second) == .maintenance && phase(second + 599) == .maintenance && phase(second + 600) == .idle)
        let third = second + 600 + 14_400
        #expect(phase(third) == .maintenance)
        let fourth = third + 600 + 21_600
        #expect(phase(fourth - 1) == .idle && phase(fourth) == .maintenance)
        let fifth = fourth + 600 + 21_600
        #expect(phase(fifth) == .maintenance && phase(fifth - 1) == .idle)
        // Charging, the screen or a motion end it.
        s.setCharging(true, at: t0.addingTimeInterval(4_000))
        #expect(phase(4_000) == .active)
    }

    @Test("A Doze night gives at most one background run per maintenance window, none while idle")
    func oneRunPerWindow() throws {
        var s = F.android(interval: 3600)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        s.setScreen(false, at: t0)
        let end = t0.addingTimeInterval(8 * 3600)
        let launches = F.drive(&s, from: t0, to: end) { _, _ in (20, .success) }
        let starts = launches.map(\.startedAt)
        for start in starts { #expect(s.dozePhase(at: start).0 != .idle, "a run at \(start) in idle") }
        // Before Doze: the first run at once (inactive); then one in each window of the night.
        let windows = [7_200.0, 7_500 + 7_200, 7_500 + 7_200 + 600 + 14_400].map { t0.addingTimeInterval($0) }
        #expect(starts.first == t0)
        for window in windows {
            #expect(starts.filter { $0 >= window && $0 < window.addingTimeInterval(600) }.count <= 1)
        }
        #expect(starts.dropFirst().allSatisfy { start in windows.contains(start) })
        // Without Doze the same hourly work runs 8 times in those 8 hours.
        var awake = F.android(interval: 3600)
        try awake.submit(identifier: id, earliestBeginDate: nil, at: t0)
        #expect(F.drive(&awake, from: t0, to: end) { _, _ in (20, .success) }.count == 8)
        #expect(launches.count < 8)
    }

    @Test("why names Doze until the next maintenance window; idle force, step and off")
    func whyAndControls() throws {
        var s = F.android(interval: 900)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        s.forceIdle(at: t0)
        #expect(s.dozePhase(at: t0).0 == .idle)
        let doze = try #require(s.why(at: t0).reason("doze"))
        #expect(doze.code == .deviceState)
        #expect(doze.until == t0.addingTimeInterval(3600))
        #expect(s.nextLaunch(after: t0) == t0.addingTimeInterval(3600))
        s.stepIdle(at: t0.addingTimeInterval(60))
        #expect(s.dozePhase(at: t0.addingTimeInterval(60)).0 == .maintenance)
        #expect(s.nextLaunch(after: t0.addingTimeInterval(60)) == t0.addingTimeInterval(60))
        s.stepIdle(at: t0.addingTimeInterval(120))
        #expect(s.dozePhase(at: t0.addingTimeInterval(120)).0 == .idle)
        s.unforceIdle(at: t0.addingTimeInterval(180))
        #expect(s.dozePhase(at: t0.addingTimeInterval(180)).0 == .active)
        #expect(s.why(at: t0.addingTimeInterval(180)).reason("doze") == nil)
        // A motion ends Doze and starts the timeline again.
        s.setScreen(false, at: t0.addingTimeInterval(200))
        s.motion(at: t0.addingTimeInterval(4_000))
        #expect(s.dozePhase(at: t0.addingTimeInterval(4_000)).0 == .inactive)
    }

    @Test(
        "Light Doze: screen off on battery, moved or not: 1 + 3 min, then light idle 5, 10, 15, 15 min with 1-min windows"
    )
    func lightTimeline() {
        var s = F.android(interval: 900)
        s.setScreen(false, at: t0)
        // A motion ends deep Doze's timeline but not light Doze's.
        s.motion(at: t0.addingTimeInterval(100))
        func light(_ offset: TimeInterval) -> LightDozePhase { s.lightDozePhase(at: t0.addingTimeInterval(offset)).0 }
        #expect(light(0) == .inactive && light(239) == .inactive)
        #expect(light(240) == .idle && light(539) == .idle)
        #expect(light(540) == .maintenance && light(599) == .maintenance)
        #expect(light(600) == .idle && light(1_199) == .idle && light(1_200) == .maintenance)
        #expect(light(1_260) == .idle && light(2_159) == .idle && light(2_160) == .maintenance)
        #expect(light(2_220) == .idle && light(3_119) == .idle && light(3_120) == .maintenance)
        #expect(light(3_120 + 960 * 10) == .maintenance && light(3_180 + 960 * 10) == .idle)
        #expect(s.dozeHold(at: t0.addingTimeInterval(300)) == t0.addingTimeInterval(540))
        // The screen on or a charger end it.
        s.setCharging(true, at: t0.addingTimeInterval(4_000))
        #expect(light(4_000) == .active)
        #expect(s.dozeHold(at: t0.addingTimeInterval(4_000)) == nil)
    }

    @Test(
        "Light Doze defers jobs to its 1-min windows while the phone is carried (deep Doze never starts); why says so")
    func lightDefersJobs() throws {
        var s = F.android(interval: 900)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        s.setScreen(false, at: t0)
        let end = t0.addingTimeInterval(4 * 3600)
        var starts: [Date] = []
        var now = t0
        var nextMotion = t0.addingTimeInterval(1_500)
        while let t = s.nextLaunch(after: now), t < end {
            while nextMotion <= t {
                s.motion(at: nextMotion)
                nextMotion = nextMotion.addingTimeInterval(1_500)
            }
            guard let due = s.nextLaunch(after: max(now, t)), due <= t, let launch = s.takeLaunch(at: t) else {
                now = t
                continue
            }
            starts.append(launch.startedAt)
            s.complete(launch, outcome: .success, duration: 20, at: t.addingTimeInterval(20))
            now = t.addingTimeInterval(20)
        }
        #expect(starts.first == t0)
        #expect(starts.count >= 10, "\(starts)")
        for start in starts.dropFirst() {
            #expect(s.lightDozePhase(at: start).0 == .maintenance, "a run at \(start) outside a light window")
            #expect(s.dozePhase(at: start).0 != .idle)
        }
        #expect(starts.dropFirst().first == t0.addingTimeInterval(1_200))
        // In light idle, why names it until the window.
        let at = t0.addingTimeInterval(1_300)
        let held = try #require(s.why(at: at).reason("doze"))
        #expect(held.code == .deviceState && held.state.contains("light Doze"))
        #expect(held.until == t0.addingTimeInterval(2_160))
    }

    @Test("An os.json written before Doze decodes: the screen is on, no Doze")
    func oldStateDecodes() throws {
        var s = F.android(interval: 900)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        var object = try #require(
            try JSONSerialization.jsonObject(with: try JSONEncoder().encode(s)) as? [String: Any])
        object["doze"] = nil
        var configuration = try #require(object["configuration"] as? [String: Any])
        configuration["doze"] = nil
        object["configuration"] = configuration
        let decoded = try JSONDecoder().decode(
            AndroidWorkScheduler.self, from: try JSONSerialization.data(withJSONObject: object))
        #expect(decoded.dozePhase(at: t0.addingTimeInterval(86_400)).0 == .active)
        #expect(decoded.nextLaunch(after: t0) == s.nextLaunch(after: t0))
    }
}

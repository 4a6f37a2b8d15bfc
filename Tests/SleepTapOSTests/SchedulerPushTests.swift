// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOSTestFixtures
import Testing

@testable import SleepTapOS

/// A server push on the simulated OS (docs/scheduler.md, "A server push").
@Suite("Simulated OS: a server push")
struct SchedulerPushTests {
    typealias F = SchedulerFixture
    let t0 = F.start

    @Test(
        "iOS: a background notification wakes the app for 30 s; the 4th in an hour is throttled, the next hour's is not"
    )
    func iosThrottle() throws {
        var os = SimulatedOS(try F.launchedIOS())
        for minute in 0..<3 {
            let delivery = os.backgroundPush(
                priority: .high, at: t0.addingTimeInterval(Double(minute) * 60), appRunning: false)
            #expect(
                delivery.woken && delivery.budget == 30
                    && delivery.deliverAt == t0.addingTimeInterval(Double(minute) * 60))
        }
        let fourth = os.backgroundPush(priority: .high, at: t0.addingTimeInterval(600), appRunning: false)
        #expect(!fourth.woken && fourth.deliverAt == nil)
        #expect(fourth.reason == "throttled: 3 background notifications delivered in the last hour")
        // An hour after the first, one slot is free again.
        #expect(os.backgroundPush(priority: .normal, at: t0.addingTimeInterval(3_600), appRunning: false).woken)
        let trace = os.drainTrace().filter { $0.event.name == .osPush }
        #expect(trace.count == 5)
        #expect(trace[3].event["woken"] == .bool(false))
        #expect(trace[3].event["reason"] == .string(fourth.reason!))
        // The throttle outlives the app: it is in the OS's encoding.
        let decoded = try JSONDecoder().decode(SimulatedOS.self, from: JSONEncoder().encode(os))
        var again = decoded
        // At 1 h 10 s: those of 1 min, 2 min and 1 h are within the hour.
        #expect(!again.backgroundPush(priority: .high, at: t0.addingTimeInterval(3_610), appRunning: false).woken)
    }

    @Test("iOS: no push after a force-quit (unless the app runs), with Background App Refresh off or in Low Power Mode")
    func iosConditions() throws {
        var quit = SimulatedOS(try F.launchedIOS())
        quit.forceQuit(at: t0)
        let refused = quit.backgroundPush(priority: .high, at: t0.addingTimeInterval(60), appRunning: false)
        #expect(!refused.woken && refused.reason?.contains("force-quit") == true)
        var off = SimulatedOS(try F.launchedIOS())
        off.setBackgroundRefreshEnabled(false, at: t0)
        #expect(off.backgroundPush(priority: .high, at: t0, appRunning: true).reason == "Background App Refresh is off")
        var lowPower = SimulatedOS(try F.launchedIOS())
        lowPower.setLowPowerMode(true, at: t0)
        #expect(lowPower.backgroundPush(priority: .high, at: t0, appRunning: true).reason == "Low Power Mode is on")
    }

    @Test(
        "Android in Doze: a high-priority message now; a normal-priority one at the next maintenance window, handed over once; awake, both now"
    )
    func androidDoze() throws {
        var os = SimulatedOS(F.android(interval: 3_600))
        os.doze(.force, at: t0)
        let window = t0.addingTimeInterval(3_600)
        let high = os.backgroundPush(priority: .high, at: t0.addingTimeInterval(60), appRunning: false)
        #expect(high.woken && high.deliverAt == t0.addingTimeInterval(60) && high.budget == nil)
        let normal = os.backgroundPush(priority: .normal, at: t0.addingTimeInterval(60), appRunning: false)
        #expect(normal.woken && normal.deliverAt == window)
        #expect(os.nextTimedActivity() == window)
        #expect(os.pushesDue(at: window.addingTimeInterval(-1)).isEmpty)
        #expect(os.pushesDue(at: window).map(\.deliverAt) == [window])
        #expect(os.pushesDue(at: window).isEmpty)
        var awake = SimulatedOS(F.android(interval: 3_600))
        #expect(awake.backgroundPush(priority: .normal, at: t0, appRunning: false).deliverAt == t0)
    }

    @Test("Android: a force-stopped app gets no message until it runs")
    func androidForceStopped() {
        var os = SimulatedOS(F.android(interval: 3_600))
        os.forceQuit(at: t0)
        let refused = os.backgroundPush(priority: .high, at: t0.addingTimeInterval(60), appRunning: false)
        #expect(!refused.woken && refused.reason?.contains("force-stopped") == true)
        #expect(os.backgroundPush(priority: .high, at: t0.addingTimeInterval(60), appRunning: true).woken)
    }
}

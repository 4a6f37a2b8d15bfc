// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOSTestFixtures
import Testing

@testable import SleepTapOS

/// "Why hasn't it run?" (docs/scheduler.md): every state the answer names, on both platforms.
@Suite("Scheduler why")
struct SchedulerWhyTests {
    typealias F = SchedulerFixture
    let id = F.refreshID
    let t0 = F.start

    func codes(_ answer: WhyAnswer) -> [PendingReasonCode] { answer.reasons.map(\.code) }

    // MARK: iOS

    @Test("iOS: no pending request, then not yet eligible and waiting for the drawn opportunity, then ready")
    func iosTiming() throws {
        var s = try F.launchedIOS()
        #expect(codes(s.why(at: t0)) == [.invalidJobID])
        let earliest = t0.addingTimeInterval(3600)
        try s.submit(identifier: id, earliestBeginDate: earliest, at: t0)
        let planned = try #require(s.nextLaunch(after: t0))
        let before = s.why(at: t0)
        #expect(codes(before) == [.constraintMinimumLatency, .jobSchedulerOptimization])
        #expect(before.reason("earliestBeginDate")?.until == earliest)
        #expect(before.reason("opportunity")?.until == planned)
        #expect(before.identifier == id && before.nextLaunch == planned)
        // Eligible but not yet at the drawn opportunity: only the opportunity holds it back.
        if planned > earliest {
            #expect(codes(s.why(at: earliest)) == [.jobSchedulerOptimization])
        }
        let due = s.why(at: planned)
        #expect(codes(due) == [.ready])
        #expect(due.summary.contains("nothing holds it back"))
    }

    @Test("iOS: Low Power Mode, Background App Refresh off and force-quit each hold it back, with no lift instant")
    func iosConditions() throws {
        var s = try F.launchedIOS()
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        s.setLowPowerMode(true, at: t0)
        #expect(codes(s.why(at: t0)) == [.deviceState])
        #expect(s.why(at: t0).reason("lowPower")?.until == nil)
        s.setBackgroundRefreshEnabled(false, at: t0)
        s.forceQuit(at: t0)
        let all = s.why(at: t0)
        #expect(codes(all) == [.user, .backgroundRestriction, .deviceState])
        #expect(all.nextLaunch == nil)
        s.appLaunched(at: t0, byUser: true)
        s.setBackgroundRefreshEnabled(true, at: t0)
        s.setLowPowerMode(false, at: t0)
        #expect(codes(s.why(at: t0)) == [.jobSchedulerOptimization])
    }

    @Test(
        "iOS late-silent: before the launch the handler is named; after it, 'launched at T, handler not registered in time'"
    )
    func iosHandlerNotRegistered() throws {
        var s = F.ios(mode: .lateSilent)
        s.appLaunched(at: t0, byUser: true)
        s.finishLaunching(at: t0)
        #expect(try s.register(identifier: id, at: t0))
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let before = s.why(at: t0)
        #expect(before.code == .handlerNotRegisteredInTime)
        #expect(before.reason("handler")?.launchedAt == nil)
        let launchAt = try #require(s.nextLaunch(after: t0))
        let taken = s.takeLaunch(at: launchAt)
        let launch = try #require(taken)
        #expect(!launch.handlerRegistered)
        let after = s.why(at: launchAt.addingTimeInterval(60))
        #expect(codes(after) == [.handlerNotRegisteredInTime, .invalidJobID])
        #expect(after.reason("handler")?.launchedAt == launchAt)
        #expect(after.summary.hasPrefix("launched at \(launchAt.formatted(.iso8601)), handler not registered in time"))
        #expect(after.nextLaunch == nil)
        // The same app with an early registration: the handler is not named.
        var fixed = try F.launchedIOS()
        try fixed.submit(identifier: id, earliestBeginDate: nil, at: t0)
        #expect(fixed.why(at: t0).reason("handler") == nil)
    }

    @Test("iOS late-crash: the launch at which the app crashed is named")
    func iosLateCrash() throws {
        var s = F.ios(mode: .lateCrash)
        s.appLaunched(at: t0, byUser: true)
        #expect(try s.register(identifier: id, at: t0))
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        s.finishLaunching(at: t0)
        let launchAt = try #require(s.nextLaunch(after: t0))
        s.launchCrashed(at: launchAt)
        let answer = s.why(at: launchAt)
        #expect(codes(answer) == [.handlerNotRegisteredInTime, .invalidJobID])
        #expect(answer.reason("handler")?.launchedAt == launchAt)
        #expect(answer.reason("handler")?.state.contains("crashed") == true)
    }

    @Test("iOS: a run in flight is EXECUTING until its deadline")
    func iosExecuting() throws {
        var s = try F.launchedIOS()
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let at = try #require(s.nextLaunch(after: t0))
        let taken = s.takeLaunch(at: at)
        let launch = try #require(taken)
        let answer = s.why(at: at)
        #expect(answer.reason("running")?.until == launch.deadline)
        #expect(answer.code == .executing)
    }

    @Test(
        "iOS processing request: power, network, device in use, not idle yet, earliestBeginDate, then ready; the user's switches"
    )
    func iosProcessing() throws {
        let pid = "net.example.sleeptap.processing"
        var s = F.ios(permitted: [id, pid])
        s.appLaunched(at: t0, byUser: true)
        #expect(try s.register(identifier: id, at: t0))
        #expect(try s.register(identifier: pid, at: t0))
        s.finishLaunching(at: t0)
        #expect(s.whyProcessing(at: t0) == nil)  // never submitted: no answer
        let earliest = t0.addingTimeInterval(7_200)
        s.setNetwork(false, at: t0)
        try s.submitProcessing(
            ProcessingRequest(
                identifier: pid, earliestBeginDate: earliest, requiresExternalPower: true,
                requiresNetworkConnectivity: true), at: t0)
        let all = try #require(s.whyProcessing(at: t0))
        #expect(
            codes(all) == [
                .constraintCharging, .constraintConnectivity, .constraintDeviceIdle, .constraintMinimumLatency,
            ])
        #expect(all.reason("requiresExternalPower")?.state.contains("not charging") == true)
        #expect(all.reason("requiresNetworkConnectivity")?.state.contains("no network") == true)
        #expect(all.reason("deviceIdle")?.state.contains("in use") == true)
        #expect(all.reason("deviceIdle")?.until == nil)
        #expect(all.reason("earliestBeginDate")?.until == earliest)
        #expect(all.identifier == pid && all.nextLaunch == nil)
        s.setCharging(true, at: t0)
        s.setNetwork(true, at: t0)
        s.setScreen(false, at: t0)
        let idling = try #require(s.whyProcessing(at: t0))
        #expect(codes(idling) == [.constraintDeviceIdle, .constraintMinimumLatency])
        #expect(idling.reason("deviceIdle")?.until == t0.addingTimeInterval(600))
        // t0 + 7200 s = 1_760_007_200, rounded up to the minute of UNIX time.
        let planned = Date(timeIntervalSince1970: 1_760_007_240)
        #expect(idling.nextLaunch == planned)
        #expect(codes(try #require(s.whyProcessing(at: t0.addingTimeInterval(600)))) == [.constraintMinimumLatency])
        let ready = try #require(s.whyProcessing(at: earliest))
        #expect(codes(ready) == [.ready] && ready.nextLaunch == planned)
        // The refresh request's own answer is not changed by the processing one.
        #expect(codes(s.why(at: earliest)) == [.invalidJobID])
        s.setLowPowerMode(true, at: earliest)
        #expect(codes(try #require(s.whyProcessing(at: earliest))) == [.deviceState])
        s.setBackgroundRefreshEnabled(false, at: earliest)
        s.forceQuit(at: earliest)
        let user = try #require(s.whyProcessing(at: earliest))
        #expect(codes(user) == [.user, .backgroundRestriction, .deviceState] && user.nextLaunch == nil)
    }

    @Test("iOS processing request: EXECUTING until its budget's end, or 1 s after the user picks the device up")
    func iosProcessingExecuting() throws {
        let pid = "net.example.sleeptap.processing"
        var s = F.ios(permitted: [id, pid])
        s.appLaunched(at: t0, byUser: true)
        #expect(try s.register(identifier: pid, at: t0))
        s.finishLaunching(at: t0)
        try s.submitProcessing(ProcessingRequest(identifier: pid), at: t0)
        s.setScreen(false, at: t0)
        let at = try #require(s.nextLaunch(after: t0))
        let launchTaken = s.takeLaunch(at: at)
        let launch = try #require(launchTaken)
        #expect(s.whyProcessing(at: at)?.reason("running")?.until == launch.deadline)
        s.setScreen(true, at: at.addingTimeInterval(10))
        #expect(s.whyProcessing(at: at.addingTimeInterval(10))?.reason("running")?.until == at.addingTimeInterval(11))
    }

    @Test("iOS processing request, late registration: named before the launch; late-crash spends the request")
    func iosProcessingHandler() throws {
        let pid = "net.example.sleeptap.processing"
        for mode in [RegistrationMode.lateSilent, .lateCrash] {
            var s = F.ios(mode: mode, permitted: [id, pid])
            s.appLaunched(at: t0, byUser: true)
            // Late-silent registers after launch finished (accepted, never entered); late-crash's
            // first process registered in time, and its next launches crash (`launchCrashed`).
            if mode == .lateSilent { s.finishLaunching(at: t0) }
            #expect(try s.register(identifier: pid, at: t0))
            try s.submitProcessing(ProcessingRequest(identifier: pid), at: t0)
            s.finishLaunching(at: t0)
            s.setScreen(false, at: t0)
            let before = try #require(s.whyProcessing(at: t0))
            #expect(codes(before) == [.handlerNotRegisteredInTime, .constraintDeviceIdle])
            #expect(before.reason("handler")?.launchedAt == nil)
            let at = try #require(s.nextLaunch(after: t0))
            if mode == .lateCrash {
                s.launchCrashed(at: at)
                #expect(s.drainTrace().contains { $0.event.name == .osLaunchDropped })
            } else {
                let taken = s.takeLaunch(at: at)
                #expect(taken?.handlerRegistered == false)
            }
            let after = try #require(s.whyProcessing(at: at))
            #expect(codes(after) == [.handlerNotRegisteredInTime, .invalidJobID])
            #expect(after.reason("handler")?.launchedAt == at)
            #expect(s.nextLaunch(after: at) == nil)
        }
    }

    // MARK: Android

    @Test("Android: nothing enqueued, the next run time, ready, executing")
    func androidTiming() throws {
        var s = F.android(interval: 3600)
        #expect(codes(s.why(at: t0)) == [.invalidJobID])
        try s.submit(identifier: id, earliestBeginDate: t0.addingTimeInterval(600), at: t0)
        let answer = s.why(at: t0)
        #expect(codes(answer) == [.constraintMinimumLatency])
        #expect(answer.reasons.first?.until == t0.addingTimeInterval(600))
        let due = t0.addingTimeInterval(600)
        #expect(codes(s.why(at: due)) == [.ready])
        let started = s.takeLaunch(at: due)
        #expect(started != nil)
        #expect(codes(s.why(at: due)) == [.executing])
    }

    @Test("Android: Battery Saver (not when charging), background restriction and Force stop")
    func androidConditions() throws {
        var s = F.android()
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        s.setLowPowerMode(true, at: t0)
        #expect(codes(s.why(at: t0)) == [.deviceState])
        s.setCharging(true, at: t0)
        #expect(codes(s.why(at: t0)) == [.ready])
        s.setCharging(false, at: t0)
        s.setBackgroundRefreshEnabled(false, at: t0)
        s.forceQuit(at: t0)
        #expect(codes(s.why(at: t0)) == [.user, .backgroundRestriction, .deviceState])
        s.appLaunched(at: t0, byUser: true)
        #expect(codes(s.why(at: t0)) == [.backgroundRestriction, .deviceState])
    }

    @Test("Android: the rare bucket's quota is used up until the instant quota returns, the run's own nextLaunch")
    func androidQuota() throws {
        var s = F.android(bucket: .rare)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        // Three 4-minute runs use the 10 minutes (the third is stopped at its budget).
        var now = t0
        for _ in 0..<3 {
            let at = try #require(s.nextLaunch(after: now))
            let taken = s.takeLaunch(at: at)
            let launch = try #require(taken)
            now = at.addingTimeInterval(240)
            s.complete(launch, outcome: .success, duration: 240, at: now)
        }
        let answer = s.why(at: now)
        let quota = try #require(answer.reason("quota"))
        #expect(quota.code == .quota)
        let back = try #require(quota.until)
        #expect(back > now)
        #expect(answer.nextLaunch == back)
        #expect(s.why(at: back).reason("quota") == nil)
    }

    // MARK: The OS value, the event

    @Test("SimulatedOS.drainTrace says os.why when the answer changes, and only then")
    func whyEventOnChange() throws {
        var os = SimulatedOS(try F.launchedIOS())
        _ = os.drainTrace()
        try os.submit(identifier: id, earliestBeginDate: t0.addingTimeInterval(3600), at: t0)
        let first = os.drainTrace().filter { $0.event.name == .osWhy }
        #expect(first.count == 1)
        #expect(first.first?.event["reason"] == .string(PendingReasonCode.constraintMinimumLatency.rawValue))
        // The same request again: the answer is unchanged, nothing is said.
        try os.submit(identifier: id, earliestBeginDate: t0.addingTimeInterval(3600), at: t0)
        #expect(os.drainTrace().filter { $0.event.name == .osWhy }.isEmpty)
        os.setLowPowerMode(true, at: t0)
        let changed = os.drainTrace().filter { $0.event.name == .osWhy }
        #expect(changed.count == 1)
        guard case .string(let all) = changed.first?.event["reasonCodes"] else {
            Issue.record("os.why without codes")
            return
        }
        #expect(all.split(separator: ",").contains("PENDING_JOB_REASON_DEVICE_STATE"))
    }

    @Test("The reason codes: Android's PENDING_JOB_REASON_* values, this model's own names otherwise")
    func codeValues() {
        #expect(PendingReasonCode.quota.androidValue == 14)
        #expect(PendingReasonCode.deviceState.androidValue == 12)
        #expect(PendingReasonCode.constraintMinimumLatency.androidValue == 9)
        #expect(PendingReasonCode.user.androidValue == 15)
        #expect(PendingReasonCode.executing.androidValue == -1)
        for code in PendingReasonCode.allCases {
            #expect(code.rawValue.hasPrefix("PENDING_JOB_REASON_") == (code.androidValue != nil))
        }
    }
}

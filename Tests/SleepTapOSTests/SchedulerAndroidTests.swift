// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOSTestFixtures
import Testing

@testable import SleepTapOS

/// The Android rules and scenarios of docs/scheduler.md (WorkManager on JobScheduler).
@Suite("Simulated Android WorkManager")
struct SchedulerAndroidTests {
    typealias F = SchedulerFixture
    let id = F.refreshID
    let t0 = F.start

    /// Seconds each launch actually ran: the full duration, or the budget when the OS stopped it.
    static func ran(_ launch: BackgroundLaunch, _ duration: TimeInterval) -> TimeInterval {
        min(duration, launch.budget ?? duration)
    }

    /// The most run time any rolling `window` holds (the maximum is reached where a window starts
    /// at a run's start or ends at a run's end).
    static func maxUse(_ runs: [(start: Date, seconds: TimeInterval)], window: TimeInterval) -> TimeInterval {
        var edges = runs.map(\.start)
        edges += runs.map { $0.start.addingTimeInterval($0.seconds - window) }
        return edges.map { from in
            let to = from.addingTimeInterval(window)
            return runs.reduce(0) { total, run in
                let end = run.start.addingTimeInterval(run.seconds)
                return total + max(0, min(end, to).timeIntervalSince(max(run.start, from)))
            }
        }.max() ?? 0
    }

    /// The most launches whose start falls in any rolling `window`.
    static func maxCount(_ starts: [Date], window: TimeInterval) -> Int {
        starts.map { s in starts.filter { $0 >= s && $0 < s.addingTimeInterval(window) }.count }.max() ?? 0
    }

    // MARK: Periodic timing

    @Test("Scenario: interval 10 s -> effective 15 min; runs every 15 min after the previous run")
    func minimumInterval() throws {
        let config = AndroidWorkScheduler.Configuration(repeatInterval: 10)
        #expect(config.effectiveRepeatInterval == 900)
        #expect(config.effectiveFlex == 900)
        var s = AndroidWorkScheduler(configuration: config)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let launches = F.drive(&s, from: t0, to: t0.addingTimeInterval(6 * 3600)) { _, _ in (5, .success) }
        #expect(launches.first?.startedAt == t0)
        let gaps = zip(launches, launches.dropFirst()).map { $1.startedAt.timeIntervalSince($0.startedAt) }
        #expect(!gaps.isEmpty && gaps.allSatisfy { $0 == 905 })
        #expect(launches.allSatisfy { $0.runAttemptCount == 0 && $0.budget == nil && $0.expirationWarning == 0 })
    }

    @Test("Flex: the first run opens the first flex window; later runs come an interval after the last")
    func flexWindow() throws {
        var s = F.android(interval: 3600, flex: 600)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        #expect(s.nextLaunch(after: t0) == t0.addingTimeInterval(3000))
        let launches = F.drive(&s, from: t0, to: t0.addingTimeInterval(4 * 3600)) { _, _ in (10, .success) }
        #expect(launches.map { $0.startedAt.timeIntervalSince(t0) } == [3000, 6610, 10_220, 13_830])
        #expect(AndroidWorkScheduler.Configuration(repeatInterval: 3600, flex: 60).effectiveFlex == 300)
        #expect(AndroidWorkScheduler.Configuration(repeatInterval: 3600, flex: 7200).effectiveFlex == 3600)
    }

    @Test("earliestBeginDate becomes the initial delay; KEEP leaves enqueued work unchanged")
    func initialDelayAndKeep() throws {
        var s = F.android()
        try s.submit(identifier: id, earliestBeginDate: t0.addingTimeInterval(7200), at: t0)
        #expect(s.nextLaunch(after: t0) == t0.addingTimeInterval(7200))
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0.addingTimeInterval(60))
        #expect(s.nextLaunch(after: t0) == t0.addingTimeInterval(7200))
        #expect(F.names(s.drainTrace()) == [.osWorkEnqueued, .osWorkKept])
        #expect(try s.register(identifier: id, at: t0))
    }

    // MARK: Backoff and retries

    @Test("EXPONENTIAL backoff: min(30 s × 2^(n-1), 5 h) after the n-th retry")
    func exponentialSequence() throws {
        let expected: [TimeInterval] = [30, 60, 120, 240, 480, 960, 1920, 3840, 7680, 15_360, 18_000, 18_000]
        #expect((1...12).map { BackoffPolicy.exponential.delay(afterRetry: $0) } == expected)
        #expect(BackoffPolicy.exponential.delay(afterRetry: 10_000) == 18_000)

        var s = F.android(policy: .exponential)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let launches = F.drive(&s, from: t0, to: t0.addingTimeInterval(3 * F.day)) { _, launch in
            launch.runAttemptCount < 12 ? (1, .retry) : nil
        }
        #expect(launches.prefix(13).map(\.runAttemptCount) == Array(0...12))
        let gaps = zip(launches, launches.dropFirst()).prefix(12).map {
            $1.startedAt.timeIntervalSince($0.startedAt) - 1
        }
        #expect(gaps == expected)
    }

    @Test("LINEAR backoff: min(30 s × n, 5 h)")
    func linearSequence() throws {
        #expect((1...5).map { BackoffPolicy.linear.delay(afterRetry: $0) } == [30, 60, 90, 120, 150])
        #expect(BackoffPolicy.linear.delay(afterRetry: 599) == 17_970)
        #expect(BackoffPolicy.linear.delay(afterRetry: 600) == 18_000)
        #expect(BackoffPolicy.linear.delay(afterRetry: 601) == 18_000)
        #expect(BackoffPolicy(rawValue: "LINEAR") == .linear)

        var s = F.android(policy: .linear)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let launches = F.drive(&s, from: t0, to: t0.addingTimeInterval(3600)) { _, launch in
            launch.runAttemptCount < 4 ? (1, .retry) : nil
        }
        let gaps = zip(launches, launches.dropFirst()).map { $1.startedAt.timeIntervalSince($0.startedAt) - 1 }
        #expect(gaps == [30, 60, 90, 120])
    }

    @Test(
        "Success and failure reset runAttemptCount and move to the next period",
        arguments: [RunOutcome.success, .failure])
    func resetAfterResult(outcome: RunOutcome) throws {
        var s = F.android()
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        var outcomes: [RunOutcome] = [.retry, .retry, outcome]
        let launches = F.drive(&s, from: t0, to: t0.addingTimeInterval(2000)) { _, _ in
            outcomes.isEmpty ? nil : (10, outcomes.removeFirst())
        }
        #expect(launches.map(\.runAttemptCount) == [0, 1, 2, 0])
        let last = launches[3].startedAt.timeIntervalSince(launches[2].startedAt)
        #expect(last == 10 + 900)
        #expect(s.runAttemptCount(of: id) == 1)  // the fourth run is in flight
    }

    @Test(
        "A worker that retries 3 times under WorkManager: 4 runs 30 s, 60 s, 120 s apart, then the next period"
    )
    func workerRuleDriven() throws {
        var s = F.android()
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        var results: [RunOutcome] = []
        let launches = F.drive(&s, from: t0, to: t0.addingTimeInterval(1130)) { _, launch in
            // The app's worker: Result.retry() while runAttemptCount < 3, then Result.failure().
            let r: RunOutcome = launch.runAttemptCount < 3 ? .retry : .failure
            results.append(r)
            return (2, r)
        }
        #expect(results == [.retry, .retry, .retry, .failure, .retry])
        #expect(launches.map(\.runAttemptCount) == [0, 1, 2, 3, 0])
        let gaps = zip(launches, launches.dropFirst()).map { $1.startedAt.timeIntervalSince($0.startedAt) - 2 }
        #expect(gaps == [30, 60, 120, 900])
    }

    // MARK: Standby buckets

    @Test("Scenario: rare bucket on battery, 4-minute runs -> at most 2 full runs per rolling 24 h")
    func rareBucketOnBattery() throws {
        var s = F.android(bucket: .rare)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let launches = F.drive(&s, from: t0, to: t0.addingTimeInterval(4 * F.day)) { _, _ in (240, .success) }
        let full = launches.filter { ($0.budget ?? .infinity) >= 240 }
        #expect(Self.maxCount(full.map(\.startedAt), window: F.day) == 2)
        #expect(full.count >= 5, "only \(full.count) full runs in 4 days")
        let runs = launches.map { (start: $0.startedAt, seconds: Self.ran($0, 240)) }
        #expect(Self.maxUse(runs, window: F.day) <= 600 + 1e-6)
        #expect(Self.maxCount(launches.map(\.startedAt), window: F.day) <= 3)
        #expect(launches.first?.budget == 600)
        let trace = s.drainTrace()
        let stopped = trace.filter { $0.event.name == .osWorkStopped }
        #expect(!stopped.isEmpty)
        #expect(stopped.allSatisfy { $0.event["reason"] == .string("quota") })
        // WorkInfo.getStopReason(): STOP_REASON_QUOTA.
        #expect(stopped.allSatisfy { $0.event["stopReason"] == .int(10) })
        #expect(stopped.allSatisfy { $0.event["stopReasonName"] == .string("STOP_REASON_QUOTA") })
    }

    @Test("Scenario: the same rare bucket while charging has no limit")
    func rareBucketCharging() throws {
        var s = F.android(bucket: .rare)
        s.setCharging(true, at: t0)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let launches = F.drive(&s, from: t0, to: t0.addingTimeInterval(F.day)) { _, _ in (240, .success) }
        #expect(launches.count == 76)  // every 19 min: 4 min run + 15 min interval
        #expect(launches.allSatisfy { $0.budget == nil })
        // Runs while charging use no quota: unplugged, the full 10 minutes are there.
        let unplugged = t0.addingTimeInterval(F.day)
        s.setCharging(false, at: unplugged)
        #expect(s.quotaRemaining(at: unplugged) == 600)
    }

    @Test("Restricted bucket on a charger: still one run per rolling day, and the run uses quota")
    func restrictedOnCharger() throws {
        var s = F.android(bucket: .restricted)
        s.setCharging(true, at: t0)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        var launches = F.drive(&s, from: t0, to: t0.addingTimeInterval(3600)) { _, _ in (60, .success) }
        #expect(launches.count == 1)
        #expect(s.quotaRemaining(at: t0.addingTimeInterval(3600)) == 540)
        #expect(s.why(at: t0.addingTimeInterval(3600)).reason("quota")?.until == t0.addingTimeInterval(F.day + 60))
        launches += F.drive(&s, from: t0.addingTimeInterval(3600), to: t0.addingTimeInterval(3 * F.day)) { _, _ in
            (60, .success)
        }
        #expect(launches.map { $0.startedAt.timeIntervalSince(t0) } == [0, F.day + 60, 2 * F.day + 120])
        #expect(launches.allSatisfy { $0.budget == 600 })
        // The other buckets are free on the charger (rareBucketCharging): rare runs every 19 min.
        s.setStandbyBucket(.rare, at: t0.addingTimeInterval(3 * F.day))
        #expect(s.quotaRemaining(at: t0.addingTimeInterval(3 * F.day)) == nil)
    }

    @Test("Restricted bucket: one run per rolling day")
    func restrictedOncePerDay() throws {
        var s = F.android(bucket: .restricted)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let launches = F.drive(&s, from: t0, to: t0.addingTimeInterval(3 * F.day)) { _, _ in (60, .success) }
        // Each run waits for the previous day's session to leave the window: 0, 1 d + 60 s, 2 d + 120 s.
        #expect(launches.map { $0.startedAt.timeIntervalSince(t0) } == [0, F.day + 60, 2 * F.day + 120])
        #expect(Self.maxCount(launches.map(\.startedAt), window: F.day) == 1)
    }

    @Test(
        "working_set: at most 10 min of runs per rolling 2 h; frequent: per 8 h",
        arguments: [
            (StandbyBucket.workingSet, 7200.0), (.frequent, 28_800.0),
        ])
    func timeQuota(bucket: StandbyBucket, window: TimeInterval) throws {
        var s = F.android(bucket: bucket)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let launches = F.drive(&s, from: t0, to: t0.addingTimeInterval(2 * F.day)) { _, _ in (240, .success) }
        let runs = launches.map { (start: $0.startedAt, seconds: Self.ran($0, 240)) }
        #expect(Self.maxUse(runs, window: window) <= 600 + 1e-6)
        #expect(Self.maxUse(runs, window: window) >= 570)
    }

    @Test("A run stopped by quota is not a success: the attempt counts and it is tried again when quota returns")
    func stoppedByQuota() throws {
        var s = F.android(bucket: .rare)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let firstValue = s.takeLaunch(at: t0)
        let first = try #require(firstValue)
        #expect(first.budget == 600)
        s.complete(first, outcome: .success, duration: 700, at: t0.addingTimeInterval(700))
        let stopValue = s.drainTrace().first { $0.event.name == .osWorkStopped }
        let stop = try #require(stopValue)
        #expect(stop.at == t0.addingTimeInterval(600))
        #expect(s.runAttemptCount(of: id) == 1)
        let next = try #require(s.nextLaunch(after: t0.addingTimeInterval(700)))
        #expect(next == t0.addingTimeInterval(30 + F.day))  // 30 s of the run aged out: the in-quota buffer
        let secondValue = s.takeLaunch(at: next)
        let second = try #require(secondValue)
        #expect(second.runAttemptCount == 1)
        // 30 s left, and the first run's other 570 s leave the window while this one runs
        // (AOSP `getTimeUntilQuotaConsumedLocked`): 600 s before the quota is used up.
        #expect(second.budget == 600)
        // Never reported: the OS stops it at the budget on its own.
        s.setCharging(false, at: next.addingTimeInterval(700))
        #expect(s.drainTrace().contains { $0.event.name == .osWorkStopped && $0.at == next.addingTimeInterval(600) })
    }

    // MARK: Conditions

    @Test("Force stop: no runs until the user opens the app")
    func forceStop() throws {
        var s = F.android()
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        s.forceQuit(at: t0)
        #expect(s.nextLaunch(after: t0) == nil)
        #expect(F.drive(&s, from: t0, to: t0.addingTimeInterval(F.day)) { _, _ in (5, .success) }.isEmpty)
        s.appLaunched(at: t0.addingTimeInterval(F.day), byUser: false)
        #expect(s.nextLaunch(after: t0) == nil)
        s.appLaunched(at: t0.addingTimeInterval(F.day), byUser: true)
        #expect(s.nextLaunch(after: t0.addingTimeInterval(F.day)) == t0.addingTimeInterval(F.day))
    }

    @Test("Battery Saver defers runs unless charging; background off stops them")
    func batterySaverAndOff() throws {
        var s = F.android()
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        s.setLowPowerMode(true, at: t0)
        #expect(s.nextLaunch(after: t0) == nil)
        s.setCharging(true, at: t0)
        #expect(s.nextLaunch(after: t0) == t0)
        s.setBackgroundRefreshEnabled(false, at: t0)
        #expect(s.nextLaunch(after: t0) == nil)
        #expect(s.takeLaunch(at: t0) == nil)
    }

    @Test("simulateLaunch (jobscheduler run -f): WorkManager refuses a periodic run before its time")
    func simulateLaunch() throws {
        var s = F.android()
        #expect(s.simulateLaunch(identifier: id, at: t0) == nil)
        try s.submit(identifier: id, earliestBeginDate: t0.addingTimeInterval(3600), at: t0)
        #expect(s.simulateLaunch(identifier: id, at: t0) == nil)
        s.setLowPowerMode(true, at: t0)
        let forcedValue = s.simulateLaunch(identifier: id, at: t0.addingTimeInterval(3600))
        let forced = try #require(forcedValue)
        #expect(forced.simulated && forced.runAttemptCount == 0)
    }

    @Test("Status shows bucket, quota and the next run")
    func status() throws {
        var s = F.android(bucket: .rare)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let status = Dictionary(s.status(), uniquingKeysWith: { a, _ in a })
        #expect(status["platform"] == .string("android"))
        #expect(status["bucket"] == .string("rare"))
        #expect(status["quotaRemaining"] == .double(600))
        #expect(status["nextLaunch"] == .date(t0))
        #expect(status["runAttemptCount"] == .int(0))
    }

    // MARK: Quotas by Android version (--android-api)

    static func android(api: Int, flags: Bool = true, bucket: StandbyBucket = .active) -> AndroidWorkScheduler {
        var configuration = AndroidWorkScheduler.Configuration(repeatInterval: 900, initialBucket: bucket)
        configuration.selectQuotas(androidAPI: api, android16Flags: flags)
        return AndroidWorkScheduler(configuration: configuration)
    }

    @Test("AndroidAPI: below 33 the pre-13 table with no cap; 33-35 the 4 h cap; 36 the flagged values, or 13-15 off")
    func quotaTables() {
        #expect(AndroidAPI.quotas(for: 32).buckets == StandbyQuota.preAndroid13)
        #expect(AndroidAPI.quotas(for: 32).cap == nil)
        for api in [33, 34, 35] {
            #expect(AndroidAPI.quotas(for: api).buckets == StandbyQuota.android13to15)
            #expect(AndroidAPI.quotas(for: api).cap == StandbyQuota.executionCap)
        }
        #expect(AndroidAPI.quotas(for: 36).buckets == StandbyQuota.android16Flagged)
        #expect(AndroidAPI.quotas(for: 36, android16Flags: false).buckets == StandbyQuota.android13to15)
        #expect(StandbyQuota.executionCap.allowedTime == 4 * 3600 && StandbyQuota.executionCap.window == 86_400)
        #expect(StandbyQuota.android16Flagged[.active]?.allowedTime == 1200)
        #expect(StandbyQuota.android16Flagged[.active]?.window == 3600)
    }

    @Test("Android 13-15, active bucket on battery: at most 4 h of job time per rolling 24 h; before 13 no cap")
    func executionCap() throws {
        let end = t0.addingTimeInterval(F.day)
        var old = Self.android(api: 32)
        try old.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let oldRuns = F.drive(&old, from: t0, to: end) { _, _ in (600, .success) }
        #expect(oldRuns.count == 58)  // every 25 min: 10 min run + 15 min interval
        #expect(oldRuns.allSatisfy { $0.budget == nil })

        var new = Self.android(api: 34)
        try new.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let newRuns = F.drive(&new, from: t0, to: end) { _, _ in (600, .success) }
        let used = newRuns.map { (start: $0.startedAt, seconds: Self.ran($0, 600)) }
        #expect(Self.maxUse(used, window: F.day) <= 4 * 3600 + 1e-6)
        #expect(newRuns.count == 24, "\(newRuns.count) runs")
        #expect(abs((newRuns.first?.budget ?? 0) - 4 * 3600) < 1e-6)
        let why = new.why(at: end.addingTimeInterval(-60))
        #expect(why.reasons.contains { $0.condition == "quota" && $0.state.contains("execution cap") })
    }

    @Test("Android 16 flagged: active 20 min per rolling hour, working_set 10 min per 4 h; flags off = 13-15")
    func android16() throws {
        let end = t0.addingTimeInterval(6 * 3600)
        var flagged = Self.android(api: 36)
        try flagged.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let runs = F.drive(&flagged, from: t0, to: end) { _, _ in (600, .success) }
        let used = runs.map { (start: $0.startedAt, seconds: Self.ran($0, 600)) }
        #expect(Self.maxUse(used, window: 3600) <= 1200 + 1e-6)
        #expect(runs.first?.budget == 1200)

        var off = Self.android(api: 36, flags: false)
        try off.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let offRuns = F.drive(&off, from: t0, to: end) { _, _ in (600, .success) }
        let offUsed = offRuns.map { (start: $0.startedAt, seconds: Self.ran($0, 600)) }
        #expect(Self.maxUse(offUsed, window: 3600) > 1200)

        var working = Self.android(api: 36, bucket: .workingSet)
        try working.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let workingRuns = F.drive(&working, from: t0, to: t0.addingTimeInterval(F.day)) { _, _ in (60, .success) }
        let workingUsed = workingRuns.map { (start: $0.startedAt, seconds: Self.ran($0, 60)) }
        #expect(Self.maxUse(workingUsed, window: 4 * 3600) <= 600 + 1e-6)
        var workingOld = Self.android(api: 34, bucket: .workingSet)
        try workingOld.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let workingOldRuns = F.drive(&workingOld, from: t0, to: t0.addingTimeInterval(F.day)) { _, _ in
            (60, .success)
        }
        let workingOldUsed = workingOldRuns.map { (start: $0.startedAt, seconds: Self.ran($0, 60)) }
        #expect(Self.maxUse(workingOldUsed, window: 4 * 3600) > 600)
    }

    /// 7-minute runs every 15 min in the active bucket on battery, two days from `t0`: the starts
    /// and budgets (seconds after `t0`) of each day.
    func activeSevenMinuteRuns(api: Int) throws -> [[(start: TimeInterval, budget: TimeInterval?)]] {
        var s = Self.android(api: api)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let launches = F.drive(&s, from: t0, to: t0.addingTimeInterval(2 * F.day)) { _, _ in (420, .success) }
        let all = launches.map { (start: $0.startedAt.timeIntervalSince(t0), budget: $0.budget) }
        return [all.filter { $0.start < F.day }, all.filter { $0.start >= F.day }]
    }

    /// The rules: a run ends at `end`, the next starts at `end + 900` (WorkManager); a start needs
    /// 30 s of quota left in each limit; the budget is the time until a limit is used up, counting
    /// the job time that leaves the rolling window meanwhile (AOSP
    /// `QuotaController.getTimeUntilQuotaConsumedLocked`); a stopped run is retried, backed off
    /// from its enqueue time, as soon as quota allows.
    ///
    /// API 34 (only the 4 h per 24 h cap binds in active): runs start every 1,320 s (420 + 900);
    /// run k starts with 14,400 − 420k s left, so runs 0 to 33 finish and run 34 (44,880 s) gets
    /// 120 s and is stopped: 35 launches, 34 full. The retry waits for 30 s of run 0 to leave the
    /// 24 h window (86,430 s); then run 0's last 390 s leave while the new run uses them: budget
    /// 390 + 30 = 420, it finishes, and the next run, 1,320 s later, finds the same. Every day:
    /// 35 launches, 34 full, one stopped after 120 s, 4 h of job time.
    @Test("Active bucket, API 34, 7-minute runs every 15 min: 35 launches a day, 34 full, held by the 4 h cap")
    func activeBucketAPI34() throws {
        let days = try activeSevenMinuteRuns(api: 34)
        let runs = (0..<35).map { TimeInterval($0) }
        let starts: [TimeInterval] = runs.map { $0 * 1320 }
        let budgets: [TimeInterval?] = runs.map { 14_400 - $0 * 420 }
        let steady: [TimeInterval?] = Array(repeating: 420, count: 34) + [120]
        #expect(days[0].map(\.start) == starts)
        #expect(days[0].map(\.budget) == budgets)
        #expect(days[1].map(\.start) == starts.map { F.day + 30 + $0 })
        #expect(days[1].map(\.budget) == steady)
    }

    /// API 36 (20 min per rolling hour and the 4 h cap): runs at 0 (budget 1,200 s) and 1,320
    /// (780 s) finish; the third, at 2,640, has 1,200 − 840 = 360 s and nothing leaves the hour
    /// before it ends: stopped after 6 min. The retry is held by `quota` until 30 s of run 0 left
    /// the hour (3,630 s): budget 390 + 30 = 420, it finishes; 1,320 s later the same; the third
    /// again gets 360 (330 of the hour's oldest run leave, then a 630 s gap). So every 3,630 s:
    /// two full runs and one of 360 s, 1,200 s of job time; after 12 such cycles (42,930 s) the
    /// 4 h cap holds the work until 30 s of run 0 leave the day (86,430 s). Every day: 36 launches,
    /// 24 full, 12 stopped after 6 min: no more job time than API 34, in shorter runs.
    @Test("Active bucket, API 36: the hour's 20 min cut every third run; 36 launches a day, 24 full")
    func activeBucketAPI36() throws {
        let days = try activeSevenMinuteRuns(api: 36)
        let cycle: [TimeInterval] = [0, 1320, 2640]
        var starts: [TimeInterval] = []
        for c in 0..<12 { starts += cycle.map { Double(c) * 3630 + $0 } }
        let steady: [TimeInterval?] = [420, 420, 360]
        var firstDay: [TimeInterval?] = [1200, 780, 360]
        for _ in 1..<12 { firstDay += steady }
        var secondDay: [TimeInterval?] = []
        for _ in 0..<12 { secondDay += steady }
        #expect(days[0].map(\.start) == starts)
        #expect(days[0].map(\.budget) == firstDay)
        #expect(days[1].map(\.start) == starts.map { F.day + 30 + $0 })
        #expect(days[1].map(\.budget) == secondDay)
        // Between the stop (3,000 s) and 3,630 s the work waits for quota.
        var s = Self.android(api: 36)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        _ = F.drive(&s, from: t0, to: t0.addingTimeInterval(3100)) { _, _ in (420, .success) }
        #expect(s.why(at: t0.addingTimeInterval(3100)).reason("quota")?.until == t0.addingTimeInterval(3630))
        // Without the budget's roll-out (a budget of the job time left only), the retry would get
        // 30 s: the run at 3,630 s is the one that shows it.
        #expect(days[0][3].budget == 420)
    }
}

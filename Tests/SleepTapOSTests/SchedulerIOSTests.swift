// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOSTestFixtures
import Testing

@testable import SleepTapOS

/// The iOS scenarios and rules of docs/scheduler.md.
/// Seeded tests name their seed in every failure; rerun with it to replay.
@Suite("Simulated iOS BGTaskScheduler")
struct SchedulerIOSTests {
    typealias F = SchedulerFixture
    let id = F.refreshID
    let t0 = F.start

    /// Resubmits for 6 h later first (before the work, so an expiration cannot lose the next
    /// request), then succeeds after 5 s.
    static func refreshJob(_ s: inout IOSBackgroundScheduler, _ launch: BackgroundLaunch) -> (
        duration: TimeInterval, outcome: RunOutcome
    )? {
        try? s.submit(
            identifier: launch.identifier, earliestBeginDate: launch.startedAt.addingTimeInterval(6 * 3600),
            at: launch.startedAt)
        return (5, .success)
    }

    /// The `BGTaskScheduler.Error` a failure carries; nil when the failure is a crash.
    static func rejection(_ failure: SchedulerFailure) -> SchedulerError? {
        if case .rejected(let error) = failure { error } else { nil }
    }

    // MARK: Scenario 1: registration

    @Test("Scenario 1: register in the launch phase returns true; a non-permitted identifier false")
    func registerInLaunchPhase() throws {
        var s = F.ios()
        s.appLaunched(at: t0, byUser: true)
        #expect(try s.register(identifier: id, at: t0))
        #expect(try s.register(identifier: "not.in.plist", at: t0) == false)
        s.finishLaunching(at: t0)
        try s.submit(identifier: id, earliestBeginDate: t0.addingTimeInterval(3600), at: t0)
        let next = try #require(s.nextLaunch(after: t0))
        let launchValue = s.takeLaunch(at: next)
        let launch = try #require(launchValue)
        #expect(launch.handlerRegistered)
        #expect(F.names(s.drainTrace()).contains(.osLaunchDropped) == false)
    }

    @Test(
        "Scenario 1: after launch finished, crash mode (and early) raise the launch-handler error",
        arguments: [
            RegistrationMode.lateCrash, .early,
        ])
    func lateRegistrationCrashes(mode: RegistrationMode) {
        var s = F.ios(mode: mode)
        s.appLaunched(at: t0, byUser: true)
        s.finishLaunching(at: t0)
        #expect(throws: LaunchHandlerCrash.registeredAfterLaunch) { try s.register(identifier: id, at: t0) }
        #expect(
            LaunchHandlerCrash.registeredAfterLaunch.message
                == "All launch handlers must be registered before application finishes launching")
        #expect(F.names(s.drainTrace()).contains(.osAppCrashed))
        // The process died with the exception: a submit now has no handler.
        #expect(throws: SchedulerFailure.crash(.noHandler(id))) {
            try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        }
    }

    @Test(
        "Scenario 1: silent mode accepts the late registration and the submit, but never enters the handler")
    func lateSilentNeverEntered() throws {
        var s = F.ios(mode: .lateSilent)
        s.appLaunched(at: t0, byUser: true)
        s.finishLaunching(at: t0)
        #expect(try s.register(identifier: id, at: t0))
        try s.submit(identifier: id, earliestBeginDate: t0.addingTimeInterval(300), at: t0)
        var entered = 0
        var dropped = 0
        // The user opens the app every morning and the (late) registration and submit run again.
        for day in 0..<7 {
            let morning = t0.addingTimeInterval(Double(day) * F.day)
            if day > 0 {
                s.appLaunched(at: morning, byUser: true)
                s.finishLaunching(at: morning)
                #expect(try s.register(identifier: id, at: morning))
                try s.submit(identifier: id, earliestBeginDate: morning.addingTimeInterval(300), at: morning)
            }
            let launches = F.drive(&s, from: morning, to: morning.addingTimeInterval(F.day)) { _, _ in
                entered += 1
                return (5, .success)
            }
            dropped += launches.filter { !$0.handlerRegistered }.count
        }
        #expect(entered == 0)
        #expect(dropped > 0)
        let trace = s.drainTrace()
        let drops = trace.filter { $0.event.name == .osLaunchDropped }
        #expect(drops.count == dropped)
        #expect(drops.first?.event["reason"] == .string("no handler registered in time"))
    }

    @Test("Registering one identifier twice in a process raises")
    func duplicateRegistration() throws {
        var s = F.ios()
        s.appLaunched(at: t0, byUser: true)
        #expect(try s.register(identifier: id, at: t0))
        #expect(
            throws: LaunchHandlerCrash(
                message: "Launch handler for task with identifier \(id) has already been registered")
        ) {
            try s.register(identifier: id, at: t0)
        }
        // A new process may register again.
        s.appLaunched(at: t0.addingTimeInterval(60), byUser: true)
        #expect(try s.register(identifier: id, at: t0.addingTimeInterval(60)))
    }

    // MARK: Scenario 2: submit without a handler

    @Test("Scenario 2: submit for an unregistered identifier raises \"No launch handler registered ...\"")
    func submitUnregistered() {
        var s = F.ios()
        s.appLaunched(at: t0, byUser: true)
        s.finishLaunching(at: t0)
        #expect(
            throws: SchedulerFailure.crash(
                LaunchHandlerCrash(
                    message: "No launch handler registered for task with identifier \(id)"))
        ) {
            try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        }
        #expect(s.nextLaunch(after: t0) == nil)
    }

    // MARK: Scenario 3: refresh off

    @Test("Scenario 3: refresh off -> submit fails unavailable (1); 7 simulated days -> 0 runs")
    func refreshOff() throws {
        var s = try F.launchedIOS()
        try s.submit(identifier: id, earliestBeginDate: t0.addingTimeInterval(3600), at: t0)
        s.setBackgroundRefreshEnabled(false, at: t0.addingTimeInterval(60))
        let failure = try #require(throws: SchedulerFailure.self) {
            try s.submit(identifier: id, earliestBeginDate: t0.addingTimeInterval(3600), at: t0.addingTimeInterval(60))
        }
        let e = try #require(Self.rejection(failure), "expected a rejection, got \(failure)")
        #expect(e.code == 1)
        #expect(e.name == "unavailable")
        let end = t0.addingTimeInterval(7 * F.day)
        let launches = F.drive(&s, from: t0, to: end, run: Self.refreshJob)
        #expect(launches.isEmpty)
        #expect(s.takeLaunch(at: end) == nil)
        // Switched back on, the kept request gets a fresh opportunity.
        s.setBackgroundRefreshEnabled(true, at: end)
        let next = try #require(s.nextLaunch(after: end))
        #expect(next >= end)
    }

    // MARK: Scenario 4's fields: budget and expiration

    @Test("Scenario 4's grant: budget 3 s, expiration 1 s before the end; ending unsuccessful in time is no kill")
    func budgetAndExpiration() throws {
        var s = try F.launchedIOS(budget: 3)
        try s.submit(identifier: id, earliestBeginDate: t0.addingTimeInterval(600), at: t0)
        let start = try #require(s.nextLaunch(after: t0))
        let launchValue = s.takeLaunch(at: start)
        let launch = try #require(launchValue)
        #expect(launch.budget == 3)
        #expect(launch.expirationWarning == 1)
        #expect(launch.expirationAt == start.addingTimeInterval(2))
        #expect(launch.deadline == start.addingTimeInterval(3))
        #expect(launch.runAttemptCount == 0 && !launch.simulated && launch.handlerRegistered)
        _ = s.drainTrace()
        // Renew 0.1 s, notices 0.5 s, dates cut off by the expiration handler at 2 s: ends unsuccessful.
        s.complete(launch, outcome: .failure, duration: 2.6, at: start.addingTimeInterval(2.6))
        let trace = s.drainTrace()
        #expect(F.names(trace) == [.osTaskExpired, .osTaskCompleted])
        #expect(trace[0].at == start.addingTimeInterval(2))
        #expect(trace[1].event["success"] == .bool(false))
        #expect(!F.names(trace).contains(.osAppKilled))
    }

    @Test("Not calling setTaskCompleted within the budget gets the app killed (traced os.app.killed)")
    func overrunKills() throws {
        var s = try F.launchedIOS(budget: 3)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let start = try #require(s.nextLaunch(after: t0))
        let launchValue = s.takeLaunch(at: start)
        let launch = try #require(launchValue)
        s.complete(launch, outcome: .success, duration: 3.5, at: start.addingTimeInterval(3.5))
        let trace = s.drainTrace()
        let killed = try #require(trace.first { $0.event.name == .osAppKilled })
        #expect(killed.at == start.addingTimeInterval(3))
        #expect(!F.names(trace).contains(.osTaskCompleted))
        #expect(s.status().first { $0.0 == "processRunning" }?.1 == .bool(false))

        // Never completing at all: the kill shows up at the next call after the deadline.
        var t = try F.launchedIOS(budget: 30)
        try t.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let start2 = try #require(t.nextLaunch(after: t0))
        let taken = t.takeLaunch(at: start2)
        #expect(taken != nil)
        t.setCharging(false, at: start2.addingTimeInterval(31))
        let killed2Value = t.drainTrace().first { $0.event.name == .osAppKilled }
        let killed2 = try #require(killed2Value)
        #expect(killed2.at == start2.addingTimeInterval(30))
    }

    @Test("The default budget is 30 s with the expiration handler 1 s before")
    func defaultBudget() throws {
        var s = try F.launchedIOS()
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let launchValue = s.takeLaunch(at: try #require(s.nextLaunch(after: t0)))
        let launch = try #require(launchValue)
        #expect(launch.budget == 30 && launch.expirationWarning == 1)
    }

    // MARK: Scenario 5: force-quit

    @Test("Scenario 5: force-quit -> 0 refresh runs until the next user launch")
    func forceQuit() throws {
        var s = try F.launchedIOS()
        try s.submit(identifier: id, earliestBeginDate: t0.addingTimeInterval(3600), at: t0)
        s.forceQuit(at: t0.addingTimeInterval(60))
        let end = t0.addingTimeInterval(7 * F.day)
        #expect(F.drive(&s, from: t0, to: end, run: Self.refreshJob).isEmpty)
        // A background (non-user) launch does not clear it.
        s.appLaunched(at: end, byUser: false)
        #expect(s.nextLaunch(after: end) == nil)
        // The user opens the app: the kept request is scheduled again and runs.
        s.appLaunched(at: end, byUser: true)
        #expect(try s.register(identifier: id, at: end))
        s.finishLaunching(at: end)
        let launches = F.drive(&s, from: end, to: end.addingTimeInterval(2 * F.day), run: Self.refreshJob)
        #expect(!launches.isEmpty)
        #expect(launches.allSatisfy { $0.startedAt >= end && $0.handlerRegistered })
    }

    // MARK: Request rules

    @Test("Submitting the same identifier replaces the pending request")
    func submitReplaces() throws {
        var s = try F.launchedIOS()
        try s.submit(identifier: id, earliestBeginDate: t0.addingTimeInterval(600), at: t0)
        let later = t0.addingTimeInterval(10 * 3600)
        try s.submit(identifier: id, earliestBeginDate: later, at: t0.addingTimeInterval(1))
        #expect(s.pendingIdentifier == id)
        #expect(s.pendingEarliestBeginDate == later)
        let replacedValue = s.drainTrace().first { $0.event.name == .osRequestReplaced }
        let replaced = try #require(replacedValue)
        #expect(replaced.event["previousEarliestBeginDate"] == .date(t0.addingTimeInterval(600)))
        let launches = F.drive(&s, from: t0, to: t0.addingTimeInterval(3 * F.day)) { _, _ in (5, .success) }
        #expect(launches.count == 1)
        #expect(launches.allSatisfy { $0.startedAt >= later })
    }

    @Test("A second app-refresh identifier while one is pending fails tooManyPendingTaskRequests (2)")
    func tooManyPending() throws {
        var s = F.ios(permitted: [id, F.otherID])
        s.appLaunched(at: t0, byUser: true)
        #expect(try s.register(identifier: id, at: t0))
        #expect(try s.register(identifier: F.otherID, at: t0))
        s.finishLaunching(at: t0)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        #expect(
            throws: SchedulerFailure.rejected(
                .tooManyPendingTaskRequests("an app-refresh request for \(id) is already pending"))
        ) {
            try s.submit(identifier: F.otherID, earliestBeginDate: nil, at: t0)
        }
        #expect(s.pendingIdentifier == id)
    }

    @Test("notPermitted (3): identifier not in the plist, or no fetch background mode")
    func notPermitted() throws {
        var s = F.ios(fetchMode: false)
        s.appLaunched(at: t0, byUser: true)
        #expect(try s.register(identifier: id, at: t0))
        let noFetchMode = try #require(throws: SchedulerFailure.self) {
            try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        }
        let missingMode = try #require(Self.rejection(noFetchMode), "expected a rejection, got \(noFetchMode)")
        #expect(missingMode.code == 3 && missingMode.name == "notPermitted")
        #expect(s.pendingIdentifier == nil)
        var u = F.ios()
        u.appLaunched(at: t0, byUser: true)
        #expect(try u.register(identifier: "x.unlisted", at: t0) == false)
        let unlisted = try #require(throws: SchedulerFailure.self) {
            try u.submit(identifier: "x.unlisted", earliestBeginDate: nil, at: t0)
        }
        let notListed = try #require(Self.rejection(unlisted), "expected a rejection, got \(unlisted)")
        #expect(notListed.code == 3 && notListed.name == "notPermitted")
        #expect(u.pendingIdentifier == nil)
    }

    @Test("Low Power Mode: no launches while on; launches again after it goes off")
    func lowPowerMode() throws {
        var s = try F.launchedIOS()
        try s.submit(identifier: id, earliestBeginDate: t0.addingTimeInterval(600), at: t0)
        s.setLowPowerMode(true, at: t0)
        #expect(s.nextLaunch(after: t0) == nil)
        let off = t0.addingTimeInterval(3 * F.day)
        #expect(F.drive(&s, from: t0, to: off, run: Self.refreshJob).isEmpty)
        s.setLowPowerMode(false, at: off)
        let next = try #require(s.nextLaunch(after: off))
        #expect(next >= off)
        #expect(s.takeLaunch(at: next)?.handlerRegistered == true)
    }

    @Test("simulateLaunch runs the pending request at once, ignoring earliestBeginDate; nothing pending gives nil")
    func simulateLaunch() throws {
        var s = try F.launchedIOS()
        #expect(s.simulateLaunch(identifier: id, at: t0) == nil)
        try s.submit(identifier: id, earliestBeginDate: t0.addingTimeInterval(8 * 3600), at: t0)
        let now = t0.addingTimeInterval(5)
        let launchValue = s.simulateLaunch(identifier: id, at: now)
        let launch = try #require(launchValue)
        #expect(launch.simulated && launch.handlerRegistered && launch.startedAt == now)
        #expect(s.nextLaunch(after: now) == nil)
        s.complete(launch, outcome: .success, duration: 1, at: now.addingTimeInterval(1))
        #expect(F.names(s.drainTrace()).contains(.osTaskCompleted))
        // Not running (force-quit): nothing to attach the debugger to.
        try s.submit(identifier: id, earliestBeginDate: nil, at: now.addingTimeInterval(2))
        s.forceQuit(at: now.addingTimeInterval(3))
        #expect(s.simulateLaunch(identifier: id, at: now.addingTimeInterval(4)) == nil)
    }

    // MARK: Seeded properties

    @Test("Never a launch before earliestBeginDate, over 400 seeds (replace and low power included)")
    func neverBeforeEarliest() throws {
        for seed in UInt64(0)..<400 {
            var rng = SplitMix64(state: seed &* 0x9E37_79B9)
            var s = try F.launchedIOS(seed: seed)
            var now = t0
            var earliest = t0.addingTimeInterval(Double(rng.next() % 86_400))
            try s.submit(identifier: id, earliestBeginDate: earliest, at: now)
            for _ in 0..<6 {
                switch rng.next() % 4 {
                case 0:
                    earliest = now.addingTimeInterval(Double(rng.next() % 43_200))
                    try s.submit(identifier: id, earliestBeginDate: earliest, at: now)
                case 1:
                    s.setLowPowerMode(true, at: now)
                    now = now.addingTimeInterval(Double(rng.next() % 7200))
                    s.setLowPowerMode(false, at: now)
                default: break
                }
                guard let t = s.nextLaunch(after: now) else {
                    Issue.record("seed \(seed): no launch planned")
                    break
                }
                let launchValue = s.takeLaunch(at: t)
                let launch = try #require(launchValue, "seed \(seed)")
                #expect(launch.startedAt >= earliest, "seed \(seed): launch \(launch.startedAt) < earliest \(earliest)")
                now = t.addingTimeInterval(2)
                s.complete(launch, outcome: .success, duration: 2, at: now)
                earliest = now.addingTimeInterval(Double(rng.next() % 21_600))
                try s.submit(identifier: id, earliestBeginDate: earliest, at: now)
            }
        }
    }

    @Test("Same seed, same launch times (replay); different seeds differ")
    func replay() throws {
        func launchTimes(seed: UInt64) throws -> [Date] {
            var s = try F.launchedIOS(seed: seed)
            try s.submit(identifier: id, earliestBeginDate: t0.addingTimeInterval(3600), at: t0)
            return F.drive(&s, from: t0, to: t0.addingTimeInterval(7 * F.day), run: Self.refreshJob).map(\.startedAt)
        }
        for seed: UInt64 in [0, 7, 0xDEAD_BEEF] {
            let first = try launchTimes(seed: seed)
            #expect(first.count >= 7, "seed \(seed): only \(first.count) launches in 7 days")
            #expect(try launchTimes(seed: seed) == first, "seed \(seed) did not replay")
        }
        #expect(try launchTimes(seed: 1) != launchTimes(seed: 2))
    }

    @Test("The opportunity model: waits average about 90 min, never exceed 12 h, fall on the minute grid")
    func opportunityModel() {
        let model = IOSBackgroundScheduler.OpportunityModel()
        var rng = SplitMix64(state: 2024)
        let eligible = t0.addingTimeInterval(17)
        let waits = (0..<4000).map { _ in model.draw(from: eligible, using: &rng).timeIntervalSince(eligible) }
        let mean = waits.reduce(0, +) / Double(waits.count)
        #expect(mean > 80 * 60 && mean < 100 * 60, "mean wait \(mean / 60) min")
        #expect(waits.allSatisfy { $0 >= 0 && $0 <= 12 * 3600 + 60 })
        #expect(waits.allSatisfy { (eligible.timeIntervalSince1970 + $0).truncatingRemainder(dividingBy: 60) == 0 })
    }

    @Test("A missed opportunity is traced and the launch comes later")
    func missedOpportunity() throws {
        let model = IOSBackgroundScheduler.OpportunityModel(missProbability: 0.6)
        var seen = false
        for seed in UInt64(0)..<20 where !seen {
            var s = F.ios(seed: seed, opportunity: model)
            s.appLaunched(at: t0, byUser: true)
            _ = try s.register(identifier: id, at: t0)
            s.finishLaunching(at: t0)
            try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
            let t = try #require(s.nextLaunch(after: t0))
            let taken = s.takeLaunch(at: t)
            #expect(taken != nil, "seed \(seed)")
            let trace = s.drainTrace()
            if let missed = trace.first(where: { $0.event.name == .osOpportunityMissed }) {
                seen = true
                #expect(missed.at < t, "seed \(seed)")
            }
        }
        #expect(seen)
        var never = F.ios(opportunity: .init(missProbability: 1))
        never.appLaunched(at: t0, byUser: true)
        _ = try never.register(identifier: id, at: t0)
        try never.submit(identifier: id, earliestBeginDate: nil, at: t0)
        #expect(never.nextLaunch(after: t0) == nil)
    }

    @Test("A cold background launch replays the app's registration: the fix keeps working after the app is killed")
    func coldLaunchAfterKill() throws {
        var s = try F.launchedIOS(budget: 3)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let start = try #require(s.nextLaunch(after: t0))
        let launchValue = s.takeLaunch(at: start)
        let launch = try #require(launchValue)
        // Resubmitted first, then overran: killed, but the request stays with the OS.
        try s.submit(identifier: id, earliestBeginDate: start.addingTimeInterval(3600), at: start)
        s.complete(launch, outcome: .success, duration: 10, at: start.addingTimeInterval(10))
        let next = try #require(s.nextLaunch(after: start.addingTimeInterval(10)))
        let secondValue = s.takeLaunch(at: next)
        let second = try #require(secondValue)
        #expect(second.handlerRegistered)
    }

    @Test("One task at a time: a request resubmitted during a run waits for the run; a relaunch does not kill it")
    func oneTaskAtATime() throws {
        var s = try F.launchedIOS()
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let start = try #require(s.nextLaunch(after: t0))
        let launchValue = s.takeLaunch(at: start)
        let launch = try #require(launchValue)
        // The runtime models the background launch's didFinishLaunching after the grant.
        s.appLaunched(at: start, byUser: false)
        #expect(try s.register(identifier: id, at: start))
        s.finishLaunching(at: start)
        try s.submit(identifier: id, earliestBeginDate: nil, at: start)
        let next = try #require(s.nextLaunch(after: start), "the resubmitted request has no launch")
        #expect(next >= start.addingTimeInterval(30))
        s.complete(launch, outcome: .success, duration: 4, at: start.addingTimeInterval(4))
        let trace = s.drainTrace()
        #expect(F.names(trace).contains(.osTaskCompleted))
        #expect(!F.names(trace).contains(.osAppKilled))
        // A report for a launch that is not running is ignored and traced.
        s.complete(launch, outcome: .success, duration: 4, at: start.addingTimeInterval(5))
        #expect(F.names(s.drainTrace()) == [.osCompleteIgnored])
    }

    @Test("Status lists the pending request and flags")
    func status() throws {
        var s = try F.launchedIOS()
        try s.submit(identifier: id, earliestBeginDate: t0.addingTimeInterval(60), at: t0)
        let status = Dictionary(s.status(), uniquingKeysWith: { a, _ in a })
        #expect(status["platform"] == .string("ios"))
        #expect(status["pendingIdentifier"] == .string(id))
        #expect(status["earliestBeginDate"] == .date(t0.addingTimeInterval(60)))
        #expect(status["nextLaunch"] == s.nextLaunch(after: t0).map { .date($0) })
        #expect(status["lowPowerMode"] == .bool(false))
        #expect(s.platform == .ios)
    }

    @Test("Value types: codes, names and parsing")
    func values() {
        #expect(SchedulerError.unavailable("x").code == 1)
        #expect(SchedulerError.tooManyPendingTaskRequests("x").code == 2)
        #expect(SchedulerError.notPermitted("x").name == "notPermitted")
        #expect(RegistrationMode(rawValue: "late-silent") == .lateSilent)
        #expect(RegistrationMode(rawValue: "late") == nil)
        #expect(RegistrationMode.all.map(\.rawValue) == ["early", "late-silent", "late-crash"])
        #expect(StandbyBucket(name: "working_set")?.rawValue == 20)
        #expect(StandbyBucket(rawValue: 45) == .restricted)
        #expect(StandbyBucket(rawValue: 50) == nil)
        #expect(StandbyBucket.all.map(\.name) == ["active", "working_set", "frequent", "rare", "restricted"])
        #expect(RunOutcome(parsing: "retry") == .retry)
    }
}

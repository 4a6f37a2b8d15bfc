// SPDX-License-Identifier: Apache-2.0

package import Foundation
package import SleepTapOS
import Testing

/// Shared fixtures of the simulated OS's tests (SleepTapOSTests, and SleepTapCoreTests'
/// `SimulatedOSTests`).
package enum SchedulerFixture {
    package static let refreshID = "net.example.sleeptap.refresh"
    package static let otherID = "net.example.sleeptap.cleanup"
    /// 2025-10-09T08:53:20Z, a fixed virtual start.
    package static let start = Date(timeIntervalSince1970: 1_760_000_000)
    package static let day: TimeInterval = 86_400

    package static func ios(
        mode: RegistrationMode = .early, seed: UInt64 = 42, budget: TimeInterval = 30,
        permitted: Set<String> = [refreshID], fetchMode: Bool = true,
        opportunity: IOSBackgroundScheduler.OpportunityModel = .init()
    ) -> IOSBackgroundScheduler {
        IOSBackgroundScheduler(
            configuration: .init(
                permittedIdentifiers: permitted, registrationMode: mode, runtimeBudget: budget,
                backgroundFetchModeEnabled: fetchMode, opportunity: opportunity),
            seed: seed)
    }

    /// An iOS app launched by the user that registered in the launch phase (the fix).
    package static func launchedIOS(seed: UInt64 = 42, budget: TimeInterval = 30, at now: Date = start) throws
        -> IOSBackgroundScheduler
    {
        var s = ios(seed: seed, budget: budget)
        s.appLaunched(at: now, byUser: true)
        #expect(try s.register(identifier: refreshID, at: now))
        s.finishLaunching(at: now)
        return s
    }

    package static func android(
        interval: TimeInterval = 900, flex: TimeInterval? = nil, policy: BackoffPolicy = .exponential,
        bucket: StandbyBucket = .active
    ) -> AndroidWorkScheduler {
        AndroidWorkScheduler(
            configuration: .init(repeatInterval: interval, flex: flex, backoffPolicy: policy, initialBucket: bucket))
    }

    /// Drives `scheduler` from `start` to `end`: takes every launch when due; for a launch whose
    /// handler is entered, `run` says how long it takes and how it ends (nil = never completes).
    /// - Returns: every launch granted, in order.
    package static func drive<S: BackgroundScheduler>(
        _ scheduler: inout S, from start: Date, to end: Date,
        run: (inout S, BackgroundLaunch) -> (duration: TimeInterval, outcome: RunOutcome)?
    ) -> [BackgroundLaunch] {
        var now = start
        var launches: [BackgroundLaunch] = []
        var steps = 0
        while let t = scheduler.nextLaunch(after: now), t < end {
            steps += 1
            guard steps < 100_000 else {
                Issue.record("runaway simulation")
                break
            }
            #expect(t >= now, "nextLaunch went back in time")
            now = t
            guard let launch = scheduler.takeLaunch(at: t) else {
                Issue.record("nextLaunch said \(t) but takeLaunch gave nothing")
                break
            }
            launches.append(launch)
            if launch.handlerRegistered, let (duration, outcome) = run(&scheduler, launch) {
                now = t.addingTimeInterval(duration)
                scheduler.complete(launch, outcome: outcome, duration: duration, at: now)
            }
        }
        return launches
    }

    /// The names of the trace events, in order.
    package static func names(_ trace: [(at: Date, event: OSEvent)]) -> [OSEventName] { trace.map(\.event.name) }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOSTestFixtures
import Testing

@testable import SleepTapOS

/// The iOS usage model (docs/scheduler.md, "Usage model"): launches before the usual open hour,
/// rarer as the days since the last open grow, spaced out; the legacy model unchanged.
/// Seeded tests name their seed in every failure; rerun with it to replay.
@Suite("Simulated iOS: the usage opportunity model")
struct SchedulerUsageTests {
    typealias F = SchedulerFixture
    let id = F.refreshID
    /// 2025-10-10T00:00:00Z: the first midnight (UTC) after the fixture's start.
    static let midnight = Date(timeIntervalSince1970: 1_760_054_400)
    /// The user's usual open: 07:00 UTC.
    static let openHour: TimeInterval = 7 * 3_600

    /// An iOS scheduler on `kind` with the usage settings `usage`.
    static func scheduler(
        _ kind: OpportunityModelKind, seed: UInt64, usage: UsageModel = UsageModel()
    ) -> IOSBackgroundScheduler {
        var configuration = IOSBackgroundScheduler.Configuration(permittedIdentifiers: [F.refreshID])
        configuration.opportunityModel = kind
        configuration.usage = usage
        return IOSBackgroundScheduler(configuration: configuration, seed: seed)
    }

    /// An app that asks to run again as soon as the system allows (earliestBeginDate = now), so
    /// the launch rate is the OS's alone.
    static func eagerJob(_ s: inout IOSBackgroundScheduler, _ launch: BackgroundLaunch) -> (
        duration: TimeInterval, outcome: RunOutcome
    )? {
        try? s.submit(identifier: launch.identifier, earliestBeginDate: launch.startedAt, at: launch.startedAt)
        return (5, .success)
    }

    /// The user opens the app at `now`: a launch phase that registers and submits (earliestBeginDate = now).
    static func open(_ s: inout IOSBackgroundScheduler, at now: Date) throws {
        s.appLaunched(at: now, byUser: true)
        _ = try s.register(identifier: F.refreshID, at: now)
        s.finishLaunching(at: now)
        try s.submit(identifier: F.refreshID, earliestBeginDate: now, at: now)
    }

    /// The user opens the app at 07:00 UTC on `openDays` days, then not again for `quietDays`
    /// days; every launch the OS grants, in order.
    static func launches(
        _ kind: OpportunityModelKind, seed: UInt64, openDays: Int, quietDays: Int, usage: UsageModel = UsageModel()
    ) throws -> [Date] {
        var s = scheduler(kind, seed: seed, usage: usage)
        var now = midnight
        var all: [Date] = []
        for day in 0..<openDays {
            let at = midnight.addingTimeInterval(Double(day) * F.day + openHour)
            all += F.drive(&s, from: now, to: at, run: eagerJob).map(\.startedAt)
            try open(&s, at: at)
            now = at
        }
        let end = now.addingTimeInterval(Double(quietDays) * F.day)
        all += F.drive(&s, from: now, to: end, run: eagerJob).map(\.startedAt)
        return all
    }

    /// Launches per device per day on days 0…9 after the last of 10 daily opens, over 40 seeds.
    static func ratesAfterLastOpen(_ usage: UsageModel) throws -> [Double] {
        let openDays = 10
        let lastOpen = Self.midnight.addingTimeInterval(Double(openDays - 1) * F.day + Self.openHour)
        var perDay = [Int](repeating: 0, count: 10)
        let seeds = UInt64(0)..<40
        for seed in seeds {
            for launch in try Self.launches(.usage, seed: seed, openDays: openDays, quietDays: 10, usage: usage)
            where launch > lastOpen {
                perDay[Int(launch.timeIntervalSince(lastOpen) / F.day)] += 1
            }
        }
        return perDay.map { Double($0) / Double(seeds.count) }
    }

    @Test(
        "With the default settings the launches per day fall over a week without opens, by about a third, and do not stop"
    )
    func defaultDecay() throws {
        let rate = try Self.ratesAfterLastOpen(UsageModel())
        // Days 0-1 after the last open, days 3-4, days 6-7: launches per day per device.
        let early = (rate[0] + rate[1]) / 2
        let middle = (rate[3] + rate[4]) / 2
        let late = (rate[6] + rate[7]) / 2
        // 40 seeds: 2.0 a day on days 0-1, 1.8 on days 3-4, 1.3 on days 6-7.
        #expect(early > 1.5, "\(rate)")
        #expect(middle < early, "\(rate)")
        #expect(late < middle, "\(rate)")
        #expect(late < early * 0.75, "\(rate)")
        #expect(late > early * 0.3, "\(rate)")
    }

    @Test("No open for a week: launches per day fall as the days since the last open grow (half-life 2 days)")
    func decay() throws {
        let rate = try Self.ratesAfterLastOpen(UsageModel(offHoursWeight: 0.02, halfLifeDays: 2))
        let openDays = 10
        let lastOpen = Self.midnight.addingTimeInterval(Double(openDays - 1) * F.day + Self.openHour)
        // Days 0-1 after the last open, days 3-4, days 6-7: launches per day per device.
        let early = (rate[0] + rate[1]) / 2
        let middle = (rate[3] + rate[4]) / 2
        let late = (rate[6] + rate[7]) / 2
        #expect(early > 0.6, "\(rate)")
        #expect(middle < early * 0.6, "\(rate)")
        #expect(late < middle, "\(rate)")
        #expect(late < 0.25, "\(rate)")
        // The legacy model ignores usage: no fall.
        var legacyLate = 0
        for seed in UInt64(0)..<5 {
            legacyLate +=
                try Self.launches(.legacy, seed: seed, openDays: openDays, quietDays: 10)
                .filter { $0 > lastOpen.addingTimeInterval(6 * F.day) && $0 <= lastOpen.addingTimeInterval(8 * F.day) }
                .count
        }
        #expect(Double(legacyLate) / 10 > 10, "legacy: \(legacyLate) launches on days 6-7 over 5 seeds")
    }

    @Test(
        "Launches cluster in the two hours before the usual 07:00 open (share of launches there, by off-hours weight)",
        arguments: [(0.1, 0.3), (0.02, 0.6)])
    func cluster(offHoursWeight: Double, least: Double) throws {
        let settings = UsageModel(offHoursWeight: offHoursWeight)
        var before = 0
        var total = 0
        var legacyBefore = 0
        var legacyTotal = 0
        for seed in UInt64(0)..<20 {
            for (kind, launches) in [
                (
                    OpportunityModelKind.usage,
                    try Self.launches(.usage, seed: seed, openDays: 14, quietDays: 1, usage: settings)
                ),
                (.legacy, try Self.launches(.legacy, seed: seed, openDays: 14, quietDays: 1)),
            ] {
                // From the third day on, when the OS has a history.
                let counted = launches.filter { $0 > Self.midnight.addingTimeInterval(2 * F.day) }
                let inWindow = counted.filter {
                    let tod = UsageModel.secondOfDay($0)
                    return tod >= Self.openHour - 2 * 3_600 && tod < Self.openHour
                }
                if kind == .usage {
                    before += inWindow.count
                    total += counted.count
                } else {
                    legacyBefore += inWindow.count
                    legacyTotal += counted.count
                }
            }
        }
        let share = Double(before) / Double(total)
        let legacyShare = Double(legacyBefore) / Double(legacyTotal)
        #expect(total > 200, "usage: \(total) launches")
        #expect(share > least, "usage: \(before) of \(total) launches in 05:00-07:00 UTC")
        #expect(legacyShare < 0.2, "legacy: \(legacyBefore) of \(legacyTotal) launches in 05:00-07:00 UTC")
    }

    @Test("Launches are at least minimumSpacing apart, a user open included")
    func spacing() throws {
        let usage = UsageModel(offHoursWeight: 1, minimumSpacing: 4 * 3_600)
        var gaps: [TimeInterval] = []
        for seed in UInt64(0)..<20 {
            let launches = try Self.launches(.usage, seed: seed, openDays: 7, quietDays: 2, usage: usage)
            #expect(launches.count >= 14, "seed \(seed): \(launches.count) launches")
            gaps += zip(launches.dropFirst(), launches).map { $0.timeIntervalSince($1) }
        }
        let shortest = try #require(gaps.min())
        #expect(shortest >= 4 * 3_600, "shortest gap \(shortest) s")
        // The legacy model has no spacing rule: with the same app, some launches come closer.
        let legacy = try Self.launches(.legacy, seed: 0, openDays: 7, quietDays: 2)
        #expect(zip(legacy.dropFirst(), legacy).contains { $0.timeIntervalSince($1) < 4 * 3_600 })
    }

    @Test("The OS keeps the last historyLimit opens while the usage model is on, none on legacy")
    func openHistory() throws {
        var s = Self.scheduler(.usage, seed: 1, usage: UsageModel(historyLimit: 3))
        let times = (0..<5).map { Self.midnight.addingTimeInterval(Double($0) * F.day + Self.openHour) }
        for t in times { try Self.open(&s, at: t) }
        #expect(s.openHistory == Array(times.suffix(3)))
        var legacy = Self.scheduler(.legacy, seed: 1)
        try Self.open(&legacy, at: times[0])
        #expect(legacy.openHistory.isEmpty)
    }

    @Test("No opportunity within the horizon: no launch, why says to open the app, an open draws again")
    func noOpportunity() throws {
        // Only 10:00-12:00 UTC comes before the usual open (12:00); the OS looks 6 h ahead.
        let usage = UsageModel(offHoursWeight: 0, horizon: 6 * 3_600)
        var drawnAgain = 0
        for seed in UInt64(0)..<20 {
            var s = Self.scheduler(.usage, seed: seed, usage: usage)
            try Self.open(&s, at: Self.midnight.addingTimeInterval(12 * 3_600))
            // A week later at 00:00 UTC a background process submits: 00:00-06:00 holds no window.
            let later = Self.midnight.addingTimeInterval(8 * F.day)
            s.appLaunched(at: later, byUser: false)
            _ = try s.register(identifier: id, at: later)
            s.finishLaunching(at: later)
            try s.submit(identifier: id, earliestBeginDate: later, at: later)
            #expect(s.nextLaunch(after: later) == nil, "seed \(seed)")
            let reason = s.why(at: later).reasons.first { $0.condition == "opportunity" }
            #expect(reason?.state.contains("open it") == true, "seed \(seed)")
            // The user opens it at 08:00: the OS draws again, and 10:00-12:00 is within reach.
            s.appLaunched(at: later.addingTimeInterval(8 * 3_600), byUser: true)
            if s.nextLaunch(after: later) != nil { drawnAgain += 1 }
        }
        #expect(drawnAgain >= 5, "\(drawnAgain) of 20 seeds got an opportunity after the open")
    }

    @Test("A critically low battery withholds launches under usage (why: battery) until charging; legacy ignores it")
    func criticalBattery() throws {
        let usage = UsageModel(offHoursWeight: 1)
        var s = Self.scheduler(.usage, seed: 9, usage: usage)
        let t = Self.midnight
        try Self.open(&s, at: t)
        #expect(s.nextLaunch(after: t) != nil)
        s.setBatteryLevel(0.15, at: t)
        #expect(s.batteryCritical)
        #expect(s.nextLaunch(after: t) == nil)
        let reason = s.why(at: t).reasons.first { $0.condition == "battery" }
        #expect(reason?.state == "the battery is critically low (below 20 %): essential work only")
        // Nothing launches for a day on battery at 15 %.
        #expect(F.drive(&s, from: t, to: t.addingTimeInterval(F.day), run: Self.eagerJob).isEmpty)
        // On the charger the OS draws again; off it at 90 % launches stay allowed.
        let charge = t.addingTimeInterval(F.day)
        s.setCharging(true, at: charge)
        #expect(!s.batteryCritical)
        #expect(s.nextLaunch(after: charge) != nil)
        s.setBatteryLevel(0.9, at: charge)
        s.setCharging(false, at: charge)
        #expect(s.nextLaunch(after: charge) != nil)
        // Legacy: the level changes nothing.
        var legacy = try F.launchedIOS(seed: 9)
        try legacy.submit(identifier: id, earliestBeginDate: F.start, at: F.start)
        let planned = legacy.nextLaunch(after: F.start)
        legacy.setBatteryLevel(0.05, at: F.start)
        #expect(!legacy.batteryCritical)
        #expect(legacy.nextLaunch(after: F.start) == planned)
    }

    @Test(
        "On a fitted wait a critically low battery withholds nothing: the fit already holds the holds; the level is still kept"
    )
    func fittedWaitIgnoresBattery() throws {
        var s = Self.scheduler(.usage, seed: 9, usage: UsageModel(offHoursWeight: 1))
        s.setEmpiricalDelay(EmpiricalDelay(points: [.init(p: 0.5, seconds: 3_600), .init(p: 1, seconds: 7_200)]))
        let t = Self.midnight
        try Self.open(&s, at: t)
        let planned = try #require(s.nextLaunch(after: t))
        s.setBatteryLevel(0.15, at: t)
        #expect(!s.batteryCritical)
        #expect(s.nextLaunch(after: t) == planned)
        #expect(s.why(at: t).reasons.allSatisfy { $0.condition != "battery" })
        #expect(s.batteryLevel(at: t.addingTimeInterval(3_600)).map { $0 < 0.15 } == true)
    }

    @Test("Legacy is the default: the same seed gives the same launches with the setting nil or legacy")
    func legacyUnchanged() throws {
        for seed: UInt64 in [0, 7, 42, 0xDEAD_BEEF] {
            var plain = try F.launchedIOS(seed: seed)
            var explicit = Self.scheduler(.legacy, seed: seed)
            explicit.appLaunched(at: F.start, byUser: true)
            _ = try explicit.register(identifier: id, at: F.start)
            explicit.finishLaunching(at: F.start)
            let end = F.start.addingTimeInterval(7 * F.day)
            try plain.submit(identifier: id, earliestBeginDate: F.start.addingTimeInterval(3_600), at: F.start)
            try explicit.submit(identifier: id, earliestBeginDate: F.start.addingTimeInterval(3_600), at: F.start)
            let a = F.drive(&plain, from: F.start, to: end, run: SchedulerIOSTests.refreshJob).map(\.startedAt)
            let b = F.drive(&explicit, from: F.start, to: end, run: SchedulerIOSTests.refreshJob).map(\.startedAt)
            #expect(a == b, "seed \(seed)")
            #expect(a.count >= 7, "seed \(seed)")
        }
        #expect(IOSBackgroundScheduler.Configuration(permittedIdentifiers: []).effectiveOpportunityModel == .legacy)
    }

    @Test("A legacy encoding has no usage keys, and decodes as legacy")
    func encoding() throws {
        var s = try F.launchedIOS(seed: 5)
        try s.submit(identifier: id, earliestBeginDate: F.start, at: F.start)
        s.appLaunched(at: F.start.addingTimeInterval(60), byUser: true)
        let json = try #require(String(data: try JSONEncoder().encode(s), encoding: .utf8))
        for key in ["opportunityModel", "usage", "userOpens", "lastRefreshLaunch"] {
            #expect(!json.contains("\"\(key)\""), "\(key) in \(json)")
        }
        let decoded = try JSONDecoder().decode(IOSBackgroundScheduler.self, from: Data(json.utf8))
        #expect(decoded.configuration.effectiveOpportunityModel == .legacy)
        // The usage model's state survives an encoding.
        var u = Self.scheduler(.usage, seed: 5)
        try Self.open(&u, at: Self.midnight)
        let back = try JSONDecoder().decode(IOSBackgroundScheduler.self, from: try JSONEncoder().encode(u))
        #expect(back.configuration.effectiveOpportunityModel == .usage)
        #expect(back.openHistory == [Self.midnight])
        #expect(back.nextLaunch(after: Self.midnight) == u.nextLaunch(after: Self.midnight))
    }

    @Test(
        "A wait drawn from an instant so far from 1970 that a step leaves it unchanged (1e300 s) ends with no opportunity, not a loop that never ends"
    )
    func drawFromAnUnreachableInstant() {
        var rng = SplitMix64(state: 5)
        let model = UsageModel()
        let far = Date(timeIntervalSince1970: 1e300)
        #expect(model.draw(from: far, opens: [], meanDelay: 3_600, grid: { $0 }, using: &rng) == nil)
        let near = Date(timeIntervalSince1970: 1_780_000_000)
        #expect(model.draw(from: near, opens: [], meanDelay: 3_600, grid: { $0 }, using: &rng) != nil)
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOSTestFixtures
import Testing

@testable import SleepTapOS

/// The usage model's energy and data budgets and the battery over the day (docs/scheduler.md,
/// "Energy and data budgets", "Battery over the day"); the legacy model ignores all three.
@Suite("Simulated iOS: energy and data budgets, the battery over the day")
struct SchedulerBudgetTests {
    typealias F = SchedulerFixture
    static let hour: TimeInterval = 3_600

    /// An iOS scheduler on `kind` whose usage model keeps every candidate (no usage effect), with `budget`.
    static func scheduler(
        _ kind: OpportunityModelKind, seed: UInt64, budget: BackgroundBudget? = nil, battery: BatteryModel? = nil
    ) -> IOSBackgroundScheduler {
        var configuration = IOSBackgroundScheduler.Configuration(permittedIdentifiers: [F.refreshID])
        configuration.opportunityModel = kind
        configuration.usage = UsageModel(offHoursWeight: 1, halfLifeDays: 1_000)
        configuration.budget = budget
        configuration.battery = battery
        return IOSBackgroundScheduler(configuration: configuration, seed: seed)
    }

    /// The user opens the app at `now`: registers in the launch phase and submits (earliestBeginDate = now).
    static func open(_ s: inout IOSBackgroundScheduler, at now: Date) throws {
        s.appLaunched(at: now, byUser: true)
        _ = try s.register(identifier: F.refreshID, at: now)
        s.finishLaunching(at: now)
        try s.submit(identifier: F.refreshID, earliestBeginDate: now, at: now)
    }

    /// Takes the next launch, resubmits (earliestBeginDate = its start) and runs it `duration` seconds.
    static func runNext(
        _ s: inout IOSBackgroundScheduler, after now: Date, duration: TimeInterval, bytes: Int = 0
    ) throws -> (launch: BackgroundLaunch, end: Date) {
        let at = try #require(s.nextLaunch(after: now))
        let taken = s.takeLaunch(at: at)
        let launch = try #require(taken)
        try s.submit(identifier: F.refreshID, earliestBeginDate: at, at: at)
        if bytes > 0 { s.recordDataTransfer(bytes: bytes, at: at.addingTimeInterval(duration / 2)) }
        let end = at.addingTimeInterval(duration)
        s.complete(launch, outcome: .success, duration: duration, at: end)
        return (launch, end)
    }

    /// An app that asks to run again at once and runs `seconds` each time.
    static func eager(_ seconds: TimeInterval) -> (inout IOSBackgroundScheduler, BackgroundLaunch) -> (
        duration: TimeInterval, outcome: RunOutcome
    )? {
        { s, launch in
            try? s.submit(identifier: launch.identifier, earliestBeginDate: launch.startedAt, at: launch.startedAt)
            return (seconds, .success)
        }
    }

    @Test("Both budgets overdrawn: why lists energyBudget and dataBudget, and reasonCodes says QUOTA once")
    func bothBudgets() throws {
        var s = Self.scheduler(.usage, seed: 3, budget: BackgroundBudget(energyPerDay: 24, dataPerDay: 100))
        try Self.open(&s, at: F.start)
        let (_, end) = try Self.runNext(&s, after: F.start, duration: 10, bytes: 1_000)
        let why = s.why(at: end)
        #expect(why.reason("energyBudget") != nil && why.reason("dataBudget") != nil)
        let codes = why.fields.first { $0.0 == "reasonCodes" }?.1
        guard case .string(let text)? = codes else { throw CancellationError() }
        #expect(text.components(separatedBy: ",").filter { $0 == "PENDING_JOB_REASON_QUOTA" }.count == 1, "\(text)")
    }

    @Test("A run that overdraws the energy budget withholds launches until it refills (why: energyBudget, QUOTA)")
    func energyBudget() throws {
        // 24 running seconds a day, a 6 h window: 6 s in a full bucket, refilled at 1 s an hour.
        var s = Self.scheduler(.usage, seed: 3, budget: BackgroundBudget(energyPerDay: 24))
        try Self.open(&s, at: F.start)
        #expect(abs(try #require(s.energyBudget(at: F.start)) - 6) < 1e-9)
        #expect(s.why(at: F.start).reason("energyBudget") == nil)
        let (_, end) = try Self.runNext(&s, after: F.start, duration: 10)
        // 6 − 10 = −4 s: back to zero 4 h after the run.
        #expect(abs(try #require(s.energyBudget(at: end)) + 4) < 1e-9)
        let refill = end.addingTimeInterval(4 * Self.hour)
        let why = s.why(at: end)
        let reason = try #require(why.reason("energyBudget"))
        #expect(reason.code == .quota)
        #expect(reason.state == "the energy budget for background runs is used up: it refills through the day")
        #expect(abs(try #require(reason.until).timeIntervalSince(refill)) < 0.01)
        #expect(try #require(why.nextLaunch) >= refill)
        #expect(s.why(at: refill.addingTimeInterval(1)).reason("energyBudget") == nil)
        // The next run comes after the refill and is allowed.
        let next = try Self.runNext(&s, after: end, duration: 1)
        #expect(next.launch.startedAt >= refill)
    }

    @Test("Bytes a run transfers draw on the data budget; overdrawn, launches wait for the refill (why: dataBudget)")
    func dataBudget() throws {
        // 96,000 bytes a day: 24,000 in a full bucket, refilled at 4,000 an hour.
        var s = Self.scheduler(.usage, seed: 5, budget: BackgroundBudget(dataPerDay: 96_000))
        try Self.open(&s, at: F.start)
        // No run in flight: the transfer is not the background run's, nothing is drawn.
        s.recordDataTransfer(bytes: 50_000, at: F.start)
        #expect(abs(try #require(s.dataBudget(at: F.start)) - 24_000) < 1e-6)
        let (_, end) = try Self.runNext(&s, after: F.start, duration: 1, bytes: 30_000)
        let balance = try #require(s.dataBudget(at: end))
        #expect(balance < 0 && balance > -6_000)
        let why = s.why(at: end)
        let reason = try #require(why.reason("dataBudget"))
        #expect(reason.code == .quota)
        let until = try #require(reason.until)
        // −6,000 bytes at the transfer (0.5 s before the end), 4,000 an hour: 1.5 h.
        #expect(abs(until.timeIntervalSince(end.addingTimeInterval(-0.5)) - 1.5 * Self.hour) < 0.01)
        #expect(try #require(why.nextLaunch) >= until)
        #expect(why.reason("energyBudget") == nil)
        #expect(s.why(at: until.addingTimeInterval(1)).reason("dataBudget") == nil)
    }

    @Test("The legacy model has no budgets: the same runs draw nothing and launch as before")
    func legacyIgnoresBudgets() throws {
        let budget = BackgroundBudget(energyPerDay: 1, dataPerDay: 1)
        for seed: UInt64 in [1, 2, 3] {
            var tight = Self.scheduler(.legacy, seed: seed, budget: budget)
            var plain = Self.scheduler(.legacy, seed: seed)
            try Self.open(&tight, at: F.start)
            try Self.open(&plain, at: F.start)
            let end = F.start.addingTimeInterval(3 * F.day)
            let a = F.drive(&tight, from: F.start, to: end, run: Self.eager(20)).map(\.startedAt)
            let b = F.drive(&plain, from: F.start, to: end, run: Self.eager(20)).map(\.startedAt)
            #expect(a == b, "seed \(seed)")
            #expect(a.count > 10, "seed \(seed)")
            #expect(tight.energyBudget(at: end) == nil)
            #expect(tight.why(at: end).reason("energyBudget") == nil)
        }
    }

    @Test("Direction: a smaller energy budget gives fewer launches, and at most what it refills")
    func smallerBudgetFewerLaunches() throws {
        var counts: [Double: Int] = [:]
        let days = 3.0
        for energy in [50.0, 150.0, 3_000.0] {
            var total = 0
            for seed: UInt64 in 1...4 {
                var s = Self.scheduler(.usage, seed: seed, budget: BackgroundBudget(energyPerDay: energy))
                try Self.open(&s, at: F.start)
                let end = F.start.addingTimeInterval(days * F.day)
                let launches = F.drive(&s, from: F.start, to: end, run: Self.eager(25)).count
                // Every run costs 25 s: no more than the full bucket plus what refilled, plus the
                // one run that overdraws it.
                let budget = BackgroundBudget(energyPerDay: energy)
                #expect(Double(launches) <= (budget.energyCapacity + energy * days) / 25 + 1, "seed \(seed)")
                total += launches
            }
            counts[energy] = total
        }
        let small = try #require(counts[50])
        let middle = try #require(counts[150])
        let large = try #require(counts[3_000])
        #expect(small < middle, "\(counts)")
        #expect(middle < large, "\(counts)")
    }

    @Test("The battery drains while unplugged, turns critical by itself, and charging lifts it")
    func batteryOverTheDay() throws {
        var s = Self.scheduler(.usage, seed: 11, battery: BatteryModel(drainPerHour: 0.04, chargePerHour: 0.5))
        let t = F.start
        try Self.open(&s, at: t)
        s.setBatteryLevel(0.3, at: t)
        #expect(abs(try #require(s.batteryLevel(at: t.addingTimeInterval(Self.hour))) - 0.26) < 1e-9)
        // 0.3 → 0.2 in 2.5 h: no launch at or after that instant.
        let critical = t.addingTimeInterval(2.5 * Self.hour)
        if let next = s.nextLaunch(after: t) { #expect(next < critical) }
        let launches = F.drive(&s, from: t, to: t.addingTimeInterval(F.day), run: Self.eager(1))
        #expect(launches.allSatisfy { $0.startedAt < critical })
        let later = t.addingTimeInterval(4 * Self.hour)
        #expect(s.nextLaunch(after: later) == nil)
        let reason = try #require(s.why(at: later).reason("battery"))
        #expect(reason.state == "the battery is critically low (below 20 %): essential work only")
        // On the charger at 4 h (level 0.14): the OS draws again and the level rises.
        _ = s.drainTrace()
        s.setCharging(true, at: later)
        let trace = s.drainTrace()
        let changes = trace.filter { $0.event.name == .osConditionsChanged }
        #expect(changes.count == 2)
        #expect(abs(try #require(changes.first).at.timeIntervalSince(critical)) < 1)
        #expect(s.nextLaunch(after: later) != nil)
        #expect(abs(try #require(s.batteryLevel(at: later.addingTimeInterval(Self.hour))) - 0.64) < 1e-9)
        #expect(s.why(at: later).reason("battery") == nil)
        // The legacy model keeps the level as set.
        var legacy = Self.scheduler(.legacy, seed: 11)
        legacy.setBatteryLevel(0.3, at: t)
        #expect(legacy.batteryLevel(at: t.addingTimeInterval(10 * Self.hour)) == 0.3)
    }

    @Test("An opportunity after the battery turns critical: why says when it drains, nextLaunch is nil")
    func drainsBeforeOpportunity() throws {
        var found = false
        for seed: UInt64 in 1...40 where !found {
            var s = Self.scheduler(.usage, seed: seed)
            let t = F.start
            try Self.open(&s, at: t)
            guard let planned = s.nextLaunch(after: t), planned > t.addingTimeInterval(60) else { continue }
            // The level falls below 20 % half-way to the planned launch.
            let drain = BatteryModel().drainPerHour * planned.timeIntervalSince(t) / 2 / Self.hour
            s.setBatteryLevel(0.2 + drain, at: t)
            #expect(s.nextLaunch(after: t) == nil, "seed \(seed)")
            let reason = try #require(s.why(at: t).reason("battery"), "seed \(seed)")
            #expect(reason.state.hasPrefix("the battery drains below 20 % at "), "seed \(seed)")
            found = true
        }
        #expect(found)
    }

    @Test("Budgets and battery round-trip through Codable; an encoding without them decodes as full")
    func codable() throws {
        var s = Self.scheduler(.usage, seed: 7, budget: BackgroundBudget(energyPerDay: 24, dataPerDay: 96_000))
        try Self.open(&s, at: F.start)
        s.setBatteryLevel(0.8, at: F.start)
        let (_, end) = try Self.runNext(&s, after: F.start, duration: 10, bytes: 30_000)
        let data = try JSONEncoder().encode(s)
        let copy = try JSONDecoder().decode(IOSBackgroundScheduler.self, from: data)
        let later = end.addingTimeInterval(Self.hour)
        #expect(copy.energyBudget(at: later) == s.energyBudget(at: later))
        #expect(copy.dataBudget(at: later) == s.dataBudget(at: later))
        #expect(copy.batteryLevel(at: later) == s.batteryLevel(at: later))
        #expect(copy.why(at: later) == s.why(at: later))
        #expect(copy.nextLaunch(after: later) == s.nextLaunch(after: later))
        // An older encoding: none of the new keys.
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        for key in ["energyBalance", "dataBalance", "batteryUpdatedAt"] {
            #expect(object[key] != nil, "\(key) encoded")
            object[key] = nil
        }
        var configuration = try #require(object["configuration"] as? [String: Any])
        configuration["budget"] = nil
        configuration["battery"] = nil
        object["configuration"] = configuration
        let old = try JSONDecoder().decode(
            IOSBackgroundScheduler.self, from: try JSONSerialization.data(withJSONObject: object))
        #expect(old.energyBudget(at: later) == BackgroundBudget().energyCapacity)
        #expect(old.dataBudget(at: later) == BackgroundBudget().dataCapacity)
        // Without its instant the level stays as it was stored.
        #expect(old.batteryLevel(at: later.addingTimeInterval(10 * Self.hour)) == old.batteryLevel(at: later))
        // A legacy scheduler encodes none of them.
        var legacy = Self.scheduler(.legacy, seed: 7)
        try Self.open(&legacy, at: F.start)
        _ = try Self.runNext(&legacy, after: F.start, duration: 10, bytes: 30_000)
        let text = String(decoding: try JSONEncoder().encode(legacy), as: UTF8.self)
        #expect(!text.contains("energyBalance") && !text.contains("dataBalance"))
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapOS
import Testing

@testable import SleepTapEmbedded

/// The usage model's energy budget in the twin: the phone's own job draws on it.
@Suite("The twin on iOS's energy budget")
struct TwinBudgetTests {
    static let day: TimeInterval = 86_400

    /// Background runs of one twin over `days` on the usage model (keeping every candidate, so
    /// that only the budget limits the runs) with `budget`, and the twin's OS at the end.
    static func runs(budget: BackgroundBudget?, osSeed: UInt64, days: Double) -> (runs: Int, os: SimulatedOS) {
        let base = TwinTests.twin(.early, osSeed: osSeed)
        var setup = base.phoneSetup
        var configuration = IOSBackgroundScheduler.Configuration(
            permittedIdentifiers: [PhoneAppConfiguration().taskIdentifier])
        configuration.opportunityModel = .usage
        configuration.usage = UsageModel(offHoursWeight: 1, halfLifeDays: 1_000)
        configuration.budget = budget
        setup.os = SimulatedOS(IOSBackgroundScheduler(configuration: configuration, seed: osSeed))
        var twin = Twin(start: TwinTests.start, speed: 3_600, phone: setup, watch: base.watchSetup, seed: 7)
        twin.boot()
        twin.run(until: TwinTests.start.addingTimeInterval(days * day))
        return (twin.events(.handlerEntered).count, twin.phone.app.scheduler)
    }

    @Test("A job that costs more than the day's energy budget runs less often; why names the budget")
    func budgetLimitsRuns() throws {
        var generous = 0
        var tight = 0
        var named = 0
        for seed: UInt64 in 1...4 {
            generous += Self.runs(budget: nil, osSeed: seed, days: 6).runs
            // 0.2 running seconds a day: one run of the job (about 0.75 s) overdraws it for days.
            let (runs, os) = Self.runs(budget: BackgroundBudget(energyPerDay: 0.2), osSeed: seed, days: 6)
            tight += runs
            let end = TwinTests.start.addingTimeInterval(6 * Self.day)
            if case .ios(let ios) = os.device, let balance = ios.energyBudget(at: end), balance < 0 {
                #expect(os.why(at: end).reason("energyBudget")?.code == .quota, "seed \(seed)")
                named += 1
            }
        }
        // The default budget does not bind: about a run a day (the job's request is daily).
        #expect(generous >= 4 * 4, "generous \(generous)")
        #expect(tight * 2 <= generous, "tight \(tight), generous \(generous)")
        #expect(named >= 1)
    }
}

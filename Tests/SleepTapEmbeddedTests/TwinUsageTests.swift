// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapOS
import Testing

@testable import SleepTapEmbedded

/// The iOS usage opportunity model (`phone --opportunity-model usage`) in the twin: a user who
/// opens the app once and then not for two weeks.
@Suite("The twin on iOS's usage opportunity model")
struct TwinUsageTests {
    static let day: TimeInterval = 86_400

    /// Background runs per day-since-boot (days 0-13) of one twin, and the OS's recorded opens.
    static func runs(_ kind: OpportunityModelKind, osSeed: UInt64) -> (perDay: [Int], opens: Int) {
        let base = TwinTests.twin(.early, osSeed: osSeed)
        var setup = base.phoneSetup
        var configuration = IOSBackgroundScheduler.Configuration(
            permittedIdentifiers: [PhoneAppConfiguration().taskIdentifier])
        configuration.opportunityModel = kind
        setup.os = SimulatedOS(IOSBackgroundScheduler(configuration: configuration, seed: osSeed))
        var twin = Twin(start: TwinTests.start, speed: 3_600, phone: setup, watch: base.watchSetup, seed: 7)
        twin.boot()
        twin.run(until: TwinTests.start.addingTimeInterval(14 * day))
        var perDay = [Int](repeating: 0, count: 14)
        for entry in twin.events(.handlerEntered) {
            perDay[min(13, Int(entry.at.timeIntervalSince(TwinTests.start) / day))] += 1
        }
        var opens = 0
        if case .ios(let ios) = twin.phone.app.scheduler.device { opens = ios.openHistory.count }
        return (perDay, opens)
    }

    @Test("No open for two weeks: usage's background runs fall from week 1 to week 2, not to none; legacy's do not")
    func fallingRate() {
        var usage = [Int](repeating: 0, count: 14)
        var legacy = [Int](repeating: 0, count: 14)
        let seeds = UInt64(1)...8
        for seed in seeds {
            let u = Self.runs(.usage, osSeed: seed)
            #expect(u.opens == 1, "seed \(seed): \(u.opens) opens recorded (only the first start is the user's)")
            usage = zip(usage, u.perDay).map(+)
            legacy = zip(legacy, Self.runs(.legacy, osSeed: seed).perDay).map(+)
        }
        let usageWeek1 = usage[0..<7].reduce(0, +)
        let usageWeek2 = usage[7..<14].reduce(0, +)
        let legacyWeek2 = legacy[7..<14].reduce(0, +)
        // Per device: legacy runs about once a day; usage falls as the days without an open grow
        // (8 seeds: 46 runs in week 1, 35 in week 2), but not to nothing.
        #expect(usageWeek1 >= 4 * seeds.count, "usage per day \(usage)")
        #expect(Double(usageWeek2) <= 0.9 * Double(usageWeek1), "usage per day \(usage)")
        #expect(usageWeek2 >= seeds.count, "usage per day \(usage)")
        #expect(legacyWeek2 >= 6 * seeds.count, "legacy per day \(legacy)")
        #expect(usageWeek2 < legacyWeek2, "usage \(usage), legacy \(legacy)")
    }
}

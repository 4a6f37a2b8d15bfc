// SPDX-License-Identifier: Apache-2.0
import SleepTapScenario
import Testing

/// The night-by-night comparison of the twin and the processes, on hand-built nights.
@Suite("NightComparison: the first differing night, from both sides")
struct NightComparisonTests {
    static func night(
        _ date: String, _ outcome: ScenarioNight.Outcome = .cachedWakeUp, left: Int = 5, tap: String = "23:00",
        runs: Int = 1, staleness: Double? = 12
    ) -> ScenarioNight {
        ScenarioNight(
            localDate: date, tapTime: tap, outcome: outcome, nightsLeft: left, backgroundRuns: runs,
            stalenessHours: staleness)
    }

    static let nights = [
        night("2026-07-20", left: 7), night("2026-07-21", left: 6), night("2026-07-22", .warned, left: 2),
        night("2026-07-23", .manualEntry, left: 0),
    ]

    @Test("equal nights agree; background runs and staleness are not compared")
    func equal() {
        var other = Self.nights
        other[1].backgroundRuns = 3
        other[2].stalenessHours = nil
        let comparison = NightComparison.compare(twin: Self.nights, processes: other)
        #expect(comparison.equal)
        #expect(comparison.firstDifference == nil)
        #expect(comparison.description == "the processes and the twin agree on 4 nights")
        #expect(comparison.summary["equal"] as? Bool == true)
    }

    @Test(
        "one field differs: the first differing night is found, with both sides",
        arguments: [(1, "nightsLeft"), (2, "outcome"), (0, "tapTime"), (3, "localDate")])
    func differs(index: Int, field: String) {
        var processes = Self.nights
        switch field {
        case "nightsLeft": processes[index].nightsLeft = 5
        case "outcome": processes[index].outcome = .cachedWakeUp
        case "tapTime": processes[index].tapTime = "23:30"
        default: processes[index].localDate = "2026-07-24"
        }
        let comparison = NightComparison.compare(twin: Self.nights, processes: processes)
        #expect(!comparison.equal)
        #expect(comparison.firstDifference == index)
        #expect(comparison.twin == Self.nights[index])
        #expect(comparison.processes == processes[index])
        #expect(comparison.description.hasPrefix("the processes and the twin differ at night \(index + 1): processes "))
        #expect(comparison.description.contains("; twin \(Self.nights[index].summaryText)"), "\(comparison)")
        #expect(comparison.summary["night"] as? Int == index + 1)
    }

    @Test("a night one side lacks is a difference at that night")
    func missingNight() {
        let comparison = NightComparison.compare(twin: Self.nights, processes: Array(Self.nights.prefix(3)))
        #expect(comparison.firstDifference == 3)
        #expect(comparison.processes == nil)
        #expect(
            comparison.description
                == "the processes and the twin differ at night 4: processes no such night (3 nights); twin "
                + "2026-07-23 23:00 manual entry, 0 nights left")
        let empty = NightComparison.compare(twin: [], processes: [Self.night("2026-07-20")])
        #expect(empty.firstDifference == 0)
        #expect(empty.twin == nil)
    }
}

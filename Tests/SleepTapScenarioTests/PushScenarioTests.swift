// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import Testing

@testable import SleepTapScenario

/// `Examples/scenarios/server-push-late-silent-new-york.json`: a late-silent app (its refresh
/// handler never entered) kept fed by a nightly server push.
@Suite("A server push in a scenario")
struct PushScenarioTests {
    @Test(
        "the night table counts each push's run and takes staleness from it, as docs/metrics.md defines staleness; without the pushes it is never"
    )
    func pushRunsEndStaleness() throws {
        let scenario = try ScenarioFile.load(
            ScenarioFileTests.root.appendingPathComponent("Examples/scenarios/server-push-late-silent-new-york.json")
                .path)
        let run = try ScenarioRun.twin(scenario)
        #expect(run.passed, "\(run.report)")
        let nights = run.nights
        #expect(nights.count == 8)
        // Night 1 comes before the first push (04:00); each later night follows one push's run.
        #expect(nights.first?.stalenessHours == nil)
        for night in nights.dropFirst() {
            #expect(night.backgroundRuns == 1, "\(night)")
            let hours = try #require(night.stalenessHours, "\(night)")
            #expect(hours > 17 && hours < 19, "\(night)")
        }
        #expect(run.log.filter { $0.event.name == .handlerEntered }.isEmpty, "the refresh handler never runs")

        var silent = scenario
        silent.steps = scenario.steps.filter { !$0.text.contains("push") }
        let without = try ScenarioRun.twin(silent)
        #expect(without.nights.allSatisfy { $0.stalenessHours == nil && $0.backgroundRuns == 0 }, "\(without.report)")
    }
}

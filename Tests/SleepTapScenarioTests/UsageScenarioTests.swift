// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import Testing

@testable import SleepTapScenario

/// `Examples/scenarios/ios-usage-no-opens-shanghai.json`: early registration on iOS's usage
/// opportunity model, no open for two weeks, then an open.
@Suite("The usage opportunity model in a scenario")
struct UsageScenarioTests {
    static let path = ScenarioFileTests.root.appendingPathComponent(
        "Examples/scenarios/ios-usage-no-opens-shanghai.json"
    ).path

    @Test("the scenario holds in the twin; the same scenario on legacy runs every day and fails its usage expectations")
    func noOpens() throws {
        let scenario = try ScenarioFile.load(Self.path)
        #expect(scenario.phone.contains("usage"))
        let usage = try ScenarioRun.twin(scenario)
        #expect(usage.passed, "\(usage.report)")
        var legacy = scenario
        legacy.phone = scenario.phone.filter { $0 != "--opportunity-model" && $0 != "usage" }
        let run = try ScenarioRun.twin(legacy)
        // Legacy runs in the second week without an open, so "at most 1" and the fallbacks fail.
        #expect(!run.passed)
        #expect(run.checks.filter { !$0.passed }.count == 2, "\(run.report)")
    }
}

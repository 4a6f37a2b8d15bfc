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

    @Test(
        "the scenario holds in the twin: runs thin out in the second week without an open but do not stop; the same scenario on legacy runs every day of it"
    )
    func noOpens() throws {
        let scenario = try ScenarioFile.load(Self.path)
        #expect(scenario.phone.contains("usage"))
        let usage = try ScenarioRun.twin(scenario)
        #expect(usage.passed, "\(usage.report)")
        var legacy = scenario
        legacy.phone =
            scenario.phone.filter { $0 != "--opportunity-model" && $0 != "usage" } + [
                "--opportunity-model", "legacy",
            ]
        let run = try ScenarioRun.twin(legacy)
        #expect(run.passed, "\(run.report)")
        // The second week (26 July 16:00Z to 2 August 16:00Z), no open: 3 runs on usage, about one a day on legacy.
        func week2(_ run: ScenarioRun) -> Int {
            run.log.filter {
                $0.event.name == .handlerEntered && $0.at >= ISO8601.date("2026-07-26T16:00:00Z")!
                    && $0.at < ISO8601.date("2026-08-02T16:00:00Z")!
            }.count
        }
        #expect(week2(usage) >= 1, "\(usage.report)")
        #expect(week2(usage) < week2(run) - 2, "usage \(week2(usage)), legacy \(week2(run)) runs in week 2")
    }

    @Test(
        "the seed's timeline on the usage model holds in the twin: the field report (late registration: launched, never entered, night 8 by hand), the fix (early: covered for 16 days without an open) and the demo's two parts",
        arguments: ["field-report-usage-shanghai", "early-registration-usage-shanghai", "demo-usage-new-york"])
    func seedTimeline(name: String) throws {
        let scenario = try ScenarioFile.load(
            ScenarioFileTests.root.appendingPathComponent("Examples/scenarios/\(name).json").path)
        #expect(scenario.phone.contains("usage"))
        let run = try ScenarioRun.twin(scenario)
        #expect(run.passed, "\(run.report)")
    }
}

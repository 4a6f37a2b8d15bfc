// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapScenario
import Testing

/// Timelines the date-exhaustion soak broke as real processes, kept as scenario files
/// (`Fixtures/`) and run again as the real phone and watch, checked by the soak's own checker.
@Suite("date-exhaustion soak timelines as processes")
struct SoakProcessRegressionTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    /// Found by `sleeptap-soak exhaustion --seed 2026 --scenarios 1 --nights 90 --processes 1`:
    /// a bed tap fell due while the BATCH of an open a few virtual minutes earlier was on its way;
    /// the watch read the BATCH and the late bed timer in one turn, applied the BATCH first and
    /// gave the tap, stamped at its instant, a wake-up from dates it did not hold then
    /// (invariant 1 on the processes' own events, on 26 April). At 1,000,000 virtual seconds per
    /// wall second (a wall millisecond is 17 virtual minutes) the race came in most runs before
    /// the watch took a due tap first (`WatchNode.dueBedTaps`).
    ///
    /// At that speed a wall stall of 0.2 s is more than the virtual lag a message may take
    /// (`SoakCheck.raceWindow`), and a machine busy with other tests stalls that long now and
    /// then: a run that breaks an invariant is run once more, and the test fails only when both
    /// do (the race it guards against came in most runs).
    @Test("soak seed 2026 timeline 0 as processes at 1,000,000x: invariants 1 to 4 hold on every night")
    func lateBedTap() throws {
        let scenario = try ScenarioFile.load(Self.fixtures.appendingPathComponent("soak-2026-0-late-bed-tap.json").path)
        var broken: [String] = []
        for _ in 0..<2 {
            let run = try ScenarioRun.processes(scenario, speed: 1_000_000, executables: ScenarioExecutables.locate())
            #expect(run.nights.count > 60, "\(run.nights.count) nights")
            do {
                let (tally, raced) = try SoakCheck.processes(run)
                #expect(tally.cached > 0 && tally.fallbacks > 0)
                #expect(raced.count < run.nights.count / 4, "\(raced.count) raced nights")
                return
            } catch {
                broken.append("\(error)")
            }
        }
        Issue.record("both runs broke an invariant:\n\(broken.joined(separator: "\n"))")
    }
}

// SPDX-License-Identifier: Apache-2.0
import SleepTapScenario
import Testing

/// When a processes run is run again slower: only a failed run whose phone fell behind virtual
/// time, at half the speed, at most `ScenarioRun.slowerRerunLimit` times.
@Suite("sleeptap-scenario: a failed run that fell behind virtual time is run again, slower")
struct SlowerRerunTests {
    static let behind = ProcessBehind(count: 3, maxLateSeconds: 9 * 3_600)

    @Test("a failed run whose phone fell behind: again at half the speed, and the reason names the lateness")
    func failedAndBehind() throws {
        let slower = try #require(
            ScenarioRun.slowerSpeed(passed: false, behind: Self.behind, speed: 172_800, attempt: 0))
        #expect(slower.speed == 86_400)
        #expect(slower.reason.contains("3 launches handled more than 10 min late, at most 9.0 h"), "\(slower.reason)")
        #expect(slower.reason.hasSuffix("run again at 86400x"), "\(slower.reason)")
    }

    @Test("a verdict stands when the run passed, never fell behind, or the slower runs are used up")
    func verdictStands() {
        #expect(ScenarioRun.slowerSpeed(passed: true, behind: Self.behind, speed: 172_800, attempt: 0) == nil)
        #expect(ScenarioRun.slowerSpeed(passed: false, behind: ProcessBehind(), speed: 172_800, attempt: 0) == nil)
        #expect(ScenarioRun.slowerSpeed(passed: false, behind: nil, speed: 172_800, attempt: 0) == nil)
        #expect(
            ScenarioRun.slowerSpeed(
                passed: false, behind: Self.behind, speed: 172_800, attempt: ScenarioRun.slowerRerunLimit) == nil)
        #expect(ScenarioRun.slowerSpeed(passed: false, behind: Self.behind, speed: 1, attempt: 0) == nil)
    }
}

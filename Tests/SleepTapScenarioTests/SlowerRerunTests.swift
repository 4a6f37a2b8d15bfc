// SPDX-License-Identifier: Apache-2.0
import Foundation
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

/// The processes' clock anchor (`ScenarioRun.anchor(at:)`).
@Suite("sleeptap-scenario: the processes' --clock-anchor")
struct ClockAnchorTests {
    @Test(
        "The anchor is the wall instant to the millisecond, never after it: a scenario starting at 1970-01-01T00:00:00Z cannot be put before 1970"
    )
    func neverAhead() {
        // 0.6 ms past a millisecond: rounded to the nearest it was 0.4 ms ahead of the instant the
        // parsers check it at, 69 virtual seconds before 1970 at 172,800x.
        let now = Date(timeIntervalSince1970: 1_796_379_370.0006)
        let anchor = ScenarioRun.anchor(at: now)
        #expect(anchor <= now && now.timeIntervalSince(anchor) < 0.001)
        #expect(anchor.timeIntervalSince1970 == 1_796_379_370)
        var state: UInt64 = 11
        for _ in 0..<10_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let instant = Date(timeIntervalSince1970: 1.7e9 + Double(state >> 40) / 1_000_003)
            let anchored = ScenarioRun.anchor(at: instant)
            #expect(anchored <= instant && instant.timeIntervalSince(anchored) < 0.001)
        }
    }
}

// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import SleepTapEmbedded
import Testing

@testable import SleepTapScenario

/// A process run's inputs at the instants the processes handled them, read back from their logs
/// when the run is over (`ScenarioRun.resolve`): a phone behind virtual time answers a
/// line after the runner stopped waiting for it.
@Suite("Handled inputs of a process run")
struct HandledInputTests {
    static let t0 = ISO8601.date("2026-09-24T20:00:00Z")!

    @Test("A line answered late takes its answer's instant; two lines of one kind are answered in order")
    func lateAnswers() {
        var inputs: [(at: Date, step: TwinStep)] = [
            (Self.t0, .phone("time-zone Asia/Kathmandu")), (Self.t0.addingTimeInterval(60), .watch("bed")),
            (Self.t0.addingTimeInterval(120), .phone("time-zone Europe/Dublin")),
        ]
        // The phone ran an overdue launch first, then answered both lines, hours late.
        let phone: [(name: String, time: Date?)] = [
            ("phone.started", Self.t0.addingTimeInterval(-10)), ("handler.entered", Self.t0.addingTimeInterval(420)),
            ("timezone.changed", Self.t0.addingTimeInterval(23_000)),
            ("timezone.changed", Self.t0.addingTimeInterval(23_001)),
        ]
        let watch: [(name: String, time: Date?)] = [("bed.wake_time", Self.t0.addingTimeInterval(61))]
        ScenarioRun.resolve(
            [(0, 0, 1, [.timezoneChanged]), (1, 1, 0, [.bedWakeTime]), (2, 0, 1, [.timezoneChanged])],
            logs: [phone, watch], into: &inputs)
        #expect(inputs.map(\.at) == [23_000, 61, 23_001].map { Self.t0.addingTimeInterval($0) })
    }

    @Test(
        "An open written while a background launch starts the app takes its own refresh.foreground, not the launch's handler.registered"
    )
    func openAfterALaunch() {
        var inputs: [(at: Date, step: TwinStep)] = [(Self.t0, .phone("open"))]
        // The launch registered its handler at +60 s; the open waited behind its job, to +2,400 s.
        let phone: [(name: String, time: Date?)] = [
            ("os.app.launched", Self.t0.addingTimeInterval(60)), ("handler.registered", Self.t0.addingTimeInterval(60)),
            ("handler.entered", Self.t0.addingTimeInterval(60)),
            ("refresh.foreground", Self.t0.addingTimeInterval(2_400)),
        ]
        ScenarioRun.resolve([(0, 0, 0, ScenarioRun.phoneEcho("open"))], logs: [phone], into: &inputs)
        #expect(inputs[0].at == Self.t0.addingTimeInterval(2_400))
    }

    @Test("An answer before the line was sent, or none at all, leaves the instant as it was")
    func noAnswer() {
        var inputs: [(at: Date, step: TwinStep)] = [(Self.t0, .phone("time-zone Asia/Tokyo"))]
        let phone: [(name: String, time: Date?)] = [("timezone.changed", Self.t0.addingTimeInterval(-5))]
        ScenarioRun.resolve([(0, 0, 1, [.timezoneChanged])], logs: [phone], into: &inputs)
        #expect(inputs[0].at == Self.t0)
    }

    @Test("A rejected line is answered by its input.rejected")
    func rejected() {
        var inputs: [(at: Date, step: TwinStep)] = [(Self.t0, .phone("time-zone Mars/Olympus"))]
        let phone: [(name: String, time: Date?)] = [("input.rejected", Self.t0.addingTimeInterval(3))]
        ScenarioRun.resolve([(0, 0, 0, [.timezoneChanged])], logs: [phone], into: &inputs)
        #expect(inputs[0].at == Self.t0.addingTimeInterval(3))
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapProcess
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The fault matrix, short: `sleeptap-soak` kills, pauses, restarts and hands over the real phone
/// and watch over ipc in seeded steps and checks after each that nothing was lost (the watch holds
/// the newest batch, no batch applied twice, never older over newer). The long run is
/// `.build/debug/sleeptap-soak --steps 500`.
@Suite("fault matrix", .serialized)
struct FaultMatrixTests {
    /// The step kinds `sleeptap-soak --help` lists.
    static let stepKinds = ["open", "kill-phone", "kill-watch", "pause", "restart-both", "handover"]

    /// Runs `sleeptap-soak --json` to its end.
    /// - Returns: the exit status, stderr (where the soak writes its failure report) and the
    ///   `soak.summary` event.
    static func soak(_ arguments: [String], deadline: TimeInterval) throws -> (
        status: Int32, report: String, summary: ChildEvent?
    ) {
        let child = try ChildProcess(
            name: "sleeptap-soak", executable: Scenario.executable("sleeptap-soak"), arguments: arguments + ["--json"])
        guard child.waitForExit(timeout: deadline) else {
            // SIGTERM: the soak kills its phone and watch and removes its temp dir, then exits.
            child.stop(signal: SIGTERM, timeout: 10)
            child.waitForOutputEnd(timeout: 2)
            return (-1, "did not finish within \(Int(deadline)) s\n\(child.standardError)", nil)
        }
        // stdout and stderr are read on other threads: wait until both reached end of file.
        child.waitForOutputEnd(timeout: 2)
        return (child.exitStatus ?? -1, child.standardError, child.events.last { $0.name == .soakSummary })
    }

    /// Checks what the summary says ran: every kind of step, `steps` steps, every kill set on an
    /// event fired on it (none at the deadline), and (`killsBeforeAck`) kills set on an event that
    /// landed between the phone's batch.sent and its ACK and between the watch's batch.applied and
    /// its ack.sent.
    static func checkSummary(
        _ result: (status: Int32, report: String, summary: ChildEvent?), arguments: [String], steps: Int,
        killsBeforeAck: Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let context = "sleeptap-soak \(arguments.joined(separator: " ")):\n\(result.report)"
        #expect(result.status == 0, "\(context)", sourceLocation: sourceLocation)
        let summary = try #require(result.summary, "no soak.summary line; \(context)", sourceLocation: sourceLocation)
        #expect(summary.string("result") == "passed", "\(summary)", sourceLocation: sourceLocation)
        #expect(summary.int("stepsRun") == steps, "\(summary)", sourceLocation: sourceLocation)
        for kind in stepKinds {
            #expect(
                (summary.object("stepsByKind")?[kind] as? Int ?? 0) >= 1, "no \(kind) step: \(summary)",
                sourceLocation: sourceLocation)
        }
        #expect(summary.int("tripwiresMissed") == 0, "\(summary)", sourceLocation: sourceLocation)
        if killsBeforeAck {
            #expect((summary.int("tripwiresArmed") ?? 0) >= 1, "\(summary)", sourceLocation: sourceLocation)
            #expect((summary.int("phoneKillsBeforeAck") ?? 0) >= 1, "\(summary)", sourceLocation: sourceLocation)
            #expect((summary.int("watchKillsBeforeAck") ?? 0) >= 1, "\(summary)", sourceLocation: sourceLocation)
        }
    }

    @Test(
        "16 seeded fault steps: every kind ran, kills landed before the ACK, no kill trigger missed, the link lost nothing"
    )
    func sixteenSteps() throws {
        // Seed 54131 picks every kind of step; among them 2 kills of the phone set on its batch.sent
        // or on the watch's batch.applied, and 6 kills of the watch on its batch.applied. The
        // watch sends its ACK microseconds after batch.applied, so a kill read from its output
        // lands before ack.sent only most of the time: with 6 tries, at least one does.
        let arguments = ["--steps", "16", "--seed", "54131"]
        let result = try Self.soak(arguments, deadline: 45)
        try Self.checkSummary(result, arguments: arguments, steps: 16, killsBeforeAck: true)
    }

    @Test("Three more seeds, 6 steps each: every kind ran, no kill trigger missed, the link lost nothing")
    func threeSeeds() throws {
        // Each of these seeds picks all six kinds of step in its 6 steps.
        for seed in ["73", "137", "169"] {
            let arguments = ["--steps", "6", "--seed", seed]
            let result = try Self.soak(arguments, deadline: 30)
            try Self.checkSummary(result, arguments: arguments, steps: 6, killsBeforeAck: false)
        }
    }

    @Test(
        "SIGTERM during a long run: the summary so far (result interrupted), exit 143, its phone, watch and temp dir gone"
    )
    func interrupt() throws {
        let child = try ChildProcess(
            name: "sleeptap-soak", executable: Scenario.executable("sleeptap-soak"),
            arguments: ["--seed", "8", "--steps", "100000", "--verbose"], standardInput: FileHandle.nullDevice)
        defer { if child.isRunning { child.stop(signal: SIGKILL, timeout: 5) } }
        let header = try #require(child.waitForLine(timeout: 30) { $0.hasPrefix("sleeptap-soak: seed 8") })
        // ipc:///tmp/sleeptap-soak-XXXXXX/phone.sock: the run's temp dir.
        let directory = try #require(
            header.components(separatedBy: "ipc://").last.map { ($0 as NSString).deletingLastPathComponent })
        #expect(FileManager.default.fileExists(atPath: directory))
        // A few steps in (`--verbose` prints each): the summary then counts them.
        #expect(child.waitForLine(timeout: 60) { $0.hasPrefix("  step 3:") } != nil)
        kill(child.pid, SIGTERM)
        #expect(child.waitForExit(timeout: 20), "no exit within 20 s of SIGTERM")
        child.waitForOutputEnd(timeout: 5)
        #expect(child.exitStatus == 143, "\(child.standardError)")
        let text = child.outputLines.map(\.text).joined(separator: "\n")
        #expect(text.contains("sleeptap-soak: interrupted by Terminated after step "), "\(text)")
        #expect(text.contains("steps:     ") && text.contains(" of 100000 (seed 8)"), "\(text)")
        #expect(!FileManager.default.fileExists(atPath: directory), "the temp dir is left: \(directory)")
    }
}

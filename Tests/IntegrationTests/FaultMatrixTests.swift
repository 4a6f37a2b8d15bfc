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
    /// Runs `sleeptap-soak` to its end.
    /// - Returns: the exit status and stderr (where the soak writes its failure report).
    static func soak(_ arguments: [String], deadline: TimeInterval) throws -> (status: Int32, report: String) {
        let child = try ChildProcess(
            name: "sleeptap-soak", executable: Scenario.executable("sleeptap-soak"), arguments: arguments)
        guard child.waitForExit(timeout: deadline) else {
            // SIGTERM: the soak kills its phone and watch and removes its temp dir, then exits.
            child.stop(signal: SIGTERM, timeout: 10)
            _ = child.waitFor("(end of output)", timeout: 2)
            return (-1, "did not finish within \(Int(deadline)) s\n\(child.standardError)")
        }
        // stderr is read on another thread: give it the moment it needs to reach EOF.
        _ = child.waitFor("(end of output)", timeout: 2)
        return (child.exitStatus ?? -1, child.standardError)
    }

    @Test("12 seeded fault steps (every kind of fault): the link loses nothing")
    func twelveSteps() throws {
        // Seed 163 picks every kind of step, including kill -9 of the phone on batch.sent and on
        // the watch's batch.applied (before the ACK), and of the watch on batch.applied.
        let arguments = ["--steps", "12", "--seed", "163"]
        let result = try Self.soak(arguments, deadline: 45)
        #expect(result.status == 0, "sleeptap-soak \(arguments.joined(separator: " ")):\n\(result.report)")
    }

    @Test("Three more seeds, 6 steps each")
    func threeSeeds() throws {
        // Each of these seeds picks all six kinds of step in its 6 steps.
        for seed in ["73", "137", "169"] {
            let arguments = ["--steps", "6", "--seed", seed]
            let result = try Self.soak(arguments, deadline: 30)
            #expect(result.status == 0, "sleeptap-soak \(arguments.joined(separator: " ")):\n\(result.report)")
        }
    }
}

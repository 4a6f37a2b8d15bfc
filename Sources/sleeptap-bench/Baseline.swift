// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapProcess

/// A case that could not run; the message says which and why (exit 70).
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs `sleeptap-bench-baseline`, the plain C floor built with the bench (main.c beside it).
enum Baseline {
    /// The executable, found beside this one (SwiftPM builds it with the bench).
    static func executable() throws(BenchFailure) -> URL {
        guard let url = ChildProcess.locate("sleeptap-bench-baseline") else {
            throw BenchFailure(
                "sleeptap-bench-baseline not found beside \(CommandLine.arguments[0]); build the package")
        }
        return url
    }

    /// Runs the baseline with `arguments` and returns the numbers it printed, one a line.
    /// - Throws: `BenchFailure` when it cannot start, fails, or prints something else.
    static func run(_ arguments: [String]) throws(BenchFailure) -> [Double] {
        let child: ChildProcess
        do {
            child = try ChildProcess(
                name: "baseline", executable: try executable(), arguments: arguments,
                standardInput: FileHandle.nullDevice)
        } catch let failure as BenchFailure {
            throw failure
        } catch {
            throw BenchFailure("cannot start sleeptap-bench-baseline: \(error)")
        }
        guard child.waitForOutputEnd(timeout: 300), child.waitForExit(timeout: 10) else {
            child.stop(signal: SIGKILL)
            throw BenchFailure("sleeptap-bench-baseline \(arguments.joined(separator: " ")) did not finish in 300 s")
        }
        let lines = child.otherOutputLines
        let numbers = lines.compactMap(Double.init)
        guard child.exitStatus == 0, numbers.count == lines.count, !numbers.isEmpty else {
            throw BenchFailure(
                "sleeptap-bench-baseline \(arguments.joined(separator: " ")) failed (exit \(child.exitStatus ?? -1)): "
                    + child.standardError.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return numbers
    }
}

/// The C floor of the durable round trip, one sample at a time (`durable` mode), so that it can
/// be interleaved sample by sample with the real processes: the disk is shared, and a journal
/// commit of someone else's build can stall any one fsync.
final class DurableBaseline {
    private let child: ChildProcess

    /// Starts it.
    /// - Parameters:
    ///   - directory: where its two state files go (the file system of the processes' state dirs).
    ///   - serverBytes: the watch's state file size; `clientBytes`: the phone's.
    init(endpoint: String, directory: String, serverBytes: Int, clientBytes: Int) throws {
        child = try ChildProcess(
            name: "baseline", executable: try Baseline.executable(),
            arguments: [
                "durable", endpoint, directory, "1024", "128", String(serverBytes), String(clientBytes),
            ])
    }

    /// One sample.
    /// - Returns: nanoseconds: `read`, from the sample's start to the moment the bench read its
    ///   line (as the Swift side's end is read, `ProcessPair.durableRoundTrip()`); `total`, the
    ///   same on the C side's own clock, up to its line's write; and the server's and the
    ///   client's write.
    func sample() throws -> (read: Double, total: Double, serverWrite: Double, clientWrite: Double) {
        let from = child.events.count
        let fromLine = child.outputLines.count
        child.send(line: "go")
        guard let event = child.waitFor(rawNames: ["baseline.sample"], from: from, timeout: 30)?.event,
            let total = (event.fields["total"] as? NSNumber)?.doubleValue,
            let server = (event.fields["serverWrite"] as? NSNumber)?.doubleValue,
            let client = (event.fields["clientWrite"] as? NSNumber)?.doubleValue,
            let start = (event.fields["startRealtime"] as? NSNumber)?.doubleValue,
            let line = child.outputLines.dropFirst(fromLine).first(where: { $0.text == event.line })
        else {
            throw BenchFailure("sleeptap-bench-baseline durable gave no sample in 30 s: \(child.standardError)")
        }
        return (line.arrived.timeIntervalSince1970 * 1e9 - start, total, server, client)
    }

    /// Ends it (end of input, then SIGTERM after 3 s).
    func stop() {
        child.closeStandardInput()
        if !child.waitForExit(timeout: 3) { child.stop() }
    }
}

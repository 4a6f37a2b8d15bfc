// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapProcess
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An executable run to its end with every stdout line kept, JSON or not, and the wall instant
/// each line arrived (for help texts, reports and pacing).
struct CapturedRun {
    var status: Int32
    var lines: [ChildOutputLine]
    var standardError: String

    var standardOutput: String { lines.map(\.text).joined(separator: "\n") }

    /// Runs `name` (a built product), or `executable` when given (labelled `name`), with
    /// `arguments` and stdin at end of file.
    ///
    /// The child is a `ChildProcess`: tracked by the `Reaper` (ended if the tests are
    /// interrupted) and given `SLEEPTAP_PARENT_PID`, its pipes read on their own threads while it
    /// runs. At `timeout` the child gets SIGTERM (the demo and the soak clean up their children
    /// on it), then SIGKILL after 10 s, and an issue is recorded.
    /// - Throws: when the executable is not built or cannot be started.
    static func run(
        _ name: String, _ arguments: [String], executable: URL? = nil, timeout: TimeInterval,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> CapturedRun {
        let child = try ChildProcess(
            name: name, executable: executable ?? Scenario.executable(name), arguments: arguments,
            standardInput: FileHandle.nullDevice)
        if !child.waitForExit(timeout: timeout) {
            Issue.record("\(name) \(arguments) did not finish within \(timeout) s", sourceLocation: sourceLocation)
            child.stop(signal: SIGTERM, timeout: 10)
        }
        // stdout and stderr are read on other threads: wait until both reached end of file.
        child.waitForOutputEnd(timeout: 5)
        return CapturedRun(
            status: child.exitStatus ?? -1, lines: child.outputLines, standardError: child.standardError)
    }
}

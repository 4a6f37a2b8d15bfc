// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A stdout that is closed or cannot be written is an error (exit 74 and a message on stderr),
/// never silence; a closed stdin or stderr is never taken over by an internal file.
@Suite("standard streams", .serialized)
struct StandardStreamTests {
    /// Runs `name ARGUMENTS` through bash with `redirection` applied (e.g. `>&-`, `>/dev/full`).
    /// - Returns: the exit status and stderr, or nil (recorded) when it still runs after 10 s.
    static func run(
        _ scenario: Scenario, _ name: String, _ arguments: [String], redirection: String
    ) throws -> (status: Int32, stderr: String) {
        let script = #"exec "$0" "$@" "# + redirection
        let shell = try scenario.spawn(
            "\(name) \(redirection)", ["-c", script, Scenario.executable(name).path] + arguments,
            executable: URL(fileURLWithPath: "/bin/bash"))
        #expect(shell.waitForExit(timeout: 10), "\(name) \(arguments) \(redirection) still running after 10 s")
        shell.stop(signal: SIGKILL, timeout: 2)
        shell.waitForOutputEnd(timeout: 5)
        return (shell.exitStatus ?? -1, shell.standardError)
    }

    static func runArguments(_ scenario: Scenario, _ name: String) -> [String] {
        ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/\(name)"]
    }

    @Test(
        "A closed stdout (>&-) stops phone and watch at once: exit 74, stderr says stdout is closed",
        arguments: ["phone", "watch"])
    func closedStandardOutput(_ name: String) throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let result = try Self.run(scenario, name, Self.runArguments(scenario, name), redirection: ">&-")
        #expect(result.status == 74, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("stdout (file descriptor 1) is closed"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(scenario.dir)/\(name)"), "nothing is created")
    }

    @Test(
        "A stdout that cannot be written (>/dev/full) stops phone and watch: exit 74, stderr names the cause",
        arguments: ["phone", "watch"])
    func fullStandardOutput(_ name: String) throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let result = try Self.run(scenario, name, Self.runArguments(scenario, name), redirection: ">/dev/full")
        #expect(result.status == 74, "stderr: \(result.stderr)")
        #expect(
            result.stderr.contains("cannot write events to stdout: No space left on device"), "\(result.stderr)")
    }

    @Test(
        "--help, --version and keygen --help to a closed or full stdout: exit 74 with a message on stderr",
        arguments: [
            ("phone", ["--help"]), ("watch", ["--help"]), ("phone", ["--version"]), ("watch", ["keygen", "--help"]),
        ])
    func textToBadStandardOutput(_ name: String, _ arguments: [String]) throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let full = try Self.run(scenario, name, arguments, redirection: ">/dev/full")
        #expect(full.status == 74, "stderr: \(full.stderr)")
        #expect(full.stderr.contains("cannot write to stdout: No space left on device"), "\(full.stderr)")
        let closed = try Self.run(scenario, name, arguments, redirection: ">&-")
        #expect(closed.status == 74, "stderr: \(closed.stderr)")
        #expect(closed.stderr.contains("stdout (file descriptor 1) is closed"), "\(closed.stderr)")
    }

    @Test(
        "The tools (demo, soak, scenario, report, fleet, bench) to a closed or full stdout: exit 74 with a message on stderr",
        arguments: [
            ("sleeptap-demo", ["--speed", "7200"]), ("sleeptap-demo", ["--help"]), ("sleeptap-soak", ["--help"]),
            ("sleeptap-soak", ["exhaustion", "--help"]), ("sleeptap-scenario", ["--help"]),
            ("sleeptap-report", ["--help"]), ("sleeptap-fleet", ["--help"]), ("sleeptap-bench", ["--help"]),
            ("sleeptap-bench-baseline", ["--help"]), ("sleeptap-bench-baseline", ["--version"]),
        ])
    func toolsToBadStandardOutput(_ name: String, _ arguments: [String]) throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let full = try Self.run(scenario, name, arguments, redirection: ">/dev/full")
        #expect(full.status == 74, "stderr: \(full.stderr)")
        #expect(full.stderr.contains("\(name): cannot write to stdout: No space left on device"), "\(full.stderr)")
        let closed = try Self.run(scenario, name, arguments, redirection: ">&-")
        #expect(closed.status == 74, "stderr: \(closed.stderr)")
        #expect(closed.stderr.contains("\(name): stdout (file descriptor 1) is closed"), "\(closed.stderr)")
    }

    @Test(
        "Help to a pipe whose reader has gone (tool --help | true): exit 0, no crash, no SIGPIPE death",
        arguments: [
            "sleeptap-demo", "sleeptap-soak", "sleeptap-scenario", "sleeptap-report", "sleeptap-fleet",
            "sleeptap-bench", "sleeptap-bench-baseline",
        ])
    func helpToGonePipe(_ name: String) throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        // `true` exits at once; the tool's start-up takes longer, so its write finds no reader
        // (EPIPE). The tool's own status is the pipeline's first.
        let shell = try scenario.spawn(
            "\(name) | true", ["-c", #""$0" --help | true; exit "${PIPESTATUS[0]}""#, Scenario.executable(name).path],
            executable: URL(fileURLWithPath: "/bin/bash"))
        #expect(shell.waitForExit(timeout: 10), "\(name) --help | true still running after 10 s")
        shell.stop(signal: SIGKILL, timeout: 2)
        shell.waitForOutputEnd(timeout: 5)
        #expect(shell.exitStatus == 0, "\(name): status \(shell.exitStatus ?? -1), stderr: \(shell.standardError)")
    }

    @Test("sleeptap-soak | head -1: the fault matrix stops at its next step, exit 0, its phone and watch gone")
    func soakToGonePipe() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        // 100,000 steps would take hours: the run must notice that nobody reads it.
        let shell = try scenario.spawn(
            "sleeptap-soak | head -1",
            [
                "-c", #""$0" --steps 100000 --seed 2 | head -1; exit "${PIPESTATUS[0]}""#,
                Scenario.executable("sleeptap-soak").path,
            ],
            executable: URL(fileURLWithPath: "/bin/bash"))
        #expect(shell.waitForExit(timeout: 60), "sleeptap-soak | head -1 still running after 60 s")
        shell.stop(signal: SIGKILL, timeout: 2)
        shell.waitForOutputEnd(timeout: 5)
        #expect(shell.exitStatus == 0, "status \(shell.exitStatus ?? -1), stderr: \(shell.standardError)")
        let header = shell.outputLines.first?.text ?? ""
        let directory = header.components(separatedBy: "ipc://").last.map { ($0 as NSString).deletingLastPathComponent }
        #expect(directory.map { !FileManager.default.fileExists(atPath: $0) } == true, "\(header)")
    }

    @Test("A closed stdin (<&-) reads as end of file: the phone runs, its fd 0 is /dev/null, SIGTERM stops it")
    func closedStandardInput() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let script = #"exec "$0" "$@" <&-"#
        let phone = try scenario.spawn(
            "phone <&-", ["-c", script, Scenario.executable("phone").path] + Self.runArguments(scenario, "phone"),
            executable: URL(fileURLWithPath: "/bin/bash"))
        let pid = try #require(try phone.expect(.phoneStarted).event.int("pid"))
        let target = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/0")
        #expect(target == "/dev/null")
        #expect(phone.stop(signal: SIGTERM, timeout: 5) == 0, "stderr: \(phone.standardError)")
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapOS
import SleepTapProcess
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// SIGINT, SIGTERM and SIGHUP end phone and watch whenever they come, and `*.stopping` is the
/// last line they write.
@Suite("stop signals", .serialized)
struct StopSignalTests {
    /// The signals that stop phone and watch.
    static let stopSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    @Test("A stop signal at any moment of start-up (0-40 ms after spawn) ends phone and watch within 2 s")
    func signalDuringStartUp() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(state: seed)
        for attempt in 0..<40 {
            let name = attempt.isMultiple(of: 2) ? "phone" : "watch"
            let signal = Self.stopSignals[attempt % Self.stopSignals.count]
            // The delay is the input under test (where in start-up the signal lands), not a wait.
            let delay = UInt32.random(in: 0...40_000, using: &random)
            let endpoint = "ipc://\(scenario.dir)/p\(attempt).sock"
            let child = try scenario.spawn(
                name, ["--endpoint", endpoint, "--state-dir", "\(scenario.dir)/\(name)\(attempt)"],
                standardInput: FileHandle.nullDevice)
            usleep(delay)
            kill(child.pid, signal)
            let label = "\(name), signal \(signal) \(delay) µs after spawn (seed \(seed), attempt \(attempt))"
            #expect(child.waitForExit(timeout: 2), "\(label): still running 2 s later; stderr: \(child.standardError)")
            child.stop(signal: SIGKILL, timeout: 2)
            // A clean stop (exit 0), or the signal's default action when it came before the main
            // thread blocked it (the runtime was still loading).
            #expect(
                [0, 128 + signal].contains(child.exitStatus ?? -1),
                "\(label): exit \(child.exitStatus ?? -1); stderr: \(child.standardError)")
        }
    }

    @Test(
        "Every thread of a running phone and watch blocks SIGINT, SIGTERM and SIGHUP (they reach the signal trap only)",
        arguments: ["phone", "watch"])
    func everyThreadBlocksStopSignals(_ name: String) throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let child = try name == "phone" ? scenario.phone() : scenario.watch()
        try child.expect(name == "phone" ? .phoneStarted : .watchStarted)
        // proc(5): /proc/PID/task/TID/status has SigBlk, a hex mask with bit N-1 for signal N.
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(child.pid)/task")
        #expect(tasks.count > 1, "phone and watch run several threads")
        for task in tasks {
            let status = try String(contentsOfFile: "/proc/\(child.pid)/task/\(task)/status", encoding: .utf8)
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("SigBlk:") })
            let mask = try #require(
                UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16))
            for signal in Self.stopSignals {
                #expect(
                    mask & (1 << UInt64(signal - 1)) != 0, "thread \(task) of \(name) does not block \(signal): \(line)"
                )
            }
        }
        #expect(child.stop(signal: SIGTERM, timeout: 5) == 0)
    }

    @Test("phone.stopping is the last line: held-back send failures are said before it")
    func stoppingIsTheLastLine() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        // No watch: every resend fails, and the repeats are held back.
        let phone = try scenario.phone()
        try phone.expect(.phoneStarted)
        // The resends (0.25 s, 0.5 s, 1 s apart) print nothing: ask `status` for the count, with
        // a deadline.
        let deadline = Date().addingTimeInterval(Scenario.deadline)
        var from = 0
        var failures = 0
        while failures < 3 && Date() < deadline {
            phone.send(line: "status")
            let status = try phone.expect(.phoneStatus, from: from)
            failures = status.event.int("sendFailures") ?? 0
            from = status.index + 1
            usleep(100_000)
        }
        try #require(failures >= 3, "the phone counted \(failures) send failures")
        #expect(phone.stop(signal: SIGTERM, timeout: 5) == 0)
        phone.waitForOutputEnd(timeout: 5)
        let names = phone.events.map(\.rawName)
        #expect(names.last == EventName.phoneStopping.rawValue, "\(names.suffix(4))")
        let summary = try #require(phone.events.last { $0.name == .sendFailed })
        #expect((summary.int("suppressed") ?? 0) >= 1, "\(summary)")
    }
}

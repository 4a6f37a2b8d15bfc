// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import SleepTapProcess
import SleepTapScenario
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `sleeptap-soak exhaustion` as a user runs it: a small run holds, a planted fault is reported
/// with a scenario file that loads, and Ctrl-C gives the summary so far.
@Suite("sleeptap-soak exhaustion")
struct SoakExhaustionTests {
    static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("soak-ex-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("a small run exits 0 and its JSON summary says passed, with every night counted")
    func smallRun() throws {
        let result = try CapturedRun.run(
            "sleeptap-soak", ["exhaustion", "--seed", "3", "--scenarios", "3", "--nights", "8", "--json"], timeout: 60)
        #expect(result.status == 0, "\(result.standardError)")
        let line = try #require(result.lines.last?.text)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["event"] as? String == "soak.summary" && object["result"] as? String == "passed", "\(line)")
        #expect(object["tzdata"] as? String == ZoneDatabase.current.version, "\(line)")
        #expect(object["scenariosRun"] as? Int == 3 && object["seed"] as? String == "3", "\(line)")
        let nights = try #require(object["nights"] as? Int)
        #expect(nights >= 3 * 7 && nights == (object["cached"] as? Int ?? -1) + (object["manualEntries"] as? Int ?? -1))
    }

    @Test("a planted wrong wake time: exit 1, the seed, the night, the evidence and a scenario file that loads")
    func brokenInvariant() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try CapturedRun.run(
            "sleeptap-soak",
            [
                "exhaustion", "--seed", "9", "--scenarios", "2", "--nights", "6", "--out", directory, "--inject-fault",
                "wrong-wake",
            ], timeout: 60)
        #expect(result.status == 1, "\(result.standardError)")
        let report = result.standardError
        #expect(report.contains("INVARIANT BROKEN") && report.contains("run seed 9"), "\(report)")
        #expect(report.contains("invariant 2 broken on night"), "\(report)")
        #expect(report.contains("evidence:") && report.contains("\"event\":\"bed.wake_time\""), "\(report)")
        let path = "\(directory)/\(SoakTimeline.fileName(runSeed: 9, index: 0))"
        #expect(report.contains("scenario file: \(path)"), "\(report)")
        let scenario = try ScenarioFile.load(path)
        #expect(scenario.expectations.last?.event == .bedWakeTime)
        #expect(result.standardOutput.contains("INVARIANT BROKEN"), "\(result.standardOutput)")
        // The planted fault is in the run's log only: the report does not send the user to a
        // file that passes.
        #expect(report.contains("reproduce: the replay below (the fault was planted"), "\(report)")
        // The same run again keeps the first file and writes the next free name.
        let first = try Data(contentsOf: URL(fileURLWithPath: path))
        try Data("MINE".utf8).write(to: URL(fileURLWithPath: path))
        let again = try CapturedRun.run(
            "sleeptap-soak",
            [
                "exhaustion", "--seed", "9", "--scenarios", "2", "--nights", "6", "--out", directory, "--inject-fault",
                "wrong-wake",
            ], timeout: 60)
        #expect(again.status == 1, "\(again.standardError)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "MINE")
        let second = String(path.dropLast(".json".count)) + "-2.json"
        #expect(again.standardError.contains("scenario file: \(second)"), "\(again.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: second)) == first)
    }

    @Test(
        "--out is checked before the run: not a directory, or under a file, exits 73 at once; a missing one is not made"
    )
    func outChecked() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/file"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        // A run this long would not end within the timeout: the refusal must come first.
        let long = ["exhaustion", "--seed", "1", "--scenarios", "1000000", "--nights", "60"]
        for (out, reason) in [
            ("/dev/null", "--out /dev/null: is not a directory"),
            (file, "--out \(file): is not a directory"),
            (file + "/sub/dir", "--out \(file)/sub/dir: \(file) is not a directory"),
        ] {
            let result = try CapturedRun.run("sleeptap-soak", long + ["--out", out], timeout: 30)
            #expect(result.status == 73 && result.standardError.contains(reason), "\(out): \(result.standardError)")
            #expect(result.standardOutput.isEmpty, "\(result.standardOutput)")
        }
        // A directory still to be made is made only when a failing timeline is written there.
        let missing = directory + "/new/sub"
        let passed = try CapturedRun.run(
            "sleeptap-soak", ["exhaustion", "--seed", "3", "--scenarios", "1", "--nights", "4", "--out", missing],
            timeout: 60)
        #expect(passed.status == 0, "\(passed.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/new"))
    }

    @Test("--processes with no timelines to spare, and an unknown fault, are usage errors (64)")
    func usage() throws {
        let more = try CapturedRun.run(
            "sleeptap-soak", ["exhaustion", "--scenarios", "2", "--processes", "3"], timeout: 30)
        #expect(more.status == 64 && more.standardError.contains("--processes 3"), "\(more.standardError)")
        let fault = try CapturedRun.run("sleeptap-soak", ["exhaustion", "--inject-fault", "nope"], timeout: 30)
        #expect(fault.status == 64 && fault.standardError.contains("wrong-wake"), "\(fault.standardError)")
    }

    @Test("SIGINT during a long run: the summary so far, fewer timelines than asked, exit 130")
    func interrupt() throws {
        let child = try ChildProcess(
            name: "sleeptap-soak", executable: try Scenario.executable("sleeptap-soak"),
            arguments: ["exhaustion", "--seed", "5", "--scenarios", "100000", "--nights", "30"],
            standardInput: FileHandle.nullDevice)
        defer { if child.isRunning { child.stop(signal: SIGKILL, timeout: 5) } }
        // The header says the run began (the signal handlers are in place before it).
        _ = child.waitForLine(timeout: 30) { $0.hasPrefix("sleeptap-soak exhaustion: seed 5") }
        kill(child.pid, SIGINT)
        #expect(child.waitForExit(timeout: 20), "no exit within 20 s of SIGINT")
        child.waitForOutputEnd(timeout: 5)
        #expect(child.exitStatus == 130, "\(child.standardError)")
        let text = child.outputLines.map(\.text).joined(separator: "\n")
        #expect(text.contains("stopped by Interrupt") && text.contains("sleeptap-soak: interrupted"), "\(text)")
        #expect(text.contains("of 100000 in the twin"), "\(text)")
    }
}

// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import SleepTapProcess
import Testing

@testable import sleeptap_bench

/// `sleeptap-bench --smoke` runs every case once with tiny counts; this keeps the bench from
/// rotting: each case runs and the JSON has the documented shape. Speed is not checked here.
@Suite("sleeptap-bench")
struct BenchTests {
    @Test(
        "Quick mode says which verdicts its sample size cannot support: n/a with the spread and the margin instead of NO (or yes); a full run keeps yes/NO"
    )
    func quickVerdicts() {
        // A ratio of 1.20 against <= 1.05 (margin 14 %) with a 37 % spread: quick cannot tell.
        #expect(
            Verdict.text(met: false, figure: 1.20, threshold: 1.05, spreadPercent: 37, quick: true)
                == "n/a (quick: spread 37 %, margin 14 %)")
        #expect(Verdict.text(met: false, figure: 1.20, threshold: 1.05, spreadPercent: 37, quick: false) == "NO")
        // A spread inside the margin supports the verdict, in quick mode too.
        #expect(Verdict.text(met: false, figure: 2.1, threshold: 1.05, spreadPercent: 37, quick: true) == "NO")
        #expect(Verdict.text(met: true, figure: 50, threshold: 100, spreadPercent: 10, quick: true) == "yes")
        #expect(
            Verdict.text(met: true, figure: 95, threshold: 100, spreadPercent: 174, quick: true).hasPrefix("n/a (quick")
        )
        #expect(Verdict.text(met: nil, figure: nil, threshold: 5, spreadPercent: 3, quick: true) == "n/a")
        #expect(Verdict.text(met: true, figure: 0.2, threshold: nil, spreadPercent: 90, quick: true) == "yes")
        #expect(Bench.grouped(99_960) == "99,960" && Bench.grouped(1_000_000) == "1,000,000" && Bench.grouped(7) == "7")
    }

    @Test("--smoke runs every case and writes {machine, cases: [{name, value, unit, baseline, ratio, target, met}]}")
    func smokeWritesTheDocumentedJSON() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = directory.appendingPathComponent("bench.json").path
        let bench = try ChildProcess(
            name: "sleeptap-bench", executable: Scenario.executable("sleeptap-bench"),
            arguments: ["--smoke", "--json", json], standardInput: FileHandle.nullDevice)
        defer { bench.stop(signal: SIGTERM) }
        #expect(bench.waitForOutputEnd(timeout: 120))
        #expect(bench.waitForExit(timeout: 10))
        #expect(bench.exitStatus == 0, "stderr: \(bench.standardError)")

        let data = try #require(FileManager.default.contents(atPath: json))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let machine = try #require(object["machine"] as? [String: Any])
        #expect((machine["cores"] as? Int ?? 0) >= 1)
        #expect(machine["tzdata"] as? String == ZoneDatabase.current.version)
        #expect(!(machine["cpu"] as? String ?? "").isEmpty)
        let cases = try #require(object["cases"] as? [[String: Any]])
        // One row per target of the table, in its order.
        let names = cases.compactMap { $0["name"] as? String }
        #expect(
            names.dropLast() == [
                "wrapper RTT ÷ raw C RTT, 1 KB ipc", "wrapper throughput ÷ raw C",
                "durable round trip ÷ its physical limit", "watch restart → newest batch", "idle CPU", "twin speed",
            ])
        // The report row names the count it measured (--smoke writes far fewer than a million).
        let reportRow = try #require(cases.last)
        let note = reportRow["note"] as? String ?? ""
        let count = note.split(separator: " ").first.map(String.init) ?? "?"
        #expect(names.last == "report over \(sleeptap_bench.Bench.grouped(Int(count) ?? -1)) records", "\(note)")
        #expect(names.last != "report over 1 M records")
        for row in cases {
            let name = row["name"] as? String ?? "?"
            for key in ["name", "value", "unit", "baseline", "ratio", "target", "met"] {
                #expect(row.keys.contains(key), "\(name) lacks \(key)")
            }
            #expect(row["unit"] is String && row["target"] is String, "\(name)")
            if let value = row["value"] as? Double {
                #expect(value.isFinite && value >= 0, "\(name): \(value)")
                // Measured: met says whether the target was reached, or null with the reason (the
                // report row is judged on a million records only, which --smoke does not write).
                #expect(
                    row["met"] is Bool || (row["met"] is NSNull && (row["note"] as? String)?.isEmpty == false),
                    "\(name): measured, so met is true or false, or null with a note")
            } else {
                #expect(row["value"] is NSNull && row["met"] is NSNull, "\(name): not measured, so met is null")
                #expect((row["note"] as? String)?.isEmpty == false, "\(name): a missing figure says why")
            }
            if let ratio = row["ratio"] as? Double, let value = row["value"] as? Double,
                let baseline = row["baseline"] as? Double, name != "durable round trip ÷ its physical limit"
            {
                #expect(abs(ratio - value / baseline) <= 1e-6 * max(1, ratio), "\(name): ratio is value ÷ baseline")
            }
        }
        // The measured rows really were measured (every case ran once).
        for name in ["wrapper RTT ÷ raw C RTT, 1 KB ipc", "durable round trip ÷ its physical limit", "twin speed"] {
            let row = try #require(cases.first { $0["name"] as? String == name })
            #expect((row["value"] as? Double ?? 0) > 0 && (row["baseline"] as? Double ?? 0) > 0, "\(name)")
        }
        #expect(bench.otherOutputLines.contains { $0.hasPrefix("sleeptap-bench (smoke)") })
    }

    @Test("Bad arguments exit 64 with a message naming the option")
    func badArguments() throws {
        for arguments in [["--rounds", "3"], ["--quick", "--smoke"], ["--json"]] {
            let bench = try ChildProcess(
                name: "sleeptap-bench", executable: Scenario.executable("sleeptap-bench"), arguments: arguments,
                standardInput: FileHandle.nullDevice)
            #expect(bench.waitForOutputEnd(timeout: 30))
            _ = bench.waitForExit(timeout: 10)
            #expect(bench.exitStatus == 64, "\(arguments)")
            #expect(
                bench.standardError.contains(arguments[0]) || bench.standardError.contains(arguments[1]),
                "\(arguments): \(bench.standardError)")
        }
    }
}

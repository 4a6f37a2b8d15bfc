// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import SleepTapProcess
import Testing

/// `sleeptap-compare` as a process: its outputs (table, `--json`, `--out`) and its bad input.
@Suite("sleeptap-compare")
struct CompareToolTests {
    /// A small late-registration fleet (the seed's situation).
    static let fleet = [
        "--devices", "4", "--days", "10", "--start", "2026-11-02", "--seed", "1", "--mix", "ios=1,android=0",
        "--late-registration", "1", "--opens", "0.1",
    ]

    @Test(
        "The table on stdout, the same data with --json, and with --out --records the Markdown, the chart and the records"
    )
    func outputs() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let out = scenario.dir + "/compare"
        let run = try CapturedRun.run(
            "sleeptap-compare",
            Self.fleet + ["--strategies", "refresh,request", "--jobs", "2", "--out", out, "--records"],
            timeout: 120)
        #expect(run.status == 0, "\(run.standardError)")
        let lines = run.standardOutput.split(separator: "\n")
        #expect(lines.first?.hasPrefix("compare: 4 devices x 10 days from 2026-11-02, seed 1") == true)
        #expect(lines.count > 3 && lines[2].hasPrefix("refresh ") && lines[3].hasPrefix("request "))
        let markdown = try String(contentsOfFile: out + "/compare.md", encoding: .utf8)
        #expect(markdown.hasPrefix("# Refresh strategies compared") && markdown.contains("(compare.svg)"))
        let svg = try String(contentsOfFile: out + "/compare.svg", encoding: .utf8)
        #expect(svg.hasPrefix("<svg "))
        for strategy in ["refresh", "request"] {
            for directory in ["metrics/bg_runs", "metrics/watch_nights"] {
                let names = try FileManager.default.contentsOfDirectory(atPath: "\(out)/\(strategy)/\(directory)")
                #expect(!names.isEmpty, "\(strategy)/\(directory)")
            }
            // Its manifest says what was written: the night records too.
            let manifest = try String(contentsOfFile: "\(out)/\(strategy)/metrics/fleet-run.json", encoding: .utf8)
            #expect(manifest.contains("watchNights=true"), "\(manifest)")
        }
        let json = try CapturedRun.run(
            "sleeptap-compare", Self.fleet + ["--strategies", "refresh,request", "--json"], timeout: 120)
        #expect(json.status == 0, "\(json.standardError)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let rows = try #require(object["strategies"] as? [[String: Any]])
        #expect(rows.map { $0["strategy"] as? String } == ["refresh", "request"])
        // The table and the JSON say the same: refresh's manual nights.
        let manual = try #require(rows[0]["manualNights"] as? Int)
        let nights = try #require(rows[0]["nights"] as? Int)
        #expect(lines[2].contains(" \(manual)/\(nights) "), "\(lines[2])")
        // --merge on the --out directory (one shard, 0/1): the same JSON as the run, no simulation;
        // another fleet's flags are refused naming what differs (65).
        let merged = try CapturedRun.run(
            "sleeptap-compare", Self.fleet + ["--strategies", "refresh,request", "--merge", out, "--json"], timeout: 60)
        #expect(merged.status == 0, "\(merged.standardError)")
        #expect(merged.standardOutput == json.standardOutput)
        var otherSeed = Self.fleet
        otherSeed[otherSeed.firstIndex(of: "--seed")! + 1] = "2"
        let foreign = try CapturedRun.run(
            "sleeptap-compare", otherSeed + ["--strategies", "refresh", "--merge", out], timeout: 60)
        #expect(foreign.status == 65 && foreign.standardError.contains("seed 1, not 2"), "\(foreign.standardError)")
    }

    @Test(
        "Bad input: a strategy given twice, an unknown one, a missing flag (64); an --out under a file, or with a directory where the chart goes (73, before the run)"
    )
    func badInput() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let twice = try CapturedRun.run(
            "sleeptap-compare", Self.fleet + ["--strategies", "push,refresh,push"], timeout: 30)
        #expect(twice.status == 64)
        #expect(twice.standardError.contains("--strategies: push is given twice"), "\(twice.standardError)")
        let unknown = try CapturedRun.run("sleeptap-compare", Self.fleet + ["--strategies", "nap"], timeout: 30)
        #expect(unknown.status == 64 && unknown.standardError.contains("unknown strategy \"nap\""))
        let missing = try CapturedRun.run("sleeptap-compare", ["--days", "3"], timeout: 30)
        #expect(missing.status == 64 && missing.standardError.contains("--devices N is required"))
        let file = scenario.dir + "/file"
        try Data().write(to: URL(fileURLWithPath: file))
        let under = try CapturedRun.run("sleeptap-compare", Self.fleet + ["--out", file + "/out"], timeout: 30)
        #expect(under.status == 73, "\(under.standardError)")
        #expect(under.standardError.contains(file), "\(under.standardError)")
        #expect(under.standardOutput.isEmpty)
        let model = try CapturedRun.run(
            "sleeptap-compare", Self.fleet + ["--os-model", scenario.dir + "/none.json"], timeout: 30)
        #expect(model.status == 65 && model.standardError.contains("--os-model"), "\(model.standardError)")
        // A directory where the chart goes: found before the run, not after it.
        let taken = scenario.dir + "/taken"
        try FileManager.default.createDirectory(atPath: taken + "/compare.svg", withIntermediateDirectories: true)
        let chart = try CapturedRun.run("sleeptap-compare", Self.fleet + ["--out", taken], timeout: 30)
        #expect(chart.status == 73, "\(chart.standardError)")
        #expect(chart.standardError.contains("compare.svg is a directory"), "\(chart.standardError)")
        #expect(!FileManager.default.fileExists(atPath: taken + "/refresh"), "nothing was run")
        // --records needs --out, and --merge runs nothing to record.
        let alone = try CapturedRun.run("sleeptap-compare", Self.fleet + ["--records"], timeout: 30)
        #expect(alone.status == 64 && alone.standardError.contains("give --out DIR"), "\(alone.standardError)")
        let merging = try CapturedRun.run(
            "sleeptap-compare", Self.fleet + ["--merge", taken, "--records"], timeout: 30)
        #expect(merging.status == 64 && merging.standardError.contains("--merge runs nothing"))
    }

    @Test("--out without --records: the table, the chart and the tallies, no records; another run's records refused")
    func outWithoutRecords() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let out = scenario.dir + "/compare"
        let run = try CapturedRun.run(
            "sleeptap-compare", Self.fleet + ["--strategies", "refresh", "--out", out], timeout: 120)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("(the records with --records)"), "\(run.standardOutput)")
        #expect(FileManager.default.fileExists(atPath: out + "/compare.md"))
        let tallies = try FileManager.default.contentsOfDirectory(atPath: out + "/refresh/tally")
        #expect(tallies == ["shard-0-of-1.json"])
        #expect(!FileManager.default.fileExists(atPath: out + "/refresh/metrics"), "no records, no manifest")
        // The weekly report pointed at it says where the records would come from.
        for root in [out + "/refresh", out] {
            let report = try CapturedRun.run("sleeptap-report", ["--root", root], timeout: 30)
            #expect(report.status == 65 && report.standardError.contains("--records"), "\(report.standardError)")
        }
        // A directory holding another fleet's records is refused as with --records: its table
        // would sit beside records it does not describe.
        let other = scenario.dir + "/other"
        let seeded = try CapturedRun.run(
            "sleeptap-compare", Self.fleet + ["--strategies", "refresh", "--out", other, "--records"], timeout: 120)
        #expect(seeded.status == 0, "\(seeded.standardError)")
        var otherSeed = Self.fleet
        otherSeed[otherSeed.firstIndex(of: "--seed")! + 1] = "2"
        let refused = try CapturedRun.run(
            "sleeptap-compare", otherSeed + ["--strategies", "refresh", "--out", other], timeout: 60)
        #expect(refused.status == 73 && refused.standardError.contains("already holds"), "\(refused.standardError)")
        // A run that leaves that strategy out would put its table beside the other's files.
        let beside = try CapturedRun.run(
            "sleeptap-compare", Self.fleet + ["--strategies", "request", "--out", other], timeout: 60)
        #expect(
            beside.status == 73 && beside.standardError.contains("which --strategies leaves out"),
            "\(beside.standardError)")
        #expect(!FileManager.default.fileExists(atPath: other + "/request"), "nothing was run")
    }
}

// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import SleepTapProcess
import Testing

/// `sleeptap-fleet` then `sleeptap-report`, as a team would run them: the execution rate a
/// fleet's app build gives, and the ⚠ of the week its app update turns registration late.
@Suite("sleeptap-fleet and sleeptap-report")
struct FleetReportTests {
    /// Two weeks: 2026-03-01 ... 2026-03-14; the report's date is the last day.
    static let start = "2026-03-01"
    static let date = "2026-03-14"

    /// Runs a fleet into `scenario.dir/name` and its report; returns the report's JSON summary
    /// and the report's text.
    static func fleetAndReport(_ scenario: Scenario, _ name: String, _ extra: [String]) throws -> (
        summary: [String: Any], report: String
    ) {
        let root = scenario.dir + "/" + name
        let fleet = try scenario.runToExit(
            "sleeptap-fleet",
            ["--devices", "16", "--days", "14", "--start", start, "--seed", "3", "--out", root] + extra, timeout: 120)
        #expect(fleet.status == 0, "\(extra): \(fleet.stderr)")
        #expect(fleet.stderr.isEmpty, "no progress when stderr is not a terminal: \(fleet.stderr)")
        let report = try scenario.spawn("sleeptap-report", ["--root", root, "--date", date, "--json"])
        #expect(report.waitForExit(timeout: 60) && report.waitForOutputEnd(timeout: 5))
        #expect(report.exitStatus == 0, "\(report.standardError)")
        let line = try #require(report.outputLines.last?.text)
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        let text = try String(contentsOfFile: root + "/reports/bg_freshness_\(date).md", encoding: .utf8)
        return (summary, text)
    }

    static func rate(_ summary: [String: Any], _ week: String) -> Double? {
        (summary[week] as? [String: Any])?["executionRate"] as? Double
    }

    @Test("--late-registration 1.0 reports an execution rate of 0 %; 0.0 (users who do not open the app) above 90 %")
    func lateRegistrationRate() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let late = try Self.fleetAndReport(scenario, "late", ["--mix", "ios=1", "--late-registration", "1.0"])
        #expect(Self.rate(late.summary, "thisWeek") == 0 && Self.rate(late.summary, "lastWeek") == 0)
        #expect(late.report.contains("| execution rate | 0.0 %"), "\(late.report.prefix(1_500))")
        // A fleet that never refreshes: ⚠, with the absolute conditions under the heading.
        #expect(late.summary["warning"] as? Bool == true)
        #expect(
            (late.summary["conditions"] as? [[String: String]])?.map { $0["condition"] ?? "" }
                == ["p90AboveCacheHorizon", "noneRan", "mostDevicesWithoutRun"], "\(late.summary)")
        #expect(
            late.report.hasPrefix(
                "# ⚠ Background refresh freshness, \(Self.date)\n\n- ⚠ p90 staleness this week is never"))
        #expect(late.report.contains("| p90 staleness (h) | never (n = "))
        // On legacy's daily draw: the usage model thins an unopened app's runs by design.
        let early = try Self.fleetAndReport(
            scenario, "early",
            ["--mix", "ios=1", "--late-registration", "0.0", "--opens", "0", "--opportunity-model", "legacy"])
        // This week, the report's headline; last week also holds each app's first request, made
        // at its install (a week of daily runs answers 7 of 8 requests).
        let thisWeek = try #require(Self.rate(early.summary, "thisWeek"))
        #expect(thisWeek > 0.9, "this week: \(thisWeek)")
        let lastWeek = try #require(Self.rate(early.summary, "lastWeek"))
        #expect(lastWeek > 0.8, "last week: \(lastWeek)")
    }

    @Test("The week in which the fleet's app update turns registration late gets ⚠; the same fleet without it does not")
    func updateWeekWarns() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let base = ["--mix", "ios=1", "--late-registration", "1"]
        let updated = try Self.fleetAndReport(scenario, "update", base + ["--late-registration-from", "2026-03-08"])
        #expect(
            updated.report.hasPrefix("# ⚠ Background refresh freshness, \(Self.date)"), "\(updated.report.prefix(300))")
        #expect(updated.summary["warning"] as? Bool == true)
        // The update's version carries the drops; the version before it does not.
        let versions = try #require(updated.summary["appVersions"] as? [[String: Any]])
        #expect(versions.map { $0["appVersion"] as? String } == ["1.0", "1.1"], "\(versions)")
        let after = try #require(versions[1]["thisWeek"] as? [String: Any])
        #expect((after["dropped"] as? Int ?? 0) > 0 && (after["executionRate"] as? Double ?? 1) < 0.5, "\(after)")
        #expect(updated.report.contains("| 1.1 | this |"))
        #expect(updated.report.contains("The daily execution rate first fell on **2026-03-"), "\(updated.report)")
        let steady = try Self.fleetAndReport(scenario, "steady", ["--mix", "ios=1"])
        #expect(steady.report.hasPrefix("# Background refresh freshness, \(Self.date)"), "\(steady.report.prefix(300))")
        #expect(steady.summary["warning"] as? Bool == false)
    }

    /// Every file under `root/metrics/bg_runs` with its bytes.
    static func files(_ root: String) throws -> [String: Data] {
        let directory = root + "/metrics/bg_runs"
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            result[name] = FileManager.default.contents(atPath: directory + "/" + name)
        }
        return result
    }

    @Test("--shard 0/2 and 1/2, copied into one directory, equal the unsharded run byte for byte; --jobs 1 too; --json")
    func shardsAndJobs() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let common = ["--devices", "9", "--days", "3", "--start", Self.start, "--seed", "5"]
        var summaries: [[String: Any]] = []
        for (name, extra) in [
            ("whole", ["--jobs", "2"]), ("one", ["--jobs", "1"]), ("s0", ["--shard", "0/2"]),
            ("s1", ["--shard", "1/2"]),
        ] {
            let child = try scenario.spawn(
                "sleeptap-fleet", common + extra + ["--out", scenario.dir + "/" + name, "--json"])
            #expect(child.waitForExit(timeout: 120) && child.waitForOutputEnd(timeout: 5))
            #expect(child.exitStatus == 0, "\(name): \(child.standardError)")
            let line = try #require(child.outputLines.last?.text)
            summaries.append(try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]))
        }
        let whole = try Self.files(scenario.dir + "/whole")
        #expect(!whole.isEmpty)
        #expect(try Self.files(scenario.dir + "/one") == whole)
        let s0 = try Self.files(scenario.dir + "/s0")
        let s1 = try Self.files(scenario.dir + "/s1")
        #expect(Set(s0.keys).isDisjoint(with: s1.keys))
        #expect(s0.merging(s1) { first, _ in first } == whole)
        #expect(summaries.map { $0["devices"] as? Int } == [9, 9, 5, 4])
        #expect(summaries.allSatisfy { $0["event"] as? String == "fleet.summary" && $0["fleetDevices"] as? Int == 9 })
        #expect(summaries[0]["files"] as? Int == whole.count && summaries[2]["shard"] as? String == "0/2")
        #expect(
            (summaries[0]["records"] as? Int) == (summaries[2]["records"] as! Int) + (summaries[3]["records"] as! Int))
    }

    @Test(
        "Four shards run by GNU parallel (--shard {}/4), and a Slurm array and a Kubernetes Indexed Job by environment, merge byte for byte into the unsharded run"
    )
    func batchSystems() throws {
        let parallel = "/usr/bin/parallel"
        try #require(FileManager.default.isExecutableFile(atPath: parallel), "GNU parallel (scripts/ensure-deps.sh)")
        let scenario = try Scenario()
        defer { scenario.close() }
        let fleet = try Scenario.executable("sleeptap-fleet").path
        let common = "--devices 9 --days 3 --start \(Self.start) --seed 5 --jobs 1"
        let whole = try scenario.spawn(
            "sleeptap-fleet", common.split(separator: " ").map(String.init) + ["--out", scenario.dir + "/whole"])
        #expect(whole.waitForExit(timeout: 120) && whole.exitStatus == 0, "\(whole.standardError)")
        // GNU parallel runs each job through the shell, so the environment forms work as a batch
        // system would set them (Slurm numbers this array 1, 3, 5, 7).
        let jobs: [(String, String)] = [
            ("parallel", "\(fleet) \(common) --shard {}/4 --out \(scenario.dir)/parallel ::: 0 1 2 3"),
            (
                "slurm",
                "SLURM_ARRAY_TASK_ID={} SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_STEP=2 "
                    + "\(fleet) \(common) --out \(scenario.dir)/slurm ::: 1 3 5 7"
            ),
            (
                "kubernetes",
                "JOB_COMPLETION_INDEX={} SLEEPTAP_SHARD_COUNT=4 \(fleet) \(common) --out \(scenario.dir)/kubernetes "
                    + "::: 0 1 2 3"
            ),
        ]
        let expected = try Self.files(scenario.dir + "/whole")
        #expect(expected.count > 9)
        for (name, line) in jobs {
            let child = try scenario.spawn(
                "parallel",
                ["--will-cite", "-j", "2", "--halt", "now,fail=1"] + line.split(separator: " ").map(String.init),
                executable: URL(fileURLWithPath: parallel))
            #expect(child.waitForExit(timeout: 240) && child.waitForOutputEnd(timeout: 5))
            #expect(child.exitStatus == 0, "\(name): \(child.standardError)")
            let summaries = child.outputLines.map(\.text).filter { $0.hasPrefix("fleet: shard ") }
            #expect(summaries.count == 4, "\(name): \(child.outputLines.map(\.text))")
            #expect(try Self.files(scenario.dir + "/" + name) == expected, "\(name)")
        }
        // A shard index with no count is refused, naming the variable.
        let missing = try scenario.spawn(
            "sleeptap-fleet", common.split(separator: " ").map(String.init) + ["--out", scenario.dir + "/x"],
            environment: ["JOB_COMPLETION_INDEX": "2"])
        #expect(missing.waitForExit(timeout: 30) && missing.waitForOutputEnd(timeout: 5))
        #expect(missing.exitStatus == 64 && missing.standardError.contains("SLEEPTAP_SHARD_COUNT"))
        #expect(!FileManager.default.fileExists(atPath: scenario.dir + "/x"))
    }

    @Test("The summary reads \"9 devices\" for a whole fleet and \"shard 1/2: 4 of 9 devices\" for a shard")
    func summaryLine() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        for (extra, expected) in [
            ([String](), "fleet: 9 devices x 1 days from \(Self.start), seed 5"),
            (["--shard", "1/2"], "fleet: shard 1/2: 4 of 9 devices x 1 days from \(Self.start), seed 5"),
        ] {
            let child = try scenario.spawn(
                "sleeptap-fleet",
                ["--devices", "9", "--days", "1", "--start", Self.start, "--seed", "5", "--out", scenario.dir + "/f"]
                    + extra)
            #expect(child.waitForExit(timeout: 120) && child.waitForOutputEnd(timeout: 5))
            #expect(child.exitStatus == 0, "\(child.standardError)")
            let first = child.otherOutputLines.first ?? child.outputLines.first?.text ?? ""
            #expect(first == expected, "\(child.otherOutputLines)")
        }
    }

    @Test("--bench runs the speed workload at --speed and writes nothing")
    func bench() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let child = try scenario.spawn(
            "sleeptap-fleet", ["--bench", "--devices", "2", "--days", "2", "--speed", "7200"])
        #expect(child.waitForExit(timeout: 60) && child.waitForOutputEnd(timeout: 5))
        #expect(child.exitStatus == 0, "\(child.standardError)")
        let line = child.otherOutputLines.joined()
        #expect(
            line.hasPrefix("devices 2 days 2 jobs") && line.contains("speed 7200") && line.contains("device-days/s"))
    }

    @Test("Bad flags exit 64 naming the flag; an output root that cannot be created exits 73 naming it")
    func badInput() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let missing = try scenario.runToExit("sleeptap-fleet", ["--devices", "2", "--days", "1"])
        #expect(missing.status == 64 && missing.stderr.contains("--out DIR is required"), "\(missing.stderr)")
        let mix = try scenario.runToExit(
            "sleeptap-fleet", ["--devices", "2", "--days", "1", "--out", scenario.dir + "/x", "--mix", "ios=2"])
        #expect(mix.status == 64 && mix.stderr.contains("--mix: ios=\"2\""), "\(mix.stderr)")
        let blocker = scenario.dir + "/file"
        #expect(FileManager.default.createFile(atPath: blocker, contents: Data("x".utf8)))
        let blocked = try scenario.runToExit("sleeptap-fleet", ["--devices", "2", "--days", "1", "--out", blocker])
        #expect(blocked.status == 73 && blocked.stderr.contains(blocker), "\(blocked.stderr)")
        #expect(FileManager.default.contents(atPath: blocker) == Data("x".utf8))
    }

    @Test(
        "A fleet of other options into a directory that holds one exits 73 and leaves the first's files; the same command again runs"
    )
    func oneFleetPerDirectory() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let out = scenario.dir + "/fleet"
        let first = ["--devices", "3", "--days", "2", "--start", Self.start, "--seed", "5", "--out", out]
        #expect(try scenario.runToExit("sleeptap-fleet", first, timeout: 60).status == 0)
        let written = try Self.files(out)
        #expect(!written.isEmpty)
        let other = try scenario.runToExit(
            "sleeptap-fleet", ["--devices", "2", "--days", "1", "--start", Self.start, "--seed", "6", "--out", out],
            timeout: 60)
        #expect(other.status == 73, "\(other.stderr)")
        #expect(
            other.stderr.contains(
                "\(out)/metrics/bg_runs already holds \(written.count) files, a fleet of other options"),
            "\(other.stderr)")
        #expect(try Self.files(out) == written)
        let again = try scenario.runToExit("sleeptap-fleet", first + ["--jobs", "1"], timeout: 60)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Self.files(out) == written)
    }
}

// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import SleepTapProcess
import Testing

/// `sleeptap-calibrate`: reads only metrics/bg_runs/*.json with the report's checks; bad files
/// are skipped and named, no usable input is exit 65, and no input is changed.
@Suite("sleeptap-calibrate")
struct CalibrateTests {
    @Test(
        "A corrupt file among good ones is skipped and named; the model is written with --out and printed with --json")
    func garbageAmongGood() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let root = try ReportTests.root(scenario)
        let before = try ReportTests.fingerprint(root + "/metrics")
        let out = scenario.dir + "/model.json"
        let run = try CapturedRun.run("sleeptap-calibrate", ["--root", root, "--out", out], timeout: 30)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError.contains("skipped b-2026-03-10.json: not valid JSON: line 1, column 21"))
        #expect(run.standardOutput.contains("calibration: 1 devices, 6 records in 2 files, 1 skipped"))
        // Two requests, each answered one hour after its earliestBeginDate.
        #expect(
            run.standardOutput.contains("ios: 1 devices, 2 requests, never answered 0.0 %"), "\(run.standardOutput)")
        #expect(
            run.standardOutput.contains("delay (h), n = 2, censored 0: p10 1.00 [1.00, open]"), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("not identified by the records"))
        #expect(run.standardOutput.hasSuffix("wrote \(out)"))
        let file = try #require(FileManager.default.contents(atPath: out))
        let model = try #require(try JSONSerialization.jsonObject(with: file) as? [String: Any])
        #expect(model["schemaVersion"] as? Int == 1)
        let input = try #require(model["input"] as? [String: Any])
        #expect((input["skipped"] as? [[String: String]])?.first?["file"] == "b-2026-03-10.json")
        let groups = try #require(model["groups"] as? [[String: Any]])
        let ios = try #require(groups.first { $0["group"] as? String == "ios" })
        let delay = try #require(ios["delay"] as? [String: Any])
        #expect(delay["n"] as? Int == 2)
        #expect(try Self.median(delay) == 3_600)
        #expect(try ReportTests.fingerprint(root + "/metrics") == before, "calibration changed an input")
        // --json prints the same model.
        let json = try CapturedRun.run("sleeptap-calibrate", ["--root", root, "--json"], timeout: 30)
        #expect(json.status == 0)
        #expect(json.standardOutput + "\n" == String(decoding: file, as: UTF8.self))
        #expect(try ReportTests.fingerprint(root + "/metrics") == before)
    }

    @Test("An --out in a missing directory is exit 73 before any work, naming the directory; nothing is written")
    func outInMissingDirectory() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let root = try ReportTests.root(scenario)
        let out = scenario.dir + "/missing/model.json"
        let run = try CapturedRun.run("sleeptap-calibrate", ["--root", root, "--out", out], timeout: 30)
        #expect(run.status == 73, "\(run.standardError)")
        #expect(
            run.standardError.contains("--out \(out): its directory \(scenario.dir)/missing does not exist"),
            "\(run.standardError)")
        #expect(run.standardOutput.isEmpty, "no summary before the failure: \(run.standardOutput)")
        #expect(!FileManager.default.fileExists(atPath: scenario.dir + "/missing"))
    }

    @Test(
        "An --out where no file can be created (/proc), though access(2) says yes to root, is exit 73 before any work, naming --out"
    )
    func outWhereNothingCanBeCreated() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let root = try ReportTests.root(scenario)
        let out = "/proc/sleeptap-model-\(getpid()).json"
        let run = try CapturedRun.run("sleeptap-calibrate", ["--root", root, "--out", out], timeout: 30)
        #expect(run.status == 73, "\(run.standardError)")
        #expect(
            run.standardError.contains("--out \(out): open of its temporary file")
                && run.standardError.contains("; nothing was read"), "\(run.standardError)")
        #expect(run.standardOutput.isEmpty, "no summary before the failure: \(run.standardOutput)")
    }

    @Test("--out with a one-character name in the working directory writes the model there (it had died of SIGILL)")
    func outOfOneCharacter() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let root = try ReportTests.root(scenario)
        let calibrate = try Scenario.executable("sleeptap-calibrate").path
        let run = try CapturedRun.run(
            "sh", ["-c", "cd \"$1\" && exec \"$2\" --root \"$3\" --out m", "sh", scenario.dir, calibrate, root],
            executable: URL(fileURLWithPath: "/bin/sh"), timeout: 30)
        #expect(run.status == 0, "\(run.standardError)")
        let model = try String(contentsOfFile: scenario.dir + "/m", encoding: .utf8)
        #expect(model.contains("\"kind\" : \"sleeptap.calibration\""), "\(model.prefix(200))")
    }

    @Test(
        "--out must be a regular file or nothing, outside the input records: a FIFO or a symbolic link is exit 73 before any work, a path among the records exit 64; nothing is replaced"
    )
    func outThatWouldReplaceSomething() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let root = try ReportTests.root(scenario)
        let before = try ReportTests.fingerprint(root + "/metrics")
        let fifo = scenario.dir + "/model.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let link = scenario.dir + "/model-link.json"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: scenario.dir + "/elsewhere.json")
        for out in [fifo, link] {
            let run = try CapturedRun.run("sleeptap-calibrate", ["--root", root, "--out", out], timeout: 30)
            #expect(run.status == 73, "\(out): \(run.standardError)")
            #expect(run.standardError.contains("exists and is not a regular file"), "\(run.standardError)")
            #expect(run.standardOutput.isEmpty)
        }
        var info = stat()
        #expect(lstat(fifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "the FIFO is still a FIFO")
        #expect(lstat(link, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK, "the link is still a link")
        #expect(!FileManager.default.fileExists(atPath: scenario.dir + "/elsewhere.json"))
        let records = root + "/metrics/bg_runs"
        let input = try #require(try FileManager.default.contentsOfDirectory(atPath: records).sorted().first)
        for out in [records + "/" + input, records + "/model.json"] {
            let run = try CapturedRun.run("sleeptap-calibrate", ["--root", root, "--out", out], timeout: 30)
            #expect(run.status == 64, "\(out): \(run.standardError)")
            #expect(run.standardError.contains("is inside the input records' directory"), "\(run.standardError)")
        }
        #expect(try ReportTests.fingerprint(root + "/metrics") == before, "an input changed")
    }

    @Test("Good files that hold no record (`[]`) are no input: exit 65, no model written")
    func emptyFilesOnly() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let directory = scenario.dir + "/metrics/bg_runs"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data("[]\n".utf8).write(to: URL(fileURLWithPath: directory + "/x-2026-03-01.json"))
        let out = scenario.dir + "/model.json"
        let run = try CapturedRun.run("sleeptap-calibrate", ["--root", scenario.dir, "--out", out], timeout: 30)
        #expect(run.status == 65, "\(run.standardError)")
        #expect(run.standardError.contains("no run records in"), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    static func median(_ delay: [String: Any]) throws -> Double? {
        let quantiles = try #require(delay["quantiles"] as? [[String: Any]])
        return quantiles.first { $0["p"] as? Double == 0.5 }?["seconds"] as? Double
    }

    @Test("No usable input is exit 65 naming the directory or the files; a bad flag is exit 64 naming it")
    func noInput() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let empty = try CapturedRun.run("sleeptap-calibrate", ["--root", scenario.dir], timeout: 30)
        #expect(empty.status == 65)
        #expect(empty.standardError.contains("metrics/bg_runs is not a directory"), "\(empty.standardError)")
        let directory = scenario.dir + "/metrics/bg_runs"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let none = try CapturedRun.run("sleeptap-calibrate", ["--root", scenario.dir], timeout: 30)
        #expect(none.status == 65)
        #expect(none.standardError.contains("no *.json file in"), "\(none.standardError)")
        try Data("[{\"kind\": 1}]\n".utf8).write(to: URL(fileURLWithPath: directory + "/x-2026-03-01.json"))
        let out = scenario.dir + "/model.json"
        let bad = try CapturedRun.run("sleeptap-calibrate", ["--root", scenario.dir, "--out", out], timeout: 30)
        #expect(bad.status == 65)
        #expect(
            bad.standardError.contains("\n  x-2026-03-01.json: record 0, field at: missing"), "\(bad.standardError)")
        #expect(!FileManager.default.fileExists(atPath: out), "no model from no input")
        let flag = try CapturedRun.run("sleeptap-calibrate", ["--root", scenario.dir, "--frob"], timeout: 30)
        #expect(flag.status == 64)
        #expect(flag.standardError.contains("--frob"), "\(flag.standardError)")
        let missing = try CapturedRun.run("sleeptap-calibrate", ["--json"], timeout: 30)
        #expect(missing.status == 64 && missing.standardError.contains("--root is required"))
        // A directory given alone is pointed to --root, in both readers of the records.
        for tool in ["sleeptap-calibrate", "sleeptap-report"] {
            let bare = try CapturedRun.run(tool, [scenario.dir], timeout: 30)
            #expect(bare.status == 64, "\(tool): \(bare.standardError)")
            #expect(
                bare.standardError.contains("the records' directory is given as --root \(scenario.dir)"),
                "\(tool): \(bare.standardError)")
        }
    }

    @Test(
        "sleeptap-fleet --os-model runs on the model calibrate wrote; a bad model file is exit 65 naming it, nothing written"
    )
    func osModel() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let first = scenario.dir + "/a"
        // Legacy's daily draws: 8 devices' week answers enough requests for a group per version.
        let fleet = [
            "--devices", "8", "--days", "7", "--start", "2026-03-01", "--mix", "ios=1,android=0", "--opportunity-model",
            "legacy",
        ]
        let a = try CapturedRun.run("sleeptap-fleet", fleet + ["--seed", "1", "--out", first], timeout: 120)
        #expect(a.status == 0, "\(a.standardError)")
        let model = first + "/model.json"
        let fit = try CapturedRun.run("sleeptap-calibrate", ["--root", first, "--out", model], timeout: 60)
        #expect(fit.status == 0, "\(fit.standardError)")
        let second = scenario.dir + "/b"
        let b = try CapturedRun.run(
            "sleeptap-fleet", fleet + ["--seed", "2", "--out", second, "--os-model", model], timeout: 120)
        #expect(b.status == 0, "\(b.standardError)")
        #expect(
            b.standardOutput.contains("os model: \(model): iOS delays from group \"ios, version 1.0\" (n = "),
            "\(b.standardOutput)")
        // --json names the file as given, as sleeptap-compare does, and the group apart.
        let json = try CapturedRun.run(
            "sleeptap-fleet", fleet + ["--seed", "2", "--out", scenario.dir + "/json", "--os-model", model, "--json"],
            timeout: 120)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        #expect(object["osModel"] as? String == model)
        // The path as typed: no JSON escape of its slashes (RFC 8259 allows both; people read this).
        #expect(json.standardOutput.contains("\"osModel\":\"\(model)\""), "\(json.standardOutput)")
        #expect((object["osModelGroup"] as? [String: Any])?["name"] as? String == "ios, version 1.0", "\(object)")
        // On the fitted delay --opportunity-model draws nothing: the summary says so.
        #expect(b.standardOutput.contains("opportunity model: legacy, unused: "), "\(b.standardOutput)")
        #expect(a.standardOutput.contains("opportunity model: legacy (iOS's exponential wait"), "\(a.standardOutput)")
        #expect(FileManager.default.fileExists(atPath: second + "/metrics/bg_runs"))
        // Bad model files: exit 65, the file and the first wrong field named, no --out made.
        let bad = scenario.dir + "/bad.json"
        #expect(FileManager.default.createFile(atPath: bad, contents: Data(#"{"kind": "other"}"#.utf8)))
        let cases: [(String, String)] = [
            (bad, "--os-model \(bad): kind: expected \"sleeptap.calibration\""),
            (scenario.dir + "/missing.json", "--os-model \(scenario.dir)/missing.json: cannot be read"),
            (first, "--os-model \(first): is a directory"),
        ]
        for (file, message) in cases {
            let out = scenario.dir + "/c"
            let run = try CapturedRun.run("sleeptap-fleet", fleet + ["--out", out, "--os-model", file], timeout: 30)
            #expect(run.status == 65 && run.standardError.contains(message), "\(run.standardError)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
    }
}

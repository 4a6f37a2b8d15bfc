// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `sleeptap-scenario --twin`: the example scenarios hold, a wrong expectation fails and says
/// why, a bad file and a bad command line are refused.
@Suite("sleeptap-scenario runs scenario files in the twin")
struct ScenarioRunnerTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let examples = root.appendingPathComponent("Examples/scenarios")

    static func examplePaths() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: examples.path).filter { $0.hasSuffix(".json") }.sorted()
            .map { examples.appendingPathComponent($0).path }
    }

    /// A copy of the field report's scenario with `expect` replaced, in a temp dir removed after.
    static func withScenario(
        expect: [[String: Any]], edit: (inout [String: Any]) -> Void = { _ in }, _ body: (String) throws -> Void
    ) throws {
        let data = try Data(contentsOf: examples.appendingPathComponent("field-report-shanghai.json"))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["expect"] = expect
        edit(&object)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sleeptap-scenario-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("wrong.json").path
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        try body(path)
    }

    @Test("every example scenario holds: exit 0, a night-by-night table, every expectation PASS")
    func examplesHold() throws {
        let paths = try Self.examplePaths()
        #expect(paths.count >= 2)
        let result = try CapturedRun.run("sleeptap-scenario", paths + ["--twin"], timeout: 60)
        #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")
        let output = result.standardOutput
        #expect(output.contains("2026-07-30  23:00  Asia/Shanghai  cached wake-up  3"), "\(output)")
        #expect(output.contains("2026-07-31  23:00  Asia/Shanghai  warned          2"), "\(output)")
        #expect(output.contains("2026-08-02  23:00  Asia/Shanghai  manual entry    0"), "\(output)")
        #expect(output.contains("PASS fallback.manual_entry source watch first 2026-08-02T15:00:00Z"), "\(output)")
        #expect(!output.contains("FAIL"), "\(output)")
        #expect(output.hasSuffix("PASS: \(paths.count) of \(paths.count) scenarios hold"), "\(output)")
    }

    @Test("a file named twice runs twice; an option given twice is refused (exit 64)")
    func repeated() throws {
        let path = try #require(try Self.examplePaths().first)
        let twice = try CapturedRun.run("sleeptap-scenario", [path, path, "--twin"], timeout: 60)
        #expect(twice.status == 0, "\(twice.standardError)")
        #expect(twice.standardOutput.hasSuffix("PASS: 2 of 2 scenarios hold"), "\(twice.standardOutput)")
        let option = try CapturedRun.run("sleeptap-scenario", [path, "--twin", "--twin"], timeout: 60)
        #expect(option.status == 64)
        #expect(option.standardError.contains("--twin is given twice"), "\(option.standardError)")
    }

    @Test("--json: one object with the nights and each expectation's result")
    func json() throws {
        let paths = try Self.examplePaths()
        let result = try CapturedRun.run("sleeptap-scenario", paths + ["--twin", "--json"], timeout: 60)
        #expect(result.status == 0, "\(result.standardError)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(object["pass"] as? Bool == true)
        let scenarios = try #require(object["scenarios"] as? [[String: Any]])
        #expect(scenarios.count == paths.count)
        let report = try #require(
            scenarios.first { ($0["file"] as? String)?.hasSuffix("field-report-shanghai.json") == true })
        let nights = try #require(report["nights"] as? [[String: Any]])
        #expect(nights.filter { $0["outcome"] as? String == "manual entry" }.count == 3)
    }

    @Test("a deliberately wrong expectation: exit 1, FAIL with the observed value")
    func wrongExpectation() throws {
        try Self.withScenario(expect: [
            ["event": "fallback.manual_entry", "count": 0],
            ["event": "fallback.manual_entry", "first": "2026-08-01T15:00:00Z"],
        ]) { path in
            let result = try CapturedRun.run("sleeptap-scenario", [path, "--twin"], timeout: 60)
            #expect(result.status == 1, "\(result.standardOutput)\n\(result.standardError)")
            let output = result.standardOutput
            #expect(
                output.contains("FAIL fallback.manual_entry count 0: observed count 3, first 2026-08-02T15:00:00Z"),
                "\(output)")
            #expect(
                output.contains(
                    "FAIL fallback.manual_entry first 2026-08-01T15:00:00Z: observed first 2026-08-02T15:00:00Z"),
                "\(output)")
            #expect(output.hasSuffix("FAIL: 0 of 1 scenarios hold"), "\(output)")
        }
    }

    @Test("a bad scenario file: exit 65 naming the file, the field and the value; nothing run")
    func badFile() throws {
        let late: (inout [String: Any]) -> Void = { $0["steps"] = [["at": "2026-09-01T00:00:00Z", "phone": "open"]] }
        try Self.withScenario(expect: [], edit: late) { path in
            let result = try CapturedRun.run("sleeptap-scenario", [path, "--twin"], timeout: 60)
            #expect(result.status == 65)
            #expect(
                result.standardError.contains("\(path): steps[0].at \"2026-09-01T00:00:00Z\": outside the scenario"),
                "\(result.standardError)")
            #expect(result.standardOutput.isEmpty, "\(result.standardOutput)")
        }
    }

    @Test(
        "a bad command line: exit 64 and the reason",
        arguments: [
            (["--twin", "--both"], "give one of --twin, --processes and --both"),
            (["--twin"], "give at least one scenario FILE"), (["--frob"], "--frob"),
            (["--speed", "0"], "--speed \"0\": expected virtual seconds per wall second from 1 to 10000000"),
            (["--speed"], "--speed needs a value"), (["--svg", "--twin"], "--svg needs a value"),
        ])
    func badCommandLine(_ extra: [String], _ message: String) throws {
        let files = extra == ["--twin"] ? [] : [try #require(try Self.examplePaths().first)]
        let result = try CapturedRun.run("sleeptap-scenario", files + extra, timeout: 60)
        #expect(result.status == 64)
        #expect(result.standardError.contains(message), "\(result.standardError)")
    }

    @Test("--svg: a well-formed SVG with a mark per fallback, warning, open and background run; one file per scenario")
    func svgChart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sleeptap-svg-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = Self.examples.appendingPathComponent("field-report-shanghai.json").path
        let chart = directory.appendingPathComponent("chart.svg").path
        let result = try CapturedRun.run(
            "sleeptap-scenario", [report, "--twin", "--json", "--svg", chart], timeout: 60)
        #expect(result.status == 0, "\(result.standardError)")
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let nights = try #require((summary["scenarios"] as? [[String: Any]])?.first?["nights"] as? [[String: Any]])
        let document = try XMLDocument(data: try Data(contentsOf: URL(fileURLWithPath: chart)))
        let root = try #require(document.rootElement())
        #expect(root.name == "svg")
        func marks(_ kind: String) throws -> Int { try document.nodes(forXPath: "//*[@class='\(kind)']").count }
        #expect(try marks("fallback") == nights.filter { $0["outcome"] as? String == "manual entry" }.count)
        #expect(try marks("fallback") == 3)
        #expect(try marks("warning") == nights.filter { $0["outcome"] as? String == "warned" }.count)
        #expect(try marks("open") == 1)
        let runs = nights.compactMap { $0["backgroundRuns"] as? Int }.reduce(0, +)
        #expect(try marks("background-run") >= runs && runs > 0)
        #expect(try marks("coverage") == 1)

        // Several scenarios: one file each, named after the scenario file.
        let both = try CapturedRun.run(
            "sleeptap-scenario", try Self.examplePaths() + ["--twin", "--svg", chart], timeout: 60)
        #expect(both.status == 0, "\(both.standardError)")
        for path in try Self.examplePaths() {
            let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            let file = directory.appendingPathComponent("chart-\(name).svg").path
            #expect(FileManager.default.fileExists(atPath: file), "\(file)")
            _ = try XMLDocument(data: try Data(contentsOf: URL(fileURLWithPath: file)))
        }
    }

    @Test(
        "--svg is checked before anything runs: not an input file (64), not a FIFO, directory or symbolic link, not in a missing directory (73); nothing replaced"
    )
    func svgRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sleeptap-svg-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let scenario = directory.appendingPathComponent("lp.json").path
        try FileManager.default.copyItem(
            atPath: Self.examples.appendingPathComponent("low-power-week-tokyo.json").path, toPath: scenario)
        let original = try Data(contentsOf: URL(fileURLWithPath: scenario))
        let fifo = directory.appendingPathComponent("fifo.svg").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let link = directory.appendingPathComponent("link.svg").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "elsewhere.svg")
        let subdirectory = directory.appendingPathComponent("dir.svg").path
        try FileManager.default.createDirectory(atPath: subdirectory, withIntermediateDirectories: false)
        for (chart, status, reason) in [
            (scenario, Int32(64), "is one of the input files"),
            (directory.path + "/./lp.json", 64, "is one of the input files"),
            (fifo, 73, "exists and is not a regular file"), (link, 73, "exists and is not a regular file"),
            (subdirectory, 73, "exists and is not a regular file"),
            (directory.appendingPathComponent("missing/chart.svg").path, 73, "does not exist"),
        ] {
            let result = try CapturedRun.run("sleeptap-scenario", [scenario, "--twin", "--svg", chart], timeout: 60)
            #expect(result.status == status, "\(chart): \(result.standardError)")
            #expect(result.standardError.contains(reason), "\(chart): \(result.standardError)")
            #expect(result.standardOutput.isEmpty, "nothing ran: \(result.standardOutput)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: scenario)) == original)
        var info = stat()
        #expect(lstat(fifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
        #expect(lstat(link, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK)
    }
}

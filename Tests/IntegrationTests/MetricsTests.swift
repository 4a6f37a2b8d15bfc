// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import SleepTapProcess
import Testing

/// `phone --metrics-dir`: the running phone appends run records (docs/metrics.md) over ipc.
@Suite("run records from the phone process")
struct MetricsTests {
    @Test("--metrics-dir: the open, its request, a simulated launch's run and renewal land in one file per UTC day")
    func metricsDirectory() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let root = "\(scenario.dir)/fleet"
        let phone = try FlagEffectTests.phone(
            scenario, ["--metrics-dir", root, "--device-seed", "255", "--app-version", "2.3.1"])
        try phone.expect(.refreshForeground)
        phone.send(line: "simulate-launch")
        try phone.expect(.handlerCompleted)
        phone.send(line: "status")
        let status = try phone.expect(.phoneStatus).event
        // The run was a background run: staleness 0 (hours since it), the data as fresh.
        #expect((status.fields["stalenessHours"] as? NSNumber)?.doubleValue == 0)
        #expect((status.fields["dataAgeHours"] as? NSNumber)?.doubleValue == 0)
        let directory = root + "/metrics/bg_runs"
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        // --clock-start 2026-06-01T08:00:00Z at speed 1: all of it on that UTC day.
        #expect(files == ["phone-00000000000000ff-2026-06-01.json"])
        let data = try #require(FileManager.default.contents(atPath: directory + "/" + files[0]))
        let records = try RunRecordFile.decode(data)
        #expect(records.map(\.kind) == [.foreground, .submitted, .submitted, .background], "\(records)")
        #expect(records.allSatisfy { $0.device == "phone-00000000000000ff" && $0.platform == .ios })
        #expect(records.allSatisfy { $0.appVersion == "2.3.1" }, "--app-version reaches every record")
        #expect(records[0].stalenessHours == nil, "no background run before the open")
        #expect(records[3].success == true && records[3].stalenessHours == 0)
        // The simulated launch answered the foreground's request.
        #expect(records[3].earliestBeginDate == records[1].earliestBeginDate)
        #expect(RunRecordFile.encode(records) == data, "the file is in the format's one spelling")
    }

    @Test("--metrics-dir that cannot be created: exit 73 naming it, before anything is bound")
    func unusableMetricsDirectory() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let file = "\(scenario.dir)/plain"
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        let result = try scenario.runToExit(
            "phone", ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/p", "--metrics-dir", file])
        #expect(result.status == 73)
        #expect(result.stderr.contains("--metrics-dir: \(file)"), "stderr: \(result.stderr)")
        let bad = try scenario.runToExit(
            "phone", ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/p", "--app-version", ""])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--app-version \"\": expected 1 to 64 printable ASCII characters"), "\(bad.stderr)")
    }
}

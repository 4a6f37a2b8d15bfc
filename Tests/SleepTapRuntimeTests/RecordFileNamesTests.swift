// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import Testing

@testable import SleepTapRuntime

#if canImport(Glibc)
    import Glibc
#endif

/// The report's and the calibration's listing of `metrics/bg_runs`: names are read as bytes.
@Suite("Run-record file names")
struct RecordFileNamesTests {
    @Test("A record file whose name is not UTF-8 is read by its own bytes (it had been skipped as missing)")
    func nameNotUTF8() throws {
        let root = NSTemporaryDirectory() + "record-names-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let directory = root + "/" + RunRecordFile.directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let at = ISO8601.date("2026-11-26T10:00:00Z")!
        let records = [RunRecord(device: "device-000000", platform: .ios, kind: .foreground, at: at)]
        let data = RunRecordFile.encode(records)
        // device-000000-2026-11-26\xff.json: not UTF-8.
        let name = Array("device-000000-2026-11-26".utf8) + [0xFF] + Array(".json".utf8)
        let path = Array((directory + "/").utf8) + name + [0]
        let fd = path.withUnsafeBufferPointer {
            $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o600) }
        }
        #expect(fd >= 0)
        _ = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        var seen: [(String, [RunRecord])] = []
        let result = try FreshnessReportFiles.eachFile(root: root) { seen.append(($0, $1)) }
        #expect(result.files == 1 && result.skipped.isEmpty, "\(result.skipped)")
        #expect(seen.map(\.1) == [records])
        #expect(seen.first?.0 == "device-000000-2026-11-26\u{FFFD}.json")
        let report = try FreshnessReportFiles.read(root: root, date: LocalDate(parsing: "2026-11-26")!)
        #expect(report.files == 1 && report.skipped.isEmpty, "\(report.files) \(report.skipped)")
    }

    @Test(
        "A --root with no metrics/bg_runs under it is pointed to the records nearby: the metrics or bg_runs directory given, or one directory per strategy"
    )
    func rootHints() throws {
        let root = NSTemporaryDirectory() + "record-root-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        for strategy in ["refresh", "push"] {
            try FileManager.default.createDirectory(
                atPath: root + "/\(strategy)/" + RunRecordFile.directory, withIntermediateDirectories: true)
        }
        #expect(
            FreshnessReportFiles.rootHint(root + "/push/metrics")
                == " (--root is the directory that holds metrics/bg_runs: try --root \(root)/push)")
        #expect(
            FreshnessReportFiles.rootHint(root + "/push/metrics/bg_runs/")
                == " (--root is the directory that holds metrics/bg_runs: try --root \(root)/push)")
        #expect(
            FreshnessReportFiles.rootHint(root)
                == " (records lie one level down, in push, refresh: give one of them as --root, e.g. --root \(root)/push; sleeptap-compare --out writes one per strategy)"
        )
        #expect(FreshnessReportFiles.rootHint(root + "/missing") == "")
        do {
            _ = try FreshnessReportFiles.read(root: root, date: LocalDate(parsing: "2026-11-26")!)
            Issue.record("a root with no records was read")
        } catch {
            #expect("\(error)".contains("give one of them as --root"), "\(error)")
        }
    }
}

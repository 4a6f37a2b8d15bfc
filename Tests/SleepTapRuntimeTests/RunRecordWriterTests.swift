// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import SleepTapRuntime
import Testing

@Suite("Run-record writer")
struct RunRecordWriterTests {
    static func temporaryDirectory() throws -> String {
        var template = Array((NSTemporaryDirectory() + "/sleeptap-records-XXXXXX").utf8CString)
        let made = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) })
        return String(cString: made)
    }

    static func record(_ device: String, _ at: String, _ kind: RunRecord.Kind = .foreground) -> RunRecord {
        RunRecord(device: device, platform: .ios, kind: kind, at: ISO8601.date(at)!, lowPower: false)
    }

    @Test("append: one file per device per UTC day, appended in order, a bad file never overwritten")
    func append() throws {
        let root = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let writer = RunRecordWriter(root: root)
        try writer.prepare()
        let first = [Self.record("a", "2026-03-01T23:59:59Z"), Self.record("a", "2026-03-02T00:00:00Z")]
        try writer.append(first)
        let second = [Self.record("a", "2026-03-02T10:00:00Z"), Self.record("b", "2026-03-02T10:00:00Z")]
        try writer.append(second)
        let directory = root + "/metrics/bg_runs"
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == [
                "a-2026-03-01.json", "a-2026-03-02.json", "b-2026-03-02.json",
            ])
        let day = try #require(FileManager.default.contents(atPath: directory + "/a-2026-03-02.json"))
        #expect(try RunRecordFile.decode(day) == [first[1], second[0]])
        // A file that is not a run-record file stays as it is.
        let garbage = Data("not json".utf8)
        try garbage.write(to: URL(fileURLWithPath: directory + "/b-2026-03-02.json"))
        #expect(throws: FileError.self) { try writer.append([Self.record("b", "2026-03-02T11:00:00Z")]) }
        #expect(FileManager.default.contents(atPath: directory + "/b-2026-03-02.json") == garbage)
        // write replaces, and leaves no temp files.
        try writer.write([Self.record("b", "2026-03-02T12:00:00Z")])
        let replaced = try #require(FileManager.default.contents(atPath: directory + "/b-2026-03-02.json"))
        #expect(try RunRecordFile.decode(replaced).count == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).allSatisfy { !$0.contains(".tmp-") })
    }
}

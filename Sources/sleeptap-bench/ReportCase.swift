// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import SleepTapOS
import SleepTapProcess

#if canImport(Glibc)
    import Glibc
#endif

/// `sleeptap-report` over many run records: seeded synthetic records in the run-record format
/// (`RunRecordFile`: one file per device and UTC day under `metrics/bg_runs`), 14 days ending on
/// `end`, 10 records per file, 2 devices in 5 on Android; then the report's wall time and its peak
/// resident set size (VmHWM of /proc/PID/status, read every 2 ms while it runs).
enum ReportCase {
    /// Records per file, as one device's day.
    static let perFile = 10
    /// The last day of the records, and the report's `--date`.
    static let end = "2026-03-14"

    /// Writes about `records` records under `root`. - Returns: how many were written.
    static func generate(records: Int, root: String, seed: UInt64) throws -> Int {
        let directory = root + "/" + RunRecordFile.directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let last = ISO8601DateFormatter().date(from: end + "T00:00:00Z")!
        let days = (0..<14).map { calendar.date(byAdding: .day, value: $0 - 13, to: last)! }
        let devices = max(1, records / (perFile * days.count))
        var random = SplitMix64(state: seed)
        let kinds: [RunRecord.Kind] = [
            .submitted, .background, .foreground, .foreground, .submitted, .background, .foreground, .dropped,
            .submitFailed, .foreground,
        ]
        var written = 0
        for number in 0..<devices {
            let device = String(format: "dev-%06d", number)
            let platform: Platform = number % 5 < 2 ? .android : .ios
            for day in days {
                var batch: [RunRecord] = []
                batch.reserveCapacity(perFile)
                for (index, kind) in kinds.enumerated() {
                    let hour = calendar.date(byAdding: .hour, value: 6 + index, to: day)!
                    let at = hour.addingTimeInterval(Double(random.next() % 3_600_000) / 1_000)
                    let background = kind == .background
                    let stale = random.next() % 50 == 0 ? nil : Double(random.next() % 50_000) / 1_000
                    let record = RunRecord(
                        device: device, platform: platform, kind: kind, at: at,
                        earliestBeginDate: [.submitted, .background, .dropped].contains(kind)
                            ? calendar.date(byAdding: .hour, value: 5, to: day) : nil,
                        success: background ? random.next() % 10 != 0 : nil,
                        expired: background ? random.next() % 20 == 0 : nil,
                        bucket: platform == .android ? StandbyBucket.all[Int(random.next() % 5)] : nil,
                        attempt: platform == .android && (background || kind == .dropped) ? 0 : nil,
                        stalenessHours: stale, reason: kind == .submitFailed ? "unavailable" : nil)
                    if number == 0, let problem = record.problem {
                        throw BenchFailure("a generated run record is invalid: \(problem.field): \(problem.reason)")
                    }
                    batch.append(record)
                }
                let path = directory + "/" + RunRecordFile.fileName(device: device, day: day)
                try RunRecordFile.encode(batch).write(to: URL(fileURLWithPath: path))
                written += batch.count
            }
        }
        return written
    }

    /// Runs `sleeptap-report --root ROOT --date END`.
    /// - Returns: wall seconds and peak RSS in kilobytes.
    static func run(_ executable: URL, root: String) throws -> (seconds: Double, peakKB: Double) {
        let start = DispatchTime.now().uptimeNanoseconds
        let child = try ChildProcess(
            name: "sleeptap-report", executable: executable, arguments: ["--root", root, "--date", end],
            standardInput: FileHandle.nullDevice)
        var peak = 0.0
        while child.isRunning {
            if let text = try? String(contentsOfFile: "/proc/\(child.pid)/status", encoding: .utf8),
                let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                let value = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
            {
                peak = max(peak, value)
            }
            usleep(2_000)  // sampling the peak while it runs
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        _ = child.waitForOutputEnd(timeout: 10)
        guard child.exitStatus == 0 else {
            throw BenchFailure("sleeptap-report failed (exit \(child.exitStatus ?? -1)): \(child.standardError)")
        }
        return (seconds, peak)
    }
}

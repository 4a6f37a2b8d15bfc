// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import Testing

/// The weekly freshness report's maths and text (docs/metrics.md), on worked examples.
@Suite("Freshness report")
struct FreshnessReportTests {
    static let date = LocalDate(parsing: "2026-03-14")!
    /// The worked sample: sorted [0.5, 1, 2, 3.5, 4, 7.25, 9.5, 12, 15, 26].
    static let sample = [3.5, 0.5, 12.0, 7.25, 1.0, 26.0, 4.0, 9.5, 2.0, 15.0]

    /// A foreground record on `day` (2026-03-DD) at noon UTC.
    static func open(
        _ day: Int, _ hours: Double?, device: String = "d1", platform: Platform = .ios, bucket: StandbyBucket? = nil
    ) -> RunRecord {
        RunRecord(
            device: device, platform: platform, kind: .foreground,
            at: ISO8601.date(String(format: "2026-03-%02dT12:00:00Z", day))!, lowPower: false, bucket: bucket,
            stalenessHours: hours)
    }

    static func report(lastWeek: [Double], thisWeek: [Double]) -> FreshnessReport {
        var report = FreshnessReport(date: date)
        report.add(file: lastWeek.enumerated().map { open(1 + $0.offset % 7, $0.element) })
        report.add(file: thisWeek.enumerated().map { open(8 + $0.offset % 7, $0.element) })
        return report
    }

    @Test("Type 7 on the worked example: p50 5.625, p90 16.1 (nearest rank would give 4.0 and 15.0)")
    func workedExample() throws {
        let sorted = Self.sample.sorted()
        let p50 = try #require(Percentile.linear(sorted, 0.5))
        let p90 = try #require(Percentile.linear(sorted, 0.9))
        #expect(p50 == 5.625)
        #expect(abs(p90 - 16.1) < 1e-12)
        #expect(Percentile.wholeSeconds(hours: p90) == 57_960)
        let report = Self.report(lastWeek: [], thisWeek: Self.sample)
        let week = report.figures(.all, days: FreshnessReport.thisWeek)
        #expect(week.p50 == p50 && week.p90 == p90 && week.samples == 10)
        let text = report.markdown()
        #expect(text.contains("| p50 staleness (h) | 5.625 | n/a |"), "\(text)")
        #expect(text.contains("| p90 staleness (h) | 16.1 | n/a |"))
        #expect(text.contains("Hyndman and Fan type 7"))
    }

    @Test("n = 0 gives n/a, n = 1 gives that value")
    func smallSamples() {
        #expect(Percentile.linear([], 0.5) == nil)
        #expect(Percentile.linear([7.25], 0.5) == 7.25)
        #expect(Percentile.linear([7.25], 0.9) == 7.25)
        let report = Self.report(lastWeek: [], thisWeek: [7.25])
        let text = report.markdown()
        #expect(text.contains("| p50 staleness (h) | 7.25 | n/a |"), "\(text)")
        #expect(text.contains("| p90 staleness (h) | 7.25 | n/a |"))
        // Last week has no samples: nothing to compare, no warning, and the report says so.
        #expect(report.trend == .notComparable("last week has no staleness samples"))
        #expect(text.hasPrefix("# Background refresh freshness, 2026-03-14\n"))
        #expect(text.contains("No week-over-week comparison: last week has no staleness samples."))
    }

    @Test("Week over week: p90 16.1 h then 27.6 h is 11.5 h worse: no warning")
    func elevenAndAHalfHours() {
        let report = Self.report(lastWeek: Self.sample, thisWeek: [1, 2, 3, 4, 5, 6, 7, 8, 27.5, 28.5])
        #expect(report.trend == .compared(changeSeconds: 41_400, warning: false))
        #expect(report.heading == "# Background refresh freshness, 2026-03-14")
    }

    @Test("Exactly 12.0 h worse is no warning (floating point would say 12.000000000000002); 12.1 h is")
    func exactTwelveHours() throws {
        let twelve = Self.report(lastWeek: Self.sample, thisWeek: [1, 2, 3, 4, 5, 6, 7, 8, 28, 29])
        let p90 = try #require(twelve.figures(.all, days: FreshnessReport.thisWeek).p90)
        let before = try #require(twelve.figures(.all, days: FreshnessReport.lastWeek).p90)
        #expect(p90 - before > 12, "the trap: a naive comparison would warn")
        #expect(twelve.trend == .compared(changeSeconds: 43_200, warning: false))
        #expect(!twelve.markdown().hasPrefix("# ⚠"))
        let more = Self.report(lastWeek: Self.sample, thisWeek: [1, 2, 3, 4, 5, 6, 7, 8, 28, 30])
        #expect(more.trend == .compared(changeSeconds: 43_560, warning: true))
        #expect(more.markdown().hasPrefix("# ⚠ Background refresh freshness, 2026-03-14\n"))
    }

    @Test("A null staleness is \"never refreshed\": counted, not a number in the percentiles")
    func nullStaleness() throws {
        var report = FreshnessReport(date: Self.date)
        report.add(file: [Self.open(9, nil), Self.open(9, nil), Self.open(10, 2), Self.open(11, 4)])
        let week = report.figures(.all, days: FreshnessReport.thisWeek)
        #expect(week.samples == 4 && week.neverRefreshed == 2)
        #expect(week.p50 == 3)
        let text = report.markdown()
        #expect(text.contains("| never refreshed (null, not in the percentiles) | 2 | 0 |"), "\(text)")
        // A week of nothing but "never refreshed" after a week with a p90 is worse than any number.
        var never = FreshnessReport(date: Self.date)
        never.add(file: [Self.open(2, 5), Self.open(9, nil)])
        #expect(never.trend == .neverRefreshed)
        #expect(never.heading.hasPrefix("# ⚠ "))
    }

    @Test("Execution rate, breakdown by platform and bucket, failures, windows in UTC days")
    func breakdown() throws {
        let at = ISO8601.date("2026-03-10T06:00:00Z")!
        func record(_ kind: RunRecord.Kind, _ device: String, bucket: StandbyBucket? = nil) -> RunRecord {
            RunRecord(
                device: device, platform: bucket == nil ? .ios : .android, kind: kind, at: at,
                earliestBeginDate: kind == .submitted ? at : nil, success: kind == .background ? true : nil,
                expired: kind == .background ? false : nil, lowPower: false, bucket: bucket,
                reason: kind == .submitFailed ? "unavailable" : nil)
        }
        var report = FreshnessReport(date: Self.date)
        report.add(file: [
            record(.submitted, "i1"), record(.submitted, "i1"), record(.background, "i1"), record(.dropped, "i1"),
            record(.submitFailed, "i1"),
        ])
        report.add(file: [
            record(.submitted, "a1", bucket: .rare), record(.background, "a1", bucket: .rare),
            record(.submitted, "a2", bucket: .active),
            Self.open(10, 30, device: "a2", platform: .android, bucket: .active),
        ])
        // 23:59:59.999 on the 14th is this week; 00:00 on the 15th and 23:59 on 28 Feb are outside.
        report.add(file: [
            RunRecord(device: "x", platform: .ios, kind: .dropped, at: ISO8601.date("2026-03-14T23:59:59.999Z")!),
            RunRecord(device: "x", platform: .ios, kind: .dropped, at: ISO8601.date("2026-03-15T00:00:00Z")!),
            RunRecord(device: "x", platform: .ios, kind: .dropped, at: ISO8601.date("2026-02-28T23:59:00Z")!),
        ])
        let all = report.figures(.all, days: FreshnessReport.thisWeek)
        #expect(all.submitted == 4 && all.succeeded == 2 && all.executionRate == 0.5)
        #expect(all.devices == 4 && all.dropped == 2 && all.submitFailed == ["unavailable": 1])
        #expect(report.outside == 2 && report.records == 12)
        #expect(report.figures(.platform(.ios), days: FreshnessReport.thisWeek).executionRate == 0.5)
        #expect(report.figures(.bucket(.rare), days: FreshnessReport.thisWeek).executionRate == 1)
        let active = report.figures(.bucket(.active), days: FreshnessReport.thisWeek)
        #expect(active.executionRate == 0 && active.p90 == 30 && active.devices == 1)
        let text = report.markdown()
        #expect(text.contains("| android, rare | 1 | 0 | 0 | n/a | n/a | 100.0 % (1 / 1) |"), "\(text)")
        #expect(text.contains("| submit_failed: unavailable | 1 | 0 |"))
        #expect(text.contains("```mermaid\nxychart-beta\n"))
        #expect(text.contains("successful background runs") || text.contains("÷ `submitted` records"))
    }

    @Test("The same records in another file order give the same report")
    func deterministic() {
        let files = [[Self.open(2, 3), Self.open(9, 1)], [Self.open(10, 8, device: "d2")]]
        var a = FreshnessReport(date: Self.date)
        var b = FreshnessReport(date: Self.date)
        for file in files { a.add(file: file) }
        for file in files.reversed() { b.add(file: file) }
        #expect(a.markdown() == b.markdown())
    }

    @Test("Files read into separate reports and merged in order give the report of one reader")
    func merged() {
        let files = (0..<9).map { file in
            (0..<5).map { record in
                Self.open(
                    1 + (file * 5 + record) % 14, record == 4 ? nil : Double(file * 7 + record) / 4,
                    device: "d\(file % 4)", platform: file % 2 == 0 ? .ios : .android,
                    bucket: file % 2 == 0 ? nil : StandbyBucket.all[file % StandbyBucket.all.count])
            }
        }
        var one = FreshnessReport(date: Self.date)
        for file in files { one.add(file: file) }
        one.skip(file: "bad.json", reason: "x")
        var merged = FreshnessReport(date: Self.date)
        for part in [0..<2, 2..<3, 3..<9] {
            var report = FreshnessReport(date: Self.date)
            for file in files[part] { report.add(file: file) }
            if part.lowerBound == 3 { report.skip(file: "bad.json", reason: "x") }
            merged.merge(report)
        }
        #expect(merged.markdown() == one.markdown())
        #expect(merged.records == one.records && merged.files == one.files && merged.skipped.count == 1)
        for group in FreshnessReport.Group.ordered {
            #expect(merged.figures(group, days: 0...13) == one.figures(group, days: 0...13), "\(group)")
        }
        // Parts whose samples were sorted (as each reading thread does), or some of them, merge
        // into the same report.
        for sortedParts in [[true, true, true], [false, true, true], [true, false, true]] {
            var sorted = FreshnessReport(date: Self.date)
            for (part, sorts) in zip([0..<2, 2..<3, 3..<9], sortedParts) {
                var report = FreshnessReport(date: Self.date)
                for file in files[part] { report.add(file: file) }
                if part.lowerBound == 3 { report.skip(file: "bad.json", reason: "x") }
                if sorts { report.sortSamples() }
                sorted.merge(report)
            }
            #expect(sorted.markdown() == one.markdown(), "\(sortedParts)")
            for group in FreshnessReport.Group.ordered {
                for days in [0...13, 0...6, 7...13, 3...3] {
                    #expect(sorted.figures(group, days: days) == one.figures(group, days: days), "\(group) \(days)")
                }
            }
        }
    }
}

// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Exact sample percentiles.
public enum Percentile {
    /// The `p` quantile of `sorted` (ascending) by linear interpolation between closest ranks:
    /// Hyndman and Fan's type 7, the default of R's `quantile` and numpy's `percentile`, Excel's
    /// `PERCENTILE.INC`. With h = (n − 1)p: x[⌊h⌋] + (h − ⌊h⌋)(x[⌊h⌋ + 1] − x[⌊h⌋]).
    /// - Parameters:
    ///   - sorted: the sample, ascending.
    ///   - p: in [0, 1].
    /// - Returns: nil for an empty sample; the one value for n = 1.
    public static func linear(_ sorted: [Double], _ p: Double) -> Double? {
        guard let first = sorted.first else { return nil }
        guard sorted.count > 1 else { return first }
        let h = Double(sorted.count - 1) * p
        let low = Int(h.rounded(.down))
        guard low + 1 < sorted.count else { return sorted[sorted.count - 1] }
        let fraction = h - Double(low)
        return sorted[low] + fraction * (sorted[low + 1] - sorted[low])
    }

    /// Hours as whole seconds (rounded to the nearest), for exact comparisons: 12.0 h is
    /// 43,200 s, where floating point would make 28.1 − 16.1 = 12.000000000000002.
    public static func wholeSeconds(hours: Double) -> Int64 {
        Int64((hours * 3_600).rounded())
    }
}

/// The weekly background-refresh freshness report (`sleeptap-report`, docs/metrics.md), sans I/O:
/// run records go in one at a time (`add`), a Markdown report and a summary come out.
///
/// Two weeks of UTC days: this week is the 7 days ending with the report date, last week the 7
/// before. Memory does not grow with the number of records beyond what exact percentiles need:
/// per day, the staleness samples as `[Double]`s (each sample once: per iOS and per Android
/// bucket, the groups above them are their unions) and per group a few counters; the devices seen
/// per group and week as a set of names.
public struct FreshnessReport: Sendable {
    /// What a row of the report is about.
    public enum Group: Hashable, Comparable, Sendable, CustomStringConvertible {
        /// Every device.
        case all
        /// The devices of one platform.
        case platform(Platform)
        /// An Android standby bucket (the bucket at the record).
        case bucket(StandbyBucket)

        /// The fixed order of rows: all, ios, android, then the buckets most to least privileged.
        public static let ordered: [Group] =
            [.all, .platform(.ios), .platform(.android)] + StandbyBucket.all.map { .bucket($0) }

        var index: Int { Self.ordered.firstIndex(of: self)! }

        public static func < (a: Group, b: Group) -> Bool { a.index < b.index }

        /// `all`, `ios`, `android`, `android, rare`.
        public var description: String {
            switch self {
            case .all: "all"
            case .platform(let platform): platform.rawValue
            case .bucket(let bucket): "android, \(bucket.name)"
            }
        }
    }

    /// One day of one group.
    struct Cell: Sendable {
        var neverRefreshed = 0
        var submitted = 0
        var succeeded = 0
        var background = 0
        var expired = 0
        var dropped = 0
        var submitFailed: [String: Int] = [:]
        var records = 0

        mutating func merge(_ other: Cell) {
            neverRefreshed += other.neverRefreshed
            submitted += other.submitted
            succeeded += other.succeeded
            background += other.background
            expired += other.expired
            dropped += other.dropped
            submitFailed.merge(other.submitFailed, uniquingKeysWith: +)
            records += other.records
        }
    }

    /// A group over a span of days, computed.
    public struct Figures: Equatable, Sendable {
        /// Devices with at least one record in the week (for a span that is not one of the two
        /// weeks: in either week).
        public var devices: Int
        /// Staleness samples (foreground records), numbers and nulls.
        public var samples: Int
        /// Samples that were null: the device had never had a successful background run.
        public var neverRefreshed: Int
        /// Type-7 percentiles of the numeric samples, hours; nil when there are none.
        public var p50: Double?
        /// The 90th percentile, hours; nil when there are no numeric samples.
        public var p90: Double?
        /// `submitted` records.
        public var submitted: Int
        /// `background` records with success.
        public var succeeded: Int
        /// `background` records.
        public var background: Int
        /// `background` records whose expiration handler ran.
        public var expired: Int
        /// `dropped` records: launched, no handler.
        public var dropped: Int
        /// `submit_failed` records by reason.
        public var submitFailed: [String: Int]
        /// Records of every kind.
        public var records: Int

        /// succeeded ÷ submitted, nil when nothing was submitted.
        public var executionRate: Double? { submitted == 0 ? nil : Double(succeeded) / Double(submitted) }
    }

    /// The report date (UTC day).
    public let date: LocalDate
    /// The 14 UTC days, oldest first: 0...6 last week, 7...13 this week.
    public let days: [LocalDate]
    /// Their starts and the end of the last one (15 instants).
    private let bounds: [Double]
    /// [group][day]
    private var cells: [[Cell]]
    /// The numeric staleness samples, each once: [leaf][day], leaf 0 iOS, 1...5 the Android
    /// buckets in `StandbyBucket.all` order.
    private var samples: [[[Double]]]
    /// Whether every day's samples are in ascending order (`sortSamples()`; `add` ends it).
    private var samplesSorted = true
    /// [group][week (0 last, 1 this)]
    private var devices: [[Set<String>]]
    /// Records outside the two weeks.
    public private(set) var outside = 0
    /// Records read.
    public private(set) var records = 0
    /// Good files read.
    public private(set) var files = 0
    /// Files not used, with why, in the order given.
    public private(set) var skipped: [(file: String, reason: String)] = []

    private var lastDevice = ""
    private var lastDeviceSeen: UInt32 = 0

    /// - Parameter date: the report's day (UTC); this week ends with it.
    public init(date: LocalDate) {
        self.date = date
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let end = calendar.date(from: DateComponents(year: date.year, month: date.month, day: date.day))!
        // Days are stepped by the calendar, never by 86,400 s.
        let starts = (0...14).map { calendar.date(byAdding: .day, value: $0 - 13, to: end)! }
        bounds = starts.map(\.timeIntervalSince1970)
        days = starts.prefix(14).map { LocalDate($0, in: calendar) }
        cells = Array(repeating: Array(repeating: Cell(), count: 14), count: Group.ordered.count)
        devices = Array(repeating: [[], []], count: Group.ordered.count)
        samples = Array(repeating: Array(repeating: [], count: 14), count: 1 + StandbyBucket.all.count)
    }

    /// The sample leaves a group is the union of.
    private static func leaves(_ group: Group) -> [Int] {
        switch group {
        case .all: Array(0...StandbyBucket.all.count)
        case .platform(.ios): [0]
        case .platform(.android): Array(1...StandbyBucket.all.count)
        case .bucket(let bucket): [1 + (StandbyBucket.all.firstIndex(of: bucket) ?? 0)]
        }
    }

    private static func leaf(_ record: RunRecord) -> Int {
        guard record.platform == .android, let bucket = record.bucket else { return 0 }
        return 1 + (StandbyBucket.all.firstIndex(of: bucket) ?? 0)
    }

    /// The day index 0...13 of `instant`, nil outside the two weeks.
    private func day(of instant: Date) -> Int? {
        let t = instant.timeIntervalSince1970
        guard t >= bounds[0], t < bounds[14] else { return nil }
        var low = 0
        var high = 14
        while high - low > 1 {
            let mid = (low + high) / 2
            if t >= bounds[mid] { low = mid } else { high = mid }
        }
        return low
    }

    /// A file was read whole and is good: its records go in.
    public mutating func add(file records: [RunRecord]) {
        files += 1
        for record in records { add(record) }
    }

    /// Adds what `other`, a report of the same date over later files, read: the report of files
    /// A then B equals A's report merged with B's (samples, counts, devices and skipped files
    /// in the same order), so files read on several threads and merged in their order give the
    /// same report, and the same bytes, as one thread.
    public mutating func merge(_ other: FreshnessReport) {
        precondition(other.date == date, "merging reports of different dates")
        let bothSorted = samplesSorted && other.samplesSorted
        for leaf in samples.indices {
            for day in samples[leaf].indices {
                if bothSorted {
                    samples[leaf][day] = Self.merged(samples[leaf][day], other.samples[leaf][day])
                } else {
                    samples[leaf][day] += other.samples[leaf][day]
                }
            }
        }
        samplesSorted = bothSorted
        for group in cells.indices {
            for day in cells[group].indices { cells[group][day].merge(other.cells[group][day]) }
            for week in devices[group].indices { devices[group][week].formUnion(other.devices[group][week]) }
        }
        outside += other.outside
        records += other.records
        files += other.files
        skipped += other.skipped
        lastDevice = ""
        lastDeviceSeen = 0
    }

    /// Sorts each day's staleness samples. Their order is no part of the report (it reads the
    /// same), but a group's percentiles over several days then sort runs already sorted (the
    /// standard library's sort merges them), and `merge` of two sorted reports merges in linear
    /// time. Call it where the report was built (each thread on its own part), before `merge`.
    public mutating func sortSamples() {
        guard !samplesSorted else { return }
        for leaf in samples.indices {
            for day in samples[leaf].indices { samples[leaf][day].sort() }
        }
        samplesSorted = true
    }

    /// The ascending merge of two ascending arrays; of equal values, `a`'s come first (as in
    /// `a + b` sorted stably).
    private static func merged(_ a: [Double], _ b: [Double]) -> [Double] {
        guard !a.isEmpty else { return b }
        guard !b.isEmpty else { return a }
        var out: [Double] = []
        out.reserveCapacity(a.count + b.count)
        var i = 0
        var j = 0
        while i < a.count, j < b.count {
            if b[j] < a[i] {
                out.append(b[j])
                j += 1
            } else {
                out.append(a[i])
                i += 1
            }
        }
        out += a[i...]
        out += b[j...]
        return out
    }

    /// A file that was not used, with why.
    public mutating func skip(file: String, reason: String) {
        skipped.append((file, reason))
    }

    /// One record.
    public mutating func add(_ record: RunRecord) {
        records += 1
        guard let day = day(of: record.at) else {
            outside += 1
            return
        }
        let week = day < 7 ? 0 : 1
        if record.device != lastDevice {
            lastDevice = record.device
            lastDeviceSeen = 0
        }
        if record.kind == .foreground, let hours = record.stalenessHours {
            samples[Self.leaf(record)][day].append(hours)
            samplesSorted = false
        }
        // The groups: all, the platform, the bucket (-1: none); a fixed-size list, not grown.
        let bucketGroup = record.bucket.map { Group.bucket($0).index } ?? -1
        for group in [Group.all.index, Group.platform(record.platform).index, bucketGroup] where group >= 0 {
            // Each (group, week) of a run of records of one device inserts its name once.
            let bit = UInt32(1) << UInt32(group * 2 + week)
            if lastDeviceSeen & bit == 0 {
                lastDeviceSeen |= bit
                devices[group][week].insert(record.device)
            }
            cells[group][day].records += 1
            switch record.kind {
            case .foreground:
                if record.stalenessHours == nil {
                    cells[group][day].neverRefreshed += 1
                }
            case .submitted:
                cells[group][day].submitted += 1
            case .submitFailed:
                cells[group][day].submitFailed[record.reason ?? "", default: 0] += 1
            case .background:
                cells[group][day].background += 1
                if record.success == true { cells[group][day].succeeded += 1 }
                if record.expired == true { cells[group][day].expired += 1 }
            case .dropped:
                cells[group][day].dropped += 1
            }
        }
    }

    /// A group's figures over days `range` (indexes into `days`).
    public func figures(_ group: Group, days range: ClosedRange<Int>) -> Figures {
        var cell = Cell()
        for day in range { cell.merge(cells[group.index][day]) }
        var values: [Double] = []
        for leaf in Self.leaves(group) {
            for day in range { values += samples[leaf][day] }
        }
        let sorted = values.sorted()
        let weekDevices: Int
        if range == 0...6 {
            weekDevices = devices[group.index][0].count
        } else if range == 7...13 {
            weekDevices = devices[group.index][1].count
        } else {
            weekDevices = devices[group.index][0].union(devices[group.index][1]).count
        }
        return Figures(
            devices: weekDevices, samples: sorted.count + cell.neverRefreshed, neverRefreshed: cell.neverRefreshed,
            p50: Percentile.linear(sorted, 0.5), p90: Percentile.linear(sorted, 0.9), submitted: cell.submitted,
            succeeded: cell.succeeded, background: cell.background, expired: cell.expired, dropped: cell.dropped,
            submitFailed: cell.submitFailed, records: cell.records)
    }

    /// Last week's day indexes into `days`.
    public static let lastWeek = 0...6
    /// This week's day indexes into `days` (the last is the report date).
    public static let thisWeek = 7...13

    /// The week-over-week verdict.
    public enum Trend: Equatable, Sendable {
        /// Both weeks have a p90: the change in whole seconds; `warning` when more than 12 h.
        case compared(changeSeconds: Int64, warning: Bool)
        /// This week's samples are all "never refreshed" while last week had a p90: worse than
        /// any number, a warning.
        case neverRefreshed
        /// A week without samples at all (or last week's all null): nothing to compare, no warning.
        case notComparable(String)

        /// Whether the heading gets ⚠.
        public var warning: Bool {
            switch self {
            case .compared(_, let warning): warning
            case .neverRefreshed: true
            case .notComparable: false
            }
        }
    }

    /// The warning threshold: 12 hours, in seconds.
    public static let thresholdSeconds: Int64 = 12 * 3_600

    /// This week's p90 against last week's (all devices).
    public var trend: Trend {
        Self.trend(this: figures(.all, days: Self.thisWeek), last: figures(.all, days: Self.lastWeek))
    }

    /// The trend of this week's figures (all devices) against last week's.
    static func trend(this: Figures, last: Figures) -> Trend {
        switch (this.p90, last.p90) {
        case (let now?, let before?):
            let change = Percentile.wholeSeconds(hours: now) - Percentile.wholeSeconds(hours: before)
            return .compared(changeSeconds: change, warning: change > Self.thresholdSeconds)
        case (nil, _?) where this.samples > 0:
            return .neverRefreshed
        case (_, nil) where last.samples > 0:
            return .notComparable("last week's samples are all \"never refreshed\": no p90 to compare with")
        case (_, nil):
            return .notComparable("last week has no staleness samples")
        default:
            return .notComparable("this week has no staleness samples")
        }
    }
}

// MARK: - rendering

extension FreshnessReport {
    /// Hours to 3 decimals without trailing zeros (`5.625`, `16.1`, `0`), or `n/a`.
    static func hours(_ value: Double?) -> String {
        guard let value else { return "n/a" }
        var text = String(format: "%.3f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }

    /// `93.1 % (1200 / 1289)`, or `n/a (0 submitted)`.
    static func rate(_ figures: Figures) -> String {
        guard let rate = figures.executionRate else { return "n/a (0 submitted)" }
        return String(format: "%.1f %%", rate * 100) + " (\(figures.succeeded) / \(figures.submitted))"
    }

    static func signedHours(seconds: Int64) -> String {
        let value = Double(seconds.magnitude) / 3_600
        return (seconds >= 0 ? "+" : "−") + hours(value) + " h"
    }

    /// The heading: `# Background refresh freshness, 2026-03-14`, with `⚠ ` in front on a warning.
    public var heading: String { heading(trend) }

    func heading(_ trend: Trend) -> String {
        (trend.warning ? "# ⚠ " : "# ") + "Background refresh freshness, \(date)"
    }

    /// The report's file name: `bg_freshness_<date>.md`.
    public var fileName: String { "bg_freshness_\(date).md" }

    /// The whole report, Markdown (GitHub renders the Mermaid chart). Deterministic: the same
    /// records and skipped files give the same text.
    public func markdown() -> String {
        let this = figures(.all, days: Self.thisWeek)
        let last = figures(.all, days: Self.lastWeek)
        let trend = Self.trend(this: this, last: last)
        var out = heading(trend) + "\n\n"
        out += "This week: \(days[7]) to \(days[13]); last week: \(days[0]) to \(days[6]) (UTC days).  \n"
        out +=
            "Input: \(files) file\(files == 1 ? "" : "s") of `metrics/bg_runs/*.json`, \(records) records "
            + "(\(outside) outside the two weeks)"
        out +=
            skipped.isEmpty
            ? ".\n\n" : "; \(skipped.count) file\(skipped.count == 1 ? "" : "s") skipped (listed below).\n\n"
        switch trend {
        case .compared(let change, let warning):
            out +=
                "p90 staleness changed by \(Self.signedHours(seconds: change)) week over week"
                + (warning ? ": more than 12 h worse. ⚠\n\n" : " (a warning needs more than +12 h).\n\n")
        case .neverRefreshed:
            out +=
                "This week every staleness sample is \"never refreshed\" while last week had a p90: "
                + "worse than any number of hours. ⚠\n\n"
        case .notComparable(let why):
            out += "No week-over-week comparison: \(why).\n\n"
        }

        out += "## Summary\n\n| | this week | last week |\n|---|---|---|\n"
        out += "| staleness samples (app opens) | \(this.samples) | \(last.samples) |\n"
        out += "| never refreshed (null, not in the percentiles) | \(this.neverRefreshed) | \(last.neverRefreshed) |\n"
        out += "| p50 staleness (h) | \(Self.hours(this.p50)) | \(Self.hours(last.p50)) |\n"
        out += "| p90 staleness (h) | \(Self.hours(this.p90)) | \(Self.hours(last.p90)) |\n"
        out += "| execution rate | \(Self.rate(this)) | \(Self.rate(last)) |\n"
        out += "| devices | \(this.devices) | \(last.devices) |\n\n"

        for (title, range) in [("this week", Self.thisWeek), ("last week", Self.lastWeek)] {
            out += "## Breakdown, \(title)\n\n"
            out += "By platform and by Android standby bucket (the bucket at each record).\n\n"
            out += "| group | devices | samples | never refreshed | p50 (h) | p90 (h) | execution rate |\n"
            out += "|---|---|---|---|---|---|---|\n"
            for group in Group.ordered {
                let f = figures(group, days: range)
                if group != .all, f.records == 0 { continue }
                out +=
                    "| \(group) | \(f.devices) | \(f.samples) | \(f.neverRefreshed) | \(Self.hours(f.p50)) | "
                    + "\(Self.hours(f.p90)) | \(Self.rate(f)) |\n"
            }
            out += "\n"
        }

        out += "## Failures\n\n| | this week | last week |\n|---|---|---|\n"
        let reasons = Set(this.submitFailed.keys).union(last.submitFailed.keys).sorted()
        if reasons.isEmpty { out += "| submit_failed | 0 | 0 |\n" }
        for reason in reasons {
            out +=
                "| submit_failed: \(Self.cell(reason.isEmpty ? "(no reason)" : reason)) | "
                + "\(this.submitFailed[reason] ?? 0) | \(last.submitFailed[reason] ?? 0) |\n"
        }
        out += "| dropped (launched, no handler) | \(this.dropped) | \(last.dropped) |\n"
        out += "| expired (budget ran out) | \(this.expired) | \(last.expired) |\n"
        out += "| background runs, all outcomes | \(this.background) | \(last.background) |\n\n"

        out += "## Daily staleness\n\n"
        let daily = (0..<14).map { figures(.all, days: $0...$0) }
        let top = max(1, daily.compactMap(\.p90).max() ?? 1)
        out += "p50 (first line) and p90 (second line) of the day's staleness samples, in hours; "
        out += "a day without numeric samples is drawn at 0 (n/a in the table).\n\n"
        out += "```mermaid\nxychart-beta\n"
        out += "    title \"Staleness at app open, daily p50 and p90 (hours)\"\n"
        out +=
            "    x-axis [" + days.map { "\"\(String($0.description.dropFirst(5)))\"" }.joined(separator: ", ") + "]\n"
        out += "    y-axis \"hours\" 0 --> \(String(format: "%.0f", (top * 1.1).rounded(.up)))\n"
        out += "    line [" + daily.map { Self.hours($0.p50 ?? 0) }.joined(separator: ", ") + "]\n"
        out += "    line [" + daily.map { Self.hours($0.p90 ?? 0) }.joined(separator: ", ") + "]\n"
        out += "```\n\n"
        out += "| day | samples | never refreshed | p50 (h) | p90 (h) | execution rate |\n|---|---|---|---|---|---|\n"
        for (day, f) in zip(days, daily) {
            out +=
                "| \(day) | \(f.samples) | \(f.neverRefreshed) | \(Self.hours(f.p50)) | \(Self.hours(f.p90)) | "
                + "\(Self.rate(f)) |\n"
        }
        out += "\n"

        out += "## Definitions\n\n"
        out +=
            "- **Staleness sample**: the `stalenessHours` of a `foreground` record: when the user opened the "
            + "app, the hours since the device's last successful background run. A null sample means the "
            + "device had never refreshed in the background: it is counted as \"never refreshed\" and is not "
            + "a number in the percentiles.\n"
        out +=
            "- **Percentiles**: linear interpolation between closest ranks (Hyndman and Fan type 7, the default "
            + "of R and numpy, Excel's PERCENTILE.INC): for the sorted numeric samples x[0..n−1] and h = (n−1)p, "
            + "x[⌊h⌋] + (h−⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]). n = 0 gives n/a; n = 1 gives that sample.\n"
        out +=
            "- **Execution rate**: `background` records with `success: true` ÷ `submitted` records, in the same "
            + "window and group.\n"
        out +=
            "- **Warning** (⚠ in the heading): this week's p90 minus last week's p90 is more than 12 h, compared "
            + "in whole seconds (an exact 12 h is no warning). A week with no samples gives no comparison and no "
            + "warning; a week whose samples are all \"never refreshed\" after a week with a p90 is a warning.\n"
        out +=
            "- Days and weeks are UTC days of each record's `at`. This report reads only `metrics/bg_runs/*.json` "
            + "and writes only this file; it changes no threshold, schedule or code.\n"

        if !skipped.isEmpty {
            out += "\n## Skipped files\n\n"
            for (file, reason) in skipped {
                out += "- `\(Self.cell(file))`: \(Self.cell(reason))\n"
            }
        }
        return out
    }

    /// Text safe in a Markdown table cell or list item (no pipes, backticks or line breaks).
    static func cell(_ text: String) -> String {
        clipped(text, to: 200).replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "`", with: "'")
            .replacingOccurrences(of: "\n", with: " ")
    }
}

// MARK: - summaries

extension FreshnessReport {
    /// A week's figures for `--json`: hours as numbers or null, the rate as a fraction or null.
    static func object(_ f: Figures) -> [String: Any] {
        [
            "devices": f.devices, "samples": f.samples, "neverRefreshed": f.neverRefreshed,
            "p50Hours": f.p50 ?? NSNull(), "p90Hours": f.p90 ?? NSNull(),
            "executionRate": f.executionRate ?? NSNull(), "submitted": f.submitted, "succeeded": f.succeeded,
            "dropped": f.dropped, "expired": f.expired, "submitFailed": f.submitFailed,
        ]
    }

    /// The summary as one JSON object (`sleeptap-report --json`): `event` `report.summary`,
    /// `date`, `report` (the path), `warning`, `p90ChangeSeconds` (null when not compared),
    /// `thisWeek` and `lastWeek` (devices, samples, neverRefreshed, p50Hours, p90Hours,
    /// executionRate, submitted, succeeded, dropped, expired, submitFailed by reason), `files`,
    /// `records`, `outside`, `skipped` ([{file, reason}]).
    public func summary(path: String) -> [String: Any] {
        let this = figures(.all, days: Self.thisWeek)
        let last = figures(.all, days: Self.lastWeek)
        let trend = Self.trend(this: this, last: last)
        var change: Any = NSNull()
        if case .compared(let seconds, _) = trend { change = seconds }
        return [
            "event": "report.summary", "date": date.description, "report": path, "warning": trend.warning,
            "p90ChangeSeconds": change, "thisWeek": Self.object(this), "lastWeek": Self.object(last),
            "files": files, "records": records,
            "outside": outside, "skipped": skipped.map { ["file": $0.file, "reason": $0.reason] },
        ]
    }

    /// A few readable lines: where the report is, the heading, this week against last week.
    public func summaryLines(path: String) -> String {
        let this = figures(.all, days: Self.thisWeek)
        let last = figures(.all, days: Self.lastWeek)
        let trend = Self.trend(this: this, last: last)
        func withUnit(_ value: Double?) -> String { value.map { Self.hours($0) + " h" } ?? "n/a" }
        var lines = [
            "wrote \(path)",
            String(heading(trend).dropFirst(2)),
            "  this week \(days[7])..\(days[13]): p50 \(withUnit(this.p50)), p90 \(withUnit(this.p90)), "
                + "execution rate \(Self.rate(this)), \(this.samples) samples",
            "  last week \(days[0])..\(days[6]): p50 \(withUnit(last.p50)), p90 \(withUnit(last.p90)), "
                + "execution rate \(Self.rate(last)), \(last.samples) samples",
            "  \(files) files, \(records) records, \(skipped.count) files skipped",
        ]
        if case .compared(let seconds, _) = trend {
            lines.insert("  p90 change: \(Self.signedHours(seconds: seconds))", at: 2)
        }
        return lines.joined(separator: "\n")
    }
}

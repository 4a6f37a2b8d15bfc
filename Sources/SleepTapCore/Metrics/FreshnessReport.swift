// SPDX-License-Identifier: Apache-2.0
package import Foundation
package import SleepTapOS

/// Exact sample percentiles.
package enum Percentile {
    /// The `p` quantile of `sorted` (ascending) by linear interpolation between closest ranks:
    /// Hyndman and Fan's type 7, the default of R's `quantile` and numpy's `percentile`, Excel's
    /// `PERCENTILE.INC`. With h = (n − 1)p: x[⌊h⌋] + (h − ⌊h⌋)(x[⌊h⌋ + 1] − x[⌊h⌋]).
    /// - Parameters:
    ///   - sorted: the sample, ascending.
    ///   - p: in [0, 1].
    /// - Returns: nil for an empty sample; the one value for n = 1.
    package static func linear(_ sorted: [Double], _ p: Double) -> Double? {
        guard let first = sorted.first else { return nil }
        guard sorted.count > 1 else { return first }
        let h = Double(sorted.count - 1) * p
        let low = Int(h.rounded(.down))
        guard low + 1 < sorted.count else { return sorted[sorted.count - 1] }
        let fraction = h - Double(low)
        return sorted[low] + fraction * (sorted[low + 1] - sorted[low])
    }

    /// The `p` quantile of a staleness sample of `sorted` numbers (ascending) and `never` samples
    /// of a device that has had no background run yet, which rank above every number (unbounded
    /// staleness): type 7 as `linear(_:_:)` over the whole sample. A rank that lands on a `never`
    /// sample, or that interpolates towards one (a fraction above 0), reads `.never`.
    /// - Returns: nil for an empty sample.
    package static func staleness(_ sorted: [Double], never: Int, _ p: Double) -> Staleness? {
        let count = sorted.count + never
        guard count > 0 else { return nil }
        guard count > 1 else { return sorted.first.map(Staleness.hours) ?? .never }
        let h = Double(count - 1) * p
        let low = Int(h.rounded(.down))
        let fraction = h - Double(low)
        guard low < sorted.count else { return .never }
        if fraction == 0 { return .hours(sorted[low]) }
        guard low + 1 < sorted.count else { return .never }
        return .hours(sorted[low] + fraction * (sorted[low + 1] - sorted[low]))
    }

    /// Hours as whole seconds (rounded to the nearest), for exact comparisons: 12.0 h is
    /// 43,200 s, where floating point would make 28.1 − 16.1 = 12.000000000000002.
    package static func wholeSeconds(hours: Double) -> Int64 {
        Int64((hours * 3_600).rounded())
    }
}

/// A staleness percentile: a number of hours, or `never` (the rank fell on devices that have had
/// no successful background run yet: unbounded staleness, worse than any number).
package enum Staleness: Equatable, Sendable, CustomStringConvertible {
    /// Hours since the last successful background run.
    case hours(Double)
    /// No successful background run yet.
    case never

    /// The hours, nil for `never`.
    package var hours: Double? {
        if case .hours(let value) = self { return value }
        return nil
    }

    /// `5.6` (one decimal) or `never`.
    package var description: String { hours.map(FreshnessReport.hours) ?? "never" }
}

/// The weekly background-refresh freshness report (`sleeptap-report`, docs/metrics.md), sans I/O:
/// run records go in one at a time (`add`), a Markdown report and a summary come out.
///
/// Two weeks of UTC days: this week is the 7 days ending with the report date, last week the 7
/// before. Memory does not grow with the number of records beyond what exact percentiles need:
/// per day, the staleness samples as `[Double]`s (each sample once: per iOS and per Android
/// bucket, the groups above them are their unions) and per group a few counters; the devices seen
/// (and those with a successful background run) per group and week as sets of names; per app
/// version (records that carry one) the same for each week.
package struct FreshnessReport: Sendable {
    /// What a row of the report is about.
    package enum Group: Hashable, Comparable, Sendable, CustomStringConvertible {
        /// Every device.
        case all
        /// The devices of one platform.
        case platform(Platform)
        /// An Android standby bucket (the bucket at the record).
        case bucket(StandbyBucket)

        /// The fixed order of rows: all, ios, android, then the buckets most to least privileged.
        package static let ordered: [Group] =
            [.all, .platform(.ios), .platform(.android)] + StandbyBucket.all.map { .bucket($0) }

        var index: Int { Self.ordered.firstIndex(of: self)! }

        package static func < (a: Group, b: Group) -> Bool { a.index < b.index }

        /// `all`, `ios`, `android`, `android, rare`.
        package var description: String {
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
        var push = 0
        var pushSucceeded = 0
        var submitFailed: [String: Int] = [:]
        var records = 0

        mutating func merge(_ other: Cell) {
            neverRefreshed += other.neverRefreshed
            submitted += other.submitted
            succeeded += other.succeeded
            background += other.background
            expired += other.expired
            dropped += other.dropped
            push += other.push
            pushSucceeded += other.pushSucceeded
            submitFailed.merge(other.submitFailed, uniquingKeysWith: +)
            records += other.records
        }

        mutating func count(_ record: RunRecord) {
            records += 1
            switch record.kind {
            case .foreground:
                if record.stalenessHours == nil { neverRefreshed += 1 }
            case .submitted:
                submitted += 1
            case .submitFailed:
                submitFailed[record.reason ?? "", default: 0] += 1
            case .background:
                background += 1
                if record.success == true { succeeded += 1 }
                if record.expired == true { expired += 1 }
            case .dropped:
                dropped += 1
            case .push:
                push += 1
                if record.success == true { pushSucceeded += 1 }
                if record.expired == true { expired += 1 }
            }
        }
    }

    /// One week of the records of one app version.
    struct VersionWeek: Sendable {
        var cell = Cell()
        var samples: [Double] = []
        var devices: Set<String> = []
        var refreshed: Set<String> = []
        /// The earliest `at` of the week's records on the version.
        var firstAt: Date?

        mutating func merge(_ other: VersionWeek) {
            cell.merge(other.cell)
            samples += other.samples
            devices.formUnion(other.devices)
            refreshed.formUnion(other.refreshed)
            if let theirs = other.firstAt { firstAt = min(firstAt ?? theirs, theirs) }
        }
    }

    /// A group over a span of days, computed.
    package struct Figures: Equatable, Sendable {
        /// Devices with at least one record in the week (for a span that is not one of the two
        /// weeks: in either week).
        package var devices: Int
        /// Staleness samples (foreground records), numbers and nulls.
        package var samples: Int
        /// Samples that were null: the device had never had a successful background run.
        package var neverRefreshed: Int
        /// Type-7 percentiles of all the samples, a null one ranked as unbounded staleness
        /// (`Percentile.staleness`); nil when there are none.
        package var p50: Staleness?
        /// The 90th percentile; nil when there are no samples.
        package var p90: Staleness?
        /// `submitted` records.
        package var submitted: Int
        /// `background` records with success.
        package var succeeded: Int
        /// `background` records.
        package var background: Int
        /// `background` and `push` records whose expiration handler ran (a push's run has the same
        /// budget, and the same cure).
        package var expired: Int
        /// `dropped` records: launched, no handler.
        package var dropped: Int
        /// `submit_failed` records by reason.
        package var submitFailed: [String: Int]
        /// Records of every kind.
        package var records: Int
        /// Of `devices`, those without a successful run (a `background` or `push` record with
        /// success) in the same window.
        package var noRunDevices: Int
        /// `push` records: runs for a server push, outside the task scheduler (not in the
        /// execution rate, which counts the scheduler's answers to requests).
        package var push: Int = 0
        /// `push` records with success.
        package var pushSucceeded: Int = 0
        /// Of `samples`, those of the silent devices of the weeks the span overlaps: each one's
        /// usual opens a week, its data's age at each (`FreshnessReport.silentLoad`).
        package var silentSamples: Int = 0
        /// Of `requests`, those of the silent devices of the weeks the span overlaps: each one's
        /// usual requests a week (`FreshnessReport.silentLoad`), none answered.
        package var silentRequests: Int = 0
        /// Of `silentSamples`, the `never` ones: silent devices whose records show no refresh.
        package var silentNever: Int = 0
        /// For a week (this or last): devices with records in the four weeks before it and none
        /// in it (no background run, no app open, no request: a device whose refresh stopped and
        /// whose user does not open the app writes nothing). 0 for any other span.
        package var silentDevices: Int = 0
        /// For a week (this or last): devices with records in the four weeks before it
        /// (`FreshnessReport.lookbackDays`). 0 for any other span.
        package var recentDevices: Int = 0

        /// The requests the app made: `submitted` records and `submit_failed` ones (a request the
        /// scheduler refused, with Background App Refresh off say, is one that never runs).
        package var requests: Int { submitted + submitFailed.values.reduce(0, +) + silentRequests }

        /// succeeded ÷ requests, nil without a request (docs/metrics.md, "Execution rate").
        package var executionRate: Double? { requests == 0 ? nil : Double(succeeded) / Double(requests) }

        /// The devices without a successful background run in the window, the silent ones
        /// included: (noRunDevices + silentDevices) ÷ (devices + silentDevices), nil without any.
        package var noRunShare: Double? {
            devices + silentDevices == 0
                ? nil : Double(noRunDevices + silentDevices) / Double(devices + silentDevices)
        }
    }

    /// The report date (UTC day).
    package let date: LocalDate
    /// Where the date came from, for the report's text (`sleeptap-report` sets it).
    package var dateSource = DateSource.given
    /// The 14 UTC days, oldest first: 0...6 last week, 7...13 this week.
    package let days: [LocalDate]
    /// Their starts and the end of the last one (15 instants).
    private let bounds: [Double]
    /// The start of the three weeks before last week (UTC instant, seconds since 1970): with last
    /// week, the four weeks whose devices this week's silent ones are counted from.
    private let lookbackStart: Double
    /// The start of the four weeks before last week (UTC seconds since 1970).
    private let lastLookbackStart: Double
    /// Device -> what its records say of it (`Seen`), but for the device of the current run of
    /// records (`run`), kept apart: a file holds one device's records, so the dictionary is
    /// written once a run, not once a record.
    private var seen: [String: Seen] = [:]
    private var run: (device: String, seen: Seen)?

    /// What a device's records say of it: its latest `at` (every record read, in the two weeks
    /// or not), and for each of the two weeks what its four weeks' lookback says of it
    /// (`Lookback`): where a device silent in that week is counted, and its usual load.
    struct Seen: Sendable {
        var lastAt: Date
        /// The four weeks before this week.
        var this = Lookback()
        /// The four weeks before last week.
        var last = Lookback()
        /// Its last record before this week in this week's lookback.
        var before: Before? { this.before }

        /// Both together: the later instant, and each lookback merged.
        func merged(with later: Seen) -> Seen {
            Seen(
                lastAt: max(lastAt, later.lastAt), this: this.merged(with: later.this),
                last: last.merged(with: later.last))
        }
    }

    /// What a device's records in the four weeks before a week say of it, and before the week.
    struct Lookback: Sendable {
        /// Its last record in the lookback: the groups it was in when it last wrote.
        var before: Before?
        /// Its `foreground` records (app opens) in the lookback.
        var opens = 0
        /// Its requests (`submitted` and `submit_failed` records) in the lookback.
        var requests = 0
        /// Its earliest record in the lookback (UTC seconds since 1970); +∞ without one.
        var first = Double.infinity
        /// The latest instant before the week its records show its data refreshed (UTC seconds
        /// since 1970): a successful run's `at`, or an open's `at` less its staleness. nil: none.
        var refreshedAt: Double?

        /// Both together: the later last record (of equal instants `later`'s, as when one reader
        /// reads both in order), the counts added.
        func merged(with later: Lookback) -> Lookback {
            var both = self
            if let theirs = later.before, before.map({ theirs.at >= $0.at }) ?? true { both.before = theirs }
            both.opens += later.opens
            both.requests += later.requests
            both.first = min(first, later.first)
            if let theirs = later.refreshedAt { both.refreshedAt = max(refreshedAt ?? theirs, theirs) }
            return both
        }

        /// `record`, at `t`, before the week whose lookback starts at `start`.
        mutating func add(_ record: RunRecord, at t: Double, lookbackStart start: Double) {
            var refreshed: Double?
            if record.kind.isRun && record.success == true { refreshed = t }
            if record.kind == .foreground, let hours = record.stalenessHours { refreshed = t - hours * 3_600 }
            if let refreshed { refreshedAt = max(refreshedAt ?? refreshed, refreshed) }
            guard t >= start else { return }
            if record.kind == .foreground { opens += 1 }
            if record.kind == .submitted || record.kind == .submitFailed { requests += 1 }
            first = min(first, t)
            if before.map({ record.at >= $0.at }) ?? true {
                before = Before(
                    at: record.at, platform: record.platform, bucket: record.bucket, version: record.appVersion)
            }
        }
    }

    /// Where a device was at its last record before this week.
    struct Before: Sendable {
        var at: Date
        var platform: Platform
        var bucket: StandbyBucket?
        var version: String?
    }
    /// [group][day]
    private var cells: [[Cell]]
    /// The numeric staleness samples, each once: [leaf][day], leaf 0 iOS, 1...5 the Android
    /// buckets in `StandbyBucket.all` order.
    private var samples: [[[Double]]]
    /// Whether every day's samples are in ascending order (`sortSamples()`; `add` ends it).
    private var samplesSorted = true
    /// [group][week (0 last, 1 this)]
    private var devices: [[Set<String>]]
    /// [group][week]: the devices with a successful background run in the group and week.
    private var refreshed: [[Set<String>]]
    /// App version -> [week]: the records that carry an `appVersion`.
    private var versions: [String: [VersionWeek]] = [:]
    /// Records in the two weeks without an `appVersion`.
    package private(set) var withoutVersion = 0
    /// Records outside the two weeks.
    package private(set) var outside = 0
    /// The devices of the records outside the two weeks.
    private var outsideDevices: Set<String> = []
    /// Records read.
    package private(set) var records = 0
    /// Records equal in every field to one of an earlier file of the same device, in the run of
    /// its files read one after the other (a copy of a file whose bytes differ, re-indented
    /// say): read once, not counted in `records` or any figure. A record a file holds more often
    /// than any earlier file of the device held it is the phone's own, and counts so often.
    package private(set) var repeatedRecords = 0
    /// The copies among the current run of one device's files, for `repeatedRecords`.
    private var copies = RecordCopies()
    /// The earliest and the latest `at` of every record read (in the two weeks or not).
    package private(set) var firstRecordAt: Date?
    /// The latest `at` of every record read (UTC instant).
    package private(set) var lastRecordAt: Date?
    /// Good files read.
    package private(set) var files = 0
    /// Files not used, with why, in the order given.
    package private(set) var skipped: [(file: String, reason: String)] = []

    private var lastDevice = ""
    private var lastDeviceSeen: UInt64 = 0

    /// Where the report's date came from.
    package enum DateSource: Sendable, Equatable {
        /// `--date`.
        case given
        /// The last UTC day that has run records (by the files' names).
        case lastRecordDay
        /// Today (UTC): no file name held a day.
        case today
    }

    /// - Parameter date: the report's day (UTC); this week ends with it.
    package init(date: LocalDate) {
        self.date = date
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let end = calendar.date(from: DateComponents(year: date.year, month: date.month, day: date.day))!
        // Days are stepped by the calendar, never by 86,400 s.
        let starts = (0...14).map { calendar.date(byAdding: .day, value: $0 - 13, to: end)! }
        bounds = starts.map(\.timeIntervalSince1970)
        lookbackStart =
            calendar.date(byAdding: .day, value: 7 - Self.lookbackDays, to: starts[0])!.timeIntervalSince1970
        lastLookbackStart =
            calendar.date(byAdding: .day, value: -Self.lookbackDays, to: starts[0])!.timeIntervalSince1970
        days = starts.prefix(14).map { LocalDate($0, in: calendar) }
        cells = Array(repeating: Array(repeating: Cell(), count: 14), count: Group.ordered.count)
        devices = Array(repeating: [[], []], count: Group.ordered.count)
        refreshed = Array(repeating: [[], []], count: Group.ordered.count)
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
    package mutating func add(file records: [RunRecord]) {
        files += 1
        let fresh = copies.fresh(records)
        repeatedRecords += records.count - fresh.count
        for record in fresh { add(record) }
    }

    /// Adds what `other`, a report of the same date over later files, read: the report of files
    /// A then B equals A's report merged with B's (samples, counts, devices and skipped files
    /// in the same order), so files read on several threads and merged in their order give the
    /// same report, and the same bytes, as one thread.
    package mutating func merge(_ other: FreshnessReport) {
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
            for week in devices[group].indices {
                devices[group][week].formUnion(other.devices[group][week])
                refreshed[group][week].formUnion(other.refreshed[group][week])
            }
        }
        for (version, weeks) in other.versions {
            var mine = versions[version] ?? [VersionWeek(), VersionWeek()]
            for week in 0..<2 { mine[week].merge(weeks[week]) }
            versions[version] = mine
        }
        flushRun()
        seen.merge(other.seenByDevice) { mine, theirs in mine.merged(with: theirs) }
        withoutVersion += other.withoutVersion
        outside += other.outside
        outsideDevices.formUnion(other.outsideDevices)
        records += other.records
        repeatedRecords += other.repeatedRecords
        files += other.files
        skipped += other.skipped
        sameFiles += other.sameFiles
        if let first = other.firstRecordAt { firstRecordAt = min(firstRecordAt ?? first, first) }
        if let last = other.lastRecordAt { lastRecordAt = max(lastRecordAt ?? last, last) }
        lastDevice = ""
        lastDeviceSeen = 0
    }

    /// Sorts each day's staleness samples. Their order is no part of the report (it reads the
    /// same), but a group's percentiles over several days then sort runs already sorted (the
    /// standard library's sort merges them), and `merge` of two sorted reports merges in linear
    /// time. Call it where the report was built (each thread on its own part), before `merge`.
    package mutating func sortSamples() {
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

    /// A file that was not used, with why. `sameFile`: another name (a link) of a file read, whose
    /// records are in the figures (not counted by `filesSkipped`).
    package mutating func skip(file: String, reason: String, sameFile: Bool = false) {
        skipped.append((file, reason))
        if sameFile { sameFiles += 1 }
    }

    /// Skipped files that are other names of files read (`skip(file:reason:sameFile:)`).
    package private(set) var sameFiles = 0

    /// One record.
    package mutating func add(_ record: RunRecord) {
        records += 1
        firstRecordAt = min(firstRecordAt ?? record.at, record.at)
        lastRecordAt = max(lastRecordAt ?? record.at, record.at)
        if run?.device != record.device {
            flushRun()
            run = (record.device, Seen(lastAt: record.at))
        }
        if let lastAt = run?.seen.lastAt, record.at > lastAt { run?.seen.lastAt = record.at }
        let t = record.at.timeIntervalSince1970
        // What a device silent in a week is counted by (`silentLoad`): each week's lookback.
        if t < bounds[7], var current = run?.seen {
            current.this.add(record, at: t, lookbackStart: lookbackStart)
            if t < bounds[0] { current.last.add(record, at: t, lookbackStart: lastLookbackStart) }
            run?.seen = current
        }
        guard let day = day(of: record.at) else {
            outside += 1
            outsideDevices.insert(record.device)
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
        // A successful run of either kind feeds the watch: the device is not one without a run.
        let success = record.kind.isRun && record.success == true
        // The groups: all, the platform, the bucket (-1: none); a fixed-size list, not grown.
        let bucketGroup = record.bucket.map { Group.bucket($0).index } ?? -1
        for group in [Group.all.index, Group.platform(record.platform).index, bucketGroup] where group >= 0 {
            // Each (group, week) of a run of records of one device inserts its name once, in
            // each set.
            let bit = UInt64(1) << UInt64(group * 2 + week)
            if lastDeviceSeen & bit == 0 {
                lastDeviceSeen |= bit
                devices[group][week].insert(record.device)
            }
            if success, lastDeviceSeen & (bit << 32) == 0 {
                lastDeviceSeen |= bit << 32
                refreshed[group][week].insert(record.device)
            }
            cells[group][day].count(record)
        }
        if let version = record.appVersion {
            var weeks = versions[version] ?? [VersionWeek(), VersionWeek()]
            weeks[week].cell.count(record)
            if record.kind == .foreground, let hours = record.stalenessHours { weeks[week].samples.append(hours) }
            weeks[week].devices.insert(record.device)
            if success { weeks[week].refreshed.insert(record.device) }
            weeks[week].firstAt = min(weeks[week].firstAt ?? record.at, record.at)
            versions[version] = weeks
        } else {
            withoutVersion += 1
        }
    }

    /// The figures of a cell, its numeric samples (any order) and its devices, with the silent
    /// devices' samples (`silentSamples`) among the samples.
    private static func figures(
        _ cell: Cell, _ values: [Double], devices: Int, refreshed: Int, silent: SilentSamples = SilentSamples()
    ) -> Figures {
        let sorted = (values + silent.hours).sorted()
        let never = cell.neverRefreshed + silent.never
        var figures = Figures(
            devices: devices, samples: sorted.count + never, neverRefreshed: cell.neverRefreshed,
            p50: Percentile.staleness(sorted, never: never, 0.5),
            p90: Percentile.staleness(sorted, never: never, 0.9), submitted: cell.submitted,
            succeeded: cell.succeeded, background: cell.background, expired: cell.expired, dropped: cell.dropped,
            submitFailed: cell.submitFailed, records: cell.records, noRunDevices: max(0, devices - refreshed),
            push: cell.push, pushSucceeded: cell.pushSucceeded)
        figures.silentSamples = silent.hours.count + silent.never
        figures.silentNever = silent.never
        figures.silentRequests = silent.requests
        return figures
    }

    /// Silent devices' staleness samples over some days (numbers, and nevers: no refresh
    /// known) and their requests.
    struct SilentSamples {
        var hours: [Double] = []
        var never = 0
        var requests = 0
    }

    /// A group's figures over days `range` (indexes into `days`).
    package func figures(_ group: Group, days range: ClosedRange<Int>) -> Figures {
        var cell = Cell()
        for day in range { cell.merge(cells[group.index][day]) }
        var values: [Double] = []
        for leaf in Self.leaves(group) {
            for day in range { values += samples[leaf][day] }
        }
        let seen: Int
        let ran: Int
        // Silent: no record at all this week, counted in the group of its last record before it
        // (a device that moved to another bucket and fell silent there is that bucket's; one
        // that moved and writes on is in the new bucket's figures).
        let silence = silence(days: range) { before in
            switch group {
            case .all: true
            case .platform(let platform): before.platform == platform
            case .bucket(let bucket): before.platform == .android && before.bucket == bucket
            }
        }
        if range == Self.lastWeek || range == Self.thisWeek {
            let week = range == Self.lastWeek ? 0 : 1
            seen = devices[group.index][week].count
            ran = refreshed[group.index][week].count
        } else {
            seen = devices[group.index][0].union(devices[group.index][1]).count
            ran = refreshed[group.index][0].union(refreshed[group.index][1]).count
        }
        var figures = Self.figures(cell, values, devices: seen, refreshed: ran, silent: silence.samples)
        figures.silentDevices = silence.silent
        figures.recentDevices = silence.recent
        return figures
    }

    /// The app versions the records carry, in version order (`1.9` before `1.10`).
    package var appVersions: [String] {
        versions.keys.sorted {
            let order = $0.compare($1, options: [.numeric, .literal])
            return order == .orderedSame ? $0 < $1 : order == .orderedAscending
        }
    }

    /// The figures of the records of app version `version` in week `range` (`lastWeek` or
    /// `thisWeek`); nil for a version no record carries.
    package func figures(appVersion version: String, days range: ClosedRange<Int>) -> Figures? {
        guard let weeks = versions[version] else { return nil }
        let week = weeks[range == Self.lastWeek ? 0 : 1]
        // Silent: no record at all this week, its last record before it on this version (a
        // device that moved to another version is that version's).
        let silence = silence(days: range) { $0.version == version }
        var figures = Self.figures(
            week.cell, week.samples, devices: week.devices.count, refreshed: week.refreshed.count,
            silent: silence.samples)
        (figures.silentDevices, figures.recentDevices) = (silence.silent, silence.recent)
        return figures
    }

    /// The four weeks before this week whose devices are expected this week: a device with
    /// records in them and none this week is silent (`Figures.silentDevices`). Four weeks, so
    /// that a device that stopped writing counts until it has been silent for a month, while an
    /// app removed from a phone stops counting after it.
    package static let lookbackDays = 28

    /// Last week's day indexes into `days`.
    package static let lastWeek = 0...6
    /// This week's day indexes into `days` (the last is the report date).
    package static let thisWeek = 7...13

    /// The week-over-week verdict.
    package enum Trend: Equatable, Sendable {
        /// Both weeks' p90 are numbers: the change in whole seconds; `warning` when more than 12 h.
        case compared(changeSeconds: Int64, warning: Bool)
        /// This week's p90 is `never` while last week's was a number: worse by more than 12 h,
        /// a warning.
        case becameNever
        /// No numbers to compare (a week without samples, or last week's p90 `never`): no
        /// week-over-week warning.
        case notComparable(String)

        /// Whether the week-over-week rule puts ⚠ in the heading.
        package var warning: Bool {
            switch self {
            case .compared(_, let warning): warning
            case .becameNever: true
            case .notComparable: false
            }
        }
    }

    /// The warning threshold: 12 hours, in seconds.
    package static let thresholdSeconds: Int64 = 12 * 3_600
    /// The watch's cache horizon: 7 days of wake dates (the phone's default `--horizon-days`), in
    /// seconds. A p90 staleness above it means the watch of one user in ten can run out of dates.
    package static let cacheHorizonSeconds: Int64 = Int64(BatchPlanner.defaultHorizonDays) * 24 * 3_600
    /// Fewer staleness samples than this on a side of a comparison mark it "few samples".
    package static let fewSamples = 20

    /// This week's p90 against last week's (all devices).
    package var trend: Trend {
        Self.trend(this: figures(.all, days: Self.thisWeek), last: figures(.all, days: Self.lastWeek))
    }

    /// The trend of this week's figures against last week's.
    static func trend(this: Figures, last: Figures) -> Trend {
        switch (this.p90, last.p90) {
        case (.hours(let now)?, .hours(let before)?):
            let change = Percentile.wholeSeconds(hours: now) - Percentile.wholeSeconds(hours: before)
            return .compared(changeSeconds: change, warning: change > Self.thresholdSeconds)
        case (.never?, .hours?):
            return .becameNever
        case (.never?, .never?):
            return .notComparable("both weeks' p90 is \"never\": no number to compare")
        case (.hours?, .never?):
            return .notComparable("last week's p90 is \"never\"; this week's is a number, better than never")
        case (_?, nil):
            return .notComparable("last week has no staleness samples")
        case (nil, _):
            return .notComparable("this week has no staleness samples")
        }
    }

    /// A reason for ⚠ in the heading. The week-over-week rule is one sufficient condition; the
    /// others are absolute, about this week alone.
    package enum Condition: Equatable, Sendable {
        /// This week's p90 is more than 12 h above last week's (whole seconds).
        case weekOverWeek(changeSeconds: Int64)
        /// This week's p90 is `never`, last week's was a number of hours.
        case p90BecameNever(lastWeekHours: Double)
        /// This week's p90 is above the watch's 7-day cache horizon (`never` is above it).
        case p90AboveCacheHorizon(Staleness)
        /// Requests were made this week (submitted, or refused at submit) and no background run
        /// succeeded.
        case noneRan(requests: Int)
        /// More than half the devices seen this week had no successful background run in it (the
        /// devices silent since last week counted among them).
        case mostDevicesWithoutRun(noRun: Int, devices: Int)
        /// A tenth or more of the devices with records in the four weeks before this week have
        /// none in it.
        case devicesWentSilent(silent: Int, recent: Int)
        /// No record at all this week, and the four weeks before it had devices: the whole fleet
        /// fell silent, or the input ends before the week.
        case noRecordsThisWeek(recent: Int)
        /// An app version on a tenth or more of the week's devices, not all of them, where more
        /// than half had no successful background run (its silent devices among them).
        case versionWithoutRuns(version: String, noRun: Int, devices: Int)
        /// More than half the input's devices have records only outside the two weeks.
        case mostDevicesOutside(outside: Int, devices: Int)
        /// A hundredth or more of the input's files could not be read; they are in no figure.
        case filesSkipped(skipped: Int, files: Int)

        /// The condition's name in `--json` (`conditions[].condition`).
        package var name: String {
            switch self {
            case .weekOverWeek: "p90WeekOverWeek"
            case .p90BecameNever: "p90BecameNever"
            case .p90AboveCacheHorizon: "p90AboveCacheHorizon"
            case .noneRan: "noneRan"
            case .mostDevicesWithoutRun: "mostDevicesWithoutRun"
            case .devicesWentSilent: "devicesWentSilent"
            case .noRecordsThisWeek: "noRecordsThisWeek"
            case .versionWithoutRuns: "versionWithoutRuns"
            case .mostDevicesOutside: "mostDevicesOutside"
            case .filesSkipped: "filesSkipped"
            }
        }

        /// One sentence with the numbers.
        package var text: String {
            switch self {
            case .weekOverWeek(let seconds):
                "p90 staleness is \(FreshnessReport.signedHours(seconds: seconds)) week over week: more than 12 h worse."
            case .p90BecameNever(let before):
                "p90 staleness went from \(FreshnessReport.hours(before)) h last week to never: more than 12 h worse."
            case .p90AboveCacheHorizon(let p90):
                "p90 staleness this week is \(p90 == .never ? "never" : "\(p90) h"), above the watch's "
                    + "\(FreshnessReport.cacheHorizonSeconds / 3_600) h (7-day) cache horizon: "
                    + "past it the watch of a user who does not open the app runs out of wake dates (an open "
                    + "sends them from the foreground; this figure counts background runs only)."
            case .noneRan(let requests):
                "\(requests) request\(requests == 1 ? " was" : "s were") made this week and no background run succeeded "
                    + "(execution rate 0.0 %)."
            case .mostDevicesWithoutRun(let noRun, let devices):
                "\(noRun) of \(devices) devices (\(FreshnessReport.percent(Double(noRun) / Double(devices)))) "
                    + "had no successful background run this week: more than half."
            case .devicesWentSilent(let silent, let recent):
                "\(silent) of the \(recent) devices with records in the four weeks before this week "
                    + "(\(FreshnessReport.percent(Double(silent) / Double(recent)))) have no record this week: no background run, no app open, no request. A phone whose "
                    + "background refresh stopped and whose user does not open the app writes nothing: the "
                    + "staleness and the execution rate count each such device by its usual opens and requests."
            case .noRecordsThisWeek(let recent):
                "No record this week from any of the \(recent) devices with records in the four weeks before it: the whole fleet wrote nothing (no "
                    + "background run, no app open, no request), or the records end before this week. This week's "
                    + "figures are empty, not healthy."
            case .versionWithoutRuns(let version, let noRun, let devices):
                "\(noRun) of the \(devices) devices on app version \(FreshnessReport.cell(version)) this week "
                    + "(\(FreshnessReport.percent(Double(noRun) / Double(devices)))) had no successful background run "
                    + "on it: more than half, while the fleet's figures mix them with the other versions' devices."
            case .mostDevicesOutside(let outside, let devices):
                "\(outside) of the input's \(devices) devices (\(FreshnessReport.percent(Double(outside) / Double(devices)))) "
                    + "have records only outside these two weeks: the figures describe "
                    + (outside == devices ? "none of the fleet" : "a small part of the fleet") + ". Check "
                    + "the report's date, and the clocks of the records that set it."
            case .filesSkipped(let skipped, let files):
                "\(skipped) of the input's \(files) files (\(FreshnessReport.percent(Double(skipped) / Double(files)))) "
                    + "could not be read and are in no figure (listed under Skipped files): their devices' runs, "
                    + "failures and opens are unseen."
            }
        }
    }

    /// What a device without a run lacks, in words: "background run", or "background or push run"
    /// when the two weeks hold `push` records, which count as the device's runs (docs/metrics.md)
    /// but are no background run of the task scheduler, as the execution rate's are.
    package var runWords: String {
        figures(.all, days: Self.lastWeek.lowerBound...Self.thisWeek.upperBound).push > 0
            ? "background or push run" : "background run"
    }

    /// Why this week's p90 reads `never`, nil when it does not: the share of app opens that came
    /// before their device's first successful background run, the week's devices that had no
    /// successful run at all, and, when the earliest record of the input lies inside this week
    /// (a fleet or an app younger than the week), that its first days' opens are in the sample.
    /// A `never` sample is what the metric defines (docs/metrics.md): the note explains the
    /// figure and changes nothing in it.
    package var neverNote: String? {
        let this = figures(.all, days: Self.thisWeek)
        guard this.p90 == .never, this.samples > 0 else { return nil }
        let silent =
            this.silentNever > 0
            ? ", and \(this.silentNever) are the usual opens of silent devices (no record this week) whose records "
                + "show no refresh" : ""
        var note =
            "p90 is never: \(this.neverRefreshed) of \(this.samples) samples "
            + "(\(Self.percent(Double(this.neverRefreshed) / Double(this.samples)))) are app opens that came before their "
            + "device's first successful background run\(silent), and the p90 reads never once such samples reach its "
            + "rank (the stalest tenth of the week's samples)."
        if this.noRunDevices > 0 {
            note +=
                " \(this.noRunDevices) of the week's \(this.devices) devices had no successful \(runWords) in it."
        }
        if let first = firstRecordAt.map(RunRecordFile.utcDay), first >= days[Self.thisWeek.lowerBound].description,
            first <= days[Self.thisWeek.upperBound].description
        {
            note +=
                " The records begin on \(first), inside this week: the opens of the devices' first days, before "
                + "any background run could answer, are in its sample."
        }
        return note
    }

    /// The conditions that put ⚠ in the heading, in a fixed order; empty: no warning.
    package var conditions: [Condition] {
        let this = figures(.all, days: Self.thisWeek)
        var out = Self.conditions(this: this, last: figures(.all, days: Self.lastWeek))
        let seen = this.devices + this.silentDevices
        for version in appVersions {
            guard let f = figures(appVersion: version, days: Self.thisWeek), let weeks = versions[version] else {
                continue
            }
            let devices = f.devices + f.silentDevices
            let noRun = f.noRunDevices + f.silentDevices
            // A version every record of the week carries is the fleet's own condition (4); one
            // that came less than a day before the week's end has had no time to run. A version
            // seen last week is judged, its devices all silent this week included.
            let settled =
                weeks[0].firstAt != nil
                || weeks[1].firstAt.map { bounds[14] - $0.timeIntervalSince1970 >= Self.versionSettleSeconds }
                    ?? false
            guard f.records < this.records, settled, Double(devices) >= Self.silentShare * Double(seen),
                noRun * 2 > devices
            else { continue }
            out.append(.versionWithoutRuns(version: version, noRun: noRun, devices: devices))
        }
        let inside = devices[Group.all.index][0].union(devices[Group.all.index][1])
        // Devices of the four weeks' lookback that fell silent are conditions 5 and 6, not a date.
        let recent = seenByDevice
        let onlyOutside = outsideDevices.subtracting(inside).filter { recent[$0]?.before == nil }.count
        if onlyOutside * 2 > inside.count + onlyOutside {
            out.append(.mostDevicesOutside(outside: onlyOutside, devices: inside.count + onlyOutside))
        }
        // Links to files read are skipped, but their records are in the figures.
        let unread = skipped.count - sameFiles
        let total = files + unread
        if unread > 0, Double(unread) >= Self.skippedShare * Double(total) {
            out.append(.filesSkipped(skipped: unread, files: total))
        }
        return out
    }

    /// How long before the week's end an app version must have appeared (this week; one seen
    /// last week has) for `versionWithoutRuns` to judge it: 24 h, a day for the OS to run its
    /// devices' first requests.
    package static let versionSettleSeconds: TimeInterval = 24 * 3600

    /// The share of the input's files that may be skipped before ⚠ (`filesSkipped`).
    package static let skippedShare = 0.01

    /// The share of last week's devices that may fall silent before ⚠ (`devicesWentSilent`).
    package static let silentShare = 0.1

    static func conditions(this: Figures, last: Figures) -> [Condition] {
        var out: [Condition] = []
        switch trend(this: this, last: last) {
        case .compared(let change, true): out.append(.weekOverWeek(changeSeconds: change))
        case .becameNever: out.append(.p90BecameNever(lastWeekHours: last.p90?.hours ?? 0))
        default: break
        }
        switch this.p90 {
        case .never?: out.append(.p90AboveCacheHorizon(.never))
        case .hours(let hours)? where Percentile.wholeSeconds(hours: hours) > cacheHorizonSeconds:
            out.append(.p90AboveCacheHorizon(.hours(hours)))
        default: break
        }
        // The requests records show: silent devices' usual ones are not "made this week".
        let recorded = this.requests - this.silentRequests
        if recorded > 0, this.succeeded == 0 { out.append(.noneRan(requests: recorded)) }
        // With no record this week at all, the whole fleet fell silent or the input ends before
        // the week (a `--date` past the data): one condition says both, rather than counting
        // every device as silent and without a run.
        guard this.records > 0 else {
            if this.recentDevices > 0 { out.append(.noRecordsThisWeek(recent: this.recentDevices)) }
            return out
        }
        let noRun = this.noRunDevices + this.silentDevices
        let seen = this.devices + this.silentDevices
        if noRun * 2 > seen {
            out.append(.mostDevicesWithoutRun(noRun: noRun, devices: seen))
        }
        if this.silentDevices > 0, Double(this.silentDevices) >= silentShare * Double(this.recentDevices) {
            out.append(.devicesWentSilent(silent: this.silentDevices, recent: this.recentDevices))
        }
        return out
    }

    /// A day whose execution rate fell: at least `fallPoints` percentage points below the rate of
    /// the days before it, and by more than two standard errors of the difference.
    package struct Fall: Equatable, Sendable {
        /// The UTC day the rate fell on.
        package var day: LocalDate
        /// That day's execution rate, a fraction from 0 to 1.
        package var rate: Double
        /// The first and the last of the earlier days the rate is compared with.
        package var before: ClosedRange<LocalDate>
        /// Their execution rate, all their successful runs over all their `submitted`, a fraction
        /// (above 1 when requests of earlier days ran in them).
        package var beforeRate: Double
    }

    /// A fall of the daily execution rate counts from this many percentage points.
    package static let fallPoints = 5.0
    /// Days with fewer requests (`Figures.requests`) than this are left out of the fall search.
    package static let fallMinimumSubmitted = 10

    /// The first of the 14 days whose execution rate (all devices) is `fallPoints` or more below
    /// the rate of all the days before it taken together, and more than 2 standard errors below
    /// it (the difference of two proportions, √(p₁(1−p₁)/n₁ + p₂(1−p₂)/n₂), n the requests
    /// of each side), so that a small fleet's day-to-day noise is no fall; days with at least
    /// `fallMinimumSubmitted` requests. The earlier days are pooled, not searched for their best:
    /// the best of several noisy days lies above their common rate, and an ordinary day after it
    /// read as a fall. Nil when none fell.
    package var firstExecutionRateFall: Fall? {
        var before: (from: LocalDate, to: LocalDate, succeeded: Int, requests: Int)?
        for index in 0..<14 {
            let f = figures(.all, days: index...index)
            guard f.requests >= Self.fallMinimumSubmitted, let rate = f.executionRate else { continue }
            if let before {
                let earlier = Double(before.succeeded) / Double(before.requests)
                // Rates above 100 % (a request run in another window) count as 100 % for the error.
                let p1 = min(1, earlier)
                let p2 = min(1, rate)
                let error = (p1 * (1 - p1) / Double(before.requests) + p2 * (1 - p2) / Double(f.requests))
                    .squareRoot()
                let drop = earlier - rate
                if drop * 100 >= Self.fallPoints - 1e-9, drop > 2 * error {
                    return Fall(day: days[index], rate: rate, before: before.from...before.to, beforeRate: earlier)
                }
            }
            before = (
                before?.from ?? days[index], days[index], (before?.succeeded ?? 0) + f.succeeded,
                (before?.requests ?? 0) + f.requests
            )
        }
        return nil
    }

    /// Whether most records (more than half) fall outside the two weeks.
    package var mostRecordsOutside: Bool { outside * 2 > records }

    /// The usual cause of each failure kind the two weeks' records show, one sentence each
    /// (sources in docs/metrics.md).
    package var causes: [String] {
        let this = figures(.all, days: Self.thisWeek)
        let last = figures(.all, days: Self.lastWeek)
        var out: [String] = []
        if this.dropped + last.dropped > 0 {
            out.append(
                "`dropped` (\(this.dropped) this week, \(last.dropped) last week): the OS launched the app for the "
                    + "task and no launch handler was registered in time; register it with "
                    + "`BGTaskScheduler.register(forTaskWithIdentifier:using:launchHandler:)` before "
                    + "`application(_:didFinishLaunchingWithOptions:)` returns (Apple: all launch handlers must be "
                    + "registered before the end of app launch), not later (SwiftUI's `.backgroundTask` after the "
                    + "first scene).")
        }
        let reasons = Set(this.submitFailed.keys).union(last.submitFailed.keys).sorted()
        for reason in reasons {
            let counts = "(\(this.submitFailed[reason] ?? 0) this week, \(last.submitFailed[reason] ?? 0) last week)"
            out.append(
                "`submit_failed: \(Self.cell(reason.isEmpty ? "(no reason)" : reason))` \(counts): "
                    + Self.submitFailedCause(reason))
        }
        if this.expired + last.expired > 0 {
            out.append(
                "`expired` (\(this.expired) this week, \(last.expired) last week): the job ran past its budget and "
                    + "the expiration handler ran (iOS gives an app refresh task about 30 s); shorten the job or "
                    + "make it resumable, and call `setTaskCompleted(success:)` from the expiration handler.")
        }
        for bucket in [StandbyBucket.rare, .restricted] {
            let f = figures(.bucket(bucket), days: Self.thisWeek)
            guard f.records > 0 || f.silentDevices > 0 else { continue }
            let low = f.executionRate.map { $0 < Self.lowExecutionRate } ?? false
            let noRun = (f.noRunDevices + f.silentDevices) * 2 > f.devices + f.silentDevices
            guard low || noRun else { continue }
            out.append(
                "Low execution in `\(bucket.name)` (execution rate \(Self.rate(f)), \(Self.noRun(f)) "
                    + "devices without a successful run this week): App Standby; Android defers and rations the "
                    + "jobs of an app in the \(bucket.name) bucket (rare: jobs deferred up to 24 h; restricted: one "
                    + "job a day); the bucket follows how recently the user used the app.")
        }
        return out
    }

    /// An Android bucket whose execution rate this week is below this gets the App Standby cause.
    package static let lowExecutionRate = 0.8

    /// The usual cause of a `submit_failed` reason (`BGTaskScheduler.Error.Code`, or this app's).
    static func submitFailedCause(_ reason: String) -> String {
        switch reason {
        case "unavailable":
            "the app cannot schedule background work: Background App Refresh is off for the app or the "
                + "device (Settings), or the device is in Low Power Mode (`BGTaskScheduler.Error.Code.unavailable`)."
        case "tooManyPendingTaskRequests":
            "too many pending requests: an app has at most one pending app refresh request per identifier "
                + "and a limited number in all (`tooManyPendingTaskRequests`); submit one consolidated request."
        case "notPermitted":
            "the identifier is not permitted: it is missing from `BGTaskSchedulerPermittedIdentifiers` in "
                + "Info.plist, or the app lacks the `fetch` background mode (`notPermitted`)."
        case let text where text.hasPrefix("crash"):
            "the app crashed while submitting (a launch handler registered twice, or registered late)."
        case let text where text.contains("no wake-up"):
            "the schedule has no wake-up ahead, so there is no time to ask for a run; not a fault of the OS."
        default:
            "the submit was refused; see the reason."
        }
    }
}

// MARK: - rendering

extension FreshnessReport {
    /// Hours to one decimal (`5.6`, `16.1`, `0.0`), or `n/a`.
    static func hours(_ value: Double?) -> String {
        guard let value else { return "n/a" }
        let text = String(format: "%.1f", value)
        return text == "-0.0" ? "0.0" : text
    }

    /// A percentile cell: hours to one decimal, `never`, or `n/a`.
    static func staleness(_ value: Staleness?) -> String {
        value.map(\.description) ?? "n/a"
    }

    /// `48.0 %`.
    static func percent(_ value: Double) -> String { String(format: "%.1f %%", value * 100) }

    /// `2026-03-01` for one day, `2026-03-01 to 2026-03-10` for several.
    static func span(_ days: ClosedRange<LocalDate>) -> String {
        days.lowerBound == days.upperBound ? "\(days.lowerBound)" : "\(days.lowerBound) to \(days.upperBound)"
    }

    /// `93.1 % (1200 / 1289)`, or `n/a (0 submitted)`.
    static func rate(_ figures: Figures) -> String {
        guard let rate = figures.executionRate else { return "n/a (no request)" }
        return percent(rate) + " (\(figures.succeeded) / \(figures.requests))"
    }

    /// `96 of 200 (48.0 %)`, or `0 of 0`; with silent devices (`Figures.silentDevices`)
    /// `13 of 100 (13.0 %; 13 with no record this week)`.
    static func noRun(_ figures: Figures) -> String {
        guard let share = figures.noRunShare else { return "0 of 0" }
        let noRun = figures.noRunDevices + figures.silentDevices
        let seen = figures.devices + figures.silentDevices
        let silent = figures.silentDevices > 0 ? "; \(figures.silentDevices) with no record this week" : ""
        return "\(noRun) of \(seen) (\(percent(share))\(silent))"
    }

    package static func signedHours(seconds: Int64) -> String {
        let text = hours(Double(seconds.magnitude) / 3_600)
        // A change that rounds to 0.0 h reads +0.0 h, never −0.0 h.
        return (seconds >= 0 || text == hours(0) ? "+" : "−") + text + " h"
    }

    /// The change of a group's p90 from last week to this week: `+1.3 h`, `never` (a number
    /// became never), `n/a`; ` (few samples)` when a side has fewer than 20 samples.
    static func change(this: Figures, last: Figures) -> String {
        let text: String
        switch (this.p90, last.p90) {
        case (.hours(let now)?, .hours(let before)?):
            text = signedHours(seconds: Percentile.wholeSeconds(hours: now) - Percentile.wholeSeconds(hours: before))
        case (.never?, .hours?): text = "to never"
        case (.hours?, .never?): text = "from never"
        default: text = "n/a"
        }
        guard text != "n/a", this.samples < fewSamples || last.samples < fewSamples else { return text }
        return text + " (few samples)"
    }

    /// The heading: `# Background refresh freshness, 2026-03-14`, with `⚠ ` in front on a warning.
    package var heading: String { heading(warning: !conditions.isEmpty) }

    func heading(warning: Bool) -> String {
        (warning ? "# ⚠ " : "# ") + "Background refresh freshness, \(date)"
    }

    /// The report's file name: `bg_freshness_<date>.md`.
    package var fileName: String { "bg_freshness_\(date).md" }

    /// `Most records (N of M) fall outside the two weeks: ...` when most do and the report's day
    /// is not the last record's (a `--date` off the data), with the `--date` that covers their
    /// last two weeks; nil otherwise.
    var outsideSentence: String? {
        guard mostRecordsOutside, let first = firstRecordAt, let last = lastRecordAt else { return nil }
        let span =
            "Most records (\(outside) of \(records)) fall outside the two weeks: the records run from "
            + "\(RunRecordFile.utcDay(first)) to \(RunRecordFile.utcDay(last)) (UTC)"
        guard RunRecordFile.utcDay(last) == date.description else {
            return span + "; a --date of \(RunRecordFile.utcDay(last)) covers their last two weeks."
        }
        // The report already ends on the last record's day: the records outside lie before the
        // weeks, a history as long as the devices have run (a fleet of 28 days has half of its
        // records there), which is no problem to point at. A stray late record that set the
        // date is `lateLastRecordSentence`'s to say.
        return nil
    }

    /// The current run's device into `seen`.
    private mutating func flushRun() {
        guard let run else { return }
        seen[run.device] = seen[run.device].map { $0.merged(with: run.seen) } ?? run.seen
        self.run = nil
    }

    /// Device -> what its records say of it (`seen`, with the current run's).
    private var seenByDevice: [String: Seen] {
        guard let run else { return seen }
        var all = seen
        all[run.device] = all[run.device].map { $0.merged(with: run.seen) } ?? run.seen
        return all
    }

    /// The devices whose last record before a week was in the group `matches` accepts
    /// (`recent`), of them those with no record in the week (`silent`), and the silent ones'
    /// staleness samples on the days `range` (`silentLoad`). `silent` and `recent` are the
    /// week's that `range` is (0 for another span); the samples are those of each week `range`
    /// overlaps.
    private func silence(days range: ClosedRange<Int>, _ matches: (Before) -> Bool) -> (
        silent: Int, recent: Int, samples: SilentSamples
    ) {
        var silent = 0
        var recent = 0
        var samples = SilentSamples()
        for (week, days) in [Self.lastWeek, Self.thisWeek].enumerated() where range.overlaps(days) {
            let writing = devices[Group.all.index][week]
            let sampled = range.clamped(to: days)
            let whole = range == days
            func visit(_ device: String, _ seen: Seen) {
                let lookback = week == 1 ? seen.this : seen.last
                guard let before = lookback.before, matches(before) else { return }
                if whole { recent += 1 }
                guard !writing.contains(device) else { return }
                if whole { silent += 1 }
                let load = silentLoad(lookback, week: week)
                for (day, hours) in load.samples where sampled.contains(day) {
                    if let hours { samples.hours.append(hours) } else { samples.never += 1 }
                }
                samples.requests += load.requests.count { sampled.contains($0) }
            }
            // `seen` and the current run's device, without copying the dictionary (`seenByDevice`).
            for (device, seen) in seen where device != run?.device { visit(device, seen) }
            if let run { visit(run.device, seen[run.device].map { $0.merged(with: run.seen) } ?? run.seen) }
        }
        return (silent, recent, samples)
    }

    /// A silent device's staleness samples and requests in week `week` (0 last, 1 this;
    /// docs/metrics.md, "Silent devices' samples"): as many samples as its app opens a week in
    /// the week's lookback (its `foreground` records there ÷ the weeks since its first record
    /// there, at most four; rounded, at least one), spread evenly over the week, each the hours
    /// from its last refresh its records show before the week to the sample's instant (a lower
    /// bound: its data is at least that old, opened or not), or never (nil) when its records
    /// show no refresh; and as many requests as it made a week there (rounded), spread the same
    /// way, none answered.
    /// - Returns: samples as (day index, hours), and the requests' day indexes.
    private func silentLoad(_ lookback: Lookback, week: Int) -> (
        samples: [(day: Int, hours: Double?)], requests: [Int]
    ) {
        let start = bounds[7 * week]
        let length = bounds[7 * week + 7] - start
        let weeks = min(4, max(1, ((start - lookback.first) / length).rounded(.up)))
        func spread(_ count: Int) -> [Double] {
            (0..<count).map { start + (Double($0) + 0.5) * length / Double(count) }
        }
        let last = 7 * week + 6
        let opens = max(1, Int((Double(lookback.opens) / weeks).rounded()))
        let samples = spread(opens).map { t in
            (day: day(of: Date(timeIntervalSince1970: t)) ?? last, hours: lookback.refreshedAt.map { (t - $0) / 3_600 })
        }
        let requests = spread(Int((Double(lookback.requests) / weeks).rounded())).map {
            day(of: Date(timeIntervalSince1970: $0)) ?? last
        }
        return (samples, requests)
    }

    /// How far the report's day may end after the median device's last record before
    /// `lateLastRecord` says so: 48 h (a device writes a record a day at least when its app runs
    /// or is opened).
    package static let lateLastRecordSeconds: TimeInterval = 48 * 3600

    /// When the report's date is the last record's day (no `--date`) and half the devices'
    /// last records lie more than `lateLastRecordSeconds` before that day's end: the record that
    /// set the date (a device with a clock ahead, say), and the median device's last record. Nil
    /// otherwise, with a date given, or with fewer than 2 devices.
    package var lateLastRecord: (device: String, at: Date, median: Date)? {
        let byDevice = seenByDevice
        guard dateSource == .lastRecordDay, byDevice.count >= 2, let last = lastRecordAt else { return nil }
        let lasts = byDevice.values.map(\.lastAt).sorted()
        let median = lasts[(lasts.count - 1) / 2]
        guard bounds[14] - median.timeIntervalSince1970 > Self.lateLastRecordSeconds else { return nil }
        let device = byDevice.filter { $0.value.lastAt == last }.keys.min() ?? ""
        return (device, last, median)
    }

    /// `lateLastRecord` in words, nil when there is none.
    var lateLastRecordSentence: String? {
        guard let late = lateLastRecord else { return nil }
        let medianDay = RunRecordFile.utcDay(late.median)
        return "The report's date is the day of the input's last record (\(late.device) at "
            + "\(RunRecordFile.instantString(late.at))), and half the devices' last records are on or before "
            + "\(medianDay) (UTC): for most devices this week holds only the days up to then. Either they stopped writing "
            + "then (the figures show it), or a clock ahead set the date: then give --date \(medianDay)."
    }

    /// `, N repeated records read once (...)` when a device's files repeat records, else empty.
    var repeatedWords: String {
        guard repeatedRecords > 0 else { return "" }
        return ", \(repeatedRecords) repeated record\(repeatedRecords == 1 ? "" : "s") read once (equal in every field "
            + "to one in an earlier file of the same device: a copy of a file)"
    }

    /// The date's source in words.
    var dateSentence: String {
        switch dateSource {
        case .given: "report date given with --date"
        case .lastRecordDay:
            "report date: the last UTC day with run records (no --date given; a fleet that stopped writing "
                + "records reads as its last week with records: a report run on a schedule gives --date, the day it "
                + "runs)"
        case .today:
            "report date: today, UTC (no --date given, and no record file holds a record of the day its name gives)"
        }
    }

    /// The whole report, Markdown (GitHub renders the Mermaid chart). Deterministic: the same
    /// records and skipped files give the same text.
    package func markdown() -> String {
        let this = figures(.all, days: Self.thisWeek)
        let last = figures(.all, days: Self.lastWeek)
        let trend = Self.trend(this: this, last: last)
        let conditions = self.conditions
        var out = heading(warning: !conditions.isEmpty) + "\n\n"
        for condition in conditions { out += "- ⚠ \(condition.text)\n" }
        if !conditions.isEmpty { out += "\n" }
        out +=
            "This week: \(days[7]) to \(days[13]); last week: \(days[0]) to \(days[6]) (UTC days). \(dateSentence.prefix(1).uppercased() + dateSentence.dropFirst()).  \n"
        out +=
            "Input: \(files) file\(files == 1 ? "" : "s") of `metrics/bg_runs/*.json`, \(records) records "
            + "(\(outside) outside the two weeks)\(repeatedWords)"
        out +=
            skipped.isEmpty
            ? ".\n\n" : "; \(skipped.count) file\(skipped.count == 1 ? "" : "s") skipped (listed below).\n\n"
        if let outsideSentence { out += "**\(outsideSentence)**\n\n" }
        if let lateLastRecordSentence { out += "**\(lateLastRecordSentence)**\n\n" }
        if let neverNote { out += neverNote + "\n\n" }
        let counts = "(\(this.samples) samples this week, \(last.samples) last week)"
        let few =
            this.samples < Self.fewSamples || last.samples < Self.fewSamples
            ? " (few samples: fewer than \(Self.fewSamples) a side)" : ""
        switch trend {
        case .compared(let change, let warning):
            out +=
                "p90 staleness changed by \(Self.signedHours(seconds: change)) week over week \(counts)\(few)"
                + (warning ? ": more than 12 h worse. ⚠\n\n" : " (a warning needs more than +12 h).\n\n")
        case .becameNever:
            out +=
                "p90 staleness went from \(Self.staleness(last.p90)) h to never week over week \(counts)\(few): "
                + "worse than any number of hours. ⚠\n\n"
        case .notComparable(let why):
            out += "No week-over-week comparison: \(why) \(counts).\n\n"
        }

        out += "## Summary\n\n| | this week | last week |\n|---|---|---|\n"
        out += "| staleness samples (app opens, silent devices' included) | \(this.samples) | \(last.samples) |\n"
        if this.silentSamples > 0 {
            out +=
                "| of them, silent devices' (their usual opens, their data's age at least) | \(this.silentSamples) "
                + "| 0 |\n"
        }
        if this.silentRequests + last.silentRequests > 0 {
            out +=
                "| silent devices' usual requests, none answered (in the execution rate) | \(this.silentRequests) "
                + "| \(last.silentRequests) |\n"
        }
        out += "| never refreshed (no background run yet) | \(this.neverRefreshed) | \(last.neverRefreshed) |\n"
        out +=
            "| p50 staleness (h) | \(Self.staleness(this.p50)) (n = \(this.samples)) | "
            + "\(Self.staleness(last.p50)) (n = \(last.samples)) |\n"
        out +=
            "| p90 staleness (h) | \(Self.staleness(this.p90)) (n = \(this.samples)) | "
            + "\(Self.staleness(last.p90)) (n = \(last.samples)) |\n"
        out += "| execution rate | \(Self.rate(this)) | \(Self.rate(last)) |\n"
        out += "| devices without a successful \(runWords) | \(Self.noRun(this)) | \(Self.noRun(last)) |\n"
        out += "| devices with records | \(this.devices) | \(last.devices) |\n\n"

        for (title, range) in [("this week", Self.thisWeek), ("last week", Self.lastWeek)] {
            out += "## Breakdown, \(title)\n\n"
            out += "By platform and by Android standby bucket (the bucket at each record)"
            out += range == Self.thisWeek ? "; p90 change against last week's p90 of the same group.\n\n" : ".\n\n"
            out +=
                "| group | devices with records | no successful run | samples | never refreshed | p50 (h) | p90 (h) | execution rate |"
            out +=
                range == Self.thisWeek
                ? " p90 change |\n|---|---|---|---|---|---|---|---|---|\n" : "\n|---|---|---|---|---|---|---|---|\n"
            for group in Group.ordered {
                let f = figures(group, days: range)
                if group != .all, f.records == 0, f.silentDevices == 0 { continue }
                out +=
                    "| \(group) | \(f.devices) | \(Self.noRun(f)) | \(f.samples) | \(f.neverRefreshed) | "
                    + "\(Self.staleness(f.p50)) | \(Self.staleness(f.p90)) | \(Self.rate(f)) |"
                if range == Self.thisWeek {
                    out += " \(Self.change(this: f, last: figures(group, days: Self.lastWeek))) |"
                }
                out += "\n"
            }
            out += "\n"
        }

        out += "## By app version\n\n"
        let versions = appVersions
        if versions.isEmpty {
            out += "No record carries an `appVersion`.\n\n"
        } else {
            out += "The records that carry an `appVersion`"
            out += withoutVersion > 0 ? " (\(withoutVersion) records in the two weeks carry none).\n\n" : ".\n\n"
            out +=
                "| app version | week | devices with records | no successful run | samples | never refreshed | p50 (h) | p90 (h) | execution rate | dropped |\n"
            out += "|---|---|---|---|---|---|---|---|---|---|\n"
            for version in versions {
                for (title, range) in [("this", Self.thisWeek), ("last", Self.lastWeek)] {
                    guard let f = figures(appVersion: version, days: range), f.records > 0 || f.silentDevices > 0
                    else { continue }
                    let mark = f.samples < Self.fewSamples ? " (few samples)" : ""
                    out +=
                        "| \(Self.cell(version)) | \(title) | \(f.devices) | \(Self.noRun(f)) | \(f.samples) | "
                        + "\(f.neverRefreshed) | \(Self.staleness(f.p50)) | \(Self.staleness(f.p90))\(mark) | "
                        + "\(Self.rate(f)) | \(f.dropped) |\n"
                }
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
        out += "| background runs, all outcomes | \(this.background) | \(last.background) |\n"
        if this.push + last.push > 0 {
            out +=
                "| push runs (a server push, outside the task scheduler), all outcomes | \(this.push) | "
                + "\(last.push) |\n| push runs that succeeded | \(this.pushSucceeded) | \(last.pushSucceeded) |\n"
        }
        out += "\n"
        let causes = causes
        if causes.isEmpty {
            out += "No failure kind in the records.\n\n"
        } else {
            out += "What they usually mean (sources in docs/metrics.md):\n\n"
            for cause in causes { out += "- \(cause)\n" }
            out += "\n"
        }
        if let fall = firstExecutionRateFall {
            out +=
                "The daily execution rate first fell on **\(fall.day)**: \(Self.percent(fall.rate)), after "
                + "\(Self.percent(fall.beforeRate)) over \(Self.span(fall.before)) (a fall is "
                + "\(Int(Self.fallPoints)) points or more, and more than 2 standard errors, below the rate of the "
                + "earlier days together; days with at least \(Self.fallMinimumSubmitted) requests).\n\n"
        } else {
            out +=
                "The daily execution rate did not fall by \(Int(Self.fallPoints)) points or more (and more than 2 "
                + "standard errors) below the rate of the days before it in the two weeks (days with at least "
                + "\(Self.fallMinimumSubmitted) requests).\n\n"
        }

        out += "## Daily staleness\n\n"
        let daily = (0..<14).map { figures(.all, days: $0...$0) }
        let plotted = (0..<14).filter { daily[$0].p50?.hours != nil && daily[$0].p90?.hours != nil }
        out += "p50 (first line) and p90 (second line) of the day's staleness samples, in hours. "
        out += "A day without a number (no samples, or a percentile that is never) is a gap: it is left off "
        out += "the x axis (Mermaid's chart has no missing values), never drawn at 0.\n\n"
        let gaps = (0..<14).filter { !plotted.contains($0) }
        if !gaps.isEmpty {
            out +=
                "Not drawn: "
                + gaps.map { index in
                    let f = daily[index]
                    let why =
                        f.samples == 0 ? "no samples" : "p50 \(Self.staleness(f.p50)), p90 \(Self.staleness(f.p90))"
                    return "\(days[index]) (\(why))"
                }.joined(separator: ", ") + ".\n\n"
        }
        if !plotted.isEmpty {
            let top = max(1, plotted.compactMap { daily[$0].p90?.hours }.max() ?? 1)
            out += "```mermaid\nxychart-beta\n"
            out += "    title \"Staleness at app open, daily p50 and p90 (hours)\"\n"
            out +=
                "    x-axis ["
                + plotted.map { "\"\(String(days[$0].description.dropFirst(5)))\"" }.joined(separator: ", ")
                + "]\n"
            out += "    y-axis \"hours\" 0 --> \(String(format: "%.0f", (top * 1.1).rounded(.up)))\n"
            out += "    line [" + plotted.map { Self.hours(daily[$0].p50?.hours) }.joined(separator: ", ") + "]\n"
            out += "    line [" + plotted.map { Self.hours(daily[$0].p90?.hours) }.joined(separator: ", ") + "]\n"
            out += "```\n\n"
        }
        out += "| day | samples | never refreshed | p50 (h) | p90 (h) | execution rate |\n|---|---|---|---|---|---|\n"
        for (day, f) in zip(days, daily) {
            out +=
                "| \(day) | \(f.samples) | \(f.neverRefreshed) | \(Self.staleness(f.p50)) | \(Self.staleness(f.p90)) | "
                + "\(Self.rate(f)) |\n"
        }
        out += "\n"

        out += "## Definitions\n\n"
        out +=
            "- **Staleness sample**: the `stalenessHours` of a `foreground` record: when the user opened the "
            + "app, the hours since the device's last successful background run (the task's, or a server "
            + "push's). A null sample means the device had had no successful background run yet (\"never refreshed\"): it is the stalest of all, "
            + "unbounded staleness, ranked above every number in the percentiles.\n"
        out +=
            "- **Percentiles**: linear interpolation between closest ranks (Hyndman and Fan type 7, the default "
            + "of R and numpy, Excel's PERCENTILE.INC) over all n samples, never-refreshed ones last: for the "
            + "sorted samples x[0..n−1] and h = (n−1)p, x[⌊h⌋] + (h−⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]). A percentile whose "
            + "rank lands on a never-refreshed sample, or that interpolates towards one, reads `never`. n = 0 gives "
            + "n/a; n = 1 gives that sample. Hours are shown to one decimal; n is the number of samples.\n"
        out +=
            "- **Execution rate**: `background` records with `success: true` ÷ requests (`submitted` and "
            + "`submit_failed` records), in the same window and group. A device whose handler never runs keeps its "
            + "one request pending and writes few `submitted` records, so the rate hides it: see the devices "
            + "without a successful background run.\n"
        out +=
            "- **Devices without a successful \(runWords)**: devices with any record in the week (and "
            + "group) and no `background` or `push` record with `success: true` in it; this week also the devices "
            + "with records in the four weeks before it and none in it (silent: no run, no open, no request). A `push` record is "
            + "a run for a server push, outside the task scheduler: it feeds the watch and ends the staleness, and "
            + "it is not in the execution rate.\n"
        out +=
            "- **Warning** (⚠ in the heading), when any of these holds, each printed under the heading with "
            + "its numbers: (1) this week's p90 minus last week's p90 is more than 12 h, compared in whole "
            + "seconds (an exact 12 h is no warning), or the p90 went from a number to never; (2) this week's "
            + "p90 is above the watch's cache horizon, \(Self.cacheHorizonSeconds / 3_600) h (7 days of wake "
            + "dates; never is above it); (3) requests were made this week and no background run "
            + "succeeded; (4) more than half the devices had no successful background run this week, the "
            + "silent ones among them; (5) a tenth or more of the devices with records in the four weeks before "
            + "this week are silent in it; (6) no record at all this week while the four weeks before it had "
            + "devices (the whole fleet silent, or an input that ends before the week), in place of (4) and (5); (7) an app version on a tenth or more of the "
            + "week's devices, not on all its records, that came a day or more before the week's end, where "
            + "more than half of its devices had no successful background run on it; (8) more than "
            + "half the input's devices have records only outside the two weeks; (9) a hundredth or more of the input's files "
            + "could not be read.\n"
        out +=
            "- **Few samples**: a comparison with fewer than \(Self.fewSamples) samples on a side is marked so; "
            + "its change is noise as much as signal.\n"
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
    /// A percentile for `--json`: hours as a number, `"never"`, or null (no samples).
    static func json(_ value: Staleness?) -> Any {
        switch value {
        case .hours(let hours)?: hours
        case .never?: "never"
        case nil: NSNull()
        }
    }

    /// A week's figures for `--json`: hours as numbers, `"never"` or null, rates and shares as
    /// fractions or null.
    static func object(_ f: Figures) -> [String: Any] {
        [
            "devices": f.devices, "samples": f.samples, "silentSamples": f.silentSamples,
            "silentRequests": f.silentRequests, "silentNever": f.silentNever,
            "neverRefreshed": f.neverRefreshed,
            "p50Hours": json(f.p50), "p90Hours": json(f.p90),
            "executionRate": f.executionRate ?? NSNull(), "requests": f.requests, "submitted": f.submitted,
            "succeeded": f.succeeded,
            "dropped": f.dropped, "expired": f.expired, "submitFailed": f.submitFailed, "push": f.push,
            "pushSucceeded": f.pushSucceeded,
            "noRunDevices": f.noRunDevices, "silentDevices": f.silentDevices, "recentDevices": f.recentDevices,
            "noRunShare": f.noRunShare ?? NSNull(),
        ]
    }

    /// The summary as one JSON object (`sleeptap-report --json`, fields in docs/metrics.md).
    package func summary(path: String) -> [String: Any] {
        let this = figures(.all, days: Self.thisWeek)
        let last = figures(.all, days: Self.lastWeek)
        let trend = Self.trend(this: this, last: last)
        let conditions = self.conditions
        var change: Any = NSNull()
        if case .compared(let seconds, _) = trend { change = seconds }
        var groups: [[String: Any]] = []
        for group in Group.ordered {
            let f = figures(group, days: Self.thisWeek)
            if group != .all, f.records == 0, f.silentDevices == 0 { continue }
            var object = Self.object(f)
            object["group"] = group.description
            groups.append(object)
        }
        var versions: [[String: Any]] = []
        for version in appVersions {
            var entry: [String: Any] = ["appVersion": version]
            if let f = figures(appVersion: version, days: Self.thisWeek) { entry["thisWeek"] = Self.object(f) }
            if let f = figures(appVersion: version, days: Self.lastWeek) { entry["lastWeek"] = Self.object(f) }
            versions.append(entry)
        }
        var fall: Any = NSNull()
        if let f = firstExecutionRateFall {
            fall = [
                "day": f.day.description, "rate": f.rate, "beforeFrom": f.before.lowerBound.description,
                "beforeTo": f.before.upperBound.description, "beforeRate": f.beforeRate,
            ]
        }
        return [
            "event": "report.summary", "date": date.description,
            "dateSource": dateSource == .given ? "given" : dateSource == .lastRecordDay ? "lastRecordDay" : "today",
            "report": path, "warning": !conditions.isEmpty,
            "conditions": conditions.map { ["condition": $0.name, "text": $0.text] },
            "p90ChangeSeconds": change,
            "fewSamples": this.samples < Self.fewSamples || last.samples < Self.fewSamples,
            "neverNote": neverNote ?? NSNull(),
            "lateLastRecord": lateLastRecord.map {
                [
                    "device": $0.device, "at": RunRecordFile.instantString($0.at),
                    "medianDeviceLastRecordAt": RunRecordFile.instantString($0.median),
                ] as [String: Any]
            } ?? NSNull(),
            "thisWeek": Self.object(this), "lastWeek": Self.object(last), "groups": groups, "appVersions": versions,
            "causes": causes, "firstExecutionRateFall": fall, "files": files, "records": records,
            "repeatedRecords": repeatedRecords,
            "outside": outside, "mostRecordsOutside": mostRecordsOutside,
            "firstRecordAt": firstRecordAt.map(RunRecordFile.instantString) ?? NSNull(),
            "lastRecordAt": lastRecordAt.map(RunRecordFile.instantString) ?? NSNull(),
            "skipped": skipped.map { ["file": $0.file, "reason": $0.reason] },
        ]
    }

    /// A few readable lines: where the report is, the heading and what fired it, this week
    /// against last week.
    package func summaryLines(path: String) -> String {
        let this = figures(.all, days: Self.thisWeek)
        let last = figures(.all, days: Self.lastWeek)
        let trend = Self.trend(this: this, last: last)
        let conditions = self.conditions
        func withUnit(_ value: Staleness?) -> String {
            switch value {
            case .hours(let hours)?: Self.hours(hours) + " h"
            case .never?: "never"
            case nil: "n/a"
            }
        }
        var lines = ["wrote \(path)", String(heading(warning: !conditions.isEmpty).dropFirst(2))]
        for condition in conditions { lines.append("  ⚠ \(condition.text)") }
        if case .compared(let seconds, _) = trend {
            let few = this.samples < Self.fewSamples || last.samples < Self.fewSamples ? " (few samples)" : ""
            lines.append("  p90 change: \(Self.signedHours(seconds: seconds))\(few)")
        }
        lines += [
            "  this week \(days[7])..\(days[13]): p50 \(withUnit(this.p50)), p90 \(withUnit(this.p90)) "
                + "(\(this.samples) samples), execution rate \(Self.rate(this)), "
                + "no successful \(runWords): \(Self.noRun(this)) devices",
            "  last week \(days[0])..\(days[6]): p50 \(withUnit(last.p50)), p90 \(withUnit(last.p90)) "
                + "(\(last.samples) samples), execution rate \(Self.rate(last)), "
                + "no successful \(runWords): \(Self.noRun(last)) devices",
            "  \(files) files, \(records) records (\(outside) outside the two weeks)\(repeatedWords), "
                + "\(skipped.count) files skipped; "
                + dateSentence,
        ]
        if let outsideSentence { lines.append("  " + outsideSentence) }
        if let lateLastRecordSentence { lines.append("  " + lateLastRecordSentence) }
        if let neverNote { lines.append("  " + neverNote) }
        return lines.joined(separator: "\n")
    }
}

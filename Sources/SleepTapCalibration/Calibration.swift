// SPDX-License-Identifier: Apache-2.0
package import Foundation
package import SleepTapCore
import SleepTapOS

/// Fits the simulated OS to a fleet's run records (docs/calibration.md): per group (all, each
/// platform, each Android standby bucket, each app version), the delay from a request's
/// eligibility to the launch that answered it, the share of requests never answered, the rates of
/// dropped launches, expirations and quota stops, and the spacing of background runs.
///
/// Sans-I/O: records go in one device at a time (`add(device:)`), the model comes out as a value
/// (`model()`); reading files is `sleeptap-calibrate`'s job.
package struct Calibration: Sendable {
    /// The quantiles every distribution reports (p10, p25, p50, p75, p90, p99).
    package static let probabilities: [Double] = [0.10, 0.25, 0.50, 0.75, 0.90, 0.99]
    /// The right edges of the histograms' bins, seconds (the last bin is open: above 48 h).
    package static let histogramEdges: [Double] = [
        5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 240, 360, 480, 720, 960, 1_440, 2_880,
    ].map { $0 * 60 }
    /// `RunRecord.stopReason` of a run stopped past its standby quota (`STOP_REASON_QUOTA`,
    /// Android `JobParameters`: <https://developer.android.com/reference/android/app/job/JobParameters#STOP_REASON_QUOTA>).
    package static let quotaStopReason = 10
    /// The lower bounds of the iOS delay's bins by the days since the device's last user open at
    /// the request's eligibility, days: [0, 1), [1, 2), [2, 4), [4, 7), [7, 14), ≥ 14; requests
    /// with no open before them make a bin of their own (docs/calibration.md, "What is fitted").
    package static let openBinStartsDays: [Double] = [0, 1, 2, 4, 7, 14]

    /// The bin in `openBinStartsDays` order (the bin without an open last) of `days` since the
    /// last open; nil days (no open) is the last bin.
    static func openBin(daysSinceOpen days: Double?) -> Int {
        guard let days else { return openBinStartsDays.count }
        return max(0, (openBinStartsDays.lastIndex { $0 <= days }) ?? 0)
    }

    /// Two-sided coverage of every quantile's interval, in (0, 1).
    package let confidence: Double
    /// Each group's place in `tallies`.
    private var slots: [GroupKey: Int] = [:]
    /// The groups' tallies, changed in place by index (no hashing per record).
    private var tallies: [Tally] = []
    private var devices = 0
    private var records = 0
    private var first: Date?
    private var last: Date?
    /// Each device's last record, to tell a stray late record from the input's end.
    private var deviceEnds: [Date] = []

    /// The input's last record when it lies more than `lateEndSlack` after the median device's
    /// last record, with that median; nil otherwise. Requests still pending are censored at the
    /// input's last record (docs/calibration.md, "The delay is censored"), so one record from a
    /// wrong clock or a stray file lengthens every censored wait and with them the fitted delay.
    package var lateEnd: (end: Date, median: Date)? {
        guard let last, !deviceEnds.isEmpty else { return nil }
        let median = deviceEnds.sorted()[(deviceEnds.count - 1) / 2]
        return last.timeIntervalSince(median) > Self.lateEndSlack ? (last, median) : nil
    }

    /// 48 hours: a fleet's devices export within a day or two of each other (this tool's choice).
    package static let lateEndSlack: TimeInterval = 48 * 3_600

    /// Launches recorded more than a second before the request they answered became eligible,
    /// and the first of them (device, the launch's `at`, the eligibility). No OS launches a task
    /// before its earliestBeginDate, so such a record comes from a clock that moved (the user's
    /// `clock-set`, a wrong export); its delay counts as 0, which shortens the fit.
    package private(set) var launchesBeforeEligible = 0
    package private(set) var firstLaunchBeforeEligible: (device: String, at: Date, eligible: Date)?

    /// Counts a launch at `at` answering a request eligible at `eligible` when it lies before it.
    private mutating func noteEarly(_ record: RunRecord, eligible: Date) {
        guard record.at.timeIntervalSince(eligible) < -1 else { return }
        launchesBeforeEligible += 1
        if firstLaunchBeforeEligible == nil { firstLaunchBeforeEligible = (record.device, record.at, eligible) }
    }

    /// - Parameter confidence: two-sided coverage of the quantiles' intervals (default 0.95),
    ///   clamped to [0.5, 0.9999].
    package init(confidence: Double = 0.95) {
        self.confidence = min(0.9999, max(0.5, confidence))
    }

    /// Adds one device's records (any order; they are sorted by `at`, stably).
    ///
    /// Pairing: on iOS a `background` or `dropped` record answers the latest earlier `submitted`
    /// record of the device with the same `earliestBeginDate` (the run's scheduled time,
    /// docs/metrics.md) not yet answered; on Android (one periodic work, whose renewals WorkManager
    /// schedules itself) the oldest unanswered `submitted` record made by the run's scheduled time. A `submitted` record nothing answered is never answered: replaced when
    /// the device submitted again later, pending at the end of the records otherwise.
    package mutating func add(device records: [RunRecord]) {
        guard !records.isEmpty else { return }
        let sorted = records.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }
            .map(\.element)
        devices += 1
        self.records += sorted.count
        if first == nil || sorted[0].at < first! { first = sorted[0].at }
        if last == nil || sorted[sorted.count - 1].at > last! { last = sorted[sorted.count - 1].at }
        deviceEnds.append(sorted[sorted.count - 1].at)
        // The last record's selectors and its groups' slots: a device's records mostly share them.
        var cache: (selector: Selector, slots: [Int])?
        var open: [Date: Int] = [:]  // earliestBeginDate -> index in `sorted` of the unanswered submit
        var answered: Set<Int> = []
        var pendingAndroid: [Int] = []  // Android submits not yet answered, oldest first
        var lastRun: Date?
        var lastSubmit: Int?
        // The user's opens (`foreground` records), in order: the delay's bin by the days since
        // the last open at or before a request's eligibility.
        let opens = sorted.filter { $0.kind == .foreground }.map(\.at)
        func openBin(_ record: RunRecord, eligible: Date) -> Int? {
            guard record.platform == .ios else { return nil }
            var low = 0
            var high = opens.count
            while low < high {
                let middle = (low + high) / 2
                if opens[middle] <= eligible { low = middle + 1 } else { high = middle }
            }
            let days = low == 0 ? nil : eligible.timeIntervalSince(opens[low - 1]) / 86_400
            return Self.openBin(daysSinceOpen: days)
        }
        for (index, record) in sorted.enumerated() {
            let keys = slots(of: record, cache: &cache)
            for key in keys where tallies[key].lastDevice != devices {
                tallies[key].lastDevice = devices
                tallies[key].devices += 1
            }
            switch record.kind {
            case .submitted:
                lastSubmit = index
                for key in keys { tallies[key].submitted += 1 }
                if record.platform == .android {
                    pendingAndroid.append(index)
                } else if let begin = record.earliestBeginDate {
                    open[begin] = index
                }
            case .background, .dropped:
                let isRun = record.kind == .background
                for key in keys {
                    if isRun {
                        tallies[key].background += 1
                        if record.success == true { tallies[key].succeeded += 1 }
                        if record.expired == true { tallies[key].expired += 1 }
                        if record.stopReason == Self.quotaStopReason { tallies[key].quotaStops += 1 }
                    } else {
                        tallies[key].dropped += 1
                    }
                }
                if isRun {
                    if let lastRun {
                        let gap = record.at.timeIntervalSince(lastRun)
                        for key in keys { tallies[key].spacing.append(gap) }
                    }
                    lastRun = record.at
                }
                guard let begin = record.earliestBeginDate else {
                    for key in keys { tallies[key].unmatchedLaunches += 1 }
                    continue
                }
                // iOS: the request with this earliestBeginDate. Android: the earliest unanswered
                // submit made by the run's scheduled time (the periodic work's own schedule).
                let request: Int?
                if record.platform == .android {
                    request = pendingAndroid.first.flatMap { sorted[$0].at <= begin ? $0 : nil }
                    if request != nil { pendingAndroid.removeFirst() }
                } else {
                    request = open.removeValue(forKey: begin)
                }
                guard let request else {
                    // Its request is not in the input: how late it ran, from its scheduled time.
                    noteEarly(record, eligible: begin)
                    let delay = max(0, record.at.timeIntervalSince(begin))
                    let bin = openBin(record, eligible: begin)
                    for key in keys {
                        tallies[key].unmatchedLaunches += 1
                        tallies[key].delays.append(delay)
                        if let bin { tallies[key].openBins[bin].delays.append(delay) }
                    }
                    continue
                }
                answered.insert(request)
                let submit = sorted[request]
                let eligible = max(submit.at, begin)
                noteEarly(record, eligible: eligible)
                let delay = max(0, record.at.timeIntervalSince(eligible))
                let bin = openBin(submit, eligible: eligible)
                for key in slots(of: submit, cache: &cache) {
                    tallies[key].delays.append(delay)
                    if let bin { tallies[key].openBins[bin].delays.append(delay) }
                    if isRun { tallies[key].answeredByRun += 1 } else { tallies[key].answeredByDrop += 1 }
                }
            case .submitFailed, .foreground:
                break
            case .push:
                // A run for a server push answers no request and is no launch the scheduler chose:
                // not in the delays, the rates or the spacing (docs/calibration.md).
                break
            }
        }
        var nextSubmit: Date?
        for (index, record) in sorted.enumerated().reversed() where record.kind == .submitted {
            defer { nextSubmit = record.at }
            guard !answered.contains(index) else { continue }
            let eligible = max(record.at, record.earliestBeginDate ?? record.at)
            let bin = openBin(record, eligible: eligible)
            for key in slots(of: record, cache: &cache) {
                if index == lastSubmit {
                    tallies[key].pendingAtEnd += 1
                    tallies[key].pendingEligible.append(eligible)
                    if let bin { tallies[key].openBins[bin].pendingEligible.append(eligible) }
                } else {
                    tallies[key].replaced += 1
                    // Replaced before it could run: never at risk of a launch, no observation.
                    if let nextSubmit, nextSubmit > eligible {
                        let censored = nextSubmit.timeIntervalSince(eligible)
                        tallies[key].censored.append(censored)
                        if let bin { tallies[key].openBins[bin].censored.append(censored) }
                    }
                }
            }
        }
    }

    /// What decides a record's groups: its platform, its Android bucket, its app version.
    struct Selector: Equatable {
        var platform: Platform
        var bucket: StandbyBucket?
        var appVersion: String?

        init(_ record: RunRecord) {
            platform = record.platform
            bucket = record.platform == .android ? record.bucket : nil
            appVersion = record.appVersion
        }
    }

    /// The slots in `tallies` of the groups `record` counts in (`GroupKey.keys(of:)`), new groups
    /// added; `cache` keeps the last selectors' slots.
    private mutating func slots(of record: RunRecord, cache: inout (selector: Selector, slots: [Int])?) -> [Int] {
        let selector = Selector(record)
        if let cache, cache.selector == selector { return cache.slots }
        let found = GroupKey.keys(of: record).map { key in
            if let slot = slots[key] { return slot }
            slots[key] = tallies.count
            tallies.append(Tally())
            return tallies.count - 1
        }
        cache = (selector, found)
        return found
    }

    /// The fitted model of everything added so far.
    /// - Parameter skipped: input files skipped, with why (written into the model's `input`).
    package func model(files: Int = 0, skipped: [(file: String, reason: String)] = []) -> CalibrationModel {
        var model = CalibrationModel(confidence: confidence)
        model.devices = devices
        model.records = records
        model.files = files
        model.skipped = skipped.map { CalibrationModel.Skipped(file: $0.file, reason: $0.reason) }
        model.firstRecordAt = first
        model.lastRecordAt = last
        model.groups = slots.sorted { $0.key < $1.key }.map { key, slot in
            tallies[slot].group(key, confidence: confidence, end: last)
        }
        return model
    }

    /// A group's name and its selectors.
    struct GroupKey: Hashable, Comparable, Sendable {
        var order: Int
        var platform: Platform?
        var bucket: StandbyBucket?
        var appVersion: String?

        var name: String {
            var parts: [String] = []
            if let platform { parts.append(platform.rawValue) }
            if let bucket { parts.append(bucket.name) }
            if let appVersion { parts.append("version \(appVersion)") }
            return parts.isEmpty ? "all" : parts.joined(separator: ", ")
        }

        /// The bucket's place in `StandbyBucket.all`, -1 without one.
        var bucketIndex: Int {
            guard let bucket else { return -1 }
            return StandbyBucket.all.firstIndex(of: bucket) ?? -1
        }

        static func < (a: GroupKey, b: GroupKey) -> Bool {
            if a.order != b.order { return a.order < b.order }
            let (pa, pb) = (a.platform?.rawValue ?? "", b.platform?.rawValue ?? "")
            if pa != pb { return pa < pb }
            if a.bucketIndex != b.bucketIndex { return a.bucketIndex < b.bucketIndex }
            return (a.appVersion ?? "") < (b.appVersion ?? "")
        }

        /// The groups a record counts in: all, its platform, its Android bucket, its app version,
        /// its platform and app version.
        static func keys(of record: RunRecord) -> [GroupKey] {
            var keys = [GroupKey(order: 0), GroupKey(order: 1, platform: record.platform)]
            if record.platform == .android, let bucket = record.bucket {
                keys.append(GroupKey(order: 2, platform: .android, bucket: bucket))
            }
            if let version = record.appVersion {
                keys.append(GroupKey(order: 3, appVersion: version))
                keys.append(GroupKey(order: 4, platform: record.platform, appVersion: version))
            }
            return keys
        }
    }

    /// Counts and samples of one group.
    struct Tally: Sendable {
        /// The ordinal (`Calibration.devices`) of the last device counted in `devices`.
        var lastDevice = 0
        var devices = 0
        var submitted = 0
        var answeredByRun = 0
        var answeredByDrop = 0
        var replaced = 0
        var pendingAtEnd = 0
        var background = 0
        var succeeded = 0
        var dropped = 0
        var expired = 0
        var quotaStops = 0
        var unmatchedLaunches = 0
        var delays: [Double] = []
        /// Requests replaced after they became eligible: seconds from eligibility to the replacing submit.
        var censored: [Double] = []
        /// Eligibility of the requests still pending at the end (censored at the last record's `at`).
        var pendingEligible: [Date] = []
        var spacing: [Double] = []
        /// The iOS requests' delays by the days since the last open (`Calibration.openBin`).
        var openBins = [Censored](repeating: Censored(), count: Calibration.openBinStartsDays.count + 1)

        /// One bin's observations of the delay.
        struct Censored: Sendable {
            /// Answered requests' delays, seconds.
            var delays: [Double] = []
            /// Requests replaced after they became eligible: seconds from eligibility to the replacing submit.
            var censored: [Double] = []
            /// Eligibility of the requests still pending at the end.
            var pendingEligible: [Date] = []

            /// The Kaplan–Meier fit, the pending requests censored at `end`.
            func distribution(confidence: Double, end: Date?) -> EmpiricalDistribution {
                var all = censored
                if let end {
                    for eligible in pendingEligible where end > eligible { all.append(end.timeIntervalSince(eligible)) }
                }
                return EmpiricalDistribution(events: delays, censored: all, confidence: confidence)
            }
        }

        func group(_ key: GroupKey, confidence: Double, end: Date?) -> CalibrationModel.Group {
            func ratio(_ a: Int, _ b: Int) -> Double? { b == 0 ? nil : Double(a) / Double(b) }
            var group = CalibrationModel.Group(name: key.name)
            group.platform = key.platform
            group.bucket = key.bucket
            group.appVersion = key.appVersion
            group.devices = devices
            group.submitted = submitted
            group.answeredByRun = answeredByRun
            group.answeredByDrop = answeredByDrop
            group.replaced = replaced
            group.pendingAtEnd = pendingAtEnd
            group.neverAnsweredShare = ratio(replaced + pendingAtEnd, submitted)
            group.background = background
            group.succeeded = succeeded
            group.dropped = dropped
            group.expired = expired
            group.quotaStops = quotaStops
            group.unmatchedLaunches = unmatchedLaunches
            group.dropRate = ratio(dropped, background + dropped)
            group.expirationRate = ratio(expired, background)
            group.quotaStopRate = ratio(quotaStops, background)
            group.executionRate = ratio(succeeded, submitted)
            group.delay = Censored(delays: delays, censored: censored, pendingEligible: pendingEligible)
                .distribution(confidence: confidence, end: end)
            if key.platform == .ios {
                let starts = Calibration.openBinStartsDays
                group.delayByDaysSinceOpen = openBins.enumerated().map { i, bin in
                    CalibrationModel.OpenBin(
                        fromDays: i < starts.count ? starts[i] : nil,
                        toDays: i + 1 < starts.count ? starts[i + 1] : nil,
                        delay: bin.distribution(confidence: confidence, end: end))
                }
            }
            group.spacing = EmpiricalDistribution(spacing, confidence: confidence)
            return group
        }
    }
}

/// An empirical distribution of durations in seconds: the sample size, quantiles with
/// distribution-free confidence intervals, the mean and a histogram.
package struct EmpiricalDistribution: Equatable, Sendable {
    /// One quantile and its interval.
    package struct Quantile: Equatable, Sendable {
        /// The probability, in (0, 1).
        package var p: Double
        /// Type-7 sample quantile (linear interpolation, as the weekly report's percentiles), seconds; nil without samples.
        package var value: Double?
        /// The interval's ends, seconds: order statistics x(l) and x(u) (below); nil where the
        /// sample is too small for a bound at the confidence (the interval is open on that side).
        package var lower: Double?
        /// The interval's upper end, seconds; nil where it is open.
        package var upper: Double?
    }

    /// How the quantiles and their intervals were computed.
    package enum Method: String, Equatable, Sendable {
        /// Type-7 sample quantiles; exact order-statistic (binomial) intervals (no censoring).
        case orderStatistic = "order statistic (binomial)"
        /// Kaplan–Meier estimate with right-censored observations; Brookmeyer–Crowley intervals
        /// from Greenwood's variance (the censored form of the binomial interval).
        case kaplanMeier = "Kaplan-Meier, Brookmeyer-Crowley"
    }

    /// How `quantiles` were computed (`orderStatistic` unless made with `init(events:censored:confidence:)`).
    package var method: Method = .orderStatistic
    /// Samples (with `kaplanMeier`: the observed events, the answered requests).
    package var n: Int
    /// Right-censored observations (`kaplanMeier` only; 0 otherwise).
    package var censored = 0
    /// Mean, seconds; nil without samples.
    package var mean: Double?
    /// `Calibration.probabilities`, in order.
    package var quantiles: [Quantile]
    /// Counts per bin: bin i holds samples in (edge[i-1], edge[i]] of `Calibration.histogramEdges`
    /// (bin 0 from 0), the last one those above the last edge.
    package var histogram: [Int]

    /// The distribution of `sample` (seconds, any order).
    ///
    /// The interval of the p-quantile ξ is [x(l), x(u)] of the sorted sample (1-based ranks), the
    /// order-statistic (binomial) bound: with N ~ Binomial(n, p) the number of samples ≤ ξ,
    /// P(x(l) ≤ ξ ≤ x(u)) ≥ P(l ≤ N ≤ u − 1) = B(u − 1) − B(l − 1), B the binomial CDF; l is the
    /// largest rank with B(l − 1) ≤ α/2 and u the smallest with B(u − 1) ≥ 1 − α/2, α = 1 −
    /// confidence, so each side misses with probability at most α/2, whatever the distribution
    /// (W. J. Conover, Practical Nonparametric Statistics, 3rd ed., 1999, §3.2).
    package init(_ sample: [Double], confidence: Double) {
        let sorted = sample.sorted()
        n = sorted.count
        mean = sorted.isEmpty ? nil : sorted.reduce(0, +) / Double(sorted.count)
        let alpha = 1 - confidence
        quantiles = Calibration.probabilities.map { p in
            guard !sorted.isEmpty else { return Quantile(p: p) }
            let h = Double(sorted.count - 1) * p
            let low = Int(h.rounded(.down))
            let high = min(low + 1, sorted.count - 1)
            let value = sorted[low] + (h - Double(low)) * (sorted[high] - sorted[low])
            let (l, u) = Self.ranks(n: sorted.count, p: p, alpha: alpha)
            return Quantile(p: p, value: value, lower: l.map { sorted[$0 - 1] }, upper: u.map { sorted[$0 - 1] })
        }
        var counts = [Int](repeating: 0, count: Calibration.histogramEdges.count + 1)
        var bin = 0
        for x in sorted {
            while bin < Calibration.histogramEdges.count, x > Calibration.histogramEdges[bin] { bin += 1 }
            counts[bin] += 1
        }
        histogram = counts
    }

    /// The Kaplan–Meier distribution of durations with right censoring (seconds): `events` are
    /// observed durations (a request answered after that long), `censored` durations after which
    /// the observation stopped without an event (the request was replaced, or the records end).
    ///
    /// The p-quantile is the smallest event time t with Ŝ(t) ≤ 1 − p (Ŝ the Kaplan–Meier
    /// survival function). Its interval inverts the pointwise band Ŝ(t) ± z·σ(t) (Brookmeyer and
    /// Crowley): from the first event time where Ŝ − zσ ≤ 1 − p to the first where Ŝ + zσ ≤ 1 − p,
    /// σ² Greenwood's variance Ŝ² Σ d/(r(r − d)), z the normal quantile of 1 − α/2; without
    /// censoring σ² is the binomial p(1 − p)/n, so this is the normal form of the order-statistic
    /// interval. An end is nil (open) when no event time meets it (the band never reaches 1 − p;
    /// for the upper end, before Ŝ reaches 0, where Greenwood's σ is 0).
    /// The mean is the area under Ŝ up to the last event (the restricted mean). Sources: E. L.
    /// Kaplan and P. Meier, JASA 53 (1958); R. Brookmeyer and J. Crowley, Biometrics 38 (1982);
    /// M. Greenwood, 1926 (in Kalbfleisch and Prentice, The Statistical Analysis of Failure Time
    /// Data, 2nd ed., 2002, §1.4). The histogram counts the events only.
    package init(events: [Double], censored: [Double], confidence: Double) {
        self.init(events, confidence: confidence)
        method = .kaplanMeier
        self.censored = censored.count
        guard !events.isEmpty else { return }
        // Observations by time, an event before a censoring at the same time (the usual convention).
        let observations = (events.map { ($0, true) } + censored.map { ($0, false) }).sorted {
            $0.0 < $1.0 || ($0.0 == $1.0 && $0.1 && !$1.1)
        }
        var atRisk = Double(observations.count)
        var survival = 1.0
        var greenwood = 0.0
        var area = 0.0
        var previous = 0.0
        var steps: [(t: Double, s: Double, sigma: Double)] = []
        var index = 0
        while index < observations.count {
            let t = observations[index].0
            var deaths = 0.0
            var leaving = 0.0
            while index < observations.count, observations[index].0 == t {
                if observations[index].1 { deaths += 1 }
                leaving += 1
                index += 1
            }
            if deaths > 0 {
                area += survival * (t - previous)
                previous = t
                survival *= 1 - deaths / atRisk
                if atRisk > deaths { greenwood += deaths / (atRisk * (atRisk - deaths)) }
                steps.append((t, survival, survival * sqrt(greenwood)))
            }
            atRisk -= leaving
        }
        mean = area
        let z = Self.normalQuantile(1 - (1 - confidence) / 2)
        quantiles = Calibration.probabilities.map { p in
            let target = 1 - p
            return Quantile(
                p: p, value: steps.first { $0.s <= target }?.t,
                lower: steps.first { $0.s - z * $0.sigma <= target }?.t,
                // Where Ŝ reaches 0 Greenwood's σ is 0, not small: no upper end from there.
                upper: steps.first { $0.s > 0 && $0.s + z * $0.sigma <= target }?.t)
        }
    }

    /// The standard normal quantile of `probability` in (0, 1), by bisection on erfc (to 1e-12).
    package static func normalQuantile(_ probability: Double) -> Double {
        var low = -40.0
        var high = 40.0
        for _ in 0..<200 {
            let middle = (low + high) / 2
            if 0.5 * Foundation.erfc(-middle / 2.0.squareRoot()) < probability { low = middle } else { high = middle }
        }
        return (low + high) / 2
    }

    /// The 1-based ranks (l, u) of the order-statistic interval of the p-quantile (see `init`;
    /// Conover 1999, §3.2): l the largest rank with B(l − 1) ≤ alpha/2, u the smallest with
    /// B(u − 1) ≥ 1 − alpha/2, B the Binomial(n, p) CDF; nil where none exists (n too small for
    /// that side at this alpha).
    package static func ranks(n: Int, p: Double, alpha: Double) -> (Int?, Int?) {
        // B(k) for k = 0 ..< n, summed upward from log-pmfs: log pmf(0) = n log(1 − p), and
        // pmf(k + 1) = pmf(k) · (n − k)/(k + 1) · p/(1 − p).
        let logOdds = log(p) - log1p(-p)
        var logPMF = Double(n) * log1p(-p)
        var cdf = 0.0
        var lower: Int?
        var upper: Int?
        for k in 0..<n {
            if k > 0 { logPMF += log(Double(n - k + 1) / Double(k)) + logOdds }
            cdf += exp(logPMF)
            // B(k) = B(l - 1) with l = k + 1.
            if cdf <= alpha / 2 { lower = k + 1 }
            if upper == nil, cdf >= 1 - alpha / 2 {
                upper = k + 1
                break
            }
        }
        return (lower, upper)
    }
}

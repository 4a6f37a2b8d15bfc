// SPDX-License-Identifier: Apache-2.0
package import Foundation
import SleepTapCore
package import SleepTapOS

/// A model file's fitted delays as the simulated OS takes them (`EmpiricalDelay`), per group
/// (docs/calibration.md, "Running the OS on the model").
///
/// Only the delay is taken: its Kaplan–Meier quantiles become the knots, and the share the OS
/// never answered is the mass the curve never reaches (below). The group's
/// `neverAnsweredShare` and `dropRate` are not taken: on these records they are the app's doing
/// (a request replaced by the app's next submit; a handler registered too late), which the
/// simulated app does again, so the OS drawing them too would count them twice.
package struct CalibratedOS: Equatable, Sendable {
    /// One group of the model with enough data to run on.
    package struct Entry: Equatable, Sendable {
        /// The group's name in the model (`ios`, `android, rare`, `ios, version 1.1`, …).
        package var group: String
        /// The group's selectors; nil where it spans every value.
        package var platform: Platform?
        package var bucket: StandbyBucket?
        package var appVersion: String?
        /// Answered requests behind the fit.
        package var n: Int
        /// The fitted wait from eligibility to the launch.
        package var delay: EmpiricalDelay
    }

    /// Answered requests a group needs before the OS runs on its delay (fewer: the built-in draws).
    package static let minimumSamples = 20

    /// The groups with a usable delay, in the model's order.
    package var entries: [Entry]

    /// The wait of the most specific group for a device: same platform, and a bucket and app
    /// version that are the device's or unset; more selectors set wins, the model's order breaks ties.
    /// - Returns: nil when no group with data matches (the OS keeps its built-in draws).
    package func delay(platform: Platform, bucket: StandbyBucket? = nil, appVersion: String? = nil) -> Entry? {
        var best: Entry?
        var bestScore = -1
        for entry in entries where entry.platform == platform {
            if let b = entry.bucket, b != bucket { continue }
            if let v = entry.appVersion, v != appVersion { continue }
            let score = (entry.bucket == nil ? 0 : 1) + (entry.appVersion == nil ? 0 : 1)
            if score > bestScore {
                best = entry
                bestScore = score
            }
        }
        return best
    }

    /// The wait a distribution's quantiles give: the fitted ones are the knots; where the
    /// Kaplan–Meier curve never falls to 1 − p (the quantile is null) the OS never launches at
    /// least a 1 − p share, so `neverLaunch` is 1 − (the smallest such p) (0 when every quantile
    /// is fitted; a lower bound of the curve's last level).
    /// - Returns: nil without a fitted quantile.
    package static func empiricalDelay(quantiles: [(p: Double, seconds: Double?)]) -> EmpiricalDelay? {
        let sorted = quantiles.sorted { $0.p < $1.p }
        let fitted = sorted.compactMap { q in q.seconds.map { EmpiricalDelay.Point(p: q.p, seconds: $0) } }
        guard !fitted.isEmpty else { return nil }
        let never = sorted.first { $0.seconds == nil && $0.p > fitted[fitted.count - 1].p }.map { 1 - $0.p } ?? 0
        let delay = EmpiricalDelay(points: fitted, neverLaunch: never)
        return delay.points.isEmpty ? nil : delay
    }

    /// A bin of the delay by the days since the last open as read: its bounds, its answered
    /// requests and its quantiles.
    package struct OpenBinFit: Sendable {
        /// Lower bound, days (inclusive); nil for the requests with no open before them.
        package var fromDays: Double?
        /// Upper bound, days (exclusive); nil for none.
        package var toDays: Double?
        /// Answered requests behind the bin's fit.
        package var n: Int
        /// The bin's fitted quantiles (seconds nil where the curve never falls to 1 − p).
        package var quantiles: [(p: Double, seconds: Double?)]
    }

    /// The pooled wait with the bins by the days since the last open that have data: a bin with
    /// fewer than `minimumSamples` answered requests (or no fitted quantile) is left out, so its
    /// requests draw from the pooled wait; no bin left: the pooled wait alone (nil bins).
    package static func withOpenBins(_ pooled: EmpiricalDelay, _ bins: [OpenBinFit]) -> EmpiricalDelay {
        var delay = pooled
        let kept = bins.compactMap { bin -> EmpiricalDelay.OpenBin? in
            guard bin.n >= minimumSamples, let fit = empiricalDelay(quantiles: bin.quantiles) else { return nil }
            return EmpiricalDelay.OpenBin(fromDays: bin.fromDays, toDays: bin.toDays, delay: fit)
        }
        delay.byDaysSinceOpen = kept.isEmpty ? nil : kept
        return delay
    }

    /// The groups of a fit in memory with at least `minimumSamples` answered requests.
    package init(model: CalibrationModel) {
        entries = model.groups.compactMap { g in
            guard g.platform != nil, g.delay.n >= Self.minimumSamples,
                let pooled = Self.empiricalDelay(quantiles: g.delay.quantiles.map { ($0.p, $0.value) })
            else { return nil }
            let bins = (g.delayByDaysSinceOpen ?? []).map { b in
                OpenBinFit(
                    fromDays: b.fromDays, toDays: b.toDays, n: b.delay.n,
                    quantiles: b.delay.quantiles.map { ($0.p, $0.value) })
            }
            return Entry(
                group: g.name, platform: g.platform, bucket: g.bucket, appVersion: g.appVersion, n: g.delay.n,
                delay: Self.withOpenBins(pooled, bins))
        }
    }

    /// Reads a model file's bytes (`sleeptap-calibrate --out`, schemaVersion 1).
    /// - Throws: `ModelFileError` naming the first field that is wrong.
    package init(json data: Data) throws(ModelFileError) {
        // Strictly, as every JSON input: RFC 8259 (no trailing comma, NaN or number out of range),
        // no key twice in one object, an object at the top; the problem says where.
        let root: [String: Any]
        do {
            root = try JSONDiagnosis.object(from: data)
        } catch {
            throw ModelFileError(error.description)
        }
        guard root["kind"] as? String == "sleeptap.calibration" else {
            throw ModelFileError("kind: expected \"sleeptap.calibration\" (a sleeptap-calibrate model)")
        }
        guard let version = Self.integer(root["schemaVersion"]), version == CalibrationModel.schemaVersion else {
            throw ModelFileError("schemaVersion: expected \(CalibrationModel.schemaVersion)")
        }
        // The histograms' bins are this tool's (their counts are checked against them below).
        if let raw = root["histogramEdgesSeconds"] {
            guard let edges = raw as? [Any], edges.compactMap(Self.number) == Calibration.histogramEdges,
                edges.count == Calibration.histogramEdges.count
            else {
                throw ModelFileError(
                    "histogramEdgesSeconds: expected this tool's \(Calibration.histogramEdges.count) edges (5 min to 48 h)"
                )
            }
        }
        guard let groups = root["groups"] as? [Any] else { throw ModelFileError("groups: expected an array") }
        var entries: [Entry] = []
        for (i, item) in groups.enumerated() {
            let at = "groups[\(i)]"
            guard let g = item as? [String: Any] else { throw ModelFileError("\(at): expected an object") }
            guard let name = g["group"] as? String else { throw ModelFileError("\(at).group: expected a string") }
            func selector(_ key: String) throws(ModelFileError) -> String? {
                guard let raw = g[key], !(raw is NSNull) else { return nil }
                guard let text = raw as? String else {
                    throw ModelFileError("\(at).\(key): expected a string or null")
                }
                return text
            }
            let platformName = try selector("platform")
            let platform = platformName.flatMap(Platform.init(rawValue:))
            if let platformName, platform == nil {
                throw ModelFileError("\(at).platform \"\(platformName)\": expected ios or android")
            }
            let bucketName = try selector("bucket")
            let bucket = bucketName.flatMap(StandbyBucket.init(name:))
            if let bucketName, bucket == nil {
                throw ModelFileError("\(at).bucket \"\(bucketName)\": not a standby bucket")
            }
            let appVersion = try selector("appVersion")
            try Self.checkCounts(g, at: at)
            let (n, quantiles) = try Self.distribution(g["delay"], at: "\(at).delay")
            let bins = try Self.openBins(g["delayByDaysSinceOpen"], at: "\(at).delayByDaysSinceOpen")
            guard platform != nil, n >= Self.minimumSamples, let pooled = Self.empiricalDelay(quantiles: quantiles)
            else { continue }
            entries.append(
                Entry(
                    group: name, platform: platform, bucket: bucket, appVersion: appVersion, n: n,
                    delay: Self.withOpenBins(pooled, bins)))
        }
        self.entries = entries
    }

    /// A fitted delay's `n` and quantiles as the model file gives them at `at`.
    /// - Throws: `ModelFileError` naming the field under `at` that is wrong.
    static func distribution(_ value: Any?, at: String) throws(ModelFileError) -> (
        n: Int, quantiles: [(p: Double, seconds: Double?)]
    ) {
        guard let d = value as? [String: Any] else { throw ModelFileError("\(at): expected an object") }
        guard let n = Self.integer(d["n"]), n >= 0 else {
            throw ModelFileError("\(at).n: expected a whole number ≥ 0")
        }
        guard let list = d["quantiles"] as? [Any] else {
            throw ModelFileError("\(at).quantiles: expected an array")
        }
        var quantiles: [(p: Double, seconds: Double?)] = []
        for (j, q) in list.enumerated() {
            let qat = "\(at).quantiles[\(j)]"
            guard let q = q as? [String: Any], let p = Self.number(q["p"]), p > 0, p < 1 else {
                throw ModelFileError("\(qat).p: expected a number between 0 and 1")
            }
            if q["seconds"] == nil || q["seconds"] is NSNull {
                quantiles.append((p, nil))
            } else {
                guard let s = Self.number(q["seconds"]), s >= 0 else {
                    throw ModelFileError("\(qat).seconds: expected a number ≥ 0 or null")
                }
                quantiles.append((p, s))
            }
        }
        let ps = quantiles.map(\.p)
        guard ps == ps.sorted(), Set(ps).count == ps.count else {
            throw ModelFileError("\(at).quantiles: p must increase")
        }
        let fitted = quantiles.compactMap(\.seconds)
        guard fitted == fitted.sorted() else {
            throw ModelFileError("\(at).quantiles: seconds must not decrease")
        }
        return (n, quantiles)
    }

    /// A group's bins by the days since the last open at `at` (absent or null: none): each
    /// `fromDays` a number ≥ 0 or null (the bin without an open, at most one, its `toDays` null),
    /// each `toDays` a number > `fromDays` or null (no upper bound), the bins with bounds in
    /// increasing order without overlap, each `delay` as a group's.
    /// - Throws: `ModelFileError` naming the bin and the field that is wrong.
    static func openBins(_ value: Any?, at: String) throws(ModelFileError) -> [OpenBinFit] {
        guard let value, !(value is NSNull) else { return [] }
        guard let list = value as? [Any] else { throw ModelFileError("\(at): expected an array or null") }
        var bins: [OpenBinFit] = []
        var previousEnd: Double?
        var withoutOpen = false
        for (j, item) in list.enumerated() {
            let bat = "\(at)[\(j)]"
            guard let b = item as? [String: Any] else { throw ModelFileError("\(bat): expected an object") }
            func bound(_ key: String) throws(ModelFileError) -> Double? {
                guard let raw = b[key], !(raw is NSNull) else { return nil }
                guard let x = Self.number(raw), x >= 0 else {
                    throw ModelFileError("\(bat).\(key): expected a number ≥ 0 or null")
                }
                return x
            }
            let from = try bound("fromDays")
            let to = try bound("toDays")
            if let from {
                if let to, !(to > from) {
                    throw ModelFileError("\(bat).toDays \(to): expected more than fromDays \(from)")
                }
                if let end = previousEnd, from < end {
                    let before = end.isFinite ? "up to \(end)" : "no upper bound"
                    throw ModelFileError(
                        "\(bat).fromDays \(from): overlaps the bin before (\(before)); bins must increase")
                }
                previousEnd = to ?? .infinity
            } else {
                if to != nil {
                    throw ModelFileError("\(bat).toDays: expected null in the bin without an open (fromDays null)")
                }
                if withoutOpen { throw ModelFileError("\(bat).fromDays: a second bin without an open (null)") }
                withoutOpen = true
            }
            let (n, quantiles) = try Self.distribution(b["delay"], at: "\(bat).delay")
            bins.append(OpenBinFit(fromDays: from, toDays: to, n: n, quantiles: quantiles))
        }
        return bins
    }

    /// A finite JSON number that is not a boolean (`JSONNumber`).
    static func number(_ value: Any?) -> Double? {
        guard let n = value as? NSNumber, !JSONNumber(n).isBool else { return nil }
        let x = n.doubleValue
        return x.isFinite ? x : nil
    }

    /// A JSON integer written without fraction or exponent, in `Int`'s range.
    /// The group's counts, rates and histograms, which the OS does not run on but which a file
    /// `sleeptap-calibrate` wrote always has in range: counts whole numbers ≥ 0, the
    /// never-answered share between 0 and 1 and equal to (replaced + pendingAtEnd) ÷ submitted, the
    /// rates ≥ 0 (or null), each distribution's `histogram` 18 whole numbers ≥ 0, its
    /// `meanSeconds` ≥ 0 or null, and each quantile within its interval. A value out of range is
    /// a file edited or damaged since.
    /// - Throws: `ModelFileError` naming the first wrong field under `at`.
    static func checkCounts(_ g: [String: Any], at: String) throws(ModelFileError) {
        let counts = [
            "devices", "submitted", "answeredByRun", "answeredByDrop", "replaced", "pendingAtEnd", "background",
            "succeeded", "expired", "quotaStops", "dropped", "unmatchedLaunches",
        ]
        for key in counts where g[key] != nil {
            guard let n = integer(g[key]), n >= 0 else {
                throw ModelFileError("\(at).\(key): expected a whole number ≥ 0")
            }
        }
        // A share is a part of the requests; a rate counts launches per request or per run, and
        // may pass 1 (a request answered by a drop, then a run).
        for key in ["neverAnsweredShare", "dropRate", "expirationRate", "quotaStopRate", "executionRate"] {
            guard let raw = g[key], !(raw is NSNull) else { continue }
            let share = key == "neverAnsweredShare"
            guard let number = raw as? NSNumber, !JSONNumber(number).isBool, case let rate = number.doubleValue,
                rate >= 0,
                rate.isFinite,
                !share || rate <= 1
            else {
                throw ModelFileError(
                    "\(at).\(key): expected \(share ? "a number between 0 and 1" : "a number ≥ 0"), or null")
            }
        }
        // Every request is answered by a run or a drop, replaced, or pending at the end; the rates
        // and the share are what their counts say (a file edited in one place and not the other).
        if let submitted = integer(g["submitted"]) {
            let parts = ["answeredByRun", "answeredByDrop", "replaced", "pendingAtEnd"].compactMap { integer(g[$0]) }
            if parts.count == 4, parts.reduce(0, +) != submitted {
                throw ModelFileError(
                    "\(at).submitted \(submitted): not answeredByRun + answeredByDrop + replaced + pendingAtEnd = "
                        + "\(parts.reduce(0, +))")
            }
            for key in ["neverAnsweredShare", "executionRate"] where g[key] != nil {
                if (g[key] is NSNull) != (submitted == 0) {
                    throw ModelFileError(
                        "\(at).\(key): \(submitted == 0 ? "null without a request (submitted 0)" : "a number when requests were submitted")"
                    )
                }
            }
            if let rate = number(g["executionRate"]), let succeeded = integer(g["succeeded"]), submitted > 0,
                abs(rate - Double(succeeded) / Double(submitted)) > 1e-9
            {
                throw ModelFileError(
                    "\(at).executionRate \(rate): not succeeded ÷ submitted = \(succeeded) ÷ \(submitted)")
            }
        }
        if let share = number(g["neverAnsweredShare"]), let submitted = integer(g["submitted"]), submitted > 0,
            let replaced = integer(g["replaced"]), let pending = integer(g["pendingAtEnd"]),
            abs(share - Double(replaced + pending) / Double(submitted)) > 1e-9
        {
            throw ModelFileError(
                "\(at).neverAnsweredShare \(share): not (replaced + pendingAtEnd) ÷ submitted = \(replaced + pending) ÷ "
                    + "\(submitted)")
        }
        let bins = Calibration.histogramEdges.count + 1
        for key in ["delay", "spacing"] {
            guard let distribution = g[key] as? [String: Any] else { continue }
            if let raw = distribution["histogram"] {
                guard let histogram = raw as? [Any], histogram.count == bins,
                    histogram.allSatisfy({ integer($0).map { $0 >= 0 } ?? false })
                else {
                    throw ModelFileError(
                        "\(at).\(key).histogram: expected \(bins) whole numbers ≥ 0 (one per bin of histogramEdgesSeconds, "
                            + "and one above the last edge)")
                }
            }
            if let raw = distribution["meanSeconds"], !(raw is NSNull) {
                guard let mean = number(raw), mean >= 0 else {
                    throw ModelFileError("\(at).\(key).meanSeconds: expected a number ≥ 0 or null")
                }
            }
            // Each quantile lies within its interval: lowerSeconds ≤ seconds ≤ upperSeconds
            // where they are given.
            for (j, item) in ((distribution["quantiles"] as? [Any]) ?? []).enumerated() {
                guard let q = item as? [String: Any] else { continue }
                func bound(_ name: String) throws(ModelFileError) -> Double? {
                    guard let raw = q[name], !(raw is NSNull) else { return nil }
                    guard let x = number(raw), x >= 0 else {
                        throw ModelFileError("\(at).\(key).quantiles[\(j)].\(name): expected a number ≥ 0 or null")
                    }
                    return x
                }
                let (lower, value, upper) = (try bound("lowerSeconds"), try bound("seconds"), try bound("upperSeconds"))
                if let lower, let upper, lower > upper {
                    throw ModelFileError(
                        "\(at).\(key).quantiles[\(j)]: lowerSeconds \(lower) above upperSeconds \(upper)")
                }
                if let value, (lower.map { $0 > value } ?? false) || (upper.map { $0 < value } ?? false) {
                    throw ModelFileError(
                        "\(at).\(key).quantiles[\(j)].seconds \(value): outside its interval [\(lower.map { "\($0)" } ?? "open"), "
                            + "\(upper.map { "\($0)" } ?? "open")]")
                }
            }
        }
    }

    static func integer(_ value: Any?) -> Int? {
        guard let n = value as? NSNumber, case .integer(let x) = JSONNumber(n) else { return nil }
        return Int(exactly: x)
    }
}

/// What is wrong with a model file (the reader's first problem).
package struct ModelFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The field and what is wrong, e.g. `groups[2].delay.n: expected a whole number ≥ 0`.
    package var description: String

    package init(_ description: String) { self.description = description }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation

/// A fitted distribution of the wait from a request's eligibility to its launch, drawn by
/// inverse-CDF sampling (docs/scheduler.md, "Opportunity model"; docs/calibration.md).
///
/// The distribution is given by quantiles: `points` `(p, seconds)` with p in (0, 1) and both
/// increasing, the fitted F(seconds) = p. Between the knots, and from (0, 0) to the first, the
/// seconds are linear in the cumulative hazard −ln(1 − p) (exact for an exponential wait, and
/// monotone for any); past the last knot the last segment's slope goes on (an exponential tail
/// with the last segment's hazard), up to `maximumSeconds`. A draw u ≥ 1 − `neverLaunch` is no
/// launch at all. The value knows nothing of files: `sleeptap-calibrate`'s model maps to it
/// outside this module (SleepTapCalibration).
///
/// It may hold bins by the days since the user last opened the app (`byDaysSinceOpen`): a
/// request's wait is then drawn from the bin of its own days since the last open at its
/// eligibility (`delay(daysSinceOpen:)`), from these knots where no bin holds it.
///
/// Value type, `Codable` (stored with the OS's other settings), `Sendable`.
public struct EmpiricalDelay: Codable, Equatable, Sendable {
    /// One knot of the fitted distribution function.
    public struct Point: Codable, Equatable, Sendable {
        /// The cumulative probability, in (0, 1).
        public var p: Double
        /// The wait at which the fitted distribution reaches `p`, seconds, ≥ 0.
        public var seconds: Double

        /// - Parameters:
        ///   - p: cumulative probability in (0, 1).
        ///   - seconds: wait in seconds, ≥ 0.
        public init(p: Double, seconds: Double) {
            self.p = p
            self.seconds = seconds
        }
    }

    /// One bin of the wait by the days since the user last opened the app.
    public struct OpenBin: Codable, Equatable, Sendable {
        /// The bin's lower bound, days since the last open (inclusive, ≥ 0); nil for the bin of
        /// requests with no open before them.
        public var fromDays: Double?
        /// The bin's upper bound, days (exclusive, > `fromDays`); nil for no upper bound (and for
        /// the bin without an open).
        public var toDays: Double?
        /// The wait of the requests in this bin (its own `byDaysSinceOpen` unused).
        public var delay: EmpiricalDelay

        /// - Parameters:
        ///   - fromDays: lower bound in days (inclusive); nil for the requests with no open before them.
        ///   - toDays: upper bound in days (exclusive); nil for none.
        ///   - delay: the bin's wait.
        public init(fromDays: Double?, toDays: Double?, delay: EmpiricalDelay) {
            self.fromDays = fromDays
            self.toDays = toDays
            self.delay = delay
        }

        /// Whether `days` since the last open (nil: no open) falls in this bin.
        public func contains(daysSinceOpen days: Double?) -> Bool {
            guard let days else { return fromDays == nil }
            guard let fromDays else { return false }
            return days >= fromDays && toDays.map { days < $0 } != false
        }
    }

    /// The knots, p and seconds both strictly increasing (`init` sorts and drops the rest).
    public var points: [Point]
    /// Share in [0, 1) of requests the OS never launches.
    public var neverLaunch: Double
    /// Longest wait drawn, seconds (the tail's cap), ≥ the last knot's seconds.
    public var maximumSeconds: Double
    /// The wait by the days since the user's last open at the request's eligibility (a day is
    /// 86,400 s of elapsed time); nil = one wait for every request (and an older encoding). A
    /// request in no bin takes the pooled knots above.
    public var byDaysSinceOpen: [OpenBin]?

    /// - Parameters:
    ///   - points: the fitted quantiles; non-finite ones, p outside (0, 1) and knots that do not
    ///     increase both p and seconds after sorting by p are dropped.
    ///   - neverLaunch: share never launched, clamped to [0, 0.99].
    ///   - maximumSeconds: cap of the tail, seconds (default 48 h); raised to the last knot's.
    ///   - byDaysSinceOpen: bins by the days since the last open (default nil: none).
    public init(
        points: [Point], neverLaunch: Double = 0, maximumSeconds: Double = 48 * 3_600, byDaysSinceOpen: [OpenBin]? = nil
    ) {
        var kept: [Point] = []
        for point in points.sorted(by: { $0.p < $1.p })
        where point.p.isFinite && point.seconds.isFinite && point.p > 0 && point.p < 1 && point.seconds >= 0 {
            if let last = kept.last, !(point.p > last.p && point.seconds > last.seconds) { continue }
            kept.append(point)
        }
        self.points = kept
        self.neverLaunch = neverLaunch.isFinite ? min(0.99, max(0, neverLaunch)) : 0
        let top = kept.last?.seconds ?? 0
        self.maximumSeconds = maximumSeconds.isFinite ? max(maximumSeconds, top) : max(48 * 3_600, top)
        self.byDaysSinceOpen = byDaysSinceOpen
    }

    /// The wait a request draws from: the bin holding `daysSinceOpen` (nil: no open before it),
    /// or these pooled knots when no bin does.
    /// - Parameter daysSinceOpen: days (86,400 s of elapsed time) from the user's last open to the
    ///   request's eligibility; nil when the user never opened the app.
    public func delay(daysSinceOpen: Double?) -> EmpiricalDelay {
        byDaysSinceOpen?.first { $0.contains(daysSinceOpen: daysSinceOpen) }?.delay ?? self
    }

    /// What is wrong with a decoded value (a stored value is input), nil when it is usable.
    public var validationProblem: String? {
        if points.isEmpty { return "points is empty" }
        for (i, point) in points.enumerated() {
            guard point.p.isFinite, point.p > 0, point.p < 1 else {
                return "points[\(i)].p \(point.p): expected 0 < p < 1"
            }
            guard point.seconds.isFinite, point.seconds >= 0 else {
                return "points[\(i)].seconds \(point.seconds): expected ≥ 0"
            }
            if i > 0, !(point.p > points[i - 1].p && point.seconds > points[i - 1].seconds) {
                return "points[\(i)]: p and seconds must increase"
            }
        }
        guard neverLaunch.isFinite, (0...0.99).contains(neverLaunch) else {
            return "neverLaunch \(neverLaunch): expected 0 to 0.99"
        }
        guard maximumSeconds.isFinite, maximumSeconds >= points[points.count - 1].seconds else {
            return "maximumSeconds \(maximumSeconds): expected ≥ the last point's seconds"
        }
        return Self.binsProblem(byDaysSinceOpen)
    }

    /// What is wrong with bins by the days since the last open, nil when they are usable: each
    /// bin's bounds (0 ≤ fromDays < toDays, finite), at most one bin without an open, bins in
    /// increasing order without overlap, and each bin's wait (without bins of its own).
    static func binsProblem(_ bins: [OpenBin]?) -> String? {
        guard let bins else { return nil }
        var previousEnd: Double?
        var withoutOpen = 0
        for (i, bin) in bins.enumerated() {
            let at = "byDaysSinceOpen[\(i)]"
            if let problem = bin.delay.validationProblem { return "\(at).delay.\(problem)" }
            if bin.delay.byDaysSinceOpen != nil { return "\(at).delay.byDaysSinceOpen: expected none inside a bin" }
            guard let from = bin.fromDays else {
                if bin.toDays != nil { return "\(at).toDays: expected null in the bin without an open (fromDays null)" }
                withoutOpen += 1
                if withoutOpen > 1 { return "\(at): a second bin without an open (fromDays null)" }
                continue
            }
            guard from.isFinite, from >= 0 else { return "\(at).fromDays \(from): expected a finite number ≥ 0" }
            if let to = bin.toDays, !(to.isFinite && to > from) {
                return "\(at).toDays \(to): expected a finite number > fromDays \(from)"
            }
            if let end = previousEnd, from < end {
                let before = end.isFinite ? "up to \(end)" : "no upper bound"
                return "\(at).fromDays \(from): overlaps the bin before (\(before)); bins must increase"
            }
            previousEnd = bin.toDays ?? .infinity
        }
        return nil
    }

    /// The wait at cumulative probability `u` in [0, 1), seconds; nil when u falls in the share
    /// never launched (u ≥ 1 − `neverLaunch`) or there are no knots.
    public func seconds(at u: Double) -> Double? {
        guard !points.isEmpty, u < 1 - neverLaunch else { return nil }
        func hazard(_ p: Double) -> Double { -log1p(-p) }
        let x = hazard(max(0, u))
        var previous = (x: 0.0, t: 0.0)
        for point in points {
            let knot = (x: hazard(point.p), t: point.seconds)
            if x <= knot.x {
                return previous.t + (knot.t - previous.t) * (x - previous.x) / (knot.x - previous.x)
            }
            previous = knot
        }
        // The tail: the last segment's slope in the cumulative hazard.
        let before = points.count >= 2 ? points[points.count - 2] : Point(p: 0, seconds: 0)
        let slope = (previous.t - before.seconds) / (previous.x - hazard(before.p))
        return min(maximumSeconds, previous.t + slope * (x - previous.x))
    }

    /// One wait drawn with `rng` (one `SplitMix64` step) from the bin of `daysSinceOpen`, nil for no launch.
    func draw(daysSinceOpen: Double?, using rng: inout SplitMix64) -> Double? {
        delay(daysSinceOpen: daysSinceOpen).seconds(at: rng.schedulerUnitInterval())
    }
}

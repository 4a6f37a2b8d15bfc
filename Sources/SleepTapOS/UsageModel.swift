// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// Which rule draws an iOS app-refresh launch after `earliestBeginDate` (docs/scheduler.md,
/// "Opportunity model" and "Usage model").
public enum OpportunityModelKind: String, Codable, CaseIterable, Sendable {
    /// The exponential wait of `IOSBackgroundScheduler.OpportunityModel` (the default; the same
    /// seed gives the same launches as before the usage model existed).
    case legacy
    /// `UsageModel`: launches before the times of day the user opens the app, rarer as the days
    /// since the last open grow, spaced at least `UsageModel.minimumSpacing` apart.
    case usage
}

/// The seeded usage-driven launch model of iOS app refresh (docs/scheduler.md, "Usage model").
///
/// Apple names app usage and rate limiting among the factors that decide when an app runs in the
/// background (WWDC20 "Background execution demystified"); it gives no formula. This model's
/// assumptions: candidate opportunities come as a Poisson process of mean spacing
/// `OpportunityModel.meanDelay`; the OS keeps each one with probability
/// `weight(time of day) × 0.5^(days since the last open / halfLifeDays)`, where the weight is
/// `offHoursWeight` plus the share of the recorded opens that fall within `lead` seconds after
/// that time of day; launches are at least `minimumSpacing` apart; a request that finds no
/// opportunity within `horizon` seconds of its eligibility gets none until the user opens the
/// app again. Times of day are seconds of the UTC day (a user who travels shifts them).
///
/// Only the user's opens count as usage (`IOSBackgroundScheduler.appLaunched(at:byUser:)` with
/// `byUser` true): Apple names the user's app usage as the factor, so the OS's own background
/// launches (entered or not) do not count, nor does the use of a paired watch app, for which no
/// public Apple page says it counts toward the iOS app's app-refresh launches.
public struct UsageModel: Codable, Equatable, Sendable {
    /// How many of the user's most recent opens the OS keeps (default 30; this model's assumption).
    public var historyLimit: Int
    /// How long before a usual open time an opportunity counts as "before the usual open",
    /// seconds (default 2 h; this model's assumption).
    public var lead: TimeInterval
    /// Weight in [0, 1] of a time of day with no open within `lead` after it (default 0.1;
    /// this model's assumption: about 40 % of a daily user's launches come in the `lead` before
    /// the usual open, and an app opened only at install still runs most days).
    public var offHoursWeight: Double
    /// Days without an open over which the keep probability halves (default 7; this model's
    /// assumption: a week without opens keeps half of the opportunities, two weeks a quarter).
    public var halfLifeDays: Double
    /// Shortest time between two launches of the app, seconds (default 1,800; Apple names rate
    /// limiting without a number: the value is this model's assumption).
    public var minimumSpacing: TimeInterval
    /// How far past eligibility the OS looks for an opportunity, seconds (default 14 days; this
    /// model's assumption); none found: no launch until the user opens the app.
    public var horizon: TimeInterval
    /// Battery charge in [0, 1] below which, while not charging, no app-refresh launch comes
    /// (default 0.2: WWDC20 names critically low battery as a factor without a number; 20 % is
    /// this model's assumption, the level at which iOS offers Low Power Mode).
    public var criticalBatteryLevel: Double

    /// - Parameters:
    ///   - historyLimit: opens kept, ≥ 1.
    ///   - lead: seconds, ≥ 60.
    ///   - offHoursWeight: clamped to [0, 1].
    ///   - halfLifeDays: days, > 0.
    ///   - minimumSpacing: seconds, ≥ 0.
    ///   - horizon: seconds, ≥ 1 h.
    ///   - criticalBatteryLevel: clamped to [0, 1].
    public init(
        historyLimit: Int = 30, lead: TimeInterval = 2 * 3_600, offHoursWeight: Double = 0.1,
        halfLifeDays: Double = 7, minimumSpacing: TimeInterval = 1_800, horizon: TimeInterval = 14 * 86_400,
        criticalBatteryLevel: Double = 0.2
    ) {
        self.criticalBatteryLevel = min(1, max(0, criticalBatteryLevel))
        self.historyLimit = max(1, historyLimit)
        self.lead = max(60, lead)
        self.offHoursWeight = min(1, max(0, offHoursWeight))
        self.halfLifeDays = max(0.001, halfLifeDays)
        self.minimumSpacing = max(0, minimumSpacing)
        self.horizon = max(3_600, horizon)
    }

    /// The chance in [0, 1] that the OS keeps a candidate opportunity at `t`.
    /// - Parameters:
    ///   - t: the candidate instant.
    ///   - opens: the recorded opens, oldest first (empty: weight 1, no decay).
    func keepProbability(at t: Date, opens: [Date]) -> Double {
        guard let last = opens.last else { return 1 }
        let days = max(0, t.timeIntervalSince(last)) / 86_400
        let decay = pow(0.5, days / halfLifeDays)
        let tod = Self.secondOfDay(t)
        var near = 0
        for open in opens {
            var ahead = Self.secondOfDay(open) - tod
            if ahead < 0 { ahead += 86_400 }
            if ahead <= lead { near += 1 }
        }
        let share = Double(near) / Double(opens.count)
        return (offHoursWeight + (1 - offHoursWeight) * share) * decay
    }

    /// Seconds since the start of `t`'s UTC day, in [0, 86,400).
    static func secondOfDay(_ t: Date) -> TimeInterval {
        let s = t.timeIntervalSince1970.truncatingRemainder(dividingBy: 86_400)
        return s < 0 ? s + 86_400 : s
    }

    /// The first kept opportunity at or after `eligible` (thinning a Poisson process of mean
    /// spacing `meanDelay`), on the `grid`, or nil when none comes within `horizon`, or when
    /// `eligible` is so far from 1970 that a step leaves it unchanged (a double then cannot hold
    /// the steps; the instants of any run lie far closer).
    func draw(
        from eligible: Date, opens: [Date], meanDelay: TimeInterval, grid: (Date) -> Date,
        using rng: inout SplitMix64
    ) -> Date? {
        let end = eligible.addingTimeInterval(horizon)
        var t = eligible
        while true {
            let step = -meanDelay * log1p(-rng.schedulerUnitInterval())
            let next = t.addingTimeInterval(step)
            if step > 0 && next == t { return nil }
            t = next
            if t > end { return nil }
            if rng.schedulerUnitInterval() < keepProbability(at: t, opens: opens) { return grid(t) }
        }
    }
}

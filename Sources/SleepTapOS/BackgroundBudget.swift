// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// The energy and data budgets of an app's iOS app-refresh runs, refilled continuously so that
/// they are spread through the day (docs/scheduler.md, "Energy and data budgets").
///
/// Apple's WWDC20 session "Background execution demystified" names system energy and data
/// budgets, "distributed throughout the day", among the factors that decide whether an app runs
/// in the background; it gives no numbers. Every value here is this model's assumption: each
/// budget is a token bucket that refills at `perDay / 86,400` per second and holds at most
/// `window` seconds of refill; a run's cost is drawn when it is known, and a launch is withheld
/// while a bucket is below zero (overdrawn).
public struct BackgroundBudget: Codable, Equatable, Sendable {
    /// Seconds of app-refresh running time the OS grants the app per 24 hours (default 300;
    /// this model's assumption).
    public var energyPerDay: TimeInterval
    /// Bytes the app may transfer in its app-refresh runs per 24 hours (default 2,000,000; this
    /// model's assumption).
    public var dataPerDay: Double
    /// Seconds of refill a full bucket holds (default 21,600 = 6 h: at most a quarter of a day's
    /// budget can be spent at once; this model's assumption).
    public var window: TimeInterval

    /// - Parameters:
    ///   - energyPerDay: running seconds per 24 h, ≥ 0.001.
    ///   - dataPerDay: bytes per 24 h, ≥ 1.
    ///   - window: seconds of refill a full bucket holds, ≥ 60.
    public init(energyPerDay: TimeInterval = 300, dataPerDay: Double = 2_000_000, window: TimeInterval = 21_600) {
        self.energyPerDay = max(0.001, energyPerDay)
        self.dataPerDay = max(1, dataPerDay)
        self.window = max(60, window)
    }

    /// The energy bucket's refill rate, running seconds per second.
    var energyRate: Double { energyPerDay / 86_400 }
    /// The data bucket's refill rate, bytes per second.
    var dataRate: Double { dataPerDay / 86_400 }
    /// The energy bucket's capacity, running seconds.
    var energyCapacity: Double { energyRate * window }
    /// The data bucket's capacity, bytes.
    var dataCapacity: Double { dataRate * window }
}

/// One budget's balance at an instant (a token bucket): refilled at a rate up to a capacity,
/// drawn by costs, possibly below zero (overdrawn).
struct BudgetBalance: Codable, Equatable, Sendable {
    /// The balance at `at` (running seconds or bytes).
    var balance: Double
    /// The instant of `balance`.
    var at: Date

    /// The balance at `t` (not before `at`), refilled at `rate` per second up to `capacity`.
    func balance(at t: Date, rate: Double, capacity: Double) -> Double {
        min(capacity, balance + rate * max(0, t.timeIntervalSince(at)))
    }

    /// The balance after `cost` is drawn at `t` (below zero when the cost was more than was left).
    func drawn(_ cost: Double, at t: Date, rate: Double, capacity: Double) -> BudgetBalance {
        BudgetBalance(balance: balance(at: t, rate: rate, capacity: capacity) - cost, at: t)
    }

    /// When the balance is back to zero, nil when it is not below zero at `t`.
    func refilled(after t: Date, rate: Double, capacity: Double) -> Date? {
        let now = balance(at: t, rate: rate, capacity: capacity)
        guard now < 0 else { return nil }
        return t.addingTimeInterval(-now / rate)
    }
}

/// How the battery's charge changes over time while a level is known (docs/scheduler.md,
/// "Battery over the day"): it falls at `drainPerHour` while unplugged and rises at
/// `chargePerHour` while charging, within [0, 1]. Both rates are this model's assumptions (no
/// public source gives a phone's drain).
public struct BatteryModel: Codable, Equatable, Sendable {
    /// Charge lost per hour while unplugged, a fraction (default 0.03: a full battery lasts about
    /// 33 h; this model's assumption).
    public var drainPerHour: Double
    /// Charge gained per hour while charging, a fraction (default 0.5: empty to full in 2 h;
    /// this model's assumption).
    public var chargePerHour: Double

    /// - Parameters:
    ///   - drainPerHour: fraction per hour, clamped to [0, 1].
    ///   - chargePerHour: fraction per hour, clamped to [0, 10].
    public init(drainPerHour: Double = 0.03, chargePerHour: Double = 0.5) {
        self.drainPerHour = min(1, max(0, drainPerHour))
        self.chargePerHour = min(10, max(0, chargePerHour))
    }

    /// The level `seconds` after `level`, charging or not, within [0, 1].
    func level(_ level: Double, after seconds: TimeInterval, charging: Bool) -> Double {
        let hours = max(0, seconds) / 3_600
        return charging ? min(1, level + chargePerHour * hours) : max(0, level - drainPerHour * hours)
    }
}

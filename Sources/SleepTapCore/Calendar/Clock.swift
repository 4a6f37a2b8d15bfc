// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// A source of "now" for the domain. Domain timing (wake dates, bed taps, background launches)
/// always reads one of these; transport timing (heartbeats, resends) uses the wall clock.
public protocol Clock: Sendable {
    /// The current instant on this clock (an absolute instant; render it in UTC or a zone as needed).
    var now: Date { get }
    /// The wall-clock instant at which this clock will read `instant`, used to arm wall timers
    /// (poll timeouts) for virtual deadlines. An instant already passed maps to a wall instant
    /// already passed.
    func wallDate(for instant: Date) -> Date
}

/// The wall clock: `now` is `Date()`.
package struct WallClock: Clock {
    /// The system's wall clock.
    package init() {}
    package var now: Date { Date() }
    package func wallDate(for instant: Date) -> Date { instant }
}

/// Scaled virtual time shared by several processes.
///
/// `now = start + (wallNow - anchor) × speed`, so two processes given the same `start`, `speed`
/// and `anchor` agree on virtual now without talking to each other. The wall clock is read once,
/// at construction, to place the anchor on CLOCK_MONOTONIC; elapsed time is measured on
/// CLOCK_MONOTONIC from then on, which every process of the machine shares and which a step of
/// the wall clock (settimeofday, an NTP step: Linux `clock_gettime(2)`) does not move. A step of
/// 0.2 s back at speed 172,800 would otherwise move virtual now back 9.6 hours.
public struct VirtualClock: Clock {
    /// The virtual instant at the anchor.
    public let start: Date
    /// Virtual seconds per wall second; > 0.
    public let speed: Double
    /// The wall instant at which virtual time equals `start`.
    public let anchor: Date
    /// The anchor on the monotonic clock (seconds), converted once at construction.
    public let monotonicAnchor: Double
    /// The latest instant `now` gives, nil for none: the clock stops there rather than run past
    /// the range the process may stamp (`phone` and `watch` stop themselves when it is reached).
    public let ceiling: Date?
    private let wallNow: @Sendable () -> Date
    private let monotonicNow: @Sendable () -> Double

    /// - Parameters:
    ///   - start: virtual instant at the anchor.
    ///   - speed: virtual seconds per wall second, finite and > 0.
    ///   - anchor: wall instant (UNIX seconds) at which virtual now is `start`.
    ///   - wallNow: the wall source (CLOCK_REALTIME), read once here and by `wallDate(for:)`;
    ///     tests inject one.
    ///   - monotonicNow: seconds on a clock steps cannot move (CLOCK_MONOTONIC); tests inject one.
    ///   - ceiling: the latest instant `now` gives (nil: none).
    public init(
        start: Date, speed: Double, anchor: Date,
        wallNow: @escaping @Sendable () -> Date = { Date() },
        monotonicNow: @escaping @Sendable () -> Double = { VirtualClock.monotonicSeconds() },
        ceiling: Date? = nil
    ) {
        precondition(speed > 0 && speed.isFinite, "VirtualClock speed must be finite and > 0")
        self.ceiling = ceiling
        self.start = start
        self.speed = speed
        self.anchor = anchor
        self.wallNow = wallNow
        self.monotonicNow = monotonicNow
        // The wall clock read between two monotonic readings, the tightest of 8 tries: at speed
        // 1,000,000 a microsecond between the two readings is a virtual second, and two
        // processes on the same flags must agree to well under that.
        var best = (gap: Double.infinity, anchor: 0.0)
        for _ in 0..<8 {
            let before = monotonicNow()
            let wall = wallNow()
            let after = monotonicNow()
            if after - before < best.gap {
                best = (after - before, (before + after) / 2 - wall.timeIntervalSince(anchor))
            }
        }
        monotonicAnchor = best.anchor
    }

    public var now: Date {
        let now = start.addingTimeInterval((monotonicNow() - monotonicAnchor) * speed)
        guard let ceiling, now > ceiling else { return now }
        return ceiling
    }

    /// The wall instant at which virtual now reaches `instant`, counted from the wall clock's
    /// reading now (so a wall timer armed after a step still fires after the right wait).
    public func wallDate(for instant: Date) -> Date {
        wallNow().addingTimeInterval(instant.timeIntervalSince(now) / speed)
    }

    /// CLOCK_MONOTONIC in seconds (Linux `clock_gettime(2)`).
    public static func monotonicSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}

/// The instants a process may stamp and store: 1970-01-01T00:00:00Z to the end of 2199 (UTC),
/// the range of the clock flags (`--clock-start`, `--clock-anchor`) and of the wall clock
/// `clock-set` may set; a state file holds nothing outside it.
package enum ClockRange {
    /// 1970-01-01T00:00:00Z.
    package static let earliest = Date(timeIntervalSince1970: 0)
    /// 2199-12-31T23:59:59Z, the last whole second.
    package static let latest = Date(timeIntervalSince1970: 7_258_118_399)
    /// 2199-12-31T23:59:59.999Z: virtual now may reach it, not pass it.
    package static let lastMoment = Date(timeIntervalSince1970: 7_258_118_399.999)

    /// The UTC year of an instant in UNIX seconds (Foundation's Gregorian calendar; far beyond
    /// its range, an approximation by the mean Gregorian year of 31,556,952 s).
    package static func year(of seconds: Double) -> Int {
        guard abs(seconds) < 2.5e11 else { return Int((1970 + seconds / 31_556_952).rounded(.down)) }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        let components = calendar.dateComponents([.era, .year], from: Date(timeIntervalSince1970: seconds))
        let year = components.year ?? 0
        return components.era == 0 ? 1 - year : year
    }
}

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
public struct WallClock: Clock {
    /// The system's wall clock.
    public init() {}
    public var now: Date { Date() }
    public func wallDate(for instant: Date) -> Date { instant }
}

/// Scaled virtual time shared by several processes.
///
/// `now = start + (wallNow - anchor) × speed`, so two processes given the same `start`, `speed`
/// and `anchor` agree on virtual now without talking to each other.
public struct VirtualClock: Clock {
    /// The virtual instant at the anchor.
    public let start: Date
    /// Virtual seconds per wall second; > 0.
    public let speed: Double
    /// The wall instant at which virtual time equals `start`.
    public let anchor: Date
    private let wallNow: @Sendable () -> Date

    /// - Parameters:
    ///   - start: virtual instant at the anchor.
    ///   - speed: virtual seconds per wall second, finite and > 0.
    ///   - anchor: wall instant (UNIX seconds) at which virtual now is `start`.
    ///   - wallNow: the wall source; tests inject one.
    public init(
        start: Date, speed: Double, anchor: Date,
        wallNow: @escaping @Sendable () -> Date = { Date() }
    ) {
        precondition(speed > 0 && speed.isFinite, "VirtualClock speed must be finite and > 0")
        self.start = start
        self.speed = speed
        self.anchor = anchor
        self.wallNow = wallNow
    }

    public var now: Date {
        start.addingTimeInterval(wallNow().timeIntervalSince(anchor) * speed)
    }

    public func wallDate(for instant: Date) -> Date {
        anchor.addingTimeInterval(instant.timeIntervalSince(start) / speed)
    }
}

// SPDX-License-Identifier: Apache-2.0

public import Foundation
public import SleepTapCore

/// The virtual clock flags shared by both executables.
public struct ClockOptions: Equatable, Sendable {
    /// `--clock-start ISO8601`: virtual instant at the anchor.
    public var start: Date?
    /// `--clock-speed N`: virtual seconds per wall second (default 1).
    public var speed: Double = 1
    /// `--clock-anchor UNIX_SECONDS`: wall instant at which virtual now is `start`
    /// (default: when the process started).
    public var anchor: Date?

    /// Bounds of `--clock-start` (and `--clock-anchor`): 1970-01-01 to 2199-12-31.
    public static let earliest = Date(timeIntervalSince1970: 0)
    public static let latest = Date(timeIntervalSince1970: 7_258_118_400)
    /// Largest `--clock-speed`: 10^7 (a wall second is 115 virtual days).
    public static let maxSpeed = 10_000_000.0

    public init(start: Date? = nil, speed: Double = 1, anchor: Date? = nil) {
        self.start = start
        self.speed = speed
        self.anchor = anchor
    }

    /// Wall time when no flag is given; otherwise `now = start + (wall - anchor) × speed`.
    public func makeClock(processStart: Date = Date()) -> any SleepTapCore.Clock {
        if start == nil && anchor == nil && speed == 1 { return WallClock() }
        let anchor = anchor ?? processStart
        return VirtualClock(start: start ?? anchor, speed: speed, anchor: anchor)
    }
}

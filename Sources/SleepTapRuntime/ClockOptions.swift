// SPDX-License-Identifier: Apache-2.0

package import Foundation
package import SleepTapCommandLine
package import SleepTapCore

/// The virtual clock flags shared by both executables.
package struct ClockOptions: Equatable, Sendable {
    /// `--clock-start ISO8601`: virtual instant at the anchor.
    package var start: Date?
    /// `--clock-speed N`: virtual seconds per wall second (default 1).
    package var speed: Double = 1
    /// `--clock-anchor UNIX_SECONDS`: wall instant at which virtual now is `start`
    /// (default: when the process started).
    package var anchor: Date?

    /// Bounds of `--clock-start` (and `--clock-anchor`): 1970-01-01T00:00:00Z to
    /// 2199-12-31T23:59:59Z, both included (2200-01-01T00:00:00Z is out of range).
    package static let earliest = Date(timeIntervalSince1970: 0)
    /// The last instant of 2199 (UTC).
    package static let latest = Date(timeIntervalSince1970: 7_258_118_399)
    /// Largest `--clock-speed`: 10^7 (a wall second is 115 virtual days).
    package static let maxSpeed = 10_000_000.0

    package init(start: Date? = nil, speed: Double = 1, anchor: Date? = nil) {
        self.start = start
        self.speed = speed
        self.anchor = anchor
    }

    /// Refuses `--clock-anchor` without `--clock-start`: an anchor only says when the virtual
    /// clock reads `--clock-start`, so alone it would be ignored at speed 1 and used at other
    /// speeds; a flag that means nothing on its own is an error rather than a silent choice.
    /// - Throws: `UsageError` naming both flags (exit 64).
    package func check() throws(UsageError) {
        if anchor != nil && start == nil {
            throw UsageError(
                "--clock-anchor needs --clock-start (the anchor is the wall instant at which virtual time is --clock-start)"
            )
        }
    }

    /// Wall time when no flag is given; otherwise `now = start + (wall - anchor) × speed`.
    package func makeClock(processStart: Date = Date()) -> any SleepTapCore.Clock {
        if start == nil && anchor == nil && speed == 1 { return WallClock() }
        let anchor = anchor ?? processStart
        return VirtualClock(start: start ?? anchor, speed: speed, anchor: anchor)
    }
}

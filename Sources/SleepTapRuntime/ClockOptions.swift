// SPDX-License-Identifier: Apache-2.0

package import Foundation
package import SleepTapCommandLine
package import SleepTapCore
import Synchronization

/// The virtual clock flags shared by both executables.
package struct ClockOptions: Equatable, Sendable {
    /// `--clock-start ISO8601`: virtual instant at the anchor.
    package var start: Date?
    /// `--clock-speed N`: virtual seconds per wall second (default 1).
    package var speed: Double = 1
    /// `--clock-anchor UNIX_SECONDS`: wall instant at which virtual now is `start`
    /// (default: when the process started).
    package var anchor: Date?

    /// Bounds of `--clock-start` (and `--clock-anchor`), both included: `ClockRange`.
    package static let earliest = ClockRange.earliest
    /// The last instant of 2199 (UTC).
    package static let latest = ClockRange.latest
    /// The last moment virtual now may reach (`ClockRange.lastMoment`).
    package static let lastMoment = ClockRange.lastMoment
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
    /// Refuses flags that put virtual now, at `now`, outside `earliest`...`latest`: an anchor
    /// far from now at a high speed moves the clock by centuries (every instant the processes
    /// write must lie in that range, or their own state files would refuse it).
    /// - Parameter now: the wall instant the process starts at.
    /// - Throws: `UsageError` naming the flags (exit 64).
    package func check(now: Date = Date()) throws(UsageError) {
        if anchor != nil && start == nil {
            throw UsageError(
                "--clock-anchor needs --clock-start (the anchor is the wall instant at which virtual time is --clock-start)"
            )
        }
        guard let start, let anchor else { return }
        let virtualNow = start.timeIntervalSince1970 + now.timeIntervalSince(anchor) * speed
        guard virtualNow < Self.earliest.timeIntervalSince1970 || virtualNow > Self.lastMoment.timeIntervalSince1970
        else { return }
        throw UsageError(
            "--clock-start, --clock-speed and --clock-anchor put virtual now in the year \(ClockRange.year(of: virtualNow)), "
                + "outside 1970-01-01T00:00:00Z to 2199-12-31T23:59:59Z (now is \(Int(now.timeIntervalSince1970)) "
                + "UNIX seconds; --clock-anchor \(Int(anchor.timeIntervalSince1970)) is "
                + "\(Int(abs(now.timeIntervalSince(anchor)))) s \(anchor > now ? "ahead" : "ago"), "
                + "× --clock-speed \(Self.speedText(speed)))")
    }

    /// The wall seconds from `now` until virtual time reaches `latest`, nil at wall time (the
    /// machine's clock is not ours to stop) or when it is more than a year away.
    /// - Parameter now: the wall instant to count from.
    package func secondsToRangeEnd(from now: Date = Date()) -> TimeInterval? {
        guard let start else { return nil }
        let anchor = anchor ?? now
        let virtualNow = start.timeIntervalSince1970 + now.timeIntervalSince(anchor) * speed
        let seconds = (Self.latest.timeIntervalSince1970 - virtualNow) / speed
        return seconds < 365 * 86_400 ? max(0, seconds) : nil
    }

    private static func speedText(_ speed: Double) -> String {
        speed == speed.rounded() && abs(speed) < 1e15 ? String(Int(speed)) : String(speed)
    }

    /// Wall time when no flag is given; otherwise `now = start + (wall - anchor) × speed`.
    package func makeClock(processStart: Date = Date()) -> any SleepTapCore.Clock {
        if start == nil && anchor == nil && speed == 1 { return WallClock() }
        let anchor = anchor ?? processStart
        return VirtualClock(start: start ?? anchor, speed: speed, anchor: anchor, ceiling: Self.lastMoment)
    }
}

/// Stops the process when its virtual clock reaches `ClockOptions.latest`: posts
/// `.stop(.clockRangeEnd)` to the loop at that moment (a Dispatch timer on the monotonic clock,
/// as `VirtualClock` counts), so no instant past the range is ever stamped or stored.
package final class ClockRangeWatch: Sendable {
    private let fired = Atomic<Bool>(false)

    /// Arms the stop, unless the clock is the wall clock or the end is more than a year away.
    /// - Parameters:
    ///   - options: the process's clock flags.
    ///   - mailbox: the loop's inputs.
    package init(_ options: ClockOptions, mailbox: Mailbox) {
        guard let seconds = options.secondsToRangeEnd() else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
            fired.store(true, ordering: .relaxed)
            mailbox.post(.stop(.clockRangeEnd))
        }
    }

    /// Whether the stop was posted; the process then exits 64 (its clock flags ran it out of range).
    package var reached: Bool { fired.load(ordering: .relaxed) }

    /// The line said on stderr when `reached`.
    package static let message =
        "virtual time reached 2199-12-31T23:59:59Z, the last instant the clock flags allow; stopping "
        + "(start nearer now, or at a lower --clock-speed)"
}

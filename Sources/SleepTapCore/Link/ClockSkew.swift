// SPDX-License-Identifier: Apache-2.0

package import Foundation
import SleepTapOS

/// The check of a peer's clock against this side's virtual now, from the instants a message
/// carries (a BATCH's `generatedAt`).
///
/// A batch is made at the phone's virtual now and sent at once, so one from more than
/// `aheadLimit` (1 h) in the receiver's future means the two clocks disagree (different
/// `--clock-start`, `--clock-anchor` or `--clock-speed`, or a wrong system clock). A batch may
/// legitimately be old (sent again after an outage, or the answer to a HELLO), so the past
/// direction warns only beyond `behindLimit` (8 days: more than the 7-day horizon, when every
/// date it carries has passed). This project's thresholds; no platform documents one.
package enum ClockSkew {
    /// Seconds a message's instant may be ahead of the receiver's virtual now (1 h).
    package static let aheadLimit: TimeInterval = 3_600
    /// Seconds a message's instant may be behind the receiver's virtual now (8 days).
    package static let behindLimit: TimeInterval = 8 * 86_400

    /// `clock.skew` {message, generatedAt, skewHours, reason} when `generatedAt` is too far from
    /// `now`, nil otherwise.
    /// - Parameters:
    ///   - generatedAt: the batch's `generatedAt` (the sender's virtual instant, UTC).
    ///   - now: the receiver's virtual now.
    package static func check(generatedAt: Date, now: Date) -> Event? {
        let skew = generatedAt.timeIntervalSince(now)
        guard skew > aheadLimit || -skew > behindLimit else { return nil }
        let hours = (skew / 360).rounded() / 10
        let reason =
            skew > 0
            ? "the BATCH was generated \(abs(hours)) h after this side's now: the two clocks disagree "
                + "(give both the same --clock-start, --clock-speed and --clock-anchor)"
            : "the BATCH was generated \(abs(hours)) h before this side's now, past its 7-day horizon: "
                + "the two clocks disagree, or the phone has not refreshed for over a week"
        return Event(
            .clockSkew,
            [
                ("message", .string("BATCH")), ("generatedAt", .date(generatedAt)), ("skewHours", .double(hours)),
                ("reason", .string(reason)),
            ])
    }

    /// Wall seconds a message stamped when sent (a HELLO) may wait on its way (a busy start-up, a
    /// relay) before its age is the clocks' doing: 2 s, times the clock speed in virtual seconds.
    package static let queueWallSeconds: TimeInterval = 2

    /// `clock.skew` {message, sentAt, skewHours, reason} when a message stamped with its sender's
    /// virtual now (a HELLO's `sentAt`) is more than `aheadLimit` (1 h) ahead of `now`, or behind
    /// it by more than 1 h or `queueWallSeconds` of virtual time at `clockSpeed`, whichever is
    /// more (at 172,800× a HELLO that waited 21 wall ms behind a busy start-up is an hour old);
    /// nil otherwise. Such a message is sent at once and never resent old, so unlike a BATCH it
    /// has no 8-day allowance in the past. A clock behind by more than that allowance shows on
    /// the other side as a BATCH from its future.
    /// - Parameters:
    ///   - sentAt: the message's `sentAt` (the sender's virtual instant, UTC).
    ///   - now: the receiver's virtual now.
    ///   - message: the message type (`HELLO`).
    ///   - clockSpeed: the receiver's `--clock-speed` (virtual seconds per wall second).
    package static func check(sentAt: Date, now: Date, message: String, clockSpeed: Double = 1) -> Event? {
        let skew = sentAt.timeIntervalSince(now)
        let behind = max(aheadLimit, queueWallSeconds * clockSpeed)
        guard skew > aheadLimit || -skew > behind else { return nil }
        let hours = (skew / 360).rounded() / 10
        let reason =
            "the \(message) was sent \(abs(hours)) h \(skew > 0 ? "after" : "before") this side's now: the two "
            + "clocks disagree (give both the same --clock-start, --clock-speed and --clock-anchor)"
        return Event(
            .clockSkew,
            [
                ("message", .string(message)), ("sentAt", .date(sentAt)), ("skewHours", .double(hours)),
                ("reason", .string(reason)),
            ])
    }
}

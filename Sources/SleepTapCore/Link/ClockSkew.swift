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

    /// `clock.skew` {message, sentAt, skewHours, reason} when a message stamped with its sender's
    /// virtual now (a HELLO's `sentAt`) is more than `aheadLimit` (1 h) away from `now` in either
    /// direction, nil otherwise. Such a message is sent at once and never resent old, so unlike a
    /// BATCH it has no 8-day allowance in the past.
    /// - Parameters:
    ///   - sentAt: the message's `sentAt` (the sender's virtual instant, UTC).
    ///   - now: the receiver's virtual now.
    ///   - message: the message type (`HELLO`).
    package static func check(sentAt: Date, now: Date, message: String) -> Event? {
        let skew = sentAt.timeIntervalSince(now)
        guard abs(skew) > aheadLimit else { return nil }
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

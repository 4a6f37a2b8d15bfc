// SPDX-License-Identifier: Apache-2.0

package import Foundation

/// Whether the peer is there, from what arrives: any valid message means online; silence longer
/// than `timeout` while checks run every `interval` means offline. Wall seconds on a monotonic
/// clock, passed in.
package struct LinkLiveness: Equatable, Sendable {
    /// Seconds between checks (and between the phone's heartbeat pings).
    package static let interval: TimeInterval = 1
    /// Seconds of silence after which the peer counts as offline.
    package static let timeout: TimeInterval = 3

    /// Wall second (monotonic) at which a valid message last arrived; nil before the first.
    package private(set) var lastHeard: TimeInterval?
    /// Whether the peer counts as online: heard from, and not silent for `timeout` seconds since.
    package private(set) var online = false
    /// When the last check ran: a long gap means this process itself was not running (SIGSTOP,
    /// a suspended machine), and its own pause is not the peer's silence.
    private var lastCheck: TimeInterval?

    /// A peer not heard from yet (offline).
    package init() {}

    /// A valid message arrived at wall second `now`.
    /// - Returns: true when the peer just came online.
    package mutating func heard(at now: TimeInterval) -> Bool {
        lastHeard = now
        if lastCheck == nil { lastCheck = now }  // a pause before the first check is a pause too
        defer { online = true }
        return !online
    }

    /// The periodic check, every `interval`, at wall second `now`.
    /// - Returns: the silence in seconds when the peer just went offline, else nil.
    package mutating func check(at now: TimeInterval) -> TimeInterval? {
        defer { lastCheck = now }
        if let lastCheck, now - lastCheck > 2 * Self.interval, online {
            // This process was paused: give the peer a fresh timeout from now.
            lastHeard = now
            return nil
        }
        guard online, let lastHeard, now - lastHeard > Self.timeout else { return nil }
        online = false
        return now - lastHeard
    }
}

// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// The moment a node input happens, in both of the process's time bases.
///
/// Domain timing (wake dates, background launches, the nightly tap) is virtual time; transport
/// timing (resends, HELLO retries, heartbeats, reconnects, rate-limit windows) is wall time,
/// measured on a monotonic clock so that a jump of the system clock changes nothing.
public struct NodeTime: Equatable, Sendable {
    /// Virtual now: what events carry and what domain rules use.
    public var now: Date
    /// Monotonic wall seconds since an arbitrary origin fixed for the process (or the twin).
    public var wall: TimeInterval

    /// The moment at virtual instant `now` and monotonic wall second `wall`.
    public init(now: Date, wall: TimeInterval) {
        self.now = now
        self.wall = wall
    }
}

/// When an armed timer is due.
public enum TimerDeadline: Equatable, Sendable {
    /// Transport timing: this many wall seconds after the input that armed it.
    case after(TimeInterval)
    /// Domain timing: at this virtual instant (a driver maps it to wall time through its clock).
    case at(Date)
}

/// How a durable write that a node asked for ended.
public enum PersistResult: Equatable, Sendable {
    /// The state is on disk (written and fsync'd).
    case succeeded
    /// The write failed: `errno` as the system gave it (`ENOSPC`, `EIO`, …), nil when no system
    /// call failed (the state could not be encoded), the cause in words, and the file that
    /// failed when it is not the node's state file (the phone's `phone-app.json`), else nil.
    case failed(errno: Int32?, reason: String, path: String? = nil)
}

extension PersistResult {
    /// The symbolic name of a Linux `errno` (`ENOSPC`, `EIO`, …), nil for one `Errno` does not
    /// name.
    public static func errnoName(_ errno: Int32) -> String? {
        Errno(errno).name
    }
}

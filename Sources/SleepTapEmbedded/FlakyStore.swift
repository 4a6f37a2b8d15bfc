// SPDX-License-Identifier: Apache-2.0

import Foundation

/// An in-memory durable store that fails chosen writes with an errno, as a full or broken disk
/// does (`ENOSPC`, `EIO`). What it holds is what a restarted node would read back.
public struct FlakyStore<Value: Sendable>: Sendable {
    /// The errno a failing write reports.
    public var errno: Int32
    /// 1-based numbers of the writes that fail.
    public var failing: Set<Int>
    /// Writes attempted so far.
    public private(set) var writes = 0
    /// The last value written successfully (nil: nothing on disk yet).
    public private(set) var held: Value?

    /// A store that fails the writes numbered in `failing` with `errno` (28 is ENOSPC on Linux),
    /// holding `held` at first.
    public init(errno: Int32 = 28, failing: Set<Int> = [], held: Value? = nil) {
        self.errno = errno
        self.failing = failing
        self.held = held
    }

    /// Writes `value`. - Returns: nil on success, or the errno of the failure.
    public mutating func write(_ value: Value) -> Int32? {
        writes += 1
        guard !failing.contains(writes) else { return errno }
        held = value
        return nil
    }

    /// Loses what is held (a device whose storage was wiped).
    public mutating func wipe() { held = nil }
}

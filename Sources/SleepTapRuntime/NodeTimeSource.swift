// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore

/// Where a driver's `NodeTime` comes from: the process clock's virtual now, and monotonic wall
/// seconds (`ContinuousClock`) since the driver was made, so a jump of the system clock does not
/// move transport timing.
struct NodeTimeSource {
    private let origin = ContinuousClock.now
    let clock: any SleepTapCore.Clock

    /// Now in both time bases.
    func now() -> NodeTime {
        let (seconds, attoseconds) = (ContinuousClock.now - origin).components
        return NodeTime(now: clock.now, wall: Double(seconds) + Double(attoseconds) / 1e18)
    }
}

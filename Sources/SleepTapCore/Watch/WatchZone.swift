// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// The zone the watch lives in: the one its local-time plans (the simulated user's nightly bed
/// tap) and typed wake times use.
///
/// Precedence, highest first: the user's own travel (`time-zone TZ` on the watch's stdin), the
/// `--time-zone` flag, the zone of the newest applied batch, the machine's zone. A batch zone this
/// machine's tz database does not know is replaced by the fixed UTC offset the phone sent with the
/// batch (`WakeBatch.displayZone`).
public struct WatchZone: Sendable, Equatable {
    /// Where the zone in force came from.
    public enum Source: String, Sendable, Equatable {
        /// `time-zone TZ` typed on the watch's stdin.
        case travel = "time-zone"
        /// The `--time-zone` flag.
        case flag = "--time-zone"
        /// The newest applied batch's `timeZone`.
        case batch
        /// The machine's zone (`TimeZone.current`, e.g. from `TZ`).
        case system
    }

    /// Set by `time-zone TZ`; nil until the user travels.
    public var travel: TimeZone?
    /// `--time-zone`, if given.
    public var flag: TimeZone?
    /// The machine's zone.
    public var system: TimeZone

    /// - Parameters:
    ///   - travel: the zone typed on stdin, if any.
    ///   - flag: `--time-zone`, if given.
    ///   - system: the machine's zone.
    public init(travel: TimeZone? = nil, flag: TimeZone? = nil, system: TimeZone = .current) {
        self.travel = travel
        self.flag = flag
        self.system = system
    }

    /// The zone in force and where it came from.
    ///
    /// - Parameter batchZone: the newest applied batch's `timeZone`, nil before the first batch.
    /// - Returns: the highest-ranked zone that is set and known here.
    public func resolve(batchZone: String?) -> (zone: TimeZone, source: Source) {
        if let travel { return (travel, .travel) }
        if let flag { return (flag, .flag) }
        if let batchZone, let zone = WakeCalendar.zone(named: batchZone) { return (zone, .batch) }
        return (system, .system)
    }

    /// The zone in force and where it came from, for the batch the watch holds.
    ///
    /// - Parameter batch: the newest applied batch, nil before the first one.
    /// - Returns: as `resolve(batchZone:)`, except that a batch zone this machine does not know
    ///   gives the batch's fixed offset (`WakeBatch.displayZone`) instead of being passed over.
    public func resolve(batch: WakeBatch?) -> (zone: TimeZone, source: Source) {
        if travel != nil || flag != nil { return resolve(batchZone: nil) }
        if let batch { return (batch.displayZone, .batch) }
        return (system, .system)
    }
}

// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// The zone the phone lives in: the one its wake schedule's local times, bedtime notices and
/// weather hours use; the phone's twin of `WatchZone`.
///
/// Precedence, highest first: the user's own travel in this run (`time-zone TZ` on the phone's
/// stdin), the device's zone kept with the OS state (os.json, left by travel before this start),
/// the `--time-zone` flag, the schedule file's `timeZone`, the machine's zone. A `--time-zone`
/// given at a start is the user setting the device's zone now: it replaces the kept one
/// (`PhoneZone.init(flag:device:machine:)`), as every flag at a start overrides a stored setting.
/// The process, the twin, the scenario checker and the soak's oracle all resolve the phone's zone
/// through this one rule.
public struct PhoneZone: Sendable, Equatable {
    /// Where the zone in force came from; the raw values are `phone.status`'s `timeZoneSource`.
    public enum Source: String, Sendable, Equatable {
        /// `time-zone TZ` typed on the phone's stdin in this run.
        case travel = "time-zone"
        /// The device's zone kept in os.json from before this start.
        case device = "os.json"
        /// The `--time-zone` flag.
        case flag = "--time-zone"
        /// The schedule file's `timeZone`.
        case schedule
        /// The machine's zone (`TZ`, or /etc/localtime).
        case machine
    }

    /// Set by `time-zone TZ` in this run; nil until the user travels.
    public var travel: TimeZone?
    /// The device's zone as os.json kept it at start; nil when a `--time-zone` replaced it or
    /// none was kept.
    public var device: TimeZone?
    /// `--time-zone`, if given.
    public var flag: TimeZone?
    /// The machine's zone.
    public var machine: TimeZone

    /// A phone's zones at start.
    /// - Parameters:
    ///   - flag: `--time-zone`, if given; it replaces `device`.
    ///   - device: the zone the stored OS state kept (`SimulatedOS.timeZoneIdentifier`), if any.
    ///   - machine: the machine's zone.
    public init(flag: TimeZone? = nil, device: TimeZone? = nil, machine: TimeZone) {
        self.flag = flag
        self.device = flag == nil ? device : nil
        self.machine = machine
    }

    /// The zone in force and where it came from.
    /// - Parameter schedule: the wake schedule in force; its `timeZone` counts when the tz
    ///   database in use knows it (`WakeCalendar.zone(named:)`).
    /// - Returns: the highest-ranked zone that is set.
    public func resolve(schedule: WakeSchedule) -> (zone: TimeZone, source: Source) {
        if let travel { return (travel, .travel) }
        if let device { return (device, .device) }
        if let flag { return (flag, .flag) }
        if let zone = schedule.timeZoneIdentifier.flatMap(WakeCalendar.zone(named:)) { return (zone, .schedule) }
        return (machine, .machine)
    }
}

// SPDX-License-Identifier: Apache-2.0

public import Foundation
public import SleepTapCore

/// `watch` options.
public struct WatchOptions: Equatable, Sendable {
    /// `--endpoint`: the phone's endpoint, where the watch connects.
    public var endpoint: Endpoint
    public var stateDirectory: String
    /// IANA zone for manual entry and the simulated user (stdin `time-zone` wins over it); nil = the
    /// newest batch's zone, else system.
    public var timeZone: TimeZone?
    /// `--tzdata DIR`: the tz database of this device; nil = the machine's (`ZoneDatabase.process`).
    public var zoneDatabase: ZoneDatabase?
    public var clock = ClockOptions()
    /// This watch's routing id (default "watch").
    public var id = "watch"
    /// Simulated user: tap bed every night at this local time.
    public var bedAt: LocalTime?
    /// Simulated user: answer a manual-entry prompt with this time.
    public var manualWake: LocalTime?
    /// `--warn-nights`: `coverage.low` when this many nights or fewer are cached ahead; 0 never.
    public var warnNights = WatchNode.Configuration.defaultWarnNights
    /// `--request-dates`: send the phone a REQUEST while coverage is low and the link is up.
    public var requestDates = false
    /// `--active-seconds`: virtual seconds the watch app stays active after a touch.
    public var activeSeconds = WatchNode.Configuration.defaultActiveSeconds
    /// `--snooze-minutes`, as seconds.
    public var snooze = WatchNode.Configuration.defaultSnooze
    /// `--complication-budget`: the complication's reloads allowed in any 24 h.
    public var complicationBudget = Complication.defaultBudget
    /// `--stop-alarm-after` (virtual seconds; 60 with `--bed-at` unless given, nil without a
    /// simulated user).
    public var userStopsAlarmAfter: TimeInterval?
    /// Skip the ipc directory check (0700, owned by the user) and allow plaintext tcp.
    public var insecure = false
    /// Keys directory (`watch.key_secret` + `phone.key`): CURVE on the link with the paired phone's key.
    public var keysDirectory: String?
}

extension WatchOptions {
    /// The watch node's configuration from these options: the one mapping the `watch` process
    /// and the embedded twin share, so an option cannot take effect in one and not the other.
    /// - Parameters:
    ///   - statePath: the state file's path.
    ///   - keysDirectory: the keys directory in use (nil without CURVE).
    ///   - systemZone: the machine's zone.
    public func nodeConfiguration(
        statePath: String, keysDirectory: String?, systemZone: TimeZone = .current
    ) -> WatchNode.Configuration {
        WatchNode.Configuration(
            endpoint: endpoint.description, id: id, statePath: statePath, keysDirectory: keysDirectory,
            flagZone: timeZone, systemZone: systemZone, bedAt: bedAt, manualWake: manualWake, warnNights: warnNights,
            requestDates: requestDates, snooze: snooze, userStopsAlarmAfter: userStopsAlarmAfter,
            complicationBudget: complicationBudget, activeSeconds: activeSeconds)
    }
}

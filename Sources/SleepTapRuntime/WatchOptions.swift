// SPDX-License-Identifier: Apache-2.0

package import Foundation
package import SleepTapCore

/// `watch` options.
package struct WatchOptions: Equatable, Sendable {
    /// `--endpoint`: the phone's endpoint, where the watch connects.
    package var endpoint: Endpoint
    package var stateDirectory: String
    /// IANA zone for manual entry and the simulated user (stdin `time-zone` wins over it); nil = the
    /// newest batch's zone, else system.
    package var timeZone: TimeZone?
    /// `--tzdata DIR`: the tz database of this device; nil = the machine's (`ZoneDatabase.process`).
    package var zoneDatabase: ZoneDatabase?
    package var clock = ClockOptions()
    /// This watch's routing id (default "watch").
    package var id = "watch"
    /// Simulated user: tap bed every night at this local time.
    package var bedAt: LocalTime?
    /// Simulated user: answer a manual-entry prompt with this time.
    package var manualWake: LocalTime?
    /// `--warn-nights`: `coverage.low` when this many nights or fewer are cached ahead; 0 never.
    package var warnNights = WatchNode.Configuration.defaultWarnNights
    /// `--request-dates`: send the phone a REQUEST while coverage is low and the link is up.
    package var requestDates = false
    /// `--active-seconds`: virtual seconds the watch app stays active after a touch.
    package var activeSeconds = WatchNode.Configuration.defaultActiveSeconds
    /// `--snooze-minutes`, as seconds.
    package var snooze = WatchNode.Configuration.defaultSnooze
    /// `--complication-budget`: the complication's reloads allowed in any 24 h.
    package var complicationBudget = Complication.defaultBudget
    /// `--stop-alarm-after` (virtual seconds; 60 with `--bed-at` unless given, nil without a
    /// simulated user).
    package var userStopsAlarmAfter: TimeInterval?
    /// Skip the ipc directory check (0700, owned by the user) and allow plaintext tcp.
    package var insecure = false
    /// Keys directory (`watch.key_secret` + `phone.key`): CURVE on the link with the paired phone's key.
    package var keysDirectory: String?
}

extension WatchOptions {
    /// The watch node's configuration from these options: the one mapping the `watch` process
    /// and the embedded twin share, so an option cannot take effect in one and not the other.
    /// - Parameters:
    ///   - statePath: the state file's path.
    ///   - keysDirectory: the keys directory in use (nil without CURVE).
    ///   - systemZone: the machine's zone.
    package func nodeConfiguration(
        statePath: String, keysDirectory: String?, systemZone: TimeZone = .current
    ) -> WatchNode.Configuration {
        WatchNode.Configuration(
            endpoint: endpoint.description, id: id, statePath: statePath, keysDirectory: keysDirectory,
            flagZone: timeZone, systemZone: systemZone, bedAt: bedAt, manualWake: manualWake, warnNights: warnNights,
            requestDates: requestDates, snooze: snooze, userStopsAlarmAfter: userStopsAlarmAfter,
            complicationBudget: complicationBudget, activeSeconds: activeSeconds)
    }
}

// SPDX-License-Identifier: Apache-2.0

/// The name of an observable event: the catalogue of every event the executables, the simulated
/// OS and the tools write, one case per name. The raw value is the `event` field of the JSON Lines
/// output. docs/protocol.md ("Events") lists the same names with their fields; a test keeps the
/// two equal.
public enum EventName: String, CaseIterable, Sendable, Hashable, Comparable, CustomStringConvertible {
    // MARK: The phone

    /// `phone.started` (its fields: docs/protocol.md, "Events").
    case phoneStarted = "phone.started"
    /// `phone.status` (its fields: docs/protocol.md, "Events").
    case phoneStatus = "phone.status"
    /// `phone.stopping` (its fields: docs/protocol.md, "Events").
    case phoneStopping = "phone.stopping"
    /// `refresh.foreground` (its fields: docs/protocol.md, "Events").
    case refreshForeground = "refresh.foreground"
    /// `refresh.deferred` (its fields: docs/protocol.md, "Events").
    case refreshDeferred = "refresh.deferred"
    /// `notification.added` (its fields: docs/protocol.md, "Events").
    case notificationAdded = "notification.added"
    /// `notification.pending` (its fields: docs/protocol.md, "Events").
    case notificationPending = "notification.pending"
    /// `notification.dropped` (its fields: docs/protocol.md, "Events").
    case notificationDropped = "notification.dropped"
    /// `notification.hidden` (its fields: docs/protocol.md, "Events").
    case notificationHidden = "notification.hidden"
    /// `notification.failed` (its fields: docs/protocol.md, "Events").
    case notificationFailed = "notification.failed"
    /// `alarm.refused` (its fields: docs/protocol.md, "Events").
    case alarmRefused = "alarm.refused"
    /// `alarm.lost` (its fields: docs/protocol.md, "Events").
    case alarmLost = "alarm.lost"
    /// `alarm.cancelled` (its fields: docs/protocol.md, "Events").
    case alarmCancelled = "alarm.cancelled"
    /// `schedule.changed` (its fields: docs/protocol.md, "Events").
    case scheduleChanged = "schedule.changed"
    /// `schedule.rejected` (its fields: docs/protocol.md, "Events").
    case scheduleRejected = "schedule.rejected"
    /// `batch.generated` (its fields: docs/protocol.md, "Events").
    case batchGenerated = "batch.generated"
    /// `batch.unchanged` (its fields: docs/protocol.md, "Events").
    case batchUnchanged = "batch.unchanged"
    /// `batch.sent` (its fields: docs/protocol.md, "Events").
    case batchSent = "batch.sent"
    /// `ack.received` (its fields: docs/protocol.md, "Events").
    case ackReceived = "ack.received"
    /// `ack.duplicate` (its fields: docs/protocol.md, "Events").
    case ackDuplicate = "ack.duplicate"
    /// `ack.stale` (its fields: docs/protocol.md, "Events").
    case ackStale = "ack.stale"
    /// `ack.mismatch` (its fields: docs/protocol.md, "Events").
    case ackMismatch = "ack.mismatch"
    /// `epoch.changed` (its fields: docs/protocol.md, "Events").
    case epochChanged = "epoch.changed"
    /// `up_to_date.sent` (its fields: docs/protocol.md, "Events").
    case upToDateSent = "up_to_date.sent"
    /// `peer.refused` (its fields: docs/protocol.md, "Events").
    case peerRefused = "peer.refused"
    /// `handler.registered` (its fields: docs/protocol.md, "Events").
    case handlerRegistered = "handler.registered"
    /// `app.crashed` (its fields: docs/protocol.md, "Events").
    case appCrashed = "app.crashed"
    /// `handler.entered` (its fields: docs/protocol.md, "Events").
    case handlerEntered = "handler.entered"
    /// `renew.submitted` (its fields: docs/protocol.md, "Events").
    case renewSubmitted = "renew.submitted"
    /// `submit.failed` (its fields: docs/protocol.md, "Events").
    case submitFailed = "submit.failed"
    /// `weather.fetched` (its fields: docs/protocol.md, "Events").
    case weatherFetched = "weather.fetched"
    /// `weather.skipped` (its fields: docs/protocol.md, "Events").
    case weatherSkipped = "weather.skipped"
    /// `weather.failed` (its fields: docs/protocol.md, "Events").
    case weatherFailed = "weather.failed"
    /// `sunlight.skipped` (its fields: docs/protocol.md, "Events").
    case sunlightSkipped = "sunlight.skipped"
    /// `handler.expired` (its fields: docs/protocol.md, "Events").
    case handlerExpired = "handler.expired"
    /// `handler.completed` (its fields: docs/protocol.md, "Events").
    case handlerCompleted = "handler.completed"
    /// `run.record` (its fields: docs/protocol.md, "Events").
    case runRecord = "run.record"
    /// `location.changed` (its fields: docs/protocol.md, "Events").
    case locationChanged = "location.changed"
    /// `request.received` (its fields: docs/protocol.md, "Events").
    case requestReceived = "request.received"
    /// `request.held` (its fields: docs/protocol.md, "Events").
    case requestHeld = "request.held"
    /// `wrist` (its fields: docs/protocol.md, "Events").
    case wrist = "wrist"
    /// `complication.reloaded` (its fields: docs/protocol.md, "Events").
    case complicationReloaded = "complication.reloaded"
    /// `complication.budget_exhausted` (its fields: docs/protocol.md, "Events").
    case complicationBudgetExhausted = "complication.budget_exhausted"
    /// `complication.timeline` (its fields: docs/protocol.md, "Events").
    case complicationTimeline = "complication.timeline"
    /// `complication.entry` (its fields: docs/protocol.md, "Events").
    case complicationEntry = "complication.entry"
    /// `request.served` (its fields: docs/protocol.md, "Events").
    case requestServed = "request.served"
    /// `request.refused` (its fields: docs/protocol.md, "Events").
    case requestRefused = "request.refused"

    // MARK: The watch

    /// `watch.started` (its fields: docs/protocol.md, "Events").
    case watchStarted = "watch.started"
    /// `watch.stopping` (its fields: docs/protocol.md, "Events").
    case watchStopping = "watch.stopping"
    /// `clock.skew` (its fields: docs/protocol.md, "Events").
    case clockSkew = "clock.skew"
    /// `clock.behind` (its fields: docs/protocol.md, "Events").
    case clockBehind = "clock.behind"
    /// `link.up` (its fields: docs/protocol.md, "Events").
    case linkUp = "link.up"
    /// `link.down` (its fields: docs/protocol.md, "Events").
    case linkDown = "link.down"
    /// `link.handshake_failed` (its fields: docs/protocol.md, "Events").
    case linkHandshakeFailed = "link.handshake_failed"
    /// `link.handshake_timeout` (its fields: docs/protocol.md, "Events").
    case linkHandshakeTimeout = "link.handshake_timeout"
    /// `link.reconnect` (its fields: docs/protocol.md, "Events").
    case linkReconnect = "link.reconnect"
    /// `link.reconnect_failed` (its fields: docs/protocol.md, "Events").
    case linkReconnectFailed = "link.reconnect_failed"
    /// `hello.sent` (its fields: docs/protocol.md, "Events").
    case helloSent = "hello.sent"
    /// `batch.applied` (its fields: docs/protocol.md, "Events").
    case batchApplied = "batch.applied"
    /// `ack.sent` (its fields: docs/protocol.md, "Events").
    case ackSent = "ack.sent"
    /// `batch.duplicate` (its fields: docs/protocol.md, "Events").
    case batchDuplicate = "batch.duplicate"
    /// `batch.stale` (its fields: docs/protocol.md, "Events").
    case batchStale = "batch.stale"
    /// `sync.up_to_date` (its fields: docs/protocol.md, "Events").
    case syncUpToDate = "sync.up_to_date"
    /// `batch.conflict` (its fields: docs/protocol.md, "Events").
    case batchConflict = "batch.conflict"
    /// `bed.wake_time` (its fields: docs/protocol.md, "Events").
    case bedWakeTime = "bed.wake_time"
    /// `fallback.manual_entry` (its fields: docs/protocol.md, "Events").
    case fallbackManualEntry = "fallback.manual_entry"
    /// `manual.wake_time` (its fields: docs/protocol.md, "Events").
    case manualWakeTime = "manual.wake_time"
    /// `cache.status` (its fields: docs/protocol.md, "Events").
    case cacheStatus = "cache.status"
    /// `coverage.low` (its fields: docs/protocol.md, "Events").
    case coverageLow = "coverage.low"
    /// `request.sent` (its fields: docs/protocol.md, "Events").
    case requestSent = "request.sent"
    /// `alarm.set` (its fields: docs/protocol.md, "Events").
    case alarmSet = "alarm.set"
    /// `alarm.fired` (its fields: docs/protocol.md, "Events").
    case alarmFired = "alarm.fired"
    /// `alarm.snoozed` (its fields: docs/protocol.md, "Events").
    case alarmSnoozed = "alarm.snoozed"
    /// `alarm.stopped` (its fields: docs/protocol.md, "Events").
    case alarmStopped = "alarm.stopped"

    // MARK: Phone or watch

    /// `timezone.changed` (its fields: docs/protocol.md, "Events").
    case timezoneChanged = "timezone.changed"
    /// `send.failed` (its fields: docs/protocol.md, "Events").
    case sendFailed = "send.failed"
    /// `state.recovered` (its fields: docs/protocol.md, "Events").
    case stateRecovered = "state.recovered"
    /// `message.received` (its fields: docs/protocol.md, "Events").
    case messageReceived = "message.received"
    /// `message.rejected` (its fields: docs/protocol.md, "Events").
    case messageRejected = "message.rejected"
    /// `peer.error` (its fields: docs/protocol.md, "Events").
    case peerError = "peer.error"
    /// `peer.online` (its fields: docs/protocol.md, "Events").
    case peerOnline = "peer.online"
    /// `peer.offline` (its fields: docs/protocol.md, "Events").
    case peerOffline = "peer.offline"
    /// `peer.replaced` (its fields: docs/protocol.md, "Events").
    case peerReplaced = "peer.replaced"
    /// `input.rejected` (its fields: docs/protocol.md, "Events").
    case inputRejected = "input.rejected"
    /// `persist.failed` (its fields: docs/protocol.md, "Events").
    case persistFailed = "persist.failed"
    /// `error.sent` (its fields: docs/protocol.md, "Events").
    case errorSent = "error.sent"

    // MARK: The simulated OS (the phone's device)

    /// `os.launch` (its fields: docs/protocol.md, "Events").
    case osLaunch = "os.launch"
    /// `os.launch.dropped` (its fields: docs/protocol.md, "Events").
    case osLaunchDropped = "os.launch.dropped"
    /// `os.opportunity.missed` (its fields: docs/protocol.md, "Events").
    case osOpportunityMissed = "os.opportunity.missed"
    /// `os.request.submitted` (its fields: docs/protocol.md, "Events").
    case osRequestSubmitted = "os.request.submitted"
    /// `os.request.replaced` (its fields: docs/protocol.md, "Events").
    case osRequestReplaced = "os.request.replaced"
    /// `os.request.cancelled` (its fields: docs/protocol.md, "Events").
    case osRequestCancelled = "os.request.cancelled"
    /// `os.request.rejected` (its fields: docs/protocol.md, "Events").
    case osRequestRejected = "os.request.rejected"
    /// `os.register` (its fields: docs/protocol.md, "Events").
    case osRegister = "os.register"
    /// `os.register.refused` (its fields: docs/protocol.md, "Events").
    case osRegisterRefused = "os.register.refused"
    /// `os.app.launched` (its fields: docs/protocol.md, "Events").
    case osAppLaunched = "os.app.launched"
    /// `os.app.killed` (its fields: docs/protocol.md, "Events").
    case osAppKilled = "os.app.killed"
    /// `os.app.crashed` (its fields: docs/protocol.md, "Events").
    case osAppCrashed = "os.app.crashed"
    /// `os.app.updated` (its fields: docs/protocol.md, "Events").
    case osAppUpdated = "os.app.updated"
    /// `os.task.completed` (its fields: docs/protocol.md, "Events").
    case osTaskCompleted = "os.task.completed"
    /// `os.task.expired` (its fields: docs/protocol.md, "Events").
    case osTaskExpired = "os.task.expired"
    /// `os.complete.ignored` (its fields: docs/protocol.md, "Events").
    case osCompleteIgnored = "os.complete.ignored"
    /// `os.simulate.failed` (its fields: docs/protocol.md, "Events").
    case osSimulateFailed = "os.simulate.failed"
    /// `os.conditions.changed` (its fields: docs/protocol.md, "Events").
    case osConditionsChanged = "os.conditions.changed"
    /// `os.rebooted` (its fields: docs/protocol.md, "Events").
    case osRebooted = "os.rebooted"
    /// `os.work.enqueued` (its fields: docs/protocol.md, "Events").
    case osWorkEnqueued = "os.work.enqueued"
    /// `os.work.kept` (its fields: docs/protocol.md, "Events").
    case osWorkKept = "os.work.kept"
    /// `os.work.rescheduled` (its fields: docs/protocol.md, "Events").
    case osWorkRescheduled = "os.work.rescheduled"
    /// `os.work.completed` (its fields: docs/protocol.md, "Events").
    case osWorkCompleted = "os.work.completed"
    /// `os.work.stopped` (its fields: docs/protocol.md, "Events").
    case osWorkStopped = "os.work.stopped"
    /// `os.low_power` (its fields: docs/protocol.md, "Events").
    case osLowPower = "os.low_power"
    /// `os.background_refresh` (its fields: docs/protocol.md, "Events").
    case osBackgroundRefresh = "os.background_refresh"
    /// `os.force_quit` (its fields: docs/protocol.md, "Events").
    case osForceQuit = "os.force_quit"
    /// `os.standby_bucket` (its fields: docs/protocol.md, "Events").
    case osStandbyBucket = "os.standby_bucket"
    /// `os.charging` (its fields: docs/protocol.md, "Events").
    case osCharging = "os.charging"
    /// `os.registration` (its fields: docs/protocol.md, "Events").
    case osRegistration = "os.registration"
    /// `os.reboot` (its fields: docs/protocol.md, "Events").
    case osReboot = "os.reboot"
    /// `os.watch_message` (its fields: docs/protocol.md, "Events").
    case osWatchMessage = "os.watch_message"
    /// `os.push` (its fields: docs/protocol.md, "Events").
    case osPush = "os.push"
    /// `push.received` (its fields: docs/protocol.md, "Events").
    case pushReceived = "push.received"
    /// `push.refused` (its fields: docs/protocol.md, "Events").
    case pushRefused = "push.refused"
    /// `push.deferred` (its fields: docs/protocol.md, "Events").
    case pushDeferred = "push.deferred"
    /// `os.why` (its fields: docs/protocol.md, "Events").
    case osWhy = "os.why"
    /// `os.doze` (its fields: docs/protocol.md, "Events").
    case osDoze = "os.doze"
    /// `os.network` (its fields: docs/protocol.md, "Events").
    case osNetwork = "os.network"
    /// `os.battery` (its fields: docs/protocol.md, "Events").
    case osBattery = "os.battery"
    /// `os.battery_low` (its fields: docs/protocol.md, "Events").
    case osBatteryLow = "os.battery_low"
    /// `os.storage_low` (its fields: docs/protocol.md, "Events").
    case osStorageLow = "os.storage_low"
    /// `os.test_driver` (its fields: docs/protocol.md, "Events").
    case osTestDriver = "os.test_driver"
    /// `os.alarm.fired` (its fields: docs/protocol.md, "Events").
    case osAlarmFired = "os.alarm.fired"
    /// `os.permission` (its fields: docs/protocol.md, "Events").
    case osPermission = "os.permission"
    /// `os.notifications` (its fields: docs/protocol.md, "Events").
    case osNotifications = "os.notifications"
    /// `os.clock_set` (its fields: docs/protocol.md, "Events").
    case osClockSet = "os.clock_set"
    /// `os.time_changed` (its fields: docs/protocol.md, "Events").
    case osTimeChanged = "os.time_changed"
    /// `os.screen` (its fields: docs/protocol.md, "Events").
    case osScreen = "os.screen"

    // MARK: The soak tool

    /// `soak.summary` (its fields: docs/protocol.md, "Events").
    case soakSummary = "soak.summary"

    /// Who writes an event of this name: the simulated OS for the `os.*` names, else the process
    /// that writes the line.
    /// - Parameter process: the process writing the line.
    public func source(in process: EventSource) -> EventSource {
        rawValue.hasPrefix("os.") ? .os : process
    }

    public var description: String { rawValue }

    public static func < (lhs: EventName, rhs: EventName) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Who an event line comes from: the `source` field of every line.
public enum EventSource: String, CaseIterable, Sendable, Hashable {
    /// The phone process (its app and its link to the watch).
    case phone
    /// The watch process.
    case watch
    /// The simulated OS the phone runs on (the `os.*` events; written by the phone process).
    case os
    /// The soak tool (its `soak.summary`).
    case soak
}

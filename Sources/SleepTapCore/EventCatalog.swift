/// The name of an observable event: the catalogue of every event the executables, the simulated
/// OS and the tools write, one case per name. The raw value is the `event` field of the JSON Lines
/// output. docs/protocol.md ("Events") lists the same names with their fields; a test keeps the
/// two equal.
public enum EventName: String, CaseIterable, Sendable, Hashable, Comparable, CustomStringConvertible {
    // MARK: The phone

    case phoneStarted = "phone.started"
    case phoneStatus = "phone.status"
    case phoneStopping = "phone.stopping"
    case refreshForeground = "refresh.foreground"
    case refreshDeferred = "refresh.deferred"
    case notificationAdded = "notification.added"
    case notificationPending = "notification.pending"
    case notificationDropped = "notification.dropped"
    case scheduleChanged = "schedule.changed"
    case scheduleRejected = "schedule.rejected"
    case batchGenerated = "batch.generated"
    case batchSent = "batch.sent"
    case ackReceived = "ack.received"
    case ackDuplicate = "ack.duplicate"
    case ackStale = "ack.stale"
    case ackMismatch = "ack.mismatch"
    case epochChanged = "epoch.changed"
    case upToDateSent = "up_to_date.sent"
    case peerRefused = "peer.refused"
    case handlerRegistered = "handler.registered"
    case appCrashed = "app.crashed"
    case handlerEntered = "handler.entered"
    case renewSubmitted = "renew.submitted"
    case submitFailed = "submit.failed"
    case weatherFetched = "weather.fetched"
    case weatherSkipped = "weather.skipped"
    case weatherFailed = "weather.failed"
    case sunlightSkipped = "sunlight.skipped"
    case handlerExpired = "handler.expired"
    case handlerCompleted = "handler.completed"
    case runRecord = "run.record"
    case locationChanged = "location.changed"

    // MARK: The watch

    case watchStarted = "watch.started"
    case watchStopping = "watch.stopping"
    case linkUp = "link.up"
    case linkDown = "link.down"
    case linkHandshakeFailed = "link.handshake_failed"
    case linkHandshakeTimeout = "link.handshake_timeout"
    case linkReconnect = "link.reconnect"
    case linkReconnectFailed = "link.reconnect_failed"
    case helloSent = "hello.sent"
    case batchApplied = "batch.applied"
    case ackSent = "ack.sent"
    case batchDuplicate = "batch.duplicate"
    case batchStale = "batch.stale"
    case syncUpToDate = "sync.up_to_date"
    case batchConflict = "batch.conflict"
    case bedWakeTime = "bed.wake_time"
    case fallbackManualEntry = "fallback.manual_entry"
    case manualWakeTime = "manual.wake_time"
    case cacheStatus = "cache.status"
    case coverageLow = "coverage.low"

    // MARK: Phone or watch

    case timezoneChanged = "timezone.changed"
    case sendFailed = "send.failed"
    case stateRecovered = "state.recovered"
    case messageReceived = "message.received"
    case messageRejected = "message.rejected"
    case peerError = "peer.error"
    case peerOnline = "peer.online"
    case peerOffline = "peer.offline"
    case inputRejected = "input.rejected"
    case persistFailed = "persist.failed"
    case errorSent = "error.sent"

    // MARK: The simulated OS (the phone's device)

    case osLaunch = "os.launch"
    case osLaunchDropped = "os.launch.dropped"
    case osOpportunityMissed = "os.opportunity.missed"
    case osRequestSubmitted = "os.request.submitted"
    case osRequestReplaced = "os.request.replaced"
    case osRequestRejected = "os.request.rejected"
    case osRegister = "os.register"
    case osRegisterRefused = "os.register.refused"
    case osAppLaunched = "os.app.launched"
    case osAppKilled = "os.app.killed"
    case osAppCrashed = "os.app.crashed"
    case osAppUpdated = "os.app.updated"
    case osTaskCompleted = "os.task.completed"
    case osTaskExpired = "os.task.expired"
    case osCompleteIgnored = "os.complete.ignored"
    case osSimulateFailed = "os.simulate.failed"
    case osConditionsChanged = "os.conditions.changed"
    case osRebooted = "os.rebooted"
    case osWorkEnqueued = "os.work.enqueued"
    case osWorkKept = "os.work.kept"
    case osWorkRescheduled = "os.work.rescheduled"
    case osWorkCompleted = "os.work.completed"
    case osWorkStopped = "os.work.stopped"
    case osBucketChanged = "os.bucket.changed"
    case osLowPower = "os.low_power"
    case osBackgroundRefresh = "os.background_refresh"
    case osForceQuit = "os.force_quit"
    case osStandbyBucket = "os.standby_bucket"
    case osCharging = "os.charging"
    case osRegistration = "os.registration"
    case osReboot = "os.reboot"

    // MARK: The soak tool

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

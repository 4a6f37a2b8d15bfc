// SPDX-License-Identifier: Apache-2.0

public import Foundation
import Synchronization

/// The simulated phone OS as one durable value: the platform's background scheduler (its pending
/// requests or enqueued work, its RNG position, its settings, the registration behaviour of the
/// installed app) plus what the OS remembers about the device (launch history, reboots).
///
/// The OS outlives the app: its host keeps this value in a file of its own (it is
/// `Codable`) and hands it back at the next start, so a restarted app finds its pending request and the OS's
/// random draws continue where they stopped instead of starting again from the seed
/// (docs/scheduler.md, "The OS outlives the app"). Sans-I/O like the schedulers: every instant is
/// an argument, every random choice comes from the stored `SplitMix64`; persisting is the
/// caller's job (encode it after each change; the trace is not part of the encoding).
///
/// Value type, `Sendable`; one owner mutates it.
public struct SimulatedOS: BackgroundScheduler, Codable, Sendable {
    /// The platform's scheduler.
    public enum Device: Sendable {
        /// iOS `BGTaskScheduler`.
        case ios(IOSBackgroundScheduler)
        /// Android WorkManager on JobScheduler.
        case android(AndroidWorkScheduler)
    }

    /// One background launch the OS granted (natural or simulated).
    public struct LaunchRecord: Codable, Equatable, Sendable {
        /// The virtual instant of the launch.
        public var at: Date
        /// The task identifier or unique work name.
        public var identifier: String
        /// True for the debugger's simulate-launch.
        public var simulated: Bool
        /// False when the handler was not entered (no handler registered in time).
        public var handlerEntered: Bool
        /// Android's `runAttemptCount` of the run (0 on iOS).
        public var runAttemptCount: Int
    }

    /// The version of the encoding this code writes and reads.
    public static let formatVersion = 1
    /// How many launches `launchHistory` keeps (the oldest go first).
    public static let launchHistoryLimit = 50

    /// The encoding's version (`formatVersion` when written by this code).
    public private(set) var version: Int {
        didSet { changed() }
    }
    /// The seed the OS's RNG started from; kept for the record, never used again.
    public let seed: UInt64
    /// The platform's scheduler and its state.
    public private(set) var device: Device {
        didSet { changed() }
    }
    /// The most recent launches, oldest first, at most `launchHistoryLimit`.
    public private(set) var launchHistory: [LaunchRecord] = [] {
        didSet { changed() }
    }
    /// How many times the device restarted.
    public private(set) var reboots = 0 {
        didSet { changed() }
    }
    /// When the device last restarted, nil when never.
    public private(set) var lastReboot: Date? {
        didSet { changed() }
    }
    /// The device's time zone as the user last set it (IANA identifier): travel, or a zone the host
    /// sets at a start; nil until either happened. It is the device's, so it
    /// outlives the app like the rest of this value (docs/scheduler.md, "The OS outlives the app").
    public private(set) var timeZoneIdentifier: String? {
        didSet { changed() }
    }
    /// Android: the user revoked the app's notification permission (`POST_NOTIFICATIONS`,
    /// Android 13+; before 13 the app's notifications switched off in Settings); nil = granted.
    public private(set) var notificationsDenied: Bool? {
        didSet { changed() }
    }
    /// iOS: the app's notification authorization
    /// (`setNotificationAuthorization(_:)`); nil = `authorized`, this model's default.
    public private(set) var notificationAuthorizationState: NotificationAuthorization? {
        didSet { changed() }
    }
    /// How far the device's wall clock is from true time, seconds (wall = true + offset): the sum
    /// of the user's `clock-set` changes; nil = 0 (the clock is right).
    public private(set) var wallClockOffsetState: TimeInterval? {
        didSet { changed() }
    }
    /// iOS: the instants of the background notifications delivered in the last hour
    /// (`backgroundPush`'s throttle); empty = none.
    private var pushDeliveries: [Date] = [] {
        didSet { changed() }
    }
    /// Android: the maintenance windows at which normal-priority pushes Doze deferred are
    /// handed over (`pushesDue(at:)`); empty = none.
    private var deferredPushes: [Date] = [] {
        didSet { changed() }
    }
    /// A stamp of this value's durable state: a change to any encoded field gives it a new
    /// one, never given to any other value in the process, and a copy keeps its original's. Two
    /// values with one revision hold the same state (`==`), so a host that wrote a value need not
    /// encode this one again to know it is unchanged (`PhoneNode`'s OS write). Two values with
    /// different revisions may still be equal (a change that put back a value, a trace
    /// drained). Not encoded: a decoded value gets a new one.
    public private(set) var revision = SimulatedOS.newRevision()
    /// The last revision handed out in this process.
    private static let revisions = Atomic<UInt64>(0)

    /// A revision no value of this process had.
    private static func newRevision() -> UInt64 {
        revisions.add(1, ordering: .relaxed).newValue
    }

    /// Gives this value a new revision (every encoded field's `didSet`).
    private mutating func changed() { revision = Self.newRevision() }

    /// This value's own trace (`os.watch_message`), merged into `drainTrace()`; not encoded.
    private var ownTrace = SchedulerTrace()
    /// The latest instant a call gave (what `drainTrace` asks `why` at); not encoded.
    private var lastNow: Date?
    /// The answer the last `os.why` said; not encoded (a restarted phone says it again).
    private var lastWhy: WhyAnswer?
    /// The processing request's answer the last `os.why` said; not encoded.
    private var lastProcessingWhy: WhyAnswer?

    /// A new iOS device.
    /// - Parameter scheduler: a fresh (or already driven) iOS scheduler; its seed is recorded.
    public init(_ scheduler: IOSBackgroundScheduler) {
        version = Self.formatVersion
        seed = scheduler.seed
        device = .ios(scheduler)
    }

    /// A new Android device.
    /// - Parameters:
    ///   - scheduler: a fresh (or already driven) WorkManager scheduler.
    ///   - seed: recorded for the record (WorkManager's run times draw nothing).
    public init(_ scheduler: AndroidWorkScheduler, seed: UInt64 = 0) {
        version = Self.formatVersion
        self.seed = seed
        device = .android(scheduler)
    }

    // MARK: The device

    /// The device's zone changes (the user travels, or sets it): kept with the OS's state.
    /// - Parameter zone: the new zone.
    public mutating func setTimeZone(_ zone: TimeZone) {
        timeZoneIdentifier = zone.identifier
    }

    /// Android: the user grants or revokes the app's notification permission (Settings ›
    /// Notifications). While denied, notifications the app posts are
    /// never shown and the app gets no error (Android, "Notification runtime permission":
    /// `notify()` without `POST_NOTIFICATIONS` shows nothing); ignored on iOS.
    /// - Parameter granted: the permission's new state.
    public mutating func setNotificationPermission(_ granted: Bool) {
        guard case .android = device else { return }
        notificationsDenied = granted ? nil : true
    }

    /// Whether notifications the app posts are shown (false only on Android with the permission
    /// revoked).
    public var notificationsShown: Bool { notificationsDenied != true }

    /// iOS: the user changes the app's notification authorization; kept with the device, like
    /// its other settings. Ignored on Android (its permission is `setNotificationPermission`).
    /// - Parameter state: the new authorization.
    public mutating func setNotificationAuthorization(_ state: NotificationAuthorization) {
        guard case .ios = device else { return }
        notificationAuthorizationState = state == .authorized ? nil : state
    }

    /// The app's notification authorization: the stored one on iOS (default `authorized`);
    /// always `authorized` on Android (see `notificationsShown`).
    public var notificationAuthorization: NotificationAuthorization { notificationAuthorizationState ?? .authorized }

    /// How far the device's wall clock is from true time, seconds: wall = true + offset.
    public var wallClockOffset: TimeInterval { wallClockOffsetState ?? 0 }

    /// What the device's wall clock reads at true instant `now` (`now + wallClockOffset`).
    /// - Parameter now: virtual (true) instant.
    public func wallClock(at now: Date) -> Date { now.addingTimeInterval(wallClockOffset) }

    /// The user sets the device's wall clock by `delta` seconds;
    /// true time goes on. The offset is the device's, kept with the OS. The platform reacts
    /// (`IOSBackgroundScheduler.wallClockChanged`: the pending request stays at its true
    /// instant; `AndroidWorkScheduler.wallClockChanged`: WorkManager replans from the wall clock).
    /// - Parameters:
    ///   - delta: seconds added to the wall clock (negative: set back).
    ///   - now: virtual (true) instant.
    public mutating func setWallClock(by delta: TimeInterval, at now: Date) {
        seen(now)
        let offset = wallClockOffset + delta
        wallClockOffsetState = offset == 0 ? nil : offset
        switch device {
        case .ios(var s):
            s.wallClockChanged(by: delta, at: now)
            device = .ios(s)
        case .android(var s):
            s.wallClockChanged(by: delta, at: now)
            device = .android(s)
        }
    }

    /// The permissions a new install starts with on this device (Android; a new install): from API 33 the notification permission is off until the user allows it
    /// (Android, "Notification runtime permission"); from API 34 `SCHEDULE_EXACT_ALARM` is denied
    /// (`AndroidWorkScheduler.applyInstallDefaults()`). Nothing changes on iOS or below those levels.
    public mutating func applyInstallDefaults() {
        guard case .android(var s) = device else { return }
        if let api = s.configuration.androidAPI, api >= 33 { notificationsDenied = true }
        s.applyInstallDefaults()
        device = .android(s)
    }

    // MARK: Alarms (Android)

    /// Android: the user grants or revokes `SCHEDULE_EXACT_ALARM`
    /// (`AndroidWorkScheduler.setExactAlarmPermission`); nil on iOS.
    /// - Parameters:
    ///   - granted: the permission's new state.
    ///   - now: virtual instant.
    public mutating func setExactAlarmPermission(_ granted: Bool, at now: Date) -> ExactAlarmPermissionChange? {
        android(now) { $0.setExactAlarmPermission(granted, at: now) }
    }

    /// Android: sets the app's exact alarm declaration; ignored on iOS.
    /// - Parameter declaration: the permission the manifest declares.
    public mutating func setExactAlarmDeclaration(_ declaration: ExactAlarmDeclaration) {
        guard case .android(var s) = device else { return }
        s.setExactAlarmDeclaration(declaration)
        device = .android(s)
    }

    /// Android: `AlarmManager.set…()` (`AndroidWorkScheduler.setAlarm`).
    /// - Parameters:
    ///   - kind: how it is set.
    ///   - tag: the app's name for it.
    ///   - triggerAt: the instant asked for.
    ///   - now: virtual instant.
    /// - Returns: the alarm it replaced, nil when none (and on iOS, where nothing is set).
    /// - Throws: `AlarmRefusal` (`SecurityException`) without the exact alarm permission.
    @discardableResult
    public mutating func setAlarm(_ kind: AlarmKind, tag: String, triggerAt: Date, at now: Date) throws(AlarmRefusal)
        -> Alarm?
    {
        seen(now)
        guard case .android(var s) = device else { return nil }
        let replaced = try s.setAlarm(kind, tag: tag, triggerAt: triggerAt, at: now)
        device = .android(s)
        return replaced
    }

    /// Android: `AlarmManager.cancel()` of the app's alarm `tag`; nil when none (and on iOS).
    @discardableResult
    public mutating func cancelAlarm(tag: String) -> Alarm? {
        guard case .android(var s) = device else { return nil }
        let alarm = s.cancelAlarm(tag: tag)
        device = .android(s)
        return alarm
    }

    /// The alarms the OS holds for the app (empty on iOS).
    public var pendingAlarms: [Alarm] {
        if case .android(let s) = device { return s.pendingAlarms }
        return []
    }

    /// The next instant `alarmsDue(at:)` has work (`AndroidWorkScheduler.nextAlarmInstant()`);
    /// nil when no alarm is held, and on iOS.
    public func nextAlarmInstant() -> Date? {
        if case .android(let s) = device { return s.nextAlarmInstant() }
        return nil
    }

    /// The next instant the OS acts by itself besides a launch, when the host should call it
    /// (`alarmsDue(at:)`): an alarm's (`nextAlarmInstant()`) or a Doze phase change's
    /// (`AndroidWorkScheduler.nextDozeChange()`), whichever comes first; nil when neither comes,
    /// and on iOS.
    public func nextTimedActivity() -> Date? {
        guard case .android(let s) = device else { return nil }
        return [s.nextAlarmInstant(), s.nextDozeChange(), deferredPushes.min()].compactMap { $0 }.min()
    }

    /// Forgets up to when Doze's phase changes were said (kept in memory, not in the encoding),
    /// so the next call says none of those before it, as a value read back from its state file
    /// does: a host that hands the same value to a new process of the app (the twin's restart)
    /// calls it, and that process says what one started on the state file says.
    public mutating func forgetSaidDozeChanges() {
        guard case .android(var s) = device else { return }
        s.forgetSaidDozeChanges()
        device = .android(s)
    }

    /// Fires the alarms due by `now` (`AndroidWorkScheduler.alarmsDue(at:)`) and says the Doze
    /// phase changes made by then (`os.doze`); empty on iOS.
    /// - Parameter now: virtual instant.
    public mutating func alarmsDue(at now: Date) -> [Alarm] {
        android(now) { $0.alarmsDue(at: now) } ?? []
    }

    /// The device restarts: the app process is gone; what each platform keeps and drops is in
    /// `IOSBackgroundScheduler.reboot(at:)` and `AndroidWorkScheduler.reboot(at:)`.
    /// - Parameter now: virtual instant.
    public mutating func reboot(at now: Date) {
        seen(now)
        reboots += 1
        lastReboot = now
        switch device {
        case .ios(var s):
            s.reboot(at: now)
            device = .ios(s)
        case .android(var s):
            s.reboot(at: now)
            device = .android(s)
        }
    }

    /// The user installs an app update that registers its handler per `registration` (iOS; see
    /// `IOSBackgroundScheduler.installUpdate`). Android has no registration step: nothing changes.
    /// - Parameters:
    ///   - registration: the updated app's behaviour.
    ///   - now: virtual instant.
    public mutating func installUpdate(registration: RegistrationMode, at now: Date) {
        ios(now) { $0.installUpdate(registration: registration, at: now) }
    }

    /// iOS: later requests draw their wait from `delay` (a fitted `EmpiricalDelay`) in place of
    /// the built-in opportunity draws, or from the built-in draws again when nil; a pending
    /// request keeps its drawn opportunity. Ignored on Android.
    public mutating func setEmpiricalDelay(_ delay: EmpiricalDelay?) {
        ios(nil) { $0.setEmpiricalDelay(delay) }
    }

    /// iOS: later app-refresh requests draw their launch by `kind`
    /// (`IOSBackgroundScheduler.setOpportunityModel(_:)`); ignored on Android.
    /// - Parameter kind: the opportunity model.
    public mutating func setOpportunityModel(_ kind: OpportunityModelKind) {
        ios(nil) { $0.setOpportunityModel(kind) }
    }

    /// iOS: the battery's charge changes (`IOSBackgroundScheduler.setBatteryLevel(_:at:)`);
    /// ignored on Android.
    /// - Parameters:
    ///   - level: the charge in [0, 1].
    ///   - now: virtual instant.
    public mutating func setBatteryLevel(_ level: Double, at now: Date) {
        ios(now) { $0.setBatteryLevel(level, at: now) }
    }

    /// iOS: the battery's charge at `now` (`IOSBackgroundScheduler.batteryLevel(at:)`), nil
    /// when never set (full) and on Android.
    /// - Parameter now: virtual instant.
    public func batteryLevel(at now: Date) -> Double? {
        if case .ios(let s) = device { return s.batteryLevel(at: now) }
        return nil
    }

    /// iOS: the usage model's energy and data budgets' balances at `now`
    /// (`IOSBackgroundScheduler.energyBudget(at:)`, `dataBudget(at:)`: running seconds and bytes,
    /// below zero when overdrawn); nil on Android and under the legacy model.
    /// - Parameter now: virtual instant.
    public func budgetBalances(at now: Date) -> (energy: Double, data: Double)? {
        guard case .ios(let s) = device, let energy = s.energyBudget(at: now), let data = s.dataBudget(at: now)
        else { return nil }
        return (energy, data)
    }

    /// iOS: the app transferred `bytes` during its app-refresh run in flight
    /// (`IOSBackgroundScheduler.recordDataTransfer(bytes:at:)`, the data budget of the usage
    /// model); ignored on Android and under the legacy model.
    /// - Parameters:
    ///   - bytes: bytes sent and received.
    ///   - now: virtual instant.
    public mutating func recordDataTransfer(bytes: Int, at now: Date) {
        guard case .ios(var s) = device, s.configuration.effectiveOpportunityModel == .usage else { return }
        seen(now)
        s.recordDataTransfer(bytes: bytes, at: now)
        device = .ios(s)
    }

    /// iOS: the opportunity model in effect; nil on Android.
    public var opportunityModel: OpportunityModelKind? {
        if case .ios(let s) = device { return s.configuration.effectiveOpportunityModel }
        return nil
    }

    /// iOS: the usage model's energy and data budgets
    /// (`IOSBackgroundScheduler.setBackgroundBudget(_:)`); ignored on Android.
    /// - Parameter budget: the budgets.
    public mutating func setBackgroundBudget(_ budget: BackgroundBudget) {
        ios(nil) { $0.setBackgroundBudget(budget) }
    }

    /// iOS: the battery's drain and charge rates (`IOSBackgroundScheduler.setBatteryModel(_:at:)`);
    /// ignored on Android.
    /// - Parameters:
    ///   - battery: the rates.
    ///   - now: virtual instant.
    public mutating func setBatteryModel(_ battery: BatteryModel, at now: Date) {
        ios(now) { $0.setBatteryModel(battery, at: now) }
    }

    /// Sets the iOS app-refresh budget of later runs; ignored on Android.
    /// - Parameter seconds: virtual seconds, > 0.
    public mutating func setRuntimeBudget(_ seconds: TimeInterval) {
        ios(nil) { $0.setRuntimeBudget(seconds) }
    }

    /// A Doze input (Android: `AndroidWorkScheduler.setScreen`, `motion`, `forceIdle`,
    /// `stepIdle`, `unforceIdle`); on iOS only the screen counts
    /// (`IOSBackgroundScheduler.setScreen`: the device in use or idle, for processing tasks).
    /// - Parameters:
    ///   - input: the screen, a motion, or a `dumpsys deviceidle` control.
    ///   - now: virtual instant.
    public mutating func doze(_ input: DozeInput, at now: Date) {
        seen(now)
        if case .ios(var s) = device {
            if case .screen(let on) = input { s.setScreen(on, at: now) }
            device = .ios(s)
            return
        }
        guard case .android(var s) = device else { return }
        switch input {
        case .screen(let on): s.setScreen(on, at: now)
        case .motion: s.motion(at: now)
        case .force: s.forceIdle(at: now)
        case .step: s.stepIdle(at: now)
        case .unforce: s.unforceIdle(at: now)
        }
        device = .android(s)
    }

    /// Sets the Android periodic interval; ignored on iOS.
    /// - Parameter seconds: the requested interval (raised to 900).
    public mutating func setRepeatInterval(_ seconds: TimeInterval) {
        guard case .android(var s) = device else { return }
        s.setRepeatInterval(seconds)
        device = .android(s)
    }

    /// Sets the Android API level, which selects the quota table
    /// (`AndroidWorkScheduler.setAndroidAPI`); ignored on iOS.
    /// - Parameters:
    ///   - api: API level (21...36).
    ///   - android16Flags: Android 16's flagged quota values on.
    public mutating func setAndroidAPI(_ api: Int, android16Flags: Bool = true) {
        guard case .android(var s) = device else { return }
        s.setAndroidAPI(api, android16Flags: android16Flags)
        device = .android(s)
    }

    /// Applies `body` to the Android scheduler; nil on iOS (nothing changes).
    /// Runs `body` on the iOS scheduler (seen at `now` when given); nil on Android.
    @discardableResult
    private mutating func ios<R>(_ now: Date?, _ body: (inout IOSBackgroundScheduler) -> R) -> R? {
        if let now { seen(now) }
        guard case .ios(var s) = device else { return nil }
        let result = body(&s)
        device = .ios(s)
        return result
    }

    private mutating func android<R>(_ now: Date, _ body: (inout AndroidWorkScheduler) -> R) -> R? {
        seen(now)
        guard case .android(var s) = device else { return nil }
        let result = body(&s)
        device = .android(s)
        return result
    }

    /// Sets the Android work request's constraints (`AndroidWorkScheduler.setConstraints`);
    /// ignored on iOS.
    /// - Parameter constraints: the requirements.
    public mutating func setConstraints(_ constraints: [WorkConstraint]) {
        guard case .android(var s) = device else { return }
        s.setConstraints(constraints)
        device = .android(s)
    }

    /// The Android work request's constraints; empty on iOS.
    public var constraints: [WorkConstraint] {
        if case .android(let s) = device { return s.constraints }
        return []
    }

    /// Network on or off (`AndroidWorkScheduler.setNetwork`, `IOSBackgroundScheduler.setNetwork`).
    /// - Parameters:
    ///   - on: connected.
    ///   - now: virtual instant.
    public mutating func setNetwork(_ on: Bool, at now: Date) {
        if case .ios(var s) = device {
            seen(now)
            s.setNetwork(on, at: now)
            device = .ios(s)
            return
        }
        android(now) { $0.setNetwork(on, at: now) }
    }

    // MARK: Processing tasks (iOS)

    /// iOS: submits a `BGProcessingTaskRequest` (`IOSBackgroundScheduler.submitProcessing`).
    /// - Parameters:
    ///   - request: the request.
    ///   - now: virtual instant.
    /// - Throws: `SchedulerFailure.rejected` with Apple's code (`notPermitted` on Android, which
    ///   has no processing tasks), or `.crash` (no handler registered).
    public mutating func submitProcessing(_ request: ProcessingRequest, at now: Date) throws(SchedulerFailure) {
        seen(now)
        guard case .ios(var s) = device else {
            throw .rejected(.notPermitted("BGProcessingTaskRequest is iOS's; this device runs Android"))
        }
        defer { device = .ios(s) }
        try s.submitProcessing(request, at: now)
    }

    /// iOS: the app cancels its pending processing request of `identifier`
    /// (`IOSBackgroundScheduler.cancelProcessing(identifier:at:)`); ignored on Android.
    public mutating func cancelProcessing(identifier: String, at now: Date) {
        ios(now) { $0.cancelProcessing(identifier: identifier, at: now) }
    }

    /// iOS: adds `identifier` to `BGTaskSchedulerPermittedIdentifiers` (an app build that lists
    /// it); ignored on Android.
    /// - Parameter identifier: the task identifier.
    public mutating func permit(_ identifier: String) {
        guard case .ios(var s) = device, !s.configuration.permittedIdentifiers.contains(identifier) else { return }
        s.permit(identifier)
        device = .ios(s)
    }

    /// iOS: the pending processing request, nil when none (and on Android).
    public var pendingProcessing: ProcessingRequest? {
        if case .ios(let s) = device { return s.pendingProcessing }
        return nil
    }

    /// iOS: whether a submit of `request` would only re-state the pending processing request.
    /// - Parameter request: the request.
    public func holdsProcessing(_ request: ProcessingRequest) -> Bool {
        if case .ios(let s) = device { return s.pendingProcessing == request }
        return false
    }

    /// iOS: the processing request's answer to "why hasn't it run?"
    /// (`IOSBackgroundScheduler.whyProcessing`); nil on Android and when the app never submitted one.
    /// - Parameter now: virtual instant.
    public func whyProcessing(at now: Date) -> WhyAnswer? {
        if case .ios(let s) = device { return s.whyProcessing(at: now) }
        return nil
    }

    /// Android: battery low or not (`AndroidWorkScheduler.setBatteryLow`); ignored on iOS.
    /// - Parameters:
    ///   - on: low.
    ///   - now: virtual instant.
    public mutating func setBatteryLow(_ on: Bool, at now: Date) { android(now) { $0.setBatteryLow(on, at: now) } }

    /// Android: storage low or not (`AndroidWorkScheduler.setStorageLow`); ignored on iOS.
    /// - Parameters:
    ///   - on: low.
    ///   - now: virtual instant.
    public mutating func setStorageLow(_ on: Bool, at now: Date) { android(now) { $0.setStorageLow(on, at: now) } }

    /// Android: a TestDriver control (`AndroidWorkScheduler.testDriver`); ignored on iOS.
    /// - Parameters:
    ///   - control: the control.
    ///   - now: virtual instant.
    public mutating func testDriver(_ control: AndroidWorkScheduler.TestDriverControl, at now: Date) {
        _ = android(now) { $0.testDriver(control, at: now) }
    }

    /// Android: `cmd jobscheduler stop -s REASON` (`AndroidWorkScheduler.stopWork`); ignored on iOS.
    /// - Parameters:
    ///   - reason: the stop reason.
    ///   - now: virtual instant.
    public mutating func stopWork(reason: WorkStopReason, at now: Date) {
        _ = android(now) { $0.stopWork(reason: reason, at: now) }
    }

    /// Android: `WorkInfo.getStopReason()` of `launch` when the OS stopped it
    /// (`AndroidWorkScheduler.stopReason(of:)`); nil when it was not stopped, and on iOS.
    /// - Parameter launch: a grant this OS made.
    public func stopReason(of launch: BackgroundLaunch) -> Int? {
        if case .android(let s) = device { return s.stopReason(of: launch) }
        return nil
    }

    /// The Android API level the quota table was chosen for, nil on iOS or when never chosen.
    public var androidAPI: Int? {
        if case .android(let s) = device { return s.configuration.androidAPI }
        return nil
    }

    /// How the installed app registers its handler (always `early` on Android).
    public var registrationMode: RegistrationMode {
        if case .ios(let s) = device { return s.configuration.registrationMode }
        return .early
    }

    /// Whether Low Power Mode (iOS) or Battery Saver (Android) is on.
    public var lowPowerMode: Bool {
        switch device {
        case .ios(let s): return s.lowPowerMode
        case .android(let s): return s.lowPowerMode
        }
    }

    /// The App Standby bucket (Android), nil on iOS.
    public var standbyBucket: StandbyBucket? {
        if case .android(let s) = device { return s.bucket }
        return nil
    }

    /// Whether a submit of `identifier` with `earliestBeginDate` would only re-state a request
    /// the OS already holds: on iOS a pending request of that identifier with the same
    /// earliestBeginDate (the OS keeps its drawn launch); on Android work of that name already
    /// enqueued (`KEEP` keeps it unchanged).
    /// - Parameters:
    ///   - identifier: the task identifier or unique work name.
    ///   - earliestBeginDate: the request's earliestBeginDate.
    public func holdsRequest(identifier: String, earliestBeginDate: Date?) -> Bool {
        switch device {
        case .ios(let s): s.pendingIdentifier == identifier && s.pendingEarliestBeginDate == earliestBeginDate
        case .android(let s): s.nextRunTime(of: identifier) != nil
        }
    }

    /// Why a decoded value cannot be used, nil when it can: the version, the stored zone (which
    /// `zoneProblem` judges, for the tz database the caller uses) and the numbers the scheduler
    /// initialisers would have clamped.
    /// - Parameter zoneProblem: why an IANA zone name cannot be used, nil when it can.
    /// - Returns: the problem in words, naming the field (`timeZone: …`, `configuration.…`).
    public func validationProblem(zoneProblem: (String) -> String?) -> String? {
        guard version == Self.formatVersion else {
            return "version \(version); this build reads \(Self.formatVersion)"
        }
        if let name = timeZoneIdentifier, let problem = zoneProblem(name) {
            return "timeZone: \(problem)"
        }
        if reboots < 0 { return "reboots \(reboots): expected a count ≥ 0" }
        if let offset = wallClockOffsetState, !offset.isFinite {
            return "wallClockOffset \(offset): expected a finite number of seconds"
        }
        switch device {
        case .ios(let s):
            let c = s.configuration
            if c.permittedIdentifiers.isEmpty { return "configuration.permittedIdentifiers is empty" }
            // `--budget` takes 0.1 to 600 s.
            if !(c.runtimeBudget > 0 && c.runtimeBudget <= 600) {
                return "configuration.runtimeBudget \(c.runtimeBudget): expected more than 0 and at most 600 seconds"
            }
            if let identifier = s.pendingIdentifier, !c.permittedIdentifiers.contains(identifier) {
                // `submit` refuses an identifier the Info.plist does not permit, so no such request
                // is ever pending; one would block every later submit.
                return "pending.identifier \"\(identifier)\" is not in configuration.permittedIdentifiers"
            }
            if !(0...c.runtimeBudget).contains(c.expirationWarning) {
                return "configuration.expirationWarning \(c.expirationWarning): expected 0 to the runtime budget"
            }
            if let budget = c.processingBudget, !(budget > 0 && budget.isFinite) {
                return "configuration.processingBudget \(budget): expected a finite number > 0"
            }
            if let delay = c.idleDelay, !(delay >= 0 && delay.isFinite) {
                return "configuration.idleDelay \(delay): expected a finite number ≥ 0"
            }
            let o = c.opportunity
            // A year bounds every wait: no OS draws a longer one, and 1e300 stalls the arithmetic.
            let year: TimeInterval = 365 * 86_400
            if !(1...year).contains(o.meanDelay) {
                return "configuration.opportunity.meanDelay \(o.meanDelay): expected 1 to 31536000 seconds (a year)"
            }
            if !(0...year).contains(o.maximumDelay) {
                return
                    "configuration.opportunity.maximumDelay \(o.maximumDelay): expected 0 to 31536000 seconds (a year)"
            }
            if !(0...86_400).contains(o.quantum) {
                return "configuration.opportunity.quantum \(o.quantum): expected 0 to 86400 seconds"
            }
            if !(0...1).contains(o.missProbability) {
                return "configuration.opportunity.missProbability \(o.missProbability): expected 0 to 1"
            }
            if let problem = o.empirical?.validationProblem {
                return "configuration.opportunity.empirical.\(problem)"
            }
            if let b = c.budget {
                if !(b.energyPerDay >= 0.001 && b.energyPerDay.isFinite) {
                    return "configuration.budget.energyPerDay \(b.energyPerDay): expected a finite number ≥ 0.001"
                }
                if !(b.dataPerDay >= 1 && b.dataPerDay.isFinite) {
                    return "configuration.budget.dataPerDay \(b.dataPerDay): expected a finite number ≥ 1"
                }
                if !(b.window >= 60 && b.window.isFinite) {
                    return "configuration.budget.window \(b.window): expected a finite number ≥ 60"
                }
            }
            if let m = c.battery {
                if !(0...1).contains(m.drainPerHour) {
                    return "configuration.battery.drainPerHour \(m.drainPerHour): expected 0 to 1"
                }
                if !(0...10).contains(m.chargePerHour) {
                    return "configuration.battery.chargePerHour \(m.chargePerHour): expected 0 to 10"
                }
            }
        case .android(let s):
            let c = s.configuration
            // The ranges of the flags that set them (`--interval`: 1 s to 30 days).
            if !(1...(30 * 86_400)).contains(c.repeatInterval) {
                return "configuration.repeatInterval \(c.repeatInterval): expected 1 to 2592000 seconds (30 days)"
            }
            if let flex = c.flex, !(flex >= 0 && flex.isFinite) {
                return "configuration.flex \(flex): expected a finite number ≥ 0"
            }
            if !(c.backoffDelay >= 0 && c.backoffDelay.isFinite) {
                return "configuration.backoffDelay \(c.backoffDelay): expected a finite number ≥ 0"
            }
            if !(c.maxBackoff >= 0 && c.maxBackoff.isFinite) {
                return "configuration.maxBackoff \(c.maxBackoff): expected a finite number ≥ 0"
            }
            if !(c.quotaBuffer >= 0 && c.quotaBuffer.isFinite) {
                return "configuration.quotaBuffer \(c.quotaBuffer): expected a finite number ≥ 0"
            }
            if let problem = s.storedValuesProblem { return problem }
        }
        return nil
    }

    // MARK: BackgroundScheduler

    /// The device's platform.
    public var platform: Platform {
        switch device {
        case .ios(let s): return s.platform
        case .android(let s): return s.platform
        }
    }

    /// Applies `body` to the scheduler, whichever platform it is. `body` only calls the
    /// scheduler's own methods, which keep its concrete type, so the result is stored back as
    /// the same platform.
    private mutating func update<R>(_ body: (inout any BackgroundScheduler) -> R) -> R {
        switch device {
        case .ios(let s):
            var scheduler: any BackgroundScheduler = s
            let result = body(&scheduler)
            if let updated = scheduler as? IOSBackgroundScheduler { device = .ios(updated) }
            return result
        case .android(let s):
            var scheduler: any BackgroundScheduler = s
            let result = body(&scheduler)
            if let updated = scheduler as? AndroidWorkScheduler { device = .android(updated) }
            return result
        }
    }

    private var scheduler: any BackgroundScheduler {
        switch device {
        case .ios(let s): return s
        case .android(let s): return s
        }
    }

    /// See `BackgroundScheduler.appLaunched(at:byUser:)`.
    public mutating func appLaunched(at now: Date, byUser: Bool) {
        seen(now)
        update { $0.appLaunched(at: now, byUser: byUser) }
    }

    /// See `BackgroundScheduler.register(identifier:at:)`.
    public mutating func register(identifier: String, at now: Date) throws(LaunchHandlerCrash) -> Bool {
        seen(now)
        let result: Result<Bool, LaunchHandlerCrash> = update { scheduler in
            do throws(LaunchHandlerCrash) {
                return .success(try scheduler.register(identifier: identifier, at: now))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// See `BackgroundScheduler.finishLaunching(at:)`.
    public mutating func finishLaunching(at now: Date) {
        seen(now)
        update { $0.finishLaunching(at: now) }
    }

    /// See `BackgroundScheduler.submit(identifier:earliestBeginDate:at:)`.
    public mutating func submit(identifier: String, earliestBeginDate: Date?, at now: Date) throws(SchedulerFailure) {
        seen(now)
        let result: Result<Void, SchedulerFailure> = update { scheduler in
            do throws(SchedulerFailure) {
                try scheduler.submit(identifier: identifier, earliestBeginDate: earliestBeginDate, at: now)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// See `BackgroundScheduler.nextLaunch(after:)`.
    public func nextLaunch(after now: Date) -> Date? { scheduler.nextLaunch(after: now) }

    /// See `BackgroundScheduler.takeLaunch(at:)`; the launch is recorded in `launchHistory`.
    public mutating func takeLaunch(at now: Date) -> BackgroundLaunch? {
        seen(now)
        let launch = update { $0.takeLaunch(at: now) }
        if let launch { record(launch) }
        return launch
    }

    /// See `BackgroundScheduler.launchCrashed(at:)`.
    public mutating func launchCrashed(at now: Date) {
        seen(now)
        update { $0.launchCrashed(at: now) }
    }

    /// See `BackgroundScheduler.complete(_:outcome:duration:at:)`.
    public mutating func complete(_ launch: BackgroundLaunch, outcome: RunOutcome, duration: TimeInterval, at now: Date)
    {
        seen(now)
        update { $0.complete(launch, outcome: outcome, duration: duration, at: now) }
    }

    /// See `BackgroundScheduler.setBackgroundRefreshEnabled(_:at:)`.
    public mutating func setBackgroundRefreshEnabled(_ on: Bool, at now: Date) {
        seen(now)
        update { $0.setBackgroundRefreshEnabled(on, at: now) }
    }

    /// See `BackgroundScheduler.setLowPowerMode(_:at:)`.
    public mutating func setLowPowerMode(_ on: Bool, at now: Date) {
        seen(now)
        update { $0.setLowPowerMode(on, at: now) }
    }

    /// See `BackgroundScheduler.forceQuit(at:)`.
    public mutating func forceQuit(at now: Date) {
        seen(now)
        update { $0.forceQuit(at: now) }
    }

    /// See `BackgroundScheduler.setStandbyBucket(_:at:)`.
    public mutating func setStandbyBucket(_ bucket: StandbyBucket, at now: Date) {
        seen(now)
        update { $0.setStandbyBucket(bucket, at: now) }
    }

    /// See `BackgroundScheduler.setCharging(_:at:)`.
    public mutating func setCharging(_ on: Bool, at now: Date) {
        seen(now)
        update { $0.setCharging(on, at: now) }
    }

    /// See `BackgroundScheduler.simulateLaunch(identifier:at:)`; the launch is recorded in `launchHistory`.
    public mutating func simulateLaunch(identifier: String, at now: Date) -> BackgroundLaunch? {
        seen(now)
        let launch = update { $0.simulateLaunch(identifier: identifier, at: now) }
        if let launch { record(launch) }
        return launch
    }

    /// See `BackgroundScheduler.drainTrace()`; the OS's own entries (`os.watch_message`) are
    /// merged in time order, with an `os.why` whenever the pending request's answer changed.
    public mutating func drainTrace() -> [(at: Date, event: OSEvent)] { drainTrace(sayingWhy: true) }

    /// `drainTrace()`, with or without the `os.why` entries: a host that reads none of them (a
    /// simulation that keeps only launches and run records) leaves them out, and the answer to
    /// "why hasn't it run?" is then not computed at each drain (`why(at:)` still answers when asked).
    /// - Parameter sayingWhy: whether to add `os.why` when the answer changed since it was last said.
    public mutating func drainTrace(sayingWhy: Bool) -> [(at: Date, event: OSEvent)] {
        // Most calls leave the scheduler's trace empty: then there is nothing to take out of it.
        let traced =
            switch device {
            case .ios(let s): s.hasTrace
            case .android(let s): s.hasTrace
            }
        let scheduler = traced ? update { $0.drainTrace() } : []
        if sayingWhy, let now = lastNow {
            let answer = why(at: now)
            if answer != lastWhy {
                lastWhy = answer
                ownTrace.add(now, .osWhy, answer.fields)
            }
            let processing = whyProcessing(at: now)
            if processing != lastProcessingWhy {
                lastProcessingWhy = processing
                if let processing { ownTrace.add(now, .osWhy, processing.fields) }
            }
        }
        let own = ownTrace.drain()
        guard !own.isEmpty else { return scheduler }
        // A stable merge: at one instant, the scheduler's entries first.
        return (scheduler.map { ($0, 0) } + own.map { ($0, 1) }).enumerated()
            .sorted { ($0.element.0.at, $0.element.1, $0.offset) < ($1.element.0.at, $1.element.1, $1.offset) }
            .map(\.element.0)
    }

    // MARK: A message from the paired watch

    /// What the OS does with a message from the paired watch that asks the app for dates.
    public struct WatchMessageDelivery: Equatable, Sendable {
        /// Whether the app gets the message: woken in the background (or handed it while running).
        public var woken: Bool
        /// Virtual seconds the app may run for it; nil = no limit.
        public var budget: TimeInterval?
        /// Seconds before the end of `budget` at which the app is told to finish (iOS; 0 on Android).
        public var expirationWarning: TimeInterval
        /// Why the app was not woken, nil when it was.
        public var reason: String?
    }

    /// The platform's channel for a message from the paired watch: `WatchConnectivity` (iOS,
    /// `WCSession.sendMessage` from the watch) or `MessageClient` (Android, Wear OS data layer,
    /// delivered to the app's `WearableListenerService`).
    public var watchMessageChannel: String {
        switch device {
        case .ios: return "WatchConnectivity"
        case .android: return "MessageClient"
        }
    }

    /// A message from the paired watch reached the phone (docs/scheduler.md, "A message from the
    /// watch"). Traces `os.watch_message` {channel, woken, appRunning, budget, reason}.
    ///
    /// - iOS (Apple, `WCSession.sendMessage(_:replyHandler:errorHandler:)`): a message sent from
    ///   the watch app while it is reachable wakes the iOS app in the background; the
    ///   WatchConnectivity delegate is not a BGTaskScheduler launch handler, so a handler that
    ///   was registered too late does not matter, and Background App Refresh and Low Power Mode
    ///   (BGTaskScheduler's conditions) do not hold it back. The app runs within
    ///   `runtimeBudget` (Apple gives no number for this wake; this model's choice: the same
    ///   budget as an app-refresh run). After a force-quit the app is not woken (this model's
    ///   assumption, as Apple documents for background pushes).
    /// - Android (Google, `WearableListenerService`: its life-cycle is managed by the Wear OS
    ///   data layer, which binds it to deliver a `MessageClient` message; Android 8.0 "Background
    ///   Execution Limits": bound services are not affected): the listener service is woken in
    ///   any standby bucket, with Battery Saver on too, and uses no job quota; no time limit
    ///   (this model's choice). A force-stopped app is not woken (this model's assumption: the
    ///   stopped state holds until the user opens the app).
    /// - Parameters:
    ///   - now: virtual instant of the arrival.
    ///   - appRunning: whether the app process runs (the message is handed to it without a launch).
    /// - Returns: whether the app gets the message, and its budget.
    public mutating func watchMessage(at now: Date, appRunning: Bool) -> WatchMessageDelivery {
        seen(now)
        var delivery: WatchMessageDelivery
        switch device {
        case .ios(let s):
            if s.isForceQuit && !appRunning {
                delivery = WatchMessageDelivery(
                    woken: false, budget: nil, expirationWarning: 0,
                    reason: "the user force-quit the app; the system does not wake it until the user opens it")
            } else {
                delivery = WatchMessageDelivery(
                    woken: true, budget: s.configuration.runtimeBudget,
                    expirationWarning: s.configuration.expirationWarning, reason: nil)
            }
        case .android(let s):
            if s.isForceStopped && !appRunning {
                delivery = WatchMessageDelivery(
                    woken: false, budget: nil, expirationWarning: 0,
                    reason: "the app was force-stopped; nothing starts it until the user opens it")
            } else {
                delivery = WatchMessageDelivery(woken: true, budget: nil, expirationWarning: 0, reason: nil)
            }
        }
        ownTrace.add(
            now, .osWatchMessage,
            [
                ("channel", .string(watchMessageChannel)), ("woken", .bool(delivery.woken)),
                ("appRunning", .bool(appRunning)), ("budget", .schedulerSeconds(delivery.budget)),
                ("reason", delivery.reason.map { .string($0) } ?? .null),
            ])
        return delivery
    }

    /// Background notifications iOS throttles to in a rolling hour (Apple, "Pushing background
    /// updates to your app": "don't try to send more than two or three per hour"; the number is
    /// this model's assumption).
    public static let pushesPerHour = 3
    /// Seconds an iOS app woken for a background notification may run (Apple,
    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`: up to 30 seconds).
    public static let pushBudget: TimeInterval = 30

    /// A server push reached the device at `now` (docs/scheduler.md, "A server push"). Traces
    /// `os.push` {priority, woken, deliverAt, budget, reason}.
    ///
    /// - iOS: every background notification is low priority. It is not delivered after a
    ///   force-quit (Apple: the system does not launch an app the user force-quit for it), nor
    ///   while Background App Refresh is off or Low Power Mode is on (this model's assumption,
    ///   as for app refresh), nor beyond `pushesPerHour` in the last hour (throttled). A
    ///   delivered one runs within `pushBudget`; a launch handler registered too late does not
    ///   matter (the app delegate gets it).
    /// - Android: not delivered to a force-stopped app (Firebase: a stopped app gets no
    ///   messages until the user opens it). High priority is delivered at once, Doze or not, in
    ///   every standby bucket (this model does not count FCM quotas); normal priority is
    ///   delivered at once while Doze does not hold jobs, and at Doze's next maintenance window
    ///   otherwise (`AndroidWorkScheduler.dozeHold(at:)`; `pushesDue(at:)` hands it over then).
    /// - Parameters:
    ///   - priority: the sender's priority.
    ///   - now: virtual instant of the arrival.
    ///   - appRunning: whether the app process runs (the push is handed to it without a launch).
    /// - Returns: whether and when the app gets the push, and its budget.
    public mutating func backgroundPush(priority: PushPriority, at now: Date, appRunning: Bool) -> PushDelivery {
        seen(now)
        var delivery: PushDelivery
        switch device {
        case .ios(let s):
            pushDeliveries.removeAll { now.timeIntervalSince($0) >= 3_600 || $0 > now }
            func refused(_ reason: String) -> PushDelivery {
                PushDelivery(woken: false, deliverAt: nil, budget: nil, expirationWarning: 0, reason: reason)
            }
            if s.isForceQuit && !appRunning {
                delivery = refused(
                    "the user force-quit the app; the system does not launch it for a push until the user opens it")
            } else if !s.backgroundRefreshEnabled {
                delivery = refused("Background App Refresh is off")
            } else if s.lowPowerMode {
                delivery = refused("Low Power Mode is on")
            } else if pushDeliveries.count >= Self.pushesPerHour {
                delivery = refused(
                    "throttled: \(Self.pushesPerHour) background notifications delivered in the last hour")
            } else {
                pushDeliveries.append(now)
                delivery = PushDelivery(
                    woken: true, deliverAt: now, budget: Self.pushBudget,
                    expirationWarning: min(s.configuration.expirationWarning, Self.pushBudget), reason: nil)
            }
        case .android(let s):
            if s.isForceStopped && !appRunning {
                delivery = PushDelivery(
                    woken: false, deliverAt: nil, budget: nil, expirationWarning: 0,
                    reason: "the app was force-stopped; no message reaches it until the user opens it")
            } else if priority == .normal, let window = s.dozeHold(at: now) {
                deferredPushes.append(window)
                delivery = PushDelivery(woken: true, deliverAt: window, budget: nil, expirationWarning: 0, reason: nil)
            } else {
                delivery = PushDelivery(woken: true, deliverAt: now, budget: nil, expirationWarning: 0, reason: nil)
            }
        }
        ownTrace.add(
            now, .osPush,
            [
                ("priority", .string(priority.rawValue)), ("woken", .bool(delivery.woken)),
                ("deliverAt", delivery.deliverAt.map { .date($0) } ?? .null),
                ("budget", .schedulerSeconds(delivery.budget)),
                ("reason", delivery.reason.map { .string($0) } ?? .null),
            ])
        return delivery
    }

    /// Android: the normal-priority pushes Doze deferred whose maintenance window has come by
    /// `now`, handed over now (in order; each at most once); empty on iOS.
    /// - Parameter now: virtual instant.
    public mutating func pushesDue(at now: Date) -> [PushDelivery] {
        let due = deferredPushes.filter { $0 <= now }
        guard !due.isEmpty else { return [] }
        deferredPushes.removeAll { $0 <= now }
        return due.map { PushDelivery(woken: true, deliverAt: $0, budget: nil, expirationWarning: 0, reason: nil) }
    }

    /// Every condition holding the pending refresh request back at `now` (docs/scheduler.md,
    /// "Why hasn't it run?"): `IOSBackgroundScheduler.why(at:)` or `AndroidWorkScheduler.why(at:)`.
    /// Pure: a function of the stored state and `now` only.
    /// - Parameter now: virtual instant.
    public func why(at now: Date) -> WhyAnswer {
        switch device {
        case .ios(let s): s.why(at: now)
        case .android(let s): s.why(at: now)
        }
    }

    /// The scheduler's status, then `reboots`, `launches` (how many `launchHistory` holds),
    /// `wallClockOffset` (seconds) and, on iOS, `notificationAuthorization`.
    public func status() -> [(String, EventValue)] {
        var fields =
            scheduler.status() + [
                ("reboots", .int(Int64(reboots))), ("launches", .int(Int64(launchHistory.count))),
                ("wallClockOffset", .double(wallClockOffset)),
            ]
        if case .ios = device {
            fields.append(("notificationAuthorization", .string(notificationAuthorization.rawValue)))
        }
        return fields
    }

    /// Notes the instant of a call (the latest is what `drainTrace` asks `why` at).
    private mutating func seen(_ now: Date) { lastNow = max(lastNow ?? now, now) }

    private mutating func record(_ launch: BackgroundLaunch) {
        launchHistory.append(
            LaunchRecord(
                at: launch.startedAt, identifier: launch.identifier, simulated: launch.simulated,
                handlerEntered: launch.handlerRegistered, runAttemptCount: launch.runAttemptCount))
        if launchHistory.count > Self.launchHistoryLimit {
            launchHistory.removeFirst(launchHistory.count - Self.launchHistoryLimit)
        }
    }

    // MARK: Codable

    private enum CodingKeys: String, CodingKey {
        case version, platform, seed, reboots, lastReboot, timeZone, launchHistory, ios, android
        case notificationsDenied, notificationAuthorization, wallClockOffset, pushDeliveries, deferredPushes
    }

    /// Reads `version` first, then `platform` ("ios" or "android") and the scheduler under the
    /// key of that name.
    /// - Throws: `DecodingError` for a version this build does not read (before any other field),
    ///   an unknown platform or a missing or malformed field.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        // Another build's file: say so before any field it may lack or spell differently.
        guard version == Self.formatVersion else {
            throw DecodingError.dataCorruptedError(
                forKey: .version, in: container,
                debugDescription: "this build reads version \(Self.formatVersion)")
        }
        seed = try container.decode(UInt64.self, forKey: .seed)
        reboots = try container.decode(Int.self, forKey: .reboots)
        lastReboot = try container.decodeIfPresent(Date.self, forKey: .lastReboot)
        timeZoneIdentifier = try container.decodeIfPresent(String.self, forKey: .timeZone)
        launchHistory = try container.decode([LaunchRecord].self, forKey: .launchHistory)
        notificationsDenied = try container.decodeIfPresent(Bool.self, forKey: .notificationsDenied)
        notificationAuthorizationState = try container.decodeIfPresent(
            NotificationAuthorization.self, forKey: .notificationAuthorization)
        wallClockOffsetState = try container.decodeIfPresent(TimeInterval.self, forKey: .wallClockOffset)
        pushDeliveries = try container.decodeIfPresent([Date].self, forKey: .pushDeliveries) ?? []
        deferredPushes = try container.decodeIfPresent([Date].self, forKey: .deferredPushes) ?? []
        let name = try container.decode(String.self, forKey: .platform)
        switch Platform(rawValue: name) {
        case .ios: device = .ios(try container.decode(IOSBackgroundScheduler.self, forKey: .ios))
        case .android: device = .android(try container.decode(AndroidWorkScheduler.self, forKey: .android))
        case nil:
            throw DecodingError.dataCorruptedError(
                forKey: .platform, in: container, debugDescription: "expected ios or android")
        }
    }

    /// Writes `version`, `platform`, `seed`, `reboots`, `lastReboot`, `timeZone` (when set),
    /// `launchHistory`, the device settings that are set (`notificationsDenied`,
    /// `notificationAuthorization`, `wallClockOffset`) and the scheduler under the platform's name.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(platform, forKey: .platform)
        try container.encode(seed, forKey: .seed)
        try container.encode(reboots, forKey: .reboots)
        try container.encodeIfPresent(lastReboot, forKey: .lastReboot)
        try container.encodeIfPresent(timeZoneIdentifier, forKey: .timeZone)
        try container.encode(launchHistory, forKey: .launchHistory)
        try container.encodeIfPresent(notificationsDenied, forKey: .notificationsDenied)
        try container.encodeIfPresent(notificationAuthorizationState, forKey: .notificationAuthorization)
        try container.encodeIfPresent(wallClockOffsetState, forKey: .wallClockOffset)
        if !pushDeliveries.isEmpty { try container.encode(pushDeliveries, forKey: .pushDeliveries) }
        if !deferredPushes.isEmpty { try container.encode(deferredPushes, forKey: .deferredPushes) }
        switch device {
        case .ios(let s): try container.encode(s, forKey: .ios)
        case .android(let s): try container.encode(s, forKey: .android)
        }
    }
}

extension SimulatedOS: Equatable {
    /// Whether two OS values hold the same durable state: their encodings (what a host's state
    /// file keeps, sorted keys) are the same bytes. The trace not yet drained is not state.
    /// - Complexity: O(n) in the size of the encoding; for tests and checks, not a hot path.
    public static func == (lhs: SimulatedOS, rhs: SimulatedOS) -> Bool {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .secondsSince1970
        // An encoding failure (a non-finite number) makes the values unequal rather than equal.
        guard let left = try? encoder.encode(lhs), let right = try? encoder.encode(rhs) else { return false }
        return left == right
    }
}

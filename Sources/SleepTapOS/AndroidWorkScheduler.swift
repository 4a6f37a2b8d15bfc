// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// WorkManager's backoff policy (`androidx.work.BackoffPolicy`).
///
/// After the n-th retry (n = the work's `runAttemptCount`, from 1) the next try waits
/// EXPONENTIAL `min(initial × 2^(n-1), maximum)` or LINEAR `min(initial × n, maximum)` seconds
/// (androidx `WorkSpec.calculateNextRunTime`).
public struct BackoffPolicy: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// "EXPONENTIAL" or "LINEAR", as in androidx.
    public let rawValue: String

    /// - Parameter rawValue: "EXPONENTIAL" or "LINEAR"; anything else gives nil.
    public init?(rawValue: String) {
        guard rawValue == "EXPONENTIAL" || rawValue == "LINEAR" else { return nil }
        self.rawValue = rawValue
    }

    private init(known: String) { rawValue = known }

    /// `BackoffPolicy.EXPONENTIAL`, WorkManager's default.
    public static let exponential = BackoffPolicy(known: "EXPONENTIAL")
    /// `BackoffPolicy.LINEAR`.
    public static let linear = BackoffPolicy(known: "LINEAR")

    /// The wait before the next try after the n-th retry.
    /// - Parameters:
    ///   - retry: n, the work's `runAttemptCount` after the retry (1 for the first retry); < 1 gives 0.
    ///   - initial: the backoff delay, seconds (WorkManager default 30).
    ///   - maximum: the cap, seconds (WorkManager's `MAX_BACKOFF_MILLIS`, 5 h).
    /// - Returns: virtual seconds.
    public func delay(afterRetry retry: Int, initial: TimeInterval = 30, maximum: TimeInterval = 5 * 3600)
        -> TimeInterval
    {
        guard retry >= 1 else { return 0 }
        let raw = self == .linear ? initial * Double(retry) : initial * pow(2, Double(retry - 1))
        return min(raw, maximum)
    }

    /// "EXPONENTIAL" or "LINEAR".
    public var description: String { rawValue }
}

/// One App Standby bucket's job limits: at most `allowedTime` seconds of job execution and
/// `maxSessions` sessions in any rolling `window` seconds (JobScheduler's `QuotaController`).
public struct StandbyQuota: Codable, Equatable, Sendable {
    /// Rolling window, virtual seconds.
    public var window: TimeInterval
    /// Job execution time allowed per window, seconds; nil = unlimited.
    public var allowedTime: TimeInterval?
    /// Job sessions (runs) allowed per window; nil = unlimited.
    public var maxSessions: Int?

    /// - Parameters:
    ///   - window: rolling window, seconds.
    ///   - allowedTime: execution seconds per window; nil = unlimited.
    ///   - maxSessions: sessions per window; nil = unlimited.
    public init(window: TimeInterval, allowedTime: TimeInterval?, maxSessions: Int?) {
        self.window = max(0, window)
        self.allowedTime = allowedTime.map { max(0, $0) }
        self.maxSessions = maxSessions.map { max(0, $0) }
    }

    /// No limit.
    public static let unlimited = StandbyQuota(window: 0, allowedTime: nil, maxSessions: nil)

    /// The limits before Android 13 (Android, "App Standby Buckets", job execution time; session
    /// counts from AOSP `QuotaController` defaults, Android 12): active unlimited; working_set
    /// 10 min and 10 sessions per 2 h; frequent 10 min and 8 sessions per 8 h; rare 10 min and
    /// 3 sessions per 24 h; restricted 10 min and 1 session per 24 h (once a day).
    public static let preAndroid13: [StandbyBucket: StandbyQuota] = [
        .active: .unlimited,
        .workingSet: StandbyQuota(window: 2 * 3600, allowedTime: 600, maxSessions: 10),
        .frequent: StandbyQuota(window: 8 * 3600, allowedTime: 600, maxSessions: 8),
        .rare: StandbyQuota(window: 24 * 3600, allowedTime: 600, maxSessions: 3),
        .restricted: StandbyQuota(window: 24 * 3600, allowedTime: 600, maxSessions: 1),
    ]

    var isLimited: Bool { allowedTime != nil || maxSessions != nil }

    /// The cap on job execution over every bucket from Android 13 in this model: 4 h per rolling
    /// 24 h (AOSP `QuotaController` `MAX_EXECUTION_TIME_MS`).
    public static let executionCap = StandbyQuota(window: 24 * 3600, allowedTime: 4 * 3600, maxSessions: nil)

    /// The limits of Android 13 to 15 (AOSP `QuotaController` defaults; Android, "Power
    /// management resource limits"): the same 10 min per window and sessions as
    /// `preAndroid13` (working_set 10 per 2 h, frequent 8 per 8 h, rare 3 per 24 h,
    /// restricted 1 per 24 h, active unlimited), with `executionCap` over them. The per-window
    /// job counts (75/120/200/48/10) are not modelled: one enqueued work makes one job per
    /// session, so the session count binds first.
    public static let android13to15: [StandbyBucket: StandbyQuota] = preAndroid13

    /// Android 16's flagged values (AOSP `QuotaController`, Android 16; the rollout is not
    /// confirmed, so `Configuration.selectQuotas(androidAPI:android16Flags:)` has a switch):
    /// active 20 min per 1 h, working_set 10 min per 4 h, frequent 10 min per 12 h; rare and
    /// restricted as `android13to15`. Session counts as `android13to15` (active: none), this
    /// model's assumption.
    public static let android16Flagged: [StandbyBucket: StandbyQuota] = [
        .active: StandbyQuota(window: 3600, allowedTime: 1200, maxSessions: nil),
        .workingSet: StandbyQuota(window: 4 * 3600, allowedTime: 600, maxSessions: 10),
        .frequent: StandbyQuota(window: 12 * 3600, allowedTime: 600, maxSessions: 8),
        .rare: StandbyQuota(window: 24 * 3600, allowedTime: 600, maxSessions: 3),
        .restricted: StandbyQuota(window: 24 * 3600, allowedTime: 600, maxSessions: 1),
    ]
}

/// The Android API levels the simulator models and the quota table each selects.
public enum AndroidAPI {
    /// The lowest API level accepted (Android 5.0, the first with JobScheduler).
    public static let minimum = 21
    /// The highest API level modelled (Android 16).
    public static let maximum = 36
    /// Android 13 (`Build.VERSION_CODES.TIRAMISU`).
    public static let android13 = 33
    /// Android 14 (`Build.VERSION_CODES.UPSIDE_DOWN_CAKE`).
    public static let android14 = 34
    /// Android 16 (`Build.VERSION_CODES.BAKLAVA`).
    public static let android16 = 36

    /// The per-bucket limits and the cross-bucket execution cap for `api`: below 33
    /// `StandbyQuota.preAndroid13` without a cap; 33 to 35 `android13to15` with
    /// `executionCap`; 36 `android16Flagged` (or `android13to15` when `android16Flags` is
    /// false) with `executionCap`.
    /// - Parameters:
    ///   - api: an API level (clamped to `minimum...maximum`).
    ///   - android16Flags: whether Android 16's flagged quota values are on (default true).
    public static func quotas(for api: Int, android16Flags: Bool = true) -> (
        buckets: [StandbyBucket: StandbyQuota], cap: StandbyQuota?
    ) {
        if api < android13 { return (StandbyQuota.preAndroid13, nil) }
        if api >= android16 && android16Flags { return (StandbyQuota.android16Flagged, StandbyQuota.executionCap) }
        return (StandbyQuota.android13to15, StandbyQuota.executionCap)
    }
}

/// A deterministic simulation of WorkManager unique periodic work on JobScheduler (docs/scheduler.md).
///
/// Rules (Android, "Define work requests", "App Standby Buckets", "Power management restrictions";
/// androidx `WorkSpec.calculateNextRunTime`, `WorkerWrapper`; AOSP `QuotaController`):
/// - the interval is raised to 15 min, the flex clamped to [5 min, interval];
/// - the first run is at `enqueue + initialDelay + interval - flex` (the start of the first flex
///   window; immediately when flex = interval); after a run that returns success or failure at
///   `end`, the next is at `end + interval` (the end of the next interval counted from the run,
///   so periods drift as androidx documents); `runAttemptCount` resets to 0;
/// - `Result.retry()` keeps the attempt count and waits `BackoffPolicy.delay(afterRetry:)` from the end;
/// - on battery, runs obey the bucket's `StandbyQuota`; the launch's `budget` is the time until
///   the quota is used up (`timeUntilQuotaConsumed(at:)`: the job time left plus what leaves the
///   rolling windows meanwhile); a run past it is stopped (not success): the attempt still counts and it is tried
///   again, backed off from its enqueue time, when quota returns; a run may start only with at
///   least `quotaBuffer` (30 s) of quota left; runs while charging neither obey nor use quota,
///   except in the restricted bucket, which is freed on a charger only while the battery is not
///   low and the device idle (`restrictedQuotaFree(at:)`);
/// - no runs while Battery Saver is on (unless charging), while background work is switched off,
///   or after Force stop until the user opens the app;
/// - no runs while a constraint of the request (`Configuration.constraints`) is unmet; a run
///   whose constraint is lost is stopped (`STOP_REASON_CONSTRAINT_*`; Android, "Work
///   constraints", `JobParameters`).
///
/// Run times are deterministic (no random choice); deep and light Doze defer runs to their
/// maintenance windows (`dozeHold(at:)`).
/// Persistence: `Codable`; everything but the undrained trace is encoded (the enqueued work, the
/// quota sessions, the settings), as WorkManager keeps its work in a database (`SimulatedOS`).
/// Value type, `Sendable`; one owner mutates it.
public struct AndroidWorkScheduler: BackgroundScheduler, Codable {
    /// The periodic work request and the device's limits.
    public struct Configuration: Codable, Equatable, Sendable {
        /// `PeriodicWorkRequest`'s minimum interval, 15 min (`MIN_PERIODIC_INTERVAL_MILLIS`).
        public static let minimumRepeatInterval: TimeInterval = 900
        /// `PeriodicWorkRequest`'s minimum flex, 5 min (`MIN_PERIODIC_FLEX_MILLIS`).
        public static let minimumFlex: TimeInterval = 300

        /// The requested repeat interval, seconds (see `effectiveRepeatInterval`).
        public var repeatInterval: TimeInterval
        /// The requested flex, seconds; nil = the interval (see `effectiveFlex`).
        public var flex: TimeInterval?
        /// EXPONENTIAL (default) or LINEAR.
        public var backoffPolicy: BackoffPolicy
        /// The initial backoff delay, seconds (default 30; clamped to [10 s, maxBackoff] as androidx does).
        public var backoffDelay: TimeInterval
        /// The longest backoff, seconds (default 5 h, `MAX_BACKOFF_MILLIS`).
        public var maxBackoff: TimeInterval
        /// Quota a run needs left to start, seconds (QuotaController's in-quota buffer, 30 s).
        public var quotaBuffer: TimeInterval
        /// Job limits per bucket (default `StandbyQuota.preAndroid13`); a missing bucket is unlimited.
        public var quotas: [StandbyBucket: StandbyQuota]
        /// The bucket at start (default active).
        public var initialBucket: StandbyBucket
        /// Doze timings; nil = `DozeSettings()` (the AOSP defaults; optional in the encoding).
        public var doze: DozeSettings?
        /// A limit on job execution over every bucket (`StandbyQuota.executionCap` from
        /// Android 13); nil = none (optional in the encoding).
        public var executionCap: StandbyQuota?
        /// The API level `selectQuotas` chose the table for; nil = never chosen (the
        /// pre-Android 13 table, optional in the encoding).
        public var androidAPI: Int?
        /// Whether Android 16's flagged quota values are on (API 36); nil = on.
        public var android16Flags: Bool?
        /// The work request's `Constraints`, in declaration order; nil = none
        /// (optional in the encoding).
        public var constraints: [WorkConstraint]?
        /// The alarm rules' numbers (`AlarmSettings`); nil = the defaults (optional in the encoding).
        public var alarms: AlarmSettings?
        /// The exact alarm permission the app declares; nil = `SCHEDULE_EXACT_ALARM` (optional in
        /// the encoding).
        public var exactAlarmDeclaration: ExactAlarmDeclaration?

        /// Chooses the quota table of `androidAPI` (`AndroidAPI.quotas(for:android16Flags:)`):
        /// sets `quotas`, `executionCap`, `androidAPI` and `android16Flags`.
        /// - Parameters:
        ///   - androidAPI: API level, clamped to 21...36.
        ///   - android16Flags: Android 16's flagged values on (default true).
        public mutating func selectQuotas(androidAPI: Int, android16Flags: Bool = true) {
            let api = min(max(androidAPI, AndroidAPI.minimum), AndroidAPI.maximum)
            let table = AndroidAPI.quotas(for: api, android16Flags: android16Flags)
            quotas = table.buckets
            executionCap = table.cap
            self.androidAPI = api
            self.android16Flags = android16Flags
        }

        /// - Parameters:
        ///   - repeatInterval: seconds; below 900 it is raised to 900.
        ///   - flex: seconds; nil = interval; clamped to [300, interval].
        ///   - backoffPolicy: default `.exponential`.
        ///   - backoffDelay: seconds, default 30.
        ///   - maxBackoff: seconds, default 18,000 (5 h).
        ///   - quotaBuffer: seconds, default 30.
        ///   - quotas: per-bucket limits, default pre-Android 13.
        ///   - initialBucket: default `.active`.
        public init(
            repeatInterval: TimeInterval, flex: TimeInterval? = nil, backoffPolicy: BackoffPolicy = .exponential,
            backoffDelay: TimeInterval = 30, maxBackoff: TimeInterval = 5 * 3600, quotaBuffer: TimeInterval = 30,
            quotas: [StandbyBucket: StandbyQuota] = StandbyQuota.preAndroid13, initialBucket: StandbyBucket = .active
        ) {
            self.repeatInterval = repeatInterval
            self.flex = flex
            self.backoffPolicy = backoffPolicy
            self.backoffDelay = backoffDelay
            self.maxBackoff = max(0, maxBackoff)
            self.quotaBuffer = max(0, quotaBuffer)
            self.quotas = quotas
            self.initialBucket = initialBucket
            self.doze = nil
            self.executionCap = nil
            self.androidAPI = nil
            self.android16Flags = nil
            self.constraints = nil
        }

        /// The interval WorkManager uses: `max(repeatInterval, 900)` seconds (a 10 s request runs every 15 min).
        public var effectiveRepeatInterval: TimeInterval { max(repeatInterval, Self.minimumRepeatInterval) }

        /// The flex WorkManager uses: `flex ?? interval`, clamped to [300, interval] seconds.
        public var effectiveFlex: TimeInterval {
            min(max(flex ?? effectiveRepeatInterval, Self.minimumFlex), effectiveRepeatInterval)
        }

        /// The backoff delay WorkManager uses: clamped to [10, maxBackoff] seconds.
        public var effectiveBackoffDelay: TimeInterval { min(max(backoffDelay, 10), max(maxBackoff, 10)) }

        /// The wait after the n-th retry (n from 1), seconds.
        /// - Parameter retry: the work's `runAttemptCount` after the retry.
        public func backoff(afterRetry retry: Int) -> TimeInterval {
            backoffPolicy.delay(afterRetry: retry, initial: effectiveBackoffDelay, maximum: maxBackoff)
        }
    }

    /// androidx `WorkSpec` fields this model needs.
    private struct Work: Codable, Sendable {
        var identifier: String
        var initialDelay: TimeInterval
        var lastEnqueueTime: Date
        var periodCount = 0
        /// androidx's `runAttemptCount`: incremented when a run starts, reset by success/failure.
        var runAttemptCount = 0
        var running: BackgroundLaunch?
        /// The running attempt uses quota (it started on battery).
        var runCounted = false
        /// TestDriver's `setInitialDelayMet`/`setPeriodDelayMet`: the next run is due from this
        /// instant; cleared when a run starts.
        var delayMetAt: Date?
        /// `stop REASON` armed for the running attempt: its `WorkInfo.getStopReason()` code.
        var stopCode: Int?
    }

    private struct Session: Codable, Sendable {
        var start: Date
        var end: Date
    }

    /// Why the stored state holds a value no run of this scheduler makes, nil when it holds
    /// none: a quota with a negative or infinite window or allowed time or negative sessions, an
    /// enqueued work with a negative or infinite initial delay, a first run beyond the end of
    /// 9999, or negative counts. `SimulatedOS.validationProblem(zoneProblem:)` asks it, so a
    /// hand-edited os.json is refused on load.
    public var storedValuesProblem: String? {
        func quotaProblem(_ name: String, _ quota: StandbyQuota) -> String? {
            if !(quota.window >= 0 && quota.window.isFinite) {
                return "\(name).window \(quota.window): expected a finite number ≥ 0"
            }
            if let allowed = quota.allowedTime, !(allowed >= 0 && allowed.isFinite) {
                return "\(name).allowedTime \(allowed): expected a finite number ≥ 0"
            }
            if let sessions = quota.maxSessions, sessions < 0 {
                return "\(name).maxSessions \(sessions): expected a count ≥ 0"
            }
            return nil
        }
        for (bucket, quota) in configuration.quotas.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            if let problem = quotaProblem("configuration.quotas.\(bucket.rawValue)", quota) { return problem }
        }
        if let cap = configuration.executionCap, let problem = quotaProblem("configuration.executionCap", cap) {
            return problem
        }
        for (identifier, work) in works.sorted(by: { $0.key < $1.key }) {
            let name = "works.\(identifier)"
            if !(work.initialDelay >= 0 && work.initialDelay.isFinite) {
                return "\(name).initialDelay \(work.initialDelay): expected a finite number ≥ 0"
            }
            // UNIX seconds of the end of 9999, as the file's instants are bounded.
            if work.lastEnqueueTime.timeIntervalSince1970 + work.initialDelay >= 253_402_300_800 {
                return "\(name).initialDelay \(work.initialDelay): the first run would come after 9999"
            }
            if work.periodCount < 0 { return "\(name).periodCount \(work.periodCount): expected a count ≥ 0" }
            if work.runAttemptCount < 0 {
                return "\(name).runAttemptCount \(work.runAttemptCount): expected a count ≥ 0"
            }
        }
        return nil
    }

    /// The configuration: built with, then changed by `setRepeatInterval`.
    public private(set) var configuration: Configuration

    private var trace = SchedulerTrace()
    private var works: [String: Work] = [:]
    /// Job sessions run on battery (quota accounting), oldest first.
    private var sessions: [Session] = []
    private var lastNow: Date?

    /// The current App Standby bucket.
    public private(set) var bucket: StandbyBucket
    /// Whether the device is charging.
    public private(set) var charging = false
    private var backgroundEnabled = true
    private var batterySaver = false
    private var forceStopped = false
    /// The Doze inputs; nil until one is given (an older encoding has none: screen on).
    private var doze: DozeState?
    /// The last run the OS stopped: its work, start and `WorkInfo.getStopReason()` code; not
    /// encoded (the app reads it as the run ends).
    private var lastStop: (identifier: String, startedAt: Date, code: Int)?
    /// The device has no network connection; nil = connected.
    private var offline: Bool?
    /// The battery is low; nil = not low.
    private var batteryLow: Bool?
    /// Storage is low; nil = not low.
    private var storageLow: Bool?
    /// TestDriver's `setAllConstraintsMet`: the constraints count as met from now on; nil = no.
    private var constraintsForced: Bool?
    /// `stop REASON` given while nothing ran: the next run is stopped at once with this code.
    private var armedStop: Int?
    /// The alarms the app set and the OS holds, by trigger instant; nil = none (optional in the encoding).
    private var alarms: [Alarm]?
    /// `SCHEDULE_EXACT_ALARM` is denied (a new install on API 34+, or the user revoked it); nil =
    /// granted.
    private var exactAlarmDenied: Bool?
    /// When the app's last inexact while-idle alarm fired in Doze, nil when none did.
    private var lastWhileIdleFire: Date?
    /// When the app's exact while-idle alarms fired in Doze, within the quota's window.
    private var exactWhileIdleFires: [Date]?
    /// The latest Doze exit before an alarm clock that `alarmsDue(at:)` has reached (said, or
    /// passed over when the device was not idle then): exits up to it are never said again. It is
    /// an exit's instant, not the call's, so the stored value does not depend on how late a host
    /// polled (the processes' timer lag; the twin polls on time). The coding key keeps its name.
    private var alarmsCheckedAt: Date?
    /// The instant up to which Doze's phase changes were said (`os.doze`): a change Doze makes
    /// by itself after it is said at the next call (`sayDozeChanges(through:)`); not encoded, so
    /// a decoded value says nothing of the time before its first call.
    private var dozeSaidUpTo: Date?

    private enum CodingKeys: String, CodingKey {
        case configuration, works, sessions, lastNow, bucket, charging, backgroundEnabled, batterySaver, forceStopped
        case doze, offline, batteryLow, storageLow, constraintsForced, armedStop
        case alarms, exactAlarmDenied, lastWhileIdleFire, exactWhileIdleFires, alarmsCheckedAt
    }

    /// - Parameter configuration: the periodic request and device limits. Nothing here is random.
    public init(configuration: Configuration) {
        self.configuration = configuration
        bucket = configuration.initialBucket
    }

    /// `.android`.
    public var platform: Platform { .android }

    // MARK: Process and registration

    /// The app process starts; a user launch clears Force stop (WorkManager's `ForceStopRunnable`
    /// then reschedules the enqueued work).
    public mutating func appLaunched(at now: Date, byUser: Bool) {
        advance(to: now)
        if byUser && forceStopped {
            forceStopped = false
            trace.add(now, .osWorkRescheduled, [("reason", .string("app opened after force stop"))])
            conditionsChanged(at: now)
        }
    }

    /// Always true: WorkManager knows the Worker class; there is no launch-phase rule.
    public mutating func register(identifier: String, at now: Date) throws(LaunchHandlerCrash) -> Bool {
        advance(to: now)
        return true
    }

    /// No effect on Android.
    public mutating func finishLaunching(at now: Date) { advance(to: now) }

    // MARK: Work and runs

    /// `enqueueUniquePeriodicWork(identifier, KEEP, request)`: enqueues the work unless work with
    /// that name exists (then it is kept unchanged, `os.work.kept`).
    /// - Parameters:
    ///   - identifier: unique work name.
    ///   - earliestBeginDate: becomes `setInitialDelay(earliestBeginDate - now)`; nil or past = 0.
    ///   - now: virtual instant (the enqueue time).
    /// - Throws: never (WorkManager has no such errors); typed for the common protocol.
    public mutating func submit(identifier: String, earliestBeginDate: Date?, at now: Date) throws(SchedulerFailure) {
        advance(to: now)
        if works[identifier] != nil {
            trace.add(now, .osWorkKept, [("identifier", .string(identifier))])
            return
        }
        let delay = max(0, (earliestBeginDate ?? now).timeIntervalSince(now))
        let work = Work(identifier: identifier, initialDelay: delay, lastEnqueueTime: now)
        works[identifier] = work
        trace.add(
            now, .osWorkEnqueued,
            [
                ("identifier", .string(identifier)),
                ("repeatInterval", .double(configuration.effectiveRepeatInterval)),
                ("flex", .double(configuration.effectiveFlex)),
                ("initialDelay", .double((delay * 1000).rounded() / 1000)),
                ("nextRunAt", .date(nextRunTime(work))),
            ])
    }

    /// When the next run starts: WorkManager's next run time, deferred until the bucket's quota
    /// allows a run (on battery).
    /// - Parameter now: virtual instant.
    /// - Returns: ≥ `now`; nil when nothing is enqueued, the work is running (its next run
    ///   depends on the result), or Battery Saver, Force stop or background off forbid runs.
    public func nextLaunch(after now: Date) -> Date? {
        guard runsAllowed else { return nil }
        let due = works.values.filter { $0.running == nil }.map { max(nextRunTime($0), now) }.min()
        guard let due else { return nil }
        // Quota and Doze both defer: alternate until an instant satisfies both.
        var t: Date? = due
        for _ in 0..<64 {
            guard let candidate = t else { return nil }
            // Constraints: met now, met from a known instant (device idle), or never by themselves.
            guard let met = constraintsMet(from: candidate) else { return nil }
            if met > candidate {
                t = met
                continue
            }
            t = quotaAllows(from: candidate)
            guard let inQuota = t else { return nil }
            guard let end = dozeHold(at: inQuota) else {
                if constraintsMet(from: inQuota) == inQuota { return inQuota }
                continue
            }
            t = end
        }
        return t
    }

    /// No crash at launch is modelled on Android (registration is an iOS matter): nothing to do.
    public mutating func launchCrashed(at now: Date) {}

    /// Starts the due work (the earliest next run time, then the name) if the quota allows.
    /// `runAttemptCount` of the grant is the count before this run; `budget` the time until the
    /// quota is used up (`timeUntilQuotaConsumed(at:)`).
    /// - Parameter now: virtual instant, ≥ `nextLaunch(after:)`.
    /// - Returns: the grant, nil if nothing is due.
    public mutating func takeLaunch(at now: Date) -> BackgroundLaunch? {
        advance(to: now)
        guard runsAllowed, !quotaApplies(at: now) || inQuota(at: now), dozeHold(at: now) == nil,
            unmetConstraints(at: now).isEmpty
        else { return nil }
        let due = works.values.filter { $0.running == nil && nextRunTime($0) <= now }
            .min { (nextRunTime($0), $0.identifier) < (nextRunTime($1), $1.identifier) }
        guard let work = due else { return nil }
        return start(work.identifier, at: now, simulated: false)
    }

    /// `adb shell cmd jobscheduler run -f <package> <job-id>`: forces the work's job to run now,
    /// ignoring conditions and quota (the budget still follows the quota). WorkManager itself
    /// refuses a periodic run before its next run time (`WorkerWrapper`: "being executed before
    /// schedule"), so a forced run before then does nothing.
    /// - Returns: the grant, nil (traced `os.simulate.failed`) when no such work, it is running, or it is not due.
    public mutating func simulateLaunch(identifier: String, at now: Date) -> BackgroundLaunch? {
        advance(to: now)
        guard let work = works[identifier], work.running == nil else {
            trace.add(
                now, .osSimulateFailed,
                [("identifier", .string(identifier)), ("reason", .string("no enqueued work waiting to run"))])
            return nil
        }
        guard nextRunTime(work) <= now else {
            trace.add(
                now, .osSimulateFailed,
                [
                    ("identifier", .string(identifier)), ("reason", .string("executed before schedule, delayed")),
                    ("nextRunAt", .date(nextRunTime(work))),
                ])
            return nil
        }
        return start(identifier, at: now, simulated: true)
    }

    /// The Worker returned `outcome` after `duration` seconds.
    ///
    /// A duration past the launch's budget: the OS stopped the worker at the budget (`os.work.stopped`,
    /// reason quota), the outcome is not used. Otherwise success/failure reset `runAttemptCount` and
    /// start the next period at the end of the run; retry keeps the count and backs off.
    /// - Parameters:
    ///   - launch: the running grant.
    ///   - outcome: the Worker's `Result`.
    ///   - duration: virtual seconds since `launch.startedAt`.
    ///   - now: virtual instant of the report.
    public mutating func complete(_ launch: BackgroundLaunch, outcome: RunOutcome, duration: TimeInterval, at now: Date)
    {
        guard var work = works[launch.identifier], let run = work.running, run == launch else {
            advance(to: now)
            trace.add(
                now, .osCompleteIgnored,
                [("identifier", .string(launch.identifier)), ("reason", .string("no such running work"))])
            return
        }
        if let budget = launch.budget, duration > budget + Self.epsilon {
            stop(&work, at: launch.startedAt.addingTimeInterval(budget), reason: overBudgetReason(work))
            works[launch.identifier] = work
            advance(to: now)
            return
        }
        let end = launch.startedAt.addingTimeInterval(max(0, duration))
        if work.runCounted { sessions.append(Session(start: launch.startedAt, end: end)) }
        work.running = nil
        work.lastEnqueueTime = end
        if outcome != .retry {
            work.runAttemptCount = 0
            work.periodCount += 1
        }
        works[launch.identifier] = work
        var fields: [(String, EventValue)] = [
            ("identifier", .string(launch.identifier)), ("result", .string(outcome.name)),
            ("duration", .double(duration)), ("runAttemptCount", .int(Int64(work.runAttemptCount))),
        ]
        if outcome == .retry {
            fields.append(("backoff", .double(configuration.backoff(afterRetry: work.runAttemptCount))))
        }
        fields.append(("nextRunAt", .date(nextRunTime(work))))
        trace.add(end, .osWorkCompleted, fields)
        advance(to: now)
    }

    // MARK: Conditions

    /// Off: no runs at all (like a background-restricted app); the work stays enqueued.
    public mutating func setBackgroundRefreshEnabled(_ on: Bool, at now: Date) {
        advance(to: now)
        guard backgroundEnabled != on else { return }
        backgroundEnabled = on
        conditionsChanged(at: now, announced: true)
    }

    /// Battery Saver: jobs are deferred (no runs) while it is on and the device is not charging.
    public mutating func setLowPowerMode(_ on: Bool, at now: Date) {
        advance(to: now)
        guard batterySaver != on else { return }
        batterySaver = on
        conditionsChanged(at: now, announced: true)
    }

    /// Settings › Force stop: a running worker is killed (the attempt counts), and nothing runs
    /// until the user opens the app.
    public mutating func forceQuit(at now: Date) {
        advance(to: now)
        for (identifier, var work) in works where work.running != nil {
            stop(&work, at: now, reason: .forceStop)
            works[identifier] = work
        }
        guard !forceStopped else { return }
        forceStopped = true
        conditionsChanged(at: now, announced: true)
    }

    /// Moves the app to `bucket`; a run in flight keeps the budget it started with.
    public mutating func setStandbyBucket(_ bucket: StandbyBucket, at now: Date) {
        advance(to: now)
        guard self.bucket != bucket else { return }
        self.bucket = bucket
    }

    /// Charging lifts the quota of every bucket but restricted (restricted: `restrictedQuotaFree(at:)`);
    /// runs started while it is lifted do not use quota.
    public mutating func setCharging(_ on: Bool, at now: Date) {
        advance(to: now)
        guard charging != on else { return }
        charging = on
        var state = doze ?? DozeState()
        state.unpluggedAt = on ? nil : now
        if on { state.stepShift = 0 }
        doze = state
        stopRunsMissingConstraints(at: now)
        conditionsChanged(at: now, announced: true)
    }

    /// The device restarts.
    ///
    /// A running worker is stopped (`os.work.stopped` reason "reboot"; the attempt counts, as for
    /// any interrupted run). Enqueued work stays: Android, "WorkManager" ("work is persistent
    /// when it remains scheduled through app restarts and system reboots"); WorkManager's
    /// `RescheduleReceiver` hands it to JobScheduler again on `BOOT_COMPLETED`
    /// (`os.work.rescheduled` reason "boot completed"), with the next run times it had. After a
    /// Force stop the app stays stopped: a stopped app receives no broadcasts, `BOOT_COMPLETED`
    /// included (Android 3.1, "Launch controls on stopped applications"), so nothing runs until
    /// the user opens it (WorkManager's `ForceStopRunnable`). The bucket, Battery Saver,
    /// charging and the quota sessions are unchanged (this model's assumption); TestDriver's
    /// `constraints-met` ends.
    /// - Parameter now: virtual instant.
    public mutating func reboot(at now: Date) {
        advance(to: now)
        for (identifier, var work) in works where work.running != nil {
            stop(&work, at: now, reason: .reboot)
            works[identifier] = work
        }
        constraintsForced = nil
        clearAlarmsAtReboot()
        trace.add(
            now, .osRebooted,
            [
                ("pendingIdentifier", works.isEmpty ? .null : .string(works.keys.sorted().joined(separator: ","))),
                ("forceStopped", .bool(forceStopped)),
            ])
        if !forceStopped && !works.isEmpty {
            trace.add(now, .osWorkRescheduled, [("reason", .string("boot completed"))])
        }
    }

    /// The user sets the device's wall clock by `delta` seconds: Android broadcasts
    /// `ACTION_TIME_CHANGED` (`android.intent.action.TIME_SET`), and WorkManager's
    /// `RescheduleReceiver` reschedules every enqueued work from its `lastEnqueueTime`, which
    /// androidx keeps in `System.currentTimeMillis()` terms: the next run is
    /// `WorkSpec.calculateNextRunTime` on the wall clock (`lastEnqueueTime + interval`, the
    /// initial delay or the back-off alike). So in true time every next run moves by `-delta`: a
    /// clock set back 12 h runs 12 h late.
    ///
    /// A force-stopped app gets no broadcast, but `ForceStopRunnable` reschedules the same way at
    /// the next open. A run in flight is not touched (its end starts the next period on the new
    /// clock). The quota windows and Doze count elapsed time (`SystemClock.elapsedRealtime`) and
    /// do not move. Traced `os.time_changed` {broadcast, delta, pendingIdentifier, nextRunAt},
    /// then `os.work.rescheduled` reason "time changed" when work is enqueued and the app is not
    /// force-stopped.
    /// - Parameters:
    ///   - delta: the change of the wall clock, seconds (negative: set back).
    ///   - now: virtual (true) instant.
    public mutating func wallClockChanged(by delta: TimeInterval, at now: Date) {
        advance(to: now)
        for (identifier, var work) in works where work.running == nil {
            work.lastEnqueueTime = work.lastEnqueueTime.addingTimeInterval(-delta)
            works[identifier] = work
        }
        let first = works.values.filter { $0.running == nil }.map(nextRunTime).min()
        trace.add(
            now, .osTimeChanged,
            [
                ("broadcast", .string("android.intent.action.TIME_SET")), ("delta", .double(delta)),
                ("pendingIdentifier", works.isEmpty ? .null : .string(works.keys.sorted().joined(separator: ","))),
                ("nextRunAt", .schedulerDate(first)),
            ])
        if !forceStopped && !works.isEmpty {
            trace.add(now, .osWorkRescheduled, [("reason", .string("time changed"))])
        }
    }

    /// The device's Android version changes (an OS update): the quota table of
    /// that API level applies from now (`Configuration.selectQuotas`); recorded sessions stay.
    /// - Parameters:
    ///   - api: API level, clamped to 21...36.
    ///   - android16Flags: Android 16's flagged quota values on.
    public mutating func setAndroidAPI(_ api: Int, android16Flags: Bool = true) {
        configuration.selectQuotas(androidAPI: api, android16Flags: android16Flags)
    }

    /// Sets the repeat interval of the periodic work (raised to 15 min as always); the enqueued
    /// work's next run follows it, as after `enqueueUniquePeriodicWork` with policy `UPDATE`.
    /// - Parameter seconds: the requested interval.
    public mutating func setRepeatInterval(_ seconds: TimeInterval) {
        configuration.repeatInterval = seconds
    }

    // MARK: Constraints and TestDriver

    /// Sets the work request's `Constraints`; a running attempt keeps running.
    /// - Parameter constraints: the requirements, any order; stored sorted, each once.
    public mutating func setConstraints(_ constraints: [WorkConstraint]) {
        let sorted = Array(Set(constraints)).sorted()
        configuration.constraints = sorted.isEmpty ? nil : sorted
    }

    /// The work request's constraints (empty: none).
    public var constraints: [WorkConstraint] { configuration.constraints ?? [] }

    /// Whether the device has a network connection (default: yes).
    public var networkConnected: Bool { offline != true }
    /// Whether the battery is low (default: no).
    public var isBatteryLow: Bool { batteryLow == true }
    /// Whether storage is low (default: no).
    public var isStorageLow: Bool { storageLow == true }

    /// The device gains or loses its network connection. A run that
    /// requires the network is stopped when it is lost (`STOP_REASON_CONSTRAINT_CONNECTIVITY`).
    public mutating func setNetwork(_ on: Bool, at now: Date) {
        advance(to: now)
        offline = on ? nil : true
        stopRunsMissingConstraints(at: now)
    }

    /// The battery becomes low or not (Android's
    /// `ACTION_BATTERY_LOW`/`OKAY`). A run that requires battery-not-low is stopped when it
    /// becomes low (`STOP_REASON_CONSTRAINT_BATTERY_NOT_LOW`).
    public mutating func setBatteryLow(_ on: Bool, at now: Date) {
        advance(to: now)
        batteryLow = on ? true : nil
        stopRunsMissingConstraints(at: now)
    }

    /// Storage becomes low or not (Android's
    /// `ACTION_DEVICE_STORAGE_LOW`/`OK`). A run that requires storage-not-low is stopped when it
    /// becomes low (`STOP_REASON_CONSTRAINT_STORAGE_NOT_LOW`).
    public mutating func setStorageLow(_ on: Bool, at now: Date) {
        advance(to: now)
        storageLow = on ? true : nil
        stopRunsMissingConstraints(at: now)
    }

    /// Whether the device counts as idle for `setRequiresDeviceIdle` at `now`. This model's
    /// choice (JobScheduler's idle controller is an AOSP detail, not documented API): idle while
    /// Doze is forced (`idle force`), or once the screen has been off and the device still for
    /// `DozeSettings.inactiveTimeout` (30 min by default), on a charger too.
    /// - Parameter now: virtual instant.
    public func deviceIdle(at now: Date) -> Bool {
        if (doze ?? DozeState()).forcedAt != nil { return true }
        guard let from = deviceIdleFrom(at: now) else { return false }
        return from <= now
    }

    /// When the device becomes idle (`deviceIdle(at:)`) if nothing changes: nil while the screen
    /// is on (only a user action lifts it).
    private func deviceIdleFrom(at now: Date) -> Date? {
        let state = doze ?? DozeState()
        if let forced = state.forcedAt { return min(forced, now) }
        guard !state.screenOn, let off = state.screenOffAt else { return nil }
        let quiet = [off, state.lastMotion].compactMap { $0 }.max() ?? off
        return quiet.addingTimeInterval(dozeSettings.inactiveTimeout)
    }

    /// The constraints unmet at `now`, in declaration order; empty when TestDriver's
    /// `constraints-met` was given.
    /// - Parameter now: virtual instant.
    public func unmetConstraints(at now: Date) -> [WorkConstraint] {
        guard constraintsForced != true else { return [] }
        return constraints.filter { constraint in
            switch constraint {
            case .network: !networkConnected
            case .charging: !charging
            case .deviceIdle: !deviceIdle(at: now)
            case .batteryNotLow: isBatteryLow
            case .storageNotLow: isStorageLow
            }
        }
    }

    /// The first instant ≥ `from` at which every constraint is met if the inputs stay as they
    /// are: `from` itself, the instant the device becomes idle, or nil (only a change of input
    /// lifts them).
    private func constraintsMet(from: Date) -> Date? {
        let unmet = unmetConstraints(at: from)
        if unmet.isEmpty { return from }
        guard unmet == [.deviceIdle], let idle = deviceIdleFrom(at: from), idle > from else { return nil }
        return idle
    }

    /// JobScheduler stops a running job whose constraint became unmet (`onStopJob` with
    /// `STOP_REASON_CONSTRAINT_*`; Android, `JobParameters` reference); the attempt counts.
    private mutating func stopRunsMissingConstraints(at now: Date) {
        guard let lost = unmetConstraints(at: now).first else { return }
        for (identifier, var work) in works where work.running != nil {
            stop(&work, at: now, reason: StopReason(word: "constraint", code: lost.stopReason))
            works[identifier] = work
        }
    }

    /// A control of androidx.work.testing's `TestDriver`.
    public enum TestDriverControl: String, CaseIterable, Sendable {
        /// `setInitialDelayMet`: the first run's initial delay counts as elapsed.
        case initialDelayMet = "initial-delay-met"
        /// `setPeriodDelayMet`: the current period counts as elapsed.
        case periodDelayMet = "period-delay-met"
        /// `setAllConstraintsMet`: the constraints count as met from now on.
        case constraintsMet = "constraints-met"
    }

    /// Applies a `TestDriver` control to the enqueued work (androidx.work.testing; Android,
    /// "Testing Worker implementation", TestDriver): `initial-delay-met` makes a first run due
    /// now (before the first period ends); `period-delay-met` makes the next period's run due
    /// now (after a run); `constraints-met` makes the constraints count as met until the device's
    /// next reboot (this model's choice: TestDriver's state lives in the test process). A delay
    /// control does not lift quota, Doze or Battery Saver. Traces `os.test_driver`
    /// {control, identifier, applied, reason, nextRunAt}.
    /// - Parameters:
    ///   - control: the control.
    ///   - now: virtual instant.
    /// - Returns: whether it applied (false: no work, it is running, backing off, or the delay it
    ///   names is not the one the work waits for).
    @discardableResult
    public mutating func testDriver(_ control: TestDriverControl, at now: Date) -> Bool {
        advance(to: now)
        let name = works.keys.sorted().first
        var refusal: String?
        if control == .constraintsMet {
            constraintsForced = true
        } else if let name, var work = works[name] {
            if work.running != nil {
                refusal = "the worker is running"
            } else if work.runAttemptCount > 0 {
                refusal = "the work is backing off after a retry, not waiting for a delay"
            } else if control == .initialDelayMet && work.periodCount > 0 {
                refusal = "the first run is done: no initial delay is left (period-delay-met)"
            } else if control == .periodDelayMet && work.periodCount == 0 {
                refusal = "no run yet: the first run waits for its initial delay (initial-delay-met)"
            } else {
                work.delayMetAt = now
                works[name] = work
            }
        } else {
            refusal = "no work enqueued"
        }
        trace.add(
            now, .osTestDriver,
            [
                ("control", .string(control.rawValue)), ("identifier", name.map { .string($0) } ?? .null),
                ("applied", .bool(refusal == nil)), ("reason", refusal.map { .string($0) } ?? .null),
                ("nextRunAt", .schedulerDate(name.flatMap { works[$0] }.map(nextRunTime))),
            ])
        return refusal == nil
    }

    /// `adb shell cmd jobscheduler stop -s REASON`: the OS stops the running worker now with
    /// `reason` (`os.work.stopped` reason "stop"; the attempt counts, it is tried again as after
    /// any stop). With no run in flight the stop is armed: the next run is stopped as it starts
    /// (its budget is 0), this model's way to make the stop observable between runs.
    /// - Parameters:
    ///   - reason: the `WorkInfo.getStopReason()` to give.
    ///   - now: virtual instant.
    /// - Returns: true when a running worker was stopped now, false when the stop was armed.
    @discardableResult
    public mutating func stopWork(reason: WorkStopReason, at now: Date) -> Bool {
        advance(to: now)
        var stopped = false
        for (identifier, var work) in works where work.running != nil {
            stop(&work, at: now, reason: StopReason(word: "stop", code: reason))
            works[identifier] = work
            stopped = true
        }
        armedStop = stopped ? nil : reason.rawValue
        if !stopped {
            trace.add(
                now, .osTestDriver,
                [
                    ("control", .string("stop")),
                    ("identifier", works.keys.sorted().first.map { .string($0) } ?? .null),
                    ("applied", .bool(true)),
                    ("reason", .string("no run in flight: the next run is stopped as it starts (\(reason.name))")),
                    ("nextRunAt", .schedulerDate(works.keys.sorted().first.flatMap { works[$0] }.map(nextRunTime))),
                ])
        }
        return stopped
    }

    // MARK: Doze

    /// The Doze timings in use (`Configuration.doze`, else the AOSP defaults).
    public var dozeSettings: DozeSettings { configuration.doze ?? DozeSettings() }

    /// Where the device is in Doze at `now`, with the phase's start and end (nil: it lasts while
    /// the inputs stay as they are); pure.
    /// - Parameter now: virtual instant.
    public func dozePhase(at now: Date) -> (DozePhase, start: Date?, end: Date?) {
        alarmClockOverlay((doze ?? DozeState()).phase(at: now, charging: charging, settings: dozeSettings), at: now)
    }

    /// Where the device is in light Doze at `now` (screen off and unplugged, motion allowed),
    /// with the phase's start and end; pure. Deep idle and its maintenance windows take over from
    /// it (`dozeHold(at:)`).
    /// - Parameter now: virtual instant.
    public func lightDozePhase(at now: Date) -> (LightDozePhase, start: Date?, end: Date?) {
        let (phase, start, end) = (doze ?? DozeState()).lightPhase(at: now, charging: charging, settings: dozeSettings)
        guard phase == .idle else { return (phase, start, end) }
        let (deep, exitStart, exitEnd) = alarmClockOverlay((.idle, start, end), at: now)
        return (deep == .idle ? .idle : .maintenance, exitStart, exitEnd)
    }

    /// When Doze lets jobs start again, nil when it does not hold them at `now`: the end of a
    /// deep idle period; outside deep idle and its maintenance windows, the end of a light idle
    /// period (AOSP `DeviceIdleController`: deep idle supersedes light idle).
    /// - Parameter now: virtual instant.
    public func dozeHold(at now: Date) -> Date? {
        let (deep, _, deepEnd) = dozePhase(at: now)
        if deep == .idle { return deepEnd }
        if deep == .maintenance { return nil }
        let (light, _, lightEnd) = lightDozePhase(at: now)
        return light == .idle ? lightEnd : nil
    }

    /// The screen goes on or off. On: Doze ends (`DeviceIdleController` becomes active); off on
    /// battery: the inactive timeout starts.
    public mutating func setScreen(_ on: Bool, at now: Date) {
        advance(to: now)
        var state = doze ?? DozeState()
        guard state.screenOn != on || doze == nil else { return }
        state.screenOn = on
        state.screenOffAt = on ? nil : now
        state.stepShift = 0
        doze = state
        dozeChanged(at: now)
    }

    /// The user picks the device up: Doze ends and the timeline starts again from now (the
    /// significant-motion sensor).
    public mutating func motion(at now: Date) {
        advance(to: now)
        var state = doze ?? DozeState()
        state.lastMotion = now
        state.forcedAt = nil
        state.stepShift = 0
        doze = state
        dozeChanged(at: now)
    }

    /// `adb shell dumpsys deviceidle force-idle`: deep idle from now, whatever the screen and the
    /// charger, until `unforceIdle`.
    public mutating func forceIdle(at now: Date) {
        advance(to: now)
        var state = doze ?? DozeState()
        state.forcedAt = now
        state.stepShift = 0
        doze = state
        dozeChanged(at: now)
    }

    /// `adb shell dumpsys deviceidle step`: moves Doze to its next phase now (inactive → sensing
    /// → idle → maintenance → idle …); a device that is not quiet is forced idle as by `force-idle`.
    public mutating func stepIdle(at now: Date) {
        advance(to: now)
        var state = doze ?? DozeState()
        let (_, _, end) = state.phase(at: now, charging: charging, settings: dozeSettings)
        if let end {
            state.stepShift += end.timeIntervalSince(now)
        } else {
            state.forcedAt = now
            state.stepShift = 0
        }
        doze = state
        dozeChanged(at: now)
    }

    /// `adb shell dumpsys deviceidle unforce`: a forced idle ends; Doze follows the device again
    /// (screen, charger, motion).
    public mutating func unforceIdle(at now: Date) {
        advance(to: now)
        var state = doze ?? DozeState()
        state.forcedAt = nil
        state.stepShift = 0
        doze = state
        dozeChanged(at: now)
    }

    private mutating func dozeChanged(at now: Date) {
        stopRunsMissingConstraints(at: now)
        traceDoze(at: now)
        dozeSaidUpTo = max(dozeSaidUpTo ?? now, now)
    }

    /// `os.doze` {phase, until, light, lightUntil} at `instant`.
    private mutating func traceDoze(at instant: Date) {
        let (phase, _, end) = dozePhase(at: instant)
        let (light, _, lightEnd) = lightDozePhase(at: instant)
        trace.add(
            instant, .osDoze,
            [
                ("phase", .string(phase.rawValue)), ("until", .schedulerDate(end)), ("light", .string(light.rawValue)),
                ("lightUntil", .schedulerDate(lightEnd)),
            ])
    }

    /// The next instant Doze changes phase by itself, on `DeviceIdleController`'s timers, after
    /// the last one said: deep Doze (inactive → sensing → idle → maintenance → idle …), and light
    /// Doze while deep Doze is neither idle nor in a maintenance window (deep idle overrides it);
    /// nil when no change comes while the inputs stay as they are (screen on, charging), and
    /// before the first call. The host calls the scheduler at that instant (a timer of its
    /// own), and that call says the change (`os.doze`).
    public func nextDozeChange() -> Date? {
        guard let from = dozeSaidUpTo ?? lastNow else { return nil }
        return nextDozeChange(after: from)
    }

    /// Forgets up to when Doze's phase changes were said, as a value read back from its state
    /// file has (`SimulatedOS.forgetSaidDozeChanges()`).
    mutating func forgetSaidDozeChanges() { dozeSaidUpTo = nil }

    /// The first instant after `t` at which the deep phase, or (outside deep idle and its
    /// windows) the light phase, ends; nil when neither ends while the inputs stay.
    private func nextDozeChange(after t: Date) -> Date? {
        // At a phase's last instant rounding can still give the phase that ends there: then the
        // phases are read a millisecond later.
        for probe in [t, t.addingTimeInterval(0.001)] {
            let (deep, _, deepEnd) = dozePhase(at: probe)
            var ends = [deepEnd]
            if deep != .idle && deep != .maintenance { ends.append(lightDozePhase(at: probe).end) }
            let known = ends.compactMap { $0 }
            if probe > t || known.allSatisfy({ $0 > t }) { return known.filter { $0 > t }.min() }
        }
        return nil
    }

    /// Says (`os.doze`, at its own instant) each phase change Doze made by itself after the last
    /// one said and up to `now`, but those `alarmsDue(at:)` says: an alarm clock's Doze exit and
    /// its firing.
    private mutating func sayDozeChanges(through now: Date) {
        guard let from = dozeSaidUpTo else {
            dozeSaidUpTo = now
            return
        }
        guard now > from else { return }
        var t = from
        // At most a few changes a minute pass between two calls; the bound only stops a runaway.
        for _ in 0..<10_000 {
            guard let next = nextDozeChange(after: t), next <= now else { break }
            let saidByAlarm = pendingAlarms.contains { alarm in
                alarm.kind == .alarmClock && (exitStart(before: alarm) == next || alarm.triggerAt == next)
            }
            if !saidByAlarm { traceDoze(at: next) }
            t = next
        }
        dozeSaidUpTo = now
    }

    // MARK: Observation

    /// The OS trace since the last call, in time order.
    public mutating func drainTrace() -> [(at: Date, event: OSEvent)] { trace.drain() }

    /// Whether the trace holds entries `drainTrace()` has not returned yet.
    var hasTrace: Bool { !trace.isEmpty }

    /// `platform`, `pendingIdentifier` (the enqueued work names), `nextLaunch` and `quotaRemaining`
    /// (at the latest instant seen), `runAttemptCount`, `periodCount`, `running`, `bucket`,
    /// `charging`, `lowPowerMode`, `backgroundRefresh`, `forceQuit`.
    public func status() -> [(String, EventValue)] {
        let names = works.keys.sorted()
        let first = names.first.flatMap { works[$0] }
        let now = lastNow ?? Date(timeIntervalSince1970: 0)
        return [
            ("platform", .string(platform.rawValue)),
            ("pendingIdentifier", names.isEmpty ? .null : .string(names.joined(separator: ","))),
            ("nextLaunch", .schedulerDate(lastNow == nil ? nil : nextLaunch(after: now))),
            ("runAttemptCount", first.map { .int(Int64($0.runAttemptCount)) } ?? .null),
            ("periodCount", first.map { .int(Int64($0.periodCount)) } ?? .null),
            ("running", first?.running.map { .string($0.identifier) } ?? .null),
            ("bucket", .string(bucket.name)),
            ("quotaRemaining", .schedulerSeconds(lastNow == nil ? nil : quotaRemaining(at: now))),
            ("charging", .bool(charging)),
            ("lowPowerMode", .bool(batterySaver)),
            ("backgroundRefresh", .bool(backgroundEnabled)),
            ("forceQuit", .bool(forceStopped)),
            ("doze", .string(dozePhase(at: now).0.rawValue)),
            ("constraints", constraints.isEmpty ? .null : .string(constraints.map(\.rawValue).joined(separator: ","))),
            ("network", .bool(networkConnected)), ("batteryLow", .bool(isBatteryLow)),
            ("storageLow", .bool(isStorageLow)),
        ]
    }

    /// androidx's `runAttemptCount` of the named work (incremented when a run starts), nil if not enqueued.
    public func runAttemptCount(of identifier: String) -> Int? { works[identifier]?.runAttemptCount }

    /// androidx `calculateNextRunTime` for the named work, ignoring quota and conditions; nil if not enqueued.
    public func nextRunTime(of identifier: String) -> Date? { works[identifier].map(nextRunTime) }

    /// Job time left in the current bucket's window at `now`, seconds; nil = unlimited (charging
    /// in any bucket but restricted, restricted while `restrictedQuotaFree(at:)`, or a bucket
    /// without a time limit).
    public func quotaRemaining(at now: Date) -> TimeInterval? {
        guard quotaApplies(at: now) else { return nil }
        let left = limits.compactMap { quota in
            quota.allowedTime.map { max(0, $0 - used(at: now, window: quota.window)) }
        }
        return left.min()
    }

    /// Seconds a run started at `now` may go on before a limit's job time is used up, nil when no
    /// quota applies or no limit counts time: the job time left, plus the job time of earlier
    /// sessions that leaves the rolling window while the run goes on (AOSP
    /// `QuotaController.getTimeUntilQuotaConsumedLocked`, which sets the running job's cut-off).
    ///
    /// Per limit, the window's start moves from `now - window` with the run: each gap between the
    /// sessions it passes costs the run as much job time as it runs (nothing leaves the window),
    /// each session it passes gives back what the run uses. The run may go on until the gaps
    /// passed add up to the job time left; the earliest limit to run out is the budget.
    /// Rounded to the millisecond, AOSP's unit; a run reported within a microsecond of it
    /// (the rounding of summed step costs) is not past it.
    /// - Parameter now: virtual instant, no run in flight.
    public func timeUntilQuotaConsumed(at now: Date) -> TimeInterval? {
        guard quotaApplies(at: now) else { return nil }
        let ordered = sessions.sorted { $0.start < $1.start }
        let times = limits.compactMap { quota -> TimeInterval? in
            guard let allowed = quota.allowedTime else { return nil }
            let windowStart = now.addingTimeInterval(-quota.window)
            var dead = max(0, allowed - used(at: now, window: quota.window))
            var cursor = windowStart
            for session in ordered where session.end > cursor {
                let gap = max(0, session.start.timeIntervalSince(cursor))
                // AOSP goes on through a session that starts just as the time left runs out.
                if gap > dead + Self.epsilon { break }
                dead = max(0, dead - gap)
                cursor = min(session.end, now)
            }
            return cursor.timeIntervalSince(windowStart) + dead
        }
        // AOSP counts whole milliseconds: so does the budget (no rounding noise of the instants).
        return times.min().map { ($0 * 1000).rounded() / 1000 }
    }

    /// Whether Battery Saver is on.
    public var lowPowerMode: Bool { batterySaver }

    /// `WorkInfo.getStopReason()` of `launch` when the OS stopped it (10 `STOP_REASON_QUOTA`,
    /// 13 `STOP_REASON_USER`, 0 `STOP_REASON_UNDEFINED` at a reboot), nil when it was not
    /// stopped (it returned its own result) or is another launch than the last one stopped.
    /// - Parameter launch: a grant this scheduler made.
    public func stopReason(of launch: BackgroundLaunch) -> Int? {
        guard let lastStop, lastStop.identifier == launch.identifier, lastStop.startedAt == launch.startedAt
        else { return nil }
        return lastStop.code
    }

    /// Every condition holding the enqueued work back at `now`, as `adb shell dumpsys jobscheduler`
    /// lists a job's unsatisfied constraints and Android 16's `JobScheduler.getPendingJobReasons`
    /// returns its reasons (docs/scheduler.md, "Why hasn't it run?"); pure. In order: nothing
    /// enqueued, a run in flight, Force stop, background off, Battery Saver (only the user lifts
    /// them), Doze, each unmet constraint (`PENDING_JOB_REASON_CONSTRAINT_*`), the bucket's quota (until the instant quota returns), the next run time (initial
    /// delay, period or back-off).
    /// - Parameter now: virtual instant.
    public func why(at now: Date) -> WhyAnswer {
        guard let name = works.keys.sorted().first, let work = works[name] else {
            return WhyAnswer(
                identifier: nil,
                reasons: [
                    PendingReason(.invalidJobID, "request", "no work enqueued: the app enqueues it when it runs")
                ],
                nextLaunch: nil)
        }
        var reasons: [PendingReason] = []
        if let run = work.running {
            reasons.append(PendingReason(.executing, "running", "the worker is running", until: run.deadline))
        }
        if forceStopped {
            reasons.append(
                PendingReason(.user, "forceQuit", "the app was force-stopped: nothing runs until the user opens it"))
        }
        if !backgroundEnabled {
            reasons.append(PendingReason(.backgroundRestriction, "backgroundRefresh", "background work is restricted"))
        }
        if batterySaver && !charging {
            reasons.append(
                PendingReason(.deviceState, "lowPower", "Battery Saver is on and the device is not charging"))
        }
        let (phase, _, dozeEnd) = dozePhase(at: now)
        if phase == .idle {
            reasons.append(
                PendingReason(
                    .deviceState, "doze", "in Doze until the next maintenance window", until: dozeEnd))
        } else if phase != .maintenance, case (.idle, _, let lightEnd) = lightDozePhase(at: now) {
            reasons.append(
                PendingReason(
                    .deviceState, "doze", "in light Doze until the next light maintenance window", until: lightEnd))
        }
        for constraint in unmetConstraints(at: now) {
            let until = constraint == .deviceIdle ? deviceIdleFrom(at: now) : nil
            reasons.append(
                PendingReason(constraint.pendingReason, constraint.condition, constraint.unmetState, until: until))
        }
        if quotaApplies(at: now) && !inQuota(at: now) {
            if currentQuota.maxSessions == 0 {
                reasons.append(PendingReason(.appStandby, "bucket", "the \(bucket.name) bucket allows no job"))
            } else {
                let capped = currentQuota.isLimited ? inQuota(at: now, quota: currentQuota) : true
                var what =
                    capped
                    ? "the execution cap over every bucket (4 h per 24 h by default) is used up"
                    : "the \(bucket.name) bucket's job quota is used up"
                if bucket == .restricted && charging {
                    what +=
                        " (on a charger a restricted job runs outside its quota only while the device is idle"
                        + " and the battery is not low)"
                }
                reasons.append(PendingReason(.quota, "quota", what, until: quotaAllows(from: now)))
            }
        }
        let due = nextRunTime(work)
        if work.running == nil && due > now {
            let what = work.runAttemptCount > 0 ? "backing off after a retry" : "not yet eligible (next run time)"
            reasons.append(PendingReason(.constraintMinimumLatency, "earliestBeginDate", what, until: due))
        }
        return WhyAnswer(identifier: name, reasons: reasons, nextLaunch: nextLaunch(after: now))
    }

    /// Whether the app was force-stopped (Settings › Force stop) and not opened by the user since.
    public var isForceStopped: Bool { forceStopped }

    /// True when nothing forbids runs: background on, not force-stopped, Battery Saver off or charging.
    public var runsAllowed: Bool { backgroundEnabled && !forceStopped && (!batterySaver || charging) }

    // MARK: Internals

    private var currentQuota: StandbyQuota { configuration.quotas[bucket] ?? .unlimited }
    /// The bucket's quota and the execution cap, those that limit anything.
    private var limits: [StandbyQuota] {
        [currentQuota, configuration.executionCap ?? .unlimited].filter(\.isLimited)
    }
    /// Whether the bucket's quota limits runs at `now`: on battery, and in the restricted bucket
    /// on a charger unless `restrictedQuotaFree(at:)` (AOSP `QuotaController.isQuotaFreeLocked`:
    /// charging frees every bucket but restricted).
    private func quotaApplies(at now: Date) -> Bool {
        guard !limits.isEmpty else { return false }
        guard charging else { return true }
        return bucket == .restricted && !restrictedQuotaFree(at: now)
    }

    /// Whether a restricted job runs outside its quota at `now`: on a charger, with the battery
    /// not low, the device idle (`deviceIdle(at:)`) and, when the work needs the network, a
    /// connection (AOSP `QuotaController.isQuotaFreeLocked` and
    /// `JobStatus.DYNAMIC_RESTRICTED_CONSTRAINTS`; Android, "Power management resource limits",
    /// developer.android.com/topic/performance/power/power-details).
    /// - Parameter now: virtual instant.
    public func restrictedQuotaFree(at now: Date) -> Bool {
        charging && !isBatteryLow && deviceIdle(at: now) && (!constraints.contains(.network) || networkConnected)
    }

    /// The first instant ≥ `from` at which the quota lets a run start if the inputs stay as they
    /// are: `from` when no quota applies, else the earlier of the instant quota returns and (a
    /// restricted job on a charger) the instant the device becomes idle; nil when neither comes.
    private func quotaAllows(from: Date) -> Date? {
        guard quotaApplies(at: from) else { return from }
        var free: Date?
        if bucket == .restricted, charging, !isBatteryLow, !constraints.contains(.network) || networkConnected,
            let idle = deviceIdleFrom(at: from)
        {
            free = max(idle, from)
        }
        guard let back = nextInQuota(from: from) else { return free }
        return free.map { min($0, back) } ?? back
    }

    /// androidx `WorkSpec.calculateNextRunTime` for periodic work.
    private func nextRunTime(_ work: Work) -> Date {
        if let met = work.delayMetAt { return min(met, scheduledRunTime(work)) }
        return scheduledRunTime(work)
    }

    /// androidx `WorkSpec.calculateNextRunTime` without TestDriver's overrides.
    private func scheduledRunTime(_ work: Work) -> Date {
        if work.runAttemptCount > 0 {
            return work.lastEnqueueTime.addingTimeInterval(configuration.backoff(afterRetry: work.runAttemptCount))
        }
        let interval = configuration.effectiveRepeatInterval
        let flex = configuration.effectiveFlex
        let first = work.periodCount == 0
        let start = first ? work.lastEnqueueTime.addingTimeInterval(work.initialDelay) : work.lastEnqueueTime
        if flex != interval {
            return start.addingTimeInterval(interval - (first ? flex : 0))
        }
        return first ? start : start.addingTimeInterval(interval)
    }

    private mutating func start(_ identifier: String, at now: Date, simulated: Bool) -> BackgroundLaunch? {
        guard var work = works[identifier] else { return nil }
        let due = nextRunTime(work)
        // `stop REASON` armed while nothing ran: this run is stopped as it starts (budget 0).
        let armed = armedStop
        armedStop = nil
        work.stopCode = armed
        work.delayMetAt = nil
        let grant = BackgroundLaunch(
            identifier: identifier, startedAt: now, budget: armed == nil ? timeUntilQuotaConsumed(at: now) : 0,
            expirationWarning: 0,
            handlerRegistered: true, runAttemptCount: work.runAttemptCount, simulated: simulated,
            earliestBeginDate: due)
        work.runAttemptCount += 1
        work.running = grant
        work.runCounted = quotaApplies(at: now)
        works[identifier] = work
        trace.add(
            now, .osLaunch,
            [
                ("identifier", .string(identifier)), ("runAttemptCount", .int(Int64(grant.runAttemptCount))),
                ("budget", .schedulerSeconds(grant.budget)), ("bucket", .string(bucket.name)),
                ("charging", .bool(charging)), ("due", .date(due)), ("simulated", .bool(simulated)),
            ])
        return grant
    }

    /// Why the OS ended a running attempt: the event's `reason` word and the
    /// `WorkInfo.getStopReason()` code.
    ///
    /// QUOTA 10 for a run past its quota, USER 13 for a Force stop, UNDEFINED 0 for a reboot
    /// (the process dies with the device; no `onStopJob`, this model's reading), a
    /// `STOP_REASON_CONSTRAINT_*` code when a constraint becomes unmet, and the code `stop REASON`
    /// names (`adb shell cmd jobscheduler stop -s REASON`).
    private struct StopReason {
        var word: String
        var code: WorkStopReason

        static let quota = StopReason(word: "quota", code: .quota)
        static let forceStop = StopReason(word: "force-stop", code: .user)
        static let reboot = StopReason(word: "reboot", code: .undefined)
    }

    /// The reason of a run stopped at its budget: the armed `stop REASON`, else quota.
    private func overBudgetReason(_ work: Work) -> StopReason {
        guard let code = work.stopCode, let reason = WorkStopReason(rawValue: code) else { return .quota }
        return StopReason(word: "stop", code: reason)
    }

    private mutating func stop(_ work: inout Work, at instant: Date, reason: StopReason) {
        guard let run = work.running else { return }
        let end = max(instant, run.startedAt)
        if work.runCounted { sessions.append(Session(start: run.startedAt, end: end)) }
        work.running = nil
        work.stopCode = nil
        lastStop = (run.identifier, run.startedAt, reason.code.rawValue)
        let name: OSEventName = reason.word == StopReason.forceStop.word ? .osAppKilled : .osWorkStopped
        trace.add(
            end, name,
            [
                ("identifier", .string(run.identifier)), ("reason", .string(reason.word)),
                ("stopReason", .int(Int64(reason.code.rawValue))), ("stopReasonName", .string(reason.code.name)),
                ("duration", .double(end.timeIntervalSince(run.startedAt))),
                ("runAttemptCount", .int(Int64(work.runAttemptCount))),
                ("nextRunAt", .date(nextRunTime(work))),
            ])
    }

    /// Says Doze's timed phase changes up to `now`; stops runs whose quota ran out by `now`;
    /// forgets sessions older than every window.
    private mutating func advance(to now: Date) {
        sayDozeChanges(through: now)
        lastNow = max(lastNow ?? now, now)
        for (identifier, var work) in works {
            if let run = work.running, let deadline = run.deadline, deadline <= now {
                stop(&work, at: deadline, reason: overBudgetReason(work))
                works[identifier] = work
            }
        }
        let longest = (configuration.quotas.values.map(\.window) + [configuration.executionCap?.window ?? 0]).max() ?? 0
        let horizon = now.addingTimeInterval(-longest)
        sessions.removeAll { $0.end <= horizon }
    }

    /// `announced`: the user's own input changed them, and the app writes that input's event
    /// (`os.low_power`, `os.charging`, …), so the trace adds none: one change, one event.
    private mutating func conditionsChanged(at now: Date, announced: Bool = false) {
        guard !announced else { return }
        trace.add(
            now, .osConditionsChanged,
            [
                ("backgroundRefresh", .bool(backgroundEnabled)), ("lowPowerMode", .bool(batterySaver)),
                ("forceQuit", .bool(forceStopped)), ("charging", .bool(charging)),
            ])
    }

    /// Seconds of battery job time within `(now - window, now]`.
    private func used(at now: Date, window: TimeInterval) -> TimeInterval {
        let from = now.addingTimeInterval(-window)
        return sessions.reduce(0) { total, s in
            total + max(0, min(s.end, now).timeIntervalSince(max(s.start, from)))
        }
    }

    private func sessionCount(at now: Date, window: TimeInterval) -> Int {
        let from = now.addingTimeInterval(-window)
        return sessions.filter { $0.end > from && $0.start <= now }.count
    }

    private static let epsilon: TimeInterval = 1e-6

    private func inQuota(at now: Date) -> Bool { limits.allSatisfy { inQuota(at: now, quota: $0) } }

    /// The first instant ≥ `from` at which every limit allows a run (each one's next instant,
    /// alternated until they agree; every limit's is non-decreasing in `from`).
    private func nextInQuota(from: Date) -> Date? {
        var t = from
        for _ in 0..<64 {
            for quota in limits {
                guard let next = nextInQuota(from: t, quota: quota) else { return nil }
                t = next
            }
            if inQuota(at: t) { return t }
        }
        return nil
    }

    private func inQuota(at now: Date, quota: StandbyQuota) -> Bool {
        if let allowed = quota.allowedTime {
            let buffer = min(configuration.quotaBuffer, allowed)
            if allowed - used(at: now, window: quota.window) < buffer - Self.epsilon { return false }
        }
        if let maximum = quota.maxSessions, sessionCount(at: now, window: quota.window) >= maximum { return false }
        return true
    }

    /// The first instant ≥ `from` at which a run may start under the current bucket's quota.
    ///
    /// With every session ended, used time as a function of the window's start `x` is
    /// `f(x) = Σ max(0, end - max(start, x))`: non-increasing and piecewise linear with breaks at
    /// the sessions' starts and ends, so the crossing is found exactly between two breaks.
    /// - Returns: nil when the bucket allows no run at all (0 sessions).
    /// - Complexity: O(s²) for s recorded sessions (a few dozen at most).
    private func nextInQuota(from: Date, quota: StandbyQuota) -> Date? {
        if quota.maxSessions == 0 { return nil }
        let latestEnd = sessions.map(\.end).max() ?? from
        let t0 = max(from, latestEnd)
        if inQuota(at: t0, quota: quota) { return t0 }
        let x0 = t0.timeIntervalSince1970 - quota.window
        var x = x0
        if let allowed = quota.allowedTime {
            let target = allowed - min(configuration.quotaBuffer, allowed)
            func f(_ x: Double) -> Double {
                sessions.reduce(0) { total, s in
                    total + max(0, s.end.timeIntervalSince1970 - max(s.start.timeIntervalSince1970, x))
                }
            }
            let breaks = Set(sessions.flatMap { [$0.start.timeIntervalSince1970, $0.end.timeIntervalSince1970] })
                .filter { $0 > x0 }.sorted()
            var previous = x0
            var fPrevious = f(x0)
            if fPrevious > target + Self.epsilon {
                for b in breaks {
                    let fb = f(b)
                    if fb <= target + Self.epsilon {
                        let drop = fPrevious - fb
                        let crossing = drop > 0 ? previous + (b - previous) * (fPrevious - target) / drop : b
                        x = max(x, min(crossing, b))
                        break
                    }
                    previous = b
                    fPrevious = fb
                }
            }
        }
        if let maximum = quota.maxSessions, maximum > 0 {
            let ends = sessions.map(\.end.timeIntervalSince1970).sorted(by: >)
            if ends.count >= maximum { x = max(x, ends[maximum - 1]) }
        }
        var candidate = Date(timeIntervalSince1970: x + quota.window)
        // Guard against rounding at the crossing: step forward by a millisecond until in quota.
        var steps = 0
        while !inQuota(at: candidate, quota: quota) {
            guard steps < 1000 else { return nil }
            candidate = candidate.addingTimeInterval(0.001)
            steps += 1
        }
        return max(candidate, t0)
    }
}

// MARK: Alarms

extension AndroidWorkScheduler {
    /// The alarm rules' numbers in use (`Configuration.alarms`, else the defaults).
    public var alarmSettings: AlarmSettings { configuration.alarms ?? AlarmSettings() }

    /// The alarms the app set and the OS holds, earliest trigger first.
    public var pendingAlarms: [Alarm] { alarms ?? [] }

    /// The exact alarm permission the app declares (`SCHEDULE_EXACT_ALARM` unless set).
    public var exactAlarmDeclaration: ExactAlarmDeclaration { configuration.exactAlarmDeclaration ?? .schedule }

    /// `AlarmManager.canScheduleExactAlarms()`: the app declares `USE_EXACT_ALARM`, or holds
    /// `SCHEDULE_EXACT_ALARM`.
    public var canScheduleExactAlarms: Bool { exactAlarmDeclaration == .use || exactAlarmDenied != true }

    /// Sets the app's exact alarm declaration (an app build).
    /// - Parameter declaration: the permission the manifest declares.
    public mutating func setExactAlarmDeclaration(_ declaration: ExactAlarmDeclaration) {
        configuration.exactAlarmDeclaration = declaration
    }

    /// The state a new install starts in on this device's API level: `SCHEDULE_EXACT_ALARM`
    /// denied from API 34 (Android 14, "Schedule exact alarms are denied by default"; an app
    /// targeting API 33+ is assumed); `USE_EXACT_ALARM` granted at install.
    public mutating func applyInstallDefaults() {
        if exactAlarmDeclaration == .schedule, let api = configuration.androidAPI, api >= 34 {
            exactAlarmDenied = true
        }
    }

    /// The user grants or revokes `SCHEDULE_EXACT_ALARM` (Settings › Alarms & reminders). Revoked: the OS deletes every exact alarm of the
    /// app (`setExact`, `setExactAndAllowWhileIdle`, `setAlarmClock`) and sends no broadcast;
    /// granted: it sends `ACTION_SCHEDULE_EXACT_ALARM_PERMISSION_STATE_CHANGED` (AlarmManager
    /// reference; Android 14, "Schedule exact alarms are denied by default"). With
    /// `USE_EXACT_ALARM` declared nothing changes (a normal permission has no user toggle).
    /// - Parameters:
    ///   - granted: the permission's new state.
    ///   - now: virtual instant.
    /// - Returns: what the OS deleted and whether it sent the broadcast.
    public mutating func setExactAlarmPermission(_ granted: Bool, at now: Date) -> ExactAlarmPermissionChange {
        advance(to: now)
        guard exactAlarmDeclaration == .schedule else { return ExactAlarmPermissionChange(applied: false) }
        let was = exactAlarmDenied != true
        exactAlarmDenied = granted ? nil : true
        guard was != granted else { return ExactAlarmPermissionChange() }
        if granted { return ExactAlarmPermissionChange(broadcast: true) }
        let deleted = pendingAlarms.filter(\.kind.needsExactPermission)
        alarms = pendingAlarms.filter { !$0.kind.needsExactPermission }
        if alarms?.isEmpty == true { alarms = nil }
        return ExactAlarmPermissionChange(deleted: deleted)
    }

    /// `AlarmManager.set…()`: holds an alarm `tag` of `kind` for `triggerAt`, replacing the app's
    /// alarm of the same tag.
    /// - Parameters:
    ///   - kind: how it is set.
    ///   - tag: the app's name for it (its `PendingIntent`).
    ///   - triggerAt: the instant asked for.
    ///   - now: virtual instant.
    /// - Returns: the alarm it replaced, nil when none.
    /// - Throws: `AlarmRefusal` (`SecurityException`) for an exact kind without the exact alarm
    ///   permission; nothing changes then.
    @discardableResult
    public mutating func setAlarm(_ kind: AlarmKind, tag: String, triggerAt: Date, at now: Date) throws(AlarmRefusal)
        -> Alarm?
    {
        advance(to: now)
        if kind.needsExactPermission && !canScheduleExactAlarms {
            throw AlarmRefusal(
                reason: "SecurityException: \(kind.apiName) needs SCHEDULE_EXACT_ALARM or USE_EXACT_ALARM; "
                    + "SCHEDULE_EXACT_ALARM is denied (canScheduleExactAlarms() is false)")
        }
        let replaced = cancelAlarm(tag: tag)
        var list = pendingAlarms
        list.append(Alarm(tag: tag, kind: kind, triggerAt: triggerAt, setAt: now))
        list.sort { ($0.triggerAt, $0.tag) < ($1.triggerAt, $1.tag) }
        alarms = list
        return replaced
    }

    /// `AlarmManager.cancel()`: forgets the app's alarm `tag`.
    /// - Returns: the alarm cancelled, nil when none had that tag.
    @discardableResult
    public mutating func cancelAlarm(tag: String) -> Alarm? {
        guard let index = pendingAlarms.firstIndex(where: { $0.tag == tag }) else { return nil }
        let alarm = pendingAlarms[index]
        alarms?.remove(at: index)
        if alarms?.isEmpty == true { alarms = nil }
        return alarm
    }

    /// When `alarm` fires, on the rules of its kind (docs/scheduler.md, "Alarms"): an alarm clock
    /// on time; an exact or inexact alarm due in deep idle at the next maintenance window; a
    /// while-idle alarm in deep idle on time within its limit (inexact: `whileIdleInterval` after
    /// the last; exact: `exactWhileIdleQuota` per `exactWhileIdleWindow`), else when the limit
    /// allows; pure.
    /// - Parameter alarm: one of `pendingAlarms`.
    public func fireTime(of alarm: Alarm) -> Date {
        let t = alarm.triggerAt
        switch alarm.kind {
        case .alarmClock:
            return t
        case .exact, .inexact:
            let (phase, _, end) = dozePhase(at: t)
            return phase == .idle ? (end ?? t) : t
        case .allowWhileIdle:
            guard dozePhase(at: t).0 == .idle, let last = lastWhileIdleFire else { return t }
            return max(t, last.addingTimeInterval(alarmSettings.whileIdleInterval))
        case .exactAllowWhileIdle:
            guard dozePhase(at: t).0 == .idle else { return t }
            let s = alarmSettings
            let fired = (exactWhileIdleFires ?? []).filter { $0 > t.addingTimeInterval(-s.exactWhileIdleWindow) }
            guard fired.count >= s.exactWhileIdleQuota else { return t }
            return fired[fired.count - s.exactWhileIdleQuota].addingTimeInterval(s.exactWhileIdleWindow)
        }
    }

    /// The next instant `alarmsDue(at:)` has something to do: an alarm fires, or Doze ends before
    /// an alarm clock (`dozeExitLead` before it, when the device would be idle then); pure.
    /// - Returns: nil when no alarm is held.
    public func nextAlarmInstant() -> Date? {
        let fires = pendingAlarms.map(fireTime(of:))
        let exits = pendingAlarms.filter { $0.kind == .alarmClock }
            .map { (exit: exitStart(before: $0), setAt: $0.setAt) }
            .filter { exit, setAt in exit >= setAt && (alarmsCheckedAt.map { exit > $0 } ?? true) && rawIdle(at: exit) }
            .map(\.exit)
        return (fires + exits).min()
    }

    /// Fires every alarm due by `now` (`os.alarm.fired` at its fire time) and says the Doze exits
    /// before alarm clocks reached by then (`os.doze` with `reason` `alarm-clock`).
    /// - Parameter now: virtual instant.
    /// - Returns: the alarms fired, in order.
    public mutating func alarmsDue(at now: Date) -> [Alarm] {
        advance(to: now)
        var reached = alarmsCheckedAt
        for alarm in pendingAlarms where alarm.kind == .alarmClock {
            let exit = exitStart(before: alarm)
            guard exit <= now else { continue }
            reached = max(reached ?? exit, exit)
            guard exit >= alarm.setAt, alarmsCheckedAt.map({ exit > $0 }) ?? true, rawIdle(at: exit)
            else { continue }
            let (light, _, lightEnd) = lightDozePhase(at: exit)
            trace.add(
                exit, .osDoze,
                [
                    ("phase", .string(DozePhase.maintenance.rawValue)), ("until", .date(alarm.triggerAt)),
                    ("light", .string(light.rawValue)), ("lightUntil", .schedulerDate(lightEnd)),
                    ("reason", .string("alarm-clock")),
                ])
        }
        if reached != alarmsCheckedAt { alarmsCheckedAt = reached }
        var fired: [Alarm] = []
        while let next = pendingAlarms.map({ ($0, fireTime(of: $0)) }).filter({ $0.1 <= now })
            .min(by: {
                ($0.1, $0.0.kind == .alarmClock ? 1 : 0, $0.0.tag) < ($1.1, $1.0.kind == .alarmClock ? 1 : 0, $1.0.tag)
            })
        {
            let (alarm, at) = next
            let idle = dozePhase(at: at).0 == .idle
            cancelAlarm(tag: alarm.tag)
            if idle && alarm.kind == .allowWhileIdle { lastWhileIdleFire = at }
            if idle && alarm.kind == .exactAllowWhileIdle {
                let horizon = at.addingTimeInterval(-alarmSettings.exactWhileIdleWindow)
                exactWhileIdleFires = (exactWhileIdleFires ?? []).filter { $0 > horizon } + [at]
            }
            trace.add(
                at, .osAlarmFired,
                [
                    ("tag", .string(alarm.tag)), ("kind", .string(alarm.kind.rawValue)),
                    ("triggerAt", .date(alarm.triggerAt)), ("late", .double(at.timeIntervalSince(alarm.triggerAt))),
                    ("doze", .string(dozePhase(at: at).0.rawValue)),
                ])
            fired.append(alarm)
            if alarm.kind == .alarmClock, rawIdle(at: at) {
                let (phase, _, end) = dozePhase(at: at)
                let (light, _, lightEnd) = lightDozePhase(at: at)
                trace.add(
                    at, .osDoze,
                    [
                        ("phase", .string(phase.rawValue)), ("until", .schedulerDate(end)),
                        ("light", .string(light.rawValue)), ("lightUntil", .schedulerDate(lightEnd)),
                    ])
            }
        }
        return fired
    }

    /// Alarms do not outlive a restart (Android, "Schedule alarms": alarms are cancelled when the
    /// device shuts down); the app sets them again.
    mutating func clearAlarmsAtReboot() {
        alarms = nil
    }

    /// The start of the Doze exit before alarm clock `alarm`.
    private func exitStart(before alarm: Alarm) -> Date {
        alarm.triggerAt.addingTimeInterval(-alarmSettings.dozeExitLead)
    }

    /// Whether the device would be in deep or light idle at `now` were no alarm clock held.
    private func rawIdle(at now: Date) -> Bool {
        let state = doze ?? DozeState()
        if state.phase(at: now, charging: charging, settings: dozeSettings).0 == .idle { return true }
        return state.lightPhase(at: now, charging: charging, settings: dozeSettings).0 == .idle
    }

    /// A Doze phase with the alarm clocks' exits laid over it: idle within `dozeExitLead` before
    /// an alarm clock is a maintenance window until the alarm fires (its instant included: other
    /// alarms due then fire with it, before it); an idle period that would
    /// last past such an exit ends at it.
    func alarmClockOverlay(_ raw: (DozePhase, start: Date?, end: Date?), at now: Date) -> (
        DozePhase, start: Date?, end: Date?
    ) {
        guard raw.0 == .idle, let clocks = alarms?.filter({ $0.kind == .alarmClock }), !clocks.isEmpty else {
            return raw
        }
        for alarm in clocks {
            let exit = exitStart(before: alarm)
            if exit <= now && now <= alarm.triggerAt { return (.maintenance, exit, alarm.triggerAt) }
        }
        let next = clocks.map(exitStart(before:)).filter { $0 > now }.min()
        if let next, raw.end.map({ next < $0 }) ?? true { return (.idle, raw.start, next) }
        return raw
    }
}

extension AlarmKind {
    /// The `AlarmManager` method that sets it, e.g. `setAlarmClock()`.
    public var apiName: String {
        switch self {
        case .alarmClock: "setAlarmClock()"
        case .exact: "setExact()"
        case .exactAllowWhileIdle: "setExactAndAllowWhileIdle()"
        case .allowWhileIdle: "setAndAllowWhileIdle()"
        case .inexact: "set()"
        }
    }
}

// SPDX-License-Identifier: Apache-2.0

public import Foundation

// The values both simulated OS schedulers share (docs/scheduler.md). Everything here is a plain
// value: no I/O, no threads, no wall clock; time always arrives as a `Date` argument (virtual time).

/// An error from `submit`, keeping Apple's code (`BGTaskScheduler.Error.Code`).
///
/// Follows Apple, "BGTaskScheduler.Error.Code": `unavailable` = 1, `tooManyPendingTaskRequests` = 2,
/// `notPermitted` = 3. A struct with named factories rather than an enum, so codes can be added.
public struct SchedulerError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Apple's numeric code: 1 unavailable, 2 tooManyPendingTaskRequests, 3 notPermitted.
    public let code: Int
    /// Apple's case name: "unavailable", "tooManyPendingTaskRequests" or "notPermitted".
    public let name: String
    /// Why, in words (which rule of docs/scheduler.md refused the request).
    public let reason: String

    init(code: Int, name: String, reason: String) {
        self.code = code
        self.name = name
        self.reason = reason
    }

    /// Code 1: Background App Refresh is off (denied or restricted), or the app runs in Simulator.
    /// - Parameter reason: human text.
    public static func unavailable(_ reason: String) -> SchedulerError {
        SchedulerError(code: 1, name: "unavailable", reason: reason)
    }

    /// Code 2: one more pending request than allowed (1 app-refresh request per app).
    /// - Parameter reason: human text.
    public static func tooManyPendingTaskRequests(_ reason: String) -> SchedulerError {
        SchedulerError(code: 2, name: "tooManyPendingTaskRequests", reason: reason)
    }

    /// Code 3: the identifier is not in `BGTaskSchedulerPermittedIdentifiers`, or the `fetch`
    /// background mode is missing.
    /// - Parameter reason: human text.
    public static func notPermitted(_ reason: String) -> SchedulerError {
        SchedulerError(code: 3, name: "notPermitted", reason: reason)
    }

    /// `BGTaskSchedulerErrorDomain <code> (<name>): <reason>`.
    public var description: String { "BGTaskSchedulerErrorDomain \(code) (\(name)): \(reason)" }
}

/// What real iOS does by killing the app with `NSInternalInconsistencyException`.
///
/// Apple, "BGTaskScheduler.register(forTaskWithIdentifier:using:launchHandler:)": handlers must be
/// registered before the app finishes launching; registering one identifier twice, or submitting
/// for an identifier with no registered handler, also raises. The simulated process dies with it
/// (the scheduler traces `os.app.crashed`).
public struct LaunchHandlerCrash: Error, Equatable, Sendable, CustomStringConvertible {
    /// The exception's reason, exactly as iOS words it.
    public let message: String

    /// - Parameter message: the exception's reason.
    public init(message: String) { self.message = message }

    /// "All launch handlers must be registered before application finishes launching".
    public static let registeredAfterLaunch = LaunchHandlerCrash(
        message: "All launch handlers must be registered before application finishes launching")

    /// "Launch handler for task with identifier <id> has already been registered".
    /// - Parameter identifier: the task identifier registered twice.
    public static func alreadyRegistered(_ identifier: String) -> LaunchHandlerCrash {
        LaunchHandlerCrash(message: "Launch handler for task with identifier \(identifier) has already been registered")
    }

    /// "No launch handler registered for task with identifier <id>".
    /// - Parameter identifier: the task identifier submitted without a handler.
    public static func noHandler(_ identifier: String) -> LaunchHandlerCrash {
        LaunchHandlerCrash(message: "No launch handler registered for task with identifier \(identifier)")
    }

    /// `NSInternalInconsistencyException: <message>`.
    public var description: String { "NSInternalInconsistencyException: \(message)" }
}

/// Why `submit` failed: a rejected request (the app gets an error) or a crash (the app dies).
public enum SchedulerFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// `submit` threw a `BGTaskScheduler.Error`; the app keeps running.
    case rejected(SchedulerError)
    /// iOS raised `NSInternalInconsistencyException`; the app process is gone.
    case crash(LaunchHandlerCrash)

    /// The error's or the crash's description.
    public var description: String {
        switch self {
        case .rejected(let error): return error.description
        case .crash(let crash): return crash.description
        }
    }
}

/// How a registration made after the launch phase behaves (iOS only).
///
/// `early` and `lateCrash` apply Apple's documented rule to a late registration (it raises
/// "All launch handlers must be registered before application finishes launching"); `early` names
/// the fix, where the app registers in `application(_:didFinishLaunchingWithOptions:)`, so a late
/// call is a bug. `lateSilent` is what was observed with SwiftUI `.backgroundTask(.appRefresh(id))`
/// on iOS 26.6 (an iPhone SE 3): `register` is accepted, `submit` succeeds, the handler is never
/// entered. Registering in `didFinishLaunchingWithOptions`, as Apple's sample "Refreshing and
/// Maintaining Your App Using Background Tasks" does, made the handler run; in the Apple Developer
/// Forums thread "BGTaskScheduler crashes on iOS 18.4" Apple DTS names the timing of SwiftUI's
/// registration as a problem and recommends registering early through `UIApplicationDelegateAdaptor`.
///
/// The raw values ("early", "late-silent", "late-crash") are the encoding's spelling.
public enum RegistrationMode: String, Codable, CaseIterable, Sendable, CustomStringConvertible {
    /// "early": registered in `didFinishLaunching` (the fix); a late registration crashes as on iOS.
    case early
    /// "late-silent": SwiftUI `.backgroundTask` as observed on iOS 26.6: register accepted, submit
    /// succeeds, handler never entered.
    case lateSilent = "late-silent"
    /// "late-crash": registration after launch throws `LaunchHandlerCrash.registeredAfterLaunch`.
    case lateCrash = "late-crash"

    /// The three modes, in documentation order.
    public static let all: [RegistrationMode] = allCases

    /// The raw value: "early", "late-silent" or "late-crash".
    public var description: String { rawValue }
}

/// The mobile OS a simulated phone runs: which background scheduler the app's work goes through.
///
/// The raw values ("ios", "android") are the encoding's spelling.
public enum Platform: String, Codable, CaseIterable, Sendable, CustomStringConvertible {
    /// iOS: BGTaskScheduler (`IOSBackgroundScheduler`).
    case ios
    /// Android: WorkManager (`AndroidWorkScheduler`).
    case android

    /// The raw value: "ios" or "android".
    public var description: String { rawValue }
}

/// An App Standby bucket, with `UsageStatsManager`'s `STANDBY_BUCKET_*` values.
///
/// Android, "App Standby Buckets": active 10, working_set 20, frequent 30, rare 40, restricted 45.
public struct StandbyBucket: RawRepresentable, Codable, CodingKeyRepresentable, Hashable, Sendable,
    CustomStringConvertible
{
    /// `UsageStatsManager.STANDBY_BUCKET_*`: 10, 20, 30, 40 or 45.
    public let rawValue: Int

    /// - Parameter rawValue: 10, 20, 30, 40 or 45; anything else gives nil.
    public init?(rawValue: Int) {
        guard [10, 20, 30, 40, 45].contains(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    private init(known: Int) { rawValue = known }

    /// - Parameter name: "active", "working_set", "frequent", "rare" or "restricted"; else nil.
    public init?(name: String) {
        guard let bucket = Self.all.first(where: { $0.name == name }) else { return nil }
        self = bucket
    }

    /// STANDBY_BUCKET_ACTIVE (10): in use now or very recently.
    public static let active = StandbyBucket(known: 10)
    /// STANDBY_BUCKET_WORKING_SET (20): used often.
    public static let workingSet = StandbyBucket(known: 20)
    /// STANDBY_BUCKET_FREQUENT (30): used regularly, not daily.
    public static let frequent = StandbyBucket(known: 30)
    /// STANDBY_BUCKET_RARE (40): seldom used.
    public static let rare = StandbyBucket(known: 40)
    /// STANDBY_BUCKET_RESTRICTED (45): misbehaving or unused; one run a day.
    public static let restricted = StandbyBucket(known: 45)

    /// The five buckets, most to least privileged.
    public static let all: [StandbyBucket] = [.active, .workingSet, .frequent, .rare, .restricted]

    /// "active", "working_set", "frequent", "rare" or "restricted".
    public var name: String {
        switch rawValue {
        case 10: return "active"
        case 20: return "working_set"
        case 30: return "frequent"
        case 40: return "rare"
        default: return "restricted"
        }
    }

    /// The bucket's name, e.g. "working_set".
    public var description: String { name }
}

/// One background launch the OS grants: run the handler (iOS) or the Worker (Android) with this budget.
public struct BackgroundLaunch: Codable, Equatable, Sendable {
    /// The task identifier (iOS) or unique work name (Android).
    public let identifier: String
    /// The virtual instant the launch began.
    public let startedAt: Date
    /// Virtual seconds the work may take before expiration (iOS: the runtime budget, default 30;
    /// Android: the bucket's remaining job-time quota, nil = unlimited).
    public let budget: TimeInterval?
    /// Seconds before the end of the budget at which the expiration handler is called (iOS; 0 on Android).
    public let expirationWarning: TimeInterval
    /// False when the OS launched but no handler was registered in time (late-silent): the app's
    /// handler is NOT entered and `complete` is not expected.
    public let handlerRegistered: Bool
    /// Android: the work's `runAttemptCount` (0 on the first try); iOS: 0.
    public let runAttemptCount: Int
    /// True for the debugger's simulate-launch.
    public let simulated: Bool
    /// The scheduled time of the run: the `earliestBeginDate` of the request this launch answers
    /// (iOS), the work's next run time (Android: enqueue time + initial delay, then each period or
    /// back-off); nil when the request had none.
    public let earliestBeginDate: Date?

    /// - Parameters:
    ///   - identifier: task identifier or unique work name.
    ///   - startedAt: virtual instant of the launch.
    ///   - budget: virtual seconds before expiration; nil = unlimited.
    ///   - expirationWarning: seconds before the end at which the expiration handler runs.
    ///   - handlerRegistered: whether the app's handler is entered.
    ///   - runAttemptCount: Android's attempt count, 0 on iOS.
    ///   - simulated: true for the debugger's simulate-launch.
    ///   - earliestBeginDate: the scheduled time of the request the launch answers.
    public init(
        identifier: String, startedAt: Date, budget: TimeInterval?, expirationWarning: TimeInterval,
        handlerRegistered: Bool, runAttemptCount: Int, simulated: Bool, earliestBeginDate: Date? = nil
    ) {
        self.earliestBeginDate = earliestBeginDate
        self.identifier = identifier
        self.startedAt = startedAt
        self.budget = budget
        self.expirationWarning = expirationWarning
        self.handlerRegistered = handlerRegistered
        self.runAttemptCount = runAttemptCount
        self.simulated = simulated
    }

    /// The instant the budget runs out (`startedAt + budget`), nil when unlimited.
    public var deadline: Date? { budget.map { startedAt.addingTimeInterval($0) } }

    /// The instant the expiration handler is called (`deadline - expirationWarning`), nil when unlimited.
    public var expirationAt: Date? { deadline.map { $0.addingTimeInterval(-expirationWarning) } }
}

/// How a run ended, as the app reports it: iOS `setTaskCompleted(success:)`, Android `ListenableWorker.Result`.
///
/// iOS has only success or not: `failure` and `retry` both mean `setTaskCompleted(success: false)`.
public struct RunOutcome: Hashable, Sendable, CustomStringConvertible {
    /// "success", "failure" or "retry".
    public let name: String

    private init(name: String) { self.name = name }

    /// iOS `setTaskCompleted(success: true)`; Android `Result.success()`.
    public static let success = RunOutcome(name: "success")
    /// iOS `setTaskCompleted(success: false)`; Android `Result.failure()`.
    public static let failure = RunOutcome(name: "failure")
    /// Android `Result.retry()` (back off, keep the attempt count); iOS treats it as failure.
    public static let retry = RunOutcome(name: "retry")

    /// - Parameter name: "success", "failure" or "retry"; anything else gives nil.
    public init?(parsing name: String) {
        guard ["success", "failure", "retry"].contains(name) else { return nil }
        self.name = name
    }

    /// "success", "failure" or "retry".
    public var description: String { name }
}

/// The common face of both simulated platforms: everything an app's background work and its host call.
///
/// Sans-I/O and deterministic: every instant is a virtual `Date` argument, every random choice comes
/// from the seeded `SplitMix64` the scheduler was built with, so a seed replays. Calls should come
/// in non-decreasing `now` order. Rules and their sources: docs/scheduler.md.
public protocol BackgroundScheduler: Sendable {
    /// The platform whose scheduler this is.
    var platform: Platform { get }

    /// The app process starts (a cold launch). A user launch (`byUser`) clears force-quit.
    /// iOS: opens the launch phase and forgets the previous process's registrations.
    /// - Parameters:
    ///   - now: virtual instant.
    ///   - byUser: true when the user opened the app (not a background launch).
    mutating func appLaunched(at now: Date, byUser: Bool)

    /// Registers the refresh handler.
    ///
    /// iOS (Apple, `BGTaskScheduler.register`): during the launch phase returns true, false for an
    /// identifier not in the permitted list; after it, per `RegistrationMode`. Android: always true
    /// (the Worker class is known to WorkManager).
    /// - Parameters:
    ///   - identifier: the task identifier.
    ///   - now: virtual instant.
    /// - Returns: whether the handler was registered.
    /// - Throws: `LaunchHandlerCrash` where iOS raises (late registration in crash mode, duplicate).
    mutating func register(identifier: String, at now: Date) throws(LaunchHandlerCrash) -> Bool

    /// Closes the launch phase (`didFinishLaunching` returned).
    /// - Parameter now: virtual instant.
    mutating func finishLaunching(at now: Date)

    /// Submits a request: iOS `BGAppRefreshTaskRequest` (`earliestBeginDate` is a lower bound only);
    /// Android `enqueueUniquePeriodicWork(KEEP)` (`earliestBeginDate` becomes the initial delay).
    /// The OS draws the launch opportunity for this request from the seeded model now.
    /// - Parameters:
    ///   - identifier: task identifier or unique work name.
    ///   - earliestBeginDate: no launch before this virtual instant; nil = as soon as the OS likes.
    ///   - now: virtual instant.
    /// - Throws: `SchedulerFailure.rejected` with Apple's code, or `.crash` (no handler registered).
    mutating func submit(identifier: String, earliestBeginDate: Date?, at now: Date) throws(SchedulerFailure)

    /// When the OS will next launch the app in the background for this work (≥ `now`), nil if never
    /// under current conditions (no pending request, refresh off, low power, force-quit, …).
    /// - Parameter now: virtual instant.
    /// - Returns: the virtual instant of the next launch; `now` itself when one is already due.
    func nextLaunch(after now: Date) -> Date?

    /// At `now` (≥ `nextLaunch`) the OS launches: consumes the pending request (iOS) and returns the grant.
    /// - Parameter now: virtual instant.
    /// - Returns: the launch, nil if nothing is due.
    mutating func takeLaunch(at now: Date) -> BackgroundLaunch?

    /// At `now` (≥ `nextLaunch`) the OS launched the app for its due work and the app died while
    /// launching (a launch-handler crash), before the OS could hand the work over. iOS: the
    /// pending request is consumed all the same (the launch happened), traced
    /// `os.launch.dropped`; without this the request would stay due and the OS would launch the
    /// app again at the same instant, forever. Android: nothing (no crash at launch is modelled).
    /// - Parameter now: virtual instant.
    mutating func launchCrashed(at now: Date)

    /// The app reports the end of a run (iOS `setTaskCompleted` / expiration; Android `Result`)
    /// after `duration` virtual seconds. A run longer than its budget was ended by the OS
    /// (iOS kills the app; Android stops the worker) and its outcome is not used.
    /// - Parameters:
    ///   - launch: the grant returned by `takeLaunch` or `simulateLaunch`.
    ///   - outcome: how the app says the run ended.
    ///   - duration: virtual seconds from `launch.startedAt` to the end of the run.
    ///   - now: virtual instant of the report.
    mutating func complete(_ launch: BackgroundLaunch, outcome: RunOutcome, duration: TimeInterval, at now: Date)

    /// The user switches Background App Refresh (iOS) on or off. Android: off means no runs at all.
    mutating func setBackgroundRefreshEnabled(_ on: Bool, at now: Date)
    /// Low Power Mode (iOS) or Battery Saver (Android): no background runs while on.
    mutating func setLowPowerMode(_ on: Bool, at now: Date)
    /// The user force-quits (iOS swipe away; Android Force stop): no runs until a user launch.
    mutating func forceQuit(at now: Date)
    /// Android only: the App Standby bucket; iOS ignores it.
    mutating func setStandbyBucket(_ bucket: StandbyBucket, at now: Date)
    /// Android: job-time quotas are lifted while charging; iOS ignores it.
    mutating func setCharging(_ on: Bool, at now: Date)

    /// Debugger: `e -l objc -- (void)[[BGTaskScheduler sharedScheduler]
    /// _simulateLaunchForTaskWithIdentifier:@"id"]` (Apple, "Starting and Terminating Tasks During
    /// Development"). Launches a pending request now, ignoring `earliestBeginDate` and conditions.
    /// - Returns: the launch, nil when the app is not running or nothing is pending for `identifier`.
    mutating func simulateLaunch(identifier: String, at now: Date) -> BackgroundLaunch?

    /// The OS-side trace since the last call, in time order (e.g. `os.launch`, `os.launch.dropped`,
    /// `os.opportunity.missed`, `os.request.replaced`, `os.app.killed`). Not app events: they show
    /// the developer what the OS did.
    mutating func drainTrace() -> [(at: Date, event: OSEvent)]

    /// Status for display: pending request, its earliest date, next launch, bucket, flags.
    func status() -> [(String, EventValue)]
}

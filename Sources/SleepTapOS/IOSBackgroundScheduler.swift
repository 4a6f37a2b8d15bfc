// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// A seeded simulation of iOS `BGTaskScheduler` for one app's app-refresh task (docs/scheduler.md).
///
/// Rules (Apple, "BGTaskScheduler", "BGAppRefreshTaskRequest", "BGTaskScheduler.Error.Code",
/// "Choosing Background Strategies for Your App"; the late-silent registration models a failure
/// observed on iOS 26.6, see `RegistrationMode.lateSilent`):
/// - handlers are registered in the launch phase (`appLaunched` … `finishLaunching`); later, per
///   `RegistrationMode`; twice in one process raises;
/// - at most 1 pending app-refresh request; submitting the same identifier replaces it; another
///   identifier fails `tooManyPendingTaskRequests`; refresh off fails `unavailable`; an identifier
///   not permitted (or no `fetch` mode) fails `notPermitted`; no handler registered raises;
/// - never a launch before `earliestBeginDate`; the wait after it is drawn from `OpportunityModel`;
/// - no launches while Low Power Mode is on, Background App Refresh is off, or after a force-quit
///   until the user opens the app again;
/// - a run gets `runtimeBudget` seconds; the expiration handler is called `expirationWarning`
///   seconds before the end; not calling `setTaskCompleted` in time gets the app killed.
///
/// Processes: `appLaunched` starts one and forgets the previous one's registrations. A background
/// launch while no process runs is a cold launch in which the app registers again exactly as it
/// did last time (same code), so a late-silent registration stays late.
///
/// Persistence: `Codable`; everything but the undrained trace is encoded (the pending request and
/// its planned opportunities, the RNG position, the settings, the registrations), so a decoded
/// scheduler continues exactly where the encoded one stopped (`SimulatedOS`, docs/scheduler.md).
///
/// Value type, `Sendable`; not for concurrent mutation (like any struct, one owner mutates it).
public struct IOSBackgroundScheduler: BackgroundScheduler, Codable {
    /// The seeded model of when iOS grants a launch after `earliestBeginDate`.
    ///
    /// For a request eligible from `e = max(now, earliestBeginDate)`: the OS picks
    /// `t = e + min(Exp(meanDelay), maximumDelay)`, rounded up to a multiple of `quantum` seconds
    /// (UNIX time); with probability `missProbability` it lets that opportunity pass
    /// (`os.opportunity.missed`) and draws the next one the same way from `t`. Apple documents only
    /// that the wait "can be many hours"; these defaults are this project's assumptions.
    public struct OpportunityModel: Codable, Equatable, Sendable {
        /// Mean of the exponential wait after the request becomes eligible, virtual seconds (default 90 min).
        public var meanDelay: TimeInterval
        /// Longest wait drawn for one opportunity, virtual seconds (default 12 h).
        public var maximumDelay: TimeInterval
        /// Opportunities fall on multiples of this many seconds of UNIX time (default 60; 0 = none).
        public var quantum: TimeInterval
        /// Chance in [0, 1] that the OS lets an opportunity pass and draws another (default 0.1; 1 = never launch).
        public var missProbability: Double
        /// A fitted wait that replaces the exponential draws when set (default nil): the whole
        /// wait from eligibility to the launch is one inverse-CDF draw (`EmpiricalDelay`), rounded
        /// up to `quantum`; `meanDelay`, `maximumDelay` and `missProbability` are then unused.
        /// Absent from older encodings (nil).
        public var empirical: EmpiricalDelay?

        /// - Parameters:
        ///   - meanDelay: mean wait in virtual seconds, > 0.
        ///   - maximumDelay: cap of one wait in virtual seconds, ≥ 0.
        ///   - quantum: grid in seconds, ≥ 0.
        ///   - missProbability: clamped to [0, 1].
        ///   - empirical: a fitted wait that replaces the exponential draws (default nil).
        public init(
            meanDelay: TimeInterval = 90 * 60, maximumDelay: TimeInterval = 12 * 3600, quantum: TimeInterval = 60,
            missProbability: Double = 0.1, empirical: EmpiricalDelay? = nil
        ) {
            self.empirical = empirical
            self.meanDelay = max(1, meanDelay)
            self.maximumDelay = max(0, maximumDelay)
            self.quantum = max(0, quantum)
            self.missProbability = min(1, max(0, missProbability))
        }

        /// One opportunity drawn from `eligible`: never earlier than `eligible`.
        func draw(from eligible: Date, using rng: inout SplitMix64) -> Date {
            let u = rng.schedulerUnitInterval()
            return grid(eligible, delay: min(-meanDelay * log1p(-u), maximumDelay))
        }

        /// `eligible` + `delay`, rounded up to `quantum`, never earlier than `eligible`.
        func grid(_ eligible: Date, delay: TimeInterval) -> Date {
            var t = eligible.timeIntervalSince1970 + delay
            if quantum > 0 { t = (t / quantum).rounded(.up) * quantum }
            return Date(timeIntervalSince1970: max(t, eligible.timeIntervalSince1970))
        }
    }

    /// The app's Info.plist and the simulator's knobs.
    public struct Configuration: Codable, Equatable, Sendable {
        /// `BGTaskSchedulerPermittedIdentifiers` from Info.plist.
        public var permittedIdentifiers: Set<String>
        /// How a registration after the launch phase behaves.
        public var registrationMode: RegistrationMode
        /// Virtual seconds an app-refresh run may take (Apple: up to 30 s; field reports 2-5 s).
        public var runtimeBudget: TimeInterval
        /// Seconds before the end of the budget at which the expiration handler is called.
        public var expirationWarning: TimeInterval
        /// `UIBackgroundModes` contains `fetch`; without it `submit` fails `notPermitted`.
        public var backgroundFetchModeEnabled: Bool
        /// When the OS grants launches.
        public var opportunity: OpportunityModel
        /// Virtual seconds a `BGProcessingTask` run may take; nil = `defaultProcessingBudget` (300).
        /// Absent from older encodings (nil).
        public var processingBudget: TimeInterval?
        /// Seconds the screen must stay off before the device counts as idle; nil =
        /// `defaultIdleDelay` (600). Absent from older encodings (nil).
        public var idleDelay: TimeInterval?
        /// Which rule draws app-refresh launches; nil = `.legacy` (and an older encoding).
        public var opportunityModel: OpportunityModelKind?
        /// The usage model's settings; nil = `UsageModel()`'s defaults (and an older encoding).
        public var usage: UsageModel?
        /// The energy and data budgets (usage model only); nil = `BackgroundBudget()`'s defaults
        /// (and an older encoding).
        public var budget: BackgroundBudget?
        /// The battery's drain and charge rates (usage model only); nil = `BatteryModel()`'s
        /// defaults (and an older encoding).
        public var battery: BatteryModel?

        /// - Parameters:
        ///   - permittedIdentifiers: `BGTaskSchedulerPermittedIdentifiers`.
        ///   - registrationMode: behaviour of a late registration (default `.early`).
        ///   - runtimeBudget: virtual seconds per run, > 0 (default 30).
        ///   - expirationWarning: seconds before the end, clamped to [0, runtimeBudget] (default 1).
        ///   - backgroundFetchModeEnabled: the `fetch` background mode (default true).
        ///   - opportunity: the launch model (default `OpportunityModel()`).
        public init(
            permittedIdentifiers: Set<String>, registrationMode: RegistrationMode = .early,
            runtimeBudget: TimeInterval = 30, expirationWarning: TimeInterval = 1,
            backgroundFetchModeEnabled: Bool = true, opportunity: OpportunityModel = OpportunityModel()
        ) {
            self.permittedIdentifiers = permittedIdentifiers
            self.registrationMode = registrationMode
            self.runtimeBudget = max(0.001, runtimeBudget)
            self.expirationWarning = min(max(0, expirationWarning), self.runtimeBudget)
            self.backgroundFetchModeEnabled = backgroundFetchModeEnabled
            self.opportunity = opportunity
        }

        /// The processing budget in effect, virtual seconds (`processingBudget` or 300).
        public var effectiveProcessingBudget: TimeInterval {
            max(0.001, processingBudget ?? IOSBackgroundScheduler.defaultProcessingBudget)
        }

        /// The opportunity model in effect (`opportunityModel` or `.legacy`).
        public var effectiveOpportunityModel: OpportunityModelKind { opportunityModel ?? .legacy }

        /// The usage model's settings in effect (`usage` or the defaults).
        public var effectiveUsage: UsageModel { usage ?? UsageModel() }

        /// The energy and data budgets in effect (`budget` or the defaults).
        public var effectiveBudget: BackgroundBudget { budget ?? BackgroundBudget() }

        /// The battery's rates in effect (`battery` or the defaults).
        public var effectiveBattery: BatteryModel { battery ?? BatteryModel() }

        /// The idle delay in effect, seconds (`idleDelay` or 600).
        public var effectiveIdleDelay: TimeInterval { max(0, idleDelay ?? IOSBackgroundScheduler.defaultIdleDelay) }

        /// Adds `identifier` to `BGTaskSchedulerPermittedIdentifiers` (an app build that lists it).
        /// - Parameter identifier: the task identifier.
        public mutating func permit(_ identifier: String) { permittedIdentifiers.insert(identifier) }
    }

    private struct Pending: Codable, Sendable {
        var identifier: String
        var earliestBeginDate: Date?
        var submittedAt: Date
        /// Opportunities the OS will let pass, in order, before `opportunity`.
        var missed: [Date] = []
        /// The granted launch; nil while conditions forbid launches (or the OS never launches).
        var opportunity: Date?
    }

    /// The configuration: built with, then changed by `installUpdate` (registration) and
    /// `setRuntimeBudget`.
    public private(set) var configuration: Configuration
    /// The seed the scheduler was built with (replay it to get the same launches).
    public let seed: UInt64

    private var rng: SplitMix64
    private var trace = SchedulerTrace()

    private var processRunning = false
    private var launchPhase = false
    /// Identifiers registered in the current process.
    private var processRegistered: Set<String> = []
    /// The app's most recent registration per identifier: true = in time, false = late (never entered).
    private var handlers: [String: Bool] = [:]
    private var pending: Pending?
    private var running: BackgroundLaunch?

    private var refreshEnabled = true
    private var lowPower = false
    private var forceQuitted = false
    /// The last launch that did not reach the handler (not registered in time, or the app crashed
    /// registering), nil once a launch enters it. Optional in the encoding (an older encoding lacks it).
    private var lastDroppedLaunch: Date?
    /// The pending `BGProcessingTaskRequest`, nil when none. Optional in the encoding (an older encoding lacks it).
    private var processing: ProcessingRequest?
    /// The processing request's submission instant (its eligibility floor), nil when none is pending.
    private var processingSubmittedAt: Date?
    /// The processing run in flight, nil when none.
    private var processingRun: BackgroundLaunch?
    /// When the user started using the device during `processingRun` (the expiration handler was
    /// called then), nil otherwise.
    private var processingExpiredAt: Date?
    /// The identifier of the last processing request the app submitted, nil when it never did
    /// (then `whyProcessing` has no answer).
    private var processingIdentifier: String?
    /// When the screen went off (the device not in use since then); nil while the device is in
    /// use, the state of a new device and of an older encoding.
    private var screenOffAt: Date?
    /// True while the device is on external power; nil = not charging (an older encoding).
    private var externalPower: Bool?
    /// True while the device has no network connection; nil = connected (an older encoding).
    private var networkOff: Bool?
    /// The user's most recent opens of the app, oldest first, at most `UsageModel.historyLimit`;
    /// kept while the usage model is in effect; nil = none (and an older encoding).
    private var userOpens: [Date]?
    /// The user's last open of the app, kept only while the fitted wait has bins by the days since
    /// the last open (`EmpiricalDelay.byDaysSinceOpen`); nil = none seen (and an older encoding).
    private var lastUserOpen: Date?
    /// The last natural app-refresh launch while the usage model is in effect (its spacing
    /// floor); nil = none (and an older encoding).
    private var lastRefreshLaunch: Date?
    /// The battery's charge in [0, 1] at `batteryUpdatedAt`; nil = never set (full), and an older encoding.
    private var batteryLevel: Double?
    /// The instant of `batteryLevel`, from which the usage model drains or charges it; nil = the
    /// level stays as set (an older encoding).
    private var batteryUpdatedAt: Date?
    /// The energy budget's balance (usage model); nil = full (never drawn, and an older encoding).
    private var energyBalance: BudgetBalance?
    /// The data budget's balance (usage model); nil = full (never drawn, and an older encoding).
    private var dataBalance: BudgetBalance?

    private enum CodingKeys: String, CodingKey {
        case configuration, seed, rng, processRunning, launchPhase, processRegistered, handlers, pending, running
        case refreshEnabled, lowPower, forceQuitted, lastDroppedLaunch
        case processing, processingSubmittedAt, processingRun, processingExpiredAt, processingIdentifier
        case screenOffAt, externalPower, networkOff, userOpens, lastRefreshLaunch, batteryLevel
        case batteryUpdatedAt, energyBalance, dataBalance, lastUserOpen
    }

    /// - Parameters:
    ///   - configuration: Info.plist, budget and opportunity model.
    ///   - seed: seeds the `SplitMix64` behind every random choice.
    public init(configuration: Configuration, seed: UInt64) {
        self.configuration = configuration
        self.seed = seed
        rng = SplitMix64(state: seed)
    }

    /// `.ios`.
    public var platform: Platform { .ios }

    // MARK: Process and registration

    /// Starts a process: opens the launch phase and forgets the previous process's registrations.
    /// A user launch clears force-quit. A run in flight is left alone (a runtime may model the
    /// background launch's `didFinishLaunching` after `takeLaunch`).
    /// - Parameters:
    ///   - now: virtual instant.
    ///   - byUser: true when the user opened the app.
    public mutating func appLaunched(at now: Date, byUser: Bool) {
        advance(to: now)
        trace.add(now, .osAppLaunched, [("byUser", .bool(byUser))])
        processRunning = true
        launchPhase = true
        processRegistered = []
        if byUser && forceQuitted {
            let wasAllowed = launchesAllowed
            forceQuitted = false
            conditionsChanged(at: now, wasAllowed: wasAllowed)
        }
        if byUser && configuration.effectiveOpportunityModel == .usage {
            recordOpen(at: now)
        }
        if byUser && configuration.opportunity.empirical?.byDaysSinceOpen != nil {
            recordOpenForFittedWait(at: now)
        }
    }

    /// A fitted wait by the days since the last open learns an open: a pending request not yet
    /// eligible is drawn again from the bin of its eligibility as seen now (the fit counts the
    /// last open at or before a request's eligibility); an eligible one keeps its plan.
    private mutating func recordOpenForFittedWait(at now: Date) {
        lastUserOpen = now
        guard launchesAllowed, running == nil, var request = pending, let begin = request.earliestBeginDate,
            begin > now
        else { return }
        drawOpportunities(&request, from: now)
        pending = request
    }

    /// Days (86,400 s of elapsed time) from the user's last open known to the OS to `eligible`;
    /// nil when no open is known.
    private func daysSinceOpen(at eligible: Date) -> Double? {
        guard let last = [lastUserOpen, userOpens?.last].compactMap({ $0 }).max() else { return nil }
        return max(0, eligible.timeIntervalSince(last)) / 86_400
    }

    /// The usage model learns an open: kept in the bounded history, and the pending request's
    /// opportunity drawn again from `now` with what the OS now knows.
    private mutating func recordOpen(at now: Date) {
        var opens = userOpens ?? []
        opens.append(now)
        let limit = configuration.effectiveUsage.historyLimit
        if opens.count > limit { opens.removeFirst(opens.count - limit) }
        userOpens = opens
        guard launchesAllowed, running == nil, var request = pending, configuration.opportunity.empirical == nil
        else { return }
        drawOpportunities(&request, from: now)
        pending = request
    }

    /// The user's recorded opens, oldest first (empty unless the usage model is in effect).
    public var openHistory: [Date] { userOpens ?? [] }

    /// Registers the refresh handler (Apple, `BGTaskScheduler.register(forTaskWithIdentifier:using:launchHandler:)`).
    ///
    /// Checks, in order: after the launch phase in `early`/`lateCrash` mode → crash; identifier not
    /// permitted → false; already registered in this process → crash; otherwise registered (in time
    /// during the launch phase; late, never entered, in `lateSilent` mode after it).
    /// - Parameters:
    ///   - identifier: the task identifier.
    ///   - now: virtual instant.
    /// - Returns: true when registered, false for an identifier not in `permittedIdentifiers`.
    /// - Throws: `LaunchHandlerCrash.registeredAfterLaunch` (late, crash rule) or
    ///   `.alreadyRegistered(identifier)`; the process dies with it.
    public mutating func register(identifier: String, at now: Date) throws(LaunchHandlerCrash) -> Bool {
        advance(to: now)
        let inTime = processRunning && launchPhase
        if !inTime && configuration.registrationMode != .lateSilent {
            throw crash(.registeredAfterLaunch, at: now)
        }
        guard configuration.permittedIdentifiers.contains(identifier) else {
            trace.add(
                now, .osRegisterRefused,
                [
                    ("identifier", .string(identifier)),
                    ("reason", .string("not in BGTaskSchedulerPermittedIdentifiers")),
                ])
            return false
        }
        guard !processRegistered.contains(identifier) else {
            throw crash(.alreadyRegistered(identifier), at: now)
        }
        processRegistered.insert(identifier)
        handlers[identifier] = inTime
        trace.add(now, .osRegister, [("identifier", .string(identifier)), ("inTime", .bool(inTime))])
        return true
    }

    /// Closes the launch phase: from now on a registration is late.
    /// - Parameter now: virtual instant.
    public mutating func finishLaunching(at now: Date) {
        advance(to: now)
        launchPhase = false
    }

    // MARK: Requests and launches

    /// The checks both kinds of request pass at submit, in Apple's order: the identifier is in
    /// `BGTaskSchedulerPermittedIdentifiers` (else `notPermitted`), its launch handler is
    /// registered in this process (else the app crashes), Background App Refresh is on (else
    /// `unavailable`).
    /// - Throws: `SchedulerFailure.rejected(SchedulerError)` or `.crash(.noHandler(identifier))`.
    private mutating func admit(_ identifier: String, at now: Date) throws(SchedulerFailure) {
        guard configuration.permittedIdentifiers.contains(identifier) else {
            throw reject(
                .notPermitted("\(identifier) is not in BGTaskSchedulerPermittedIdentifiers"), identifier, now)
        }
        guard processRunning && processRegistered.contains(identifier) else {
            throw .crash(crash(.noHandler(identifier), at: now))
        }
        guard refreshEnabled else {
            throw reject(.unavailable("Background App Refresh is off"), identifier, now)
        }
    }

    /// Submits a `BGAppRefreshTaskRequest` and draws its launch opportunity.
    ///
    /// Checks, in order: `fetch` mode missing or identifier not permitted → `notPermitted` (3); no
    /// handler registered in this process → crash; Background App Refresh off → `unavailable` (1);
    /// another identifier pending → `tooManyPendingTaskRequests` (2). The same identifier replaces
    /// the pending request (`os.request.replaced`). While launches are forbidden (low power,
    /// force-quit) the request is kept and its opportunity drawn when they are allowed again.
    /// - Parameters:
    ///   - identifier: the task identifier.
    ///   - earliestBeginDate: lower bound of the launch, virtual instant; nil = now.
    ///   - now: virtual instant.
    /// - Throws: `SchedulerFailure.rejected(SchedulerError)` or `.crash(.noHandler(identifier))`.
    public mutating func submit(identifier: String, earliestBeginDate: Date?, at now: Date) throws(SchedulerFailure) {
        advance(to: now)
        guard configuration.backgroundFetchModeEnabled else {
            throw reject(.notPermitted("the fetch background mode is missing from UIBackgroundModes"), identifier, now)
        }
        try admit(identifier, at: now)
        if let old = pending {
            guard old.identifier == identifier else {
                throw reject(
                    .tooManyPendingTaskRequests("an app-refresh request for \(old.identifier) is already pending"),
                    identifier, now)
            }
            trace.add(
                now, .osRequestReplaced,
                [
                    ("identifier", .string(identifier)),
                    ("previousEarliestBeginDate", .schedulerDate(old.earliestBeginDate)),
                ])
        }
        var request = Pending(identifier: identifier, earliestBeginDate: earliestBeginDate, submittedAt: now)
        if let old = pending, old.earliestBeginDate == earliestBeginDate, old.opportunity != nil {
            // The same request again (an app that resubmits at every launch): the plan stands.
            request = old
        } else if launchesAllowed {
            drawOpportunities(&request, from: now)
        }
        pending = request
        trace.add(
            now, .osRequestSubmitted,
            [
                ("identifier", .string(identifier)), ("earliestBeginDate", .schedulerDate(earliestBeginDate)),
                ("plannedLaunch", .schedulerDate(request.opportunity)),
            ])
    }

    /// The next launch: the drawn opportunity of the pending request, or `now` when it is overdue;
    /// while a run is in flight, not before its deadline (one app-refresh task at a time).
    /// - Parameter now: virtual instant.
    /// - Returns: nil when nothing is pending, or Low Power Mode, refresh off or force-quit forbid launches.
    public func nextLaunch(after now: Date) -> Date? {
        let refresh = refreshLaunch(after: now)
        let processing = processingLaunch(after: now)
        guard let refresh else { return processing }
        guard let processing else { return refresh }
        return min(refresh, processing)
    }

    /// The next launch for the app-refresh request alone (see `nextLaunch(after:)`).
    private func refreshLaunch(after now: Date) -> Date? {
        guard launchesAllowed, let opportunity = pending?.opportunity else { return nil }
        var next = max(opportunity, now)
        if let deadline = running?.deadline { next = max(next, deadline) }
        // The draining battery turns critical first: nothing launches until it is charged.
        if let critical = batteryCriticalAt, critical <= next { return nil }
        return next
    }

    /// Launches the app for the pending request when its opportunity has come.
    ///
    /// Consumes the request. A handler registered late (late-silent) is not entered: the launch is
    /// returned with `handlerRegistered == false` and traced `os.launch.dropped` ("no handler
    /// registered in time"); the app must not run its handler and cannot resubmit from it.
    /// - Parameter now: virtual instant, ≥ `nextLaunch(after:)`.
    /// - Returns: the grant, nil if nothing is due.
    public mutating func takeLaunch(at now: Date) -> BackgroundLaunch? {
        advance(to: now)
        if launchesAllowed, running == nil, let request = pending, let opportunity = request.opportunity,
            opportunity <= now
        {
            return launch(request, at: now, simulated: false)
        }
        guard let request = processing, let at = processingLaunch(after: now), at <= now else { return nil }
        return launchProcessing(request, at: now, simulated: false)
    }

    /// The app crashed while the OS launched it for the due request: the request is spent
    /// (traced `os.launch.dropped`, reason "the app crashed while launching"); nothing launches
    /// again until a launch that does not crash submits a new one.
    /// - Parameter now: virtual instant.
    public mutating func launchCrashed(at now: Date) {
        advance(to: now)
        guard running == nil, let request = pending, let opportunity = request.opportunity, opportunity <= now else {
            if let request = processing, let at = processingLaunch(after: now), at <= now {
                processing = nil
                processingSubmittedAt = nil
                lastDroppedLaunch = now
                trace.add(
                    now, .osLaunchDropped,
                    [
                        ("identifier", .string(request.identifier)),
                        ("reason", .string("the app crashed while launching")),
                    ])
            }
            return
        }
        pending = nil
        lastDroppedLaunch = now
        trace.add(
            now, .osLaunchDropped,
            [("identifier", .string(request.identifier)), ("reason", .string("the app crashed while launching"))])
    }

    /// The debugger's `_simulateLaunchForTaskWithIdentifier:`: launches the pending request now,
    /// ignoring `earliestBeginDate` and conditions. Needs a running app (under the debugger) and a
    /// pending request for `identifier`. The handler rule is the natural launch's: a late-silent
    /// registration is not entered either (so the simulator never hides the bug).
    /// - Returns: the grant, nil (traced `os.simulate.failed`) otherwise.
    public mutating func simulateLaunch(identifier: String, at now: Date) -> BackgroundLaunch? {
        advance(to: now)
        guard processRunning else {
            trace.add(
                now, .osSimulateFailed,
                [("identifier", .string(identifier)), ("reason", .string("app not running"))])
            return nil
        }
        if let request = processing, request.identifier == identifier, processingRun == nil {
            return launchProcessing(request, at: now, simulated: true)
        }
        guard running == nil else {
            trace.add(
                now, .osSimulateFailed,
                [("identifier", .string(identifier)), ("reason", .string("a task is running"))])
            return nil
        }
        guard let request = pending, request.identifier == identifier else {
            trace.add(
                now, .osSimulateFailed,
                [("identifier", .string(identifier)), ("reason", .string("no pending request"))])
            return nil
        }
        return launch(request, at: now, simulated: true)
    }

    /// The app ends the run: `setTaskCompleted(success: outcome == .success)` after `duration` seconds.
    ///
    /// A duration past `budget - expirationWarning` means the expiration handler was called first
    /// (`os.task.expired`); past `budget` the OS killed the app at the deadline (`os.app.killed`)
    /// and the outcome is lost. A report for a launch that is not running is traced `os.complete.ignored`.
    /// - Parameters:
    ///   - launch: the running grant.
    ///   - outcome: `.success`, or `.failure`/`.retry` for `success: false`.
    ///   - duration: virtual seconds since `launch.startedAt`.
    ///   - now: virtual instant of the report.
    public mutating func complete(_ launch: BackgroundLaunch, outcome: RunOutcome, duration: TimeInterval, at now: Date)
    {
        if let run = processingRun, run == launch {
            completeProcessing(run, outcome: outcome, duration: duration, at: now)
            return
        }
        guard let run = running, run == launch else {
            advance(to: now)
            trace.add(
                now, .osCompleteIgnored,
                [("identifier", .string(launch.identifier)), ("reason", .string("no such running task"))])
            return
        }
        let budget = configuration.runtimeBudget
        let end = launch.startedAt.addingTimeInterval(max(0, duration))
        if duration > budget - configuration.expirationWarning, let expiry = launch.expirationAt {
            trace.add(expiry, .osTaskExpired, [("identifier", .string(launch.identifier))])
        }
        if duration > budget {
            kill(run, reason: "setTaskCompleted not called within budget")
        } else {
            running = nil
            trace.add(
                end, .osTaskCompleted,
                [
                    ("identifier", .string(launch.identifier)), ("success", .bool(outcome == .success)),
                    ("duration", .double(duration)),
                ])
        }
        advance(to: now)
        if budgetsApply && !run.simulated {
            drawEnergy(run, duration: min(max(0, duration), budget), at: max(now, end))
            budgetDrawn(at: max(now, end))
        }
    }

    // MARK: Conditions

    /// Background App Refresh on or off. Off: `submit` fails `unavailable` and nothing launches;
    /// a pending request is kept and gets a fresh opportunity when it is switched on again.
    public mutating func setBackgroundRefreshEnabled(_ on: Bool, at now: Date) {
        advance(to: now)
        guard refreshEnabled != on else { return }
        let wasAllowed = launchesAllowed
        refreshEnabled = on
        conditionsChanged(at: now, wasAllowed: wasAllowed, announced: true)
    }

    /// Low Power Mode: no launches while on; a pending request gets a fresh opportunity when it goes off.
    public mutating func setLowPowerMode(_ on: Bool, at now: Date) {
        advance(to: now)
        guard lowPower != on else { return }
        let wasAllowed = launchesAllowed
        lowPower = on
        conditionsChanged(at: now, wasAllowed: wasAllowed, announced: true)
    }

    /// The user swipes the app away: the process dies (a run in flight is killed), and nothing
    /// launches until `appLaunched(at:byUser: true)`. The pending request is kept.
    public mutating func forceQuit(at now: Date) {
        advance(to: now)
        killProcessingRun(at: now, reason: "force-quit")
        if let run = running { kill(run, at: now, reason: "force-quit") }
        processRunning = false
        launchPhase = false
        processRegistered = []
        guard !forceQuitted else { return }
        let wasAllowed = launchesAllowed
        forceQuitted = true
        conditionsChanged(at: now, wasAllowed: wasAllowed, announced: true)
    }

    /// The user installs an update of the app whose code registers per `registration`.
    ///
    /// The running process ends (the update replaces the app's code; a run in flight is killed,
    /// `os.app.killed` reason "app updated"); it is not a force-quit, so background launches go
    /// on. The pending request is kept (not documented by Apple; this model's assumption). The new
    /// mode applies from the next launch: `register` follows it, and a cold background launch
    /// enters the handler only when the new code registers in time (`early`).
    /// - Parameters:
    ///   - registration: how the updated app registers its handler.
    ///   - now: virtual instant.
    public mutating func installUpdate(registration: RegistrationMode, at now: Date) {
        advance(to: now)
        killProcessingRun(at: now, reason: "app updated")
        if let run = running { kill(run, at: now, reason: "app updated") }
        endProcess()
        configuration.registrationMode = registration
        handlers = handlers.mapValues { _ in registration == .early }
        trace.add(now, .osAppUpdated, [("registration", .string(registration.rawValue))])
    }

    /// The device restarts.
    ///
    /// The app process is gone (a run in flight is killed, `os.app.killed` reason "reboot"). A
    /// force-quit no longer holds launches back: Apple documents for background launches by push
    /// that after a force-quit "the user must relaunch your app or restart the device", and this
    /// model applies the same to app refresh. The pending request and its planned launch are kept
    /// (Apple does not document it; this model's assumption). Settings (Low Power Mode, Background
    /// App Refresh) are unchanged. Traced `os.rebooted`.
    /// - Parameter now: virtual instant.
    public mutating func reboot(at now: Date) {
        advance(to: now)
        killProcessingRun(at: now, reason: "reboot")
        if let run = running { kill(run, at: now, reason: "reboot") }
        endProcess()
        trace.add(
            now, .osRebooted,
            [
                ("pendingIdentifier", pending.map { .string($0.identifier) } ?? .null),
                ("forceQuitCleared", .bool(forceQuitted)),
            ])
        if forceQuitted {
            let wasAllowed = launchesAllowed
            forceQuitted = false
            conditionsChanged(at: now, wasAllowed: wasAllowed)
        }
    }

    /// The user sets the device's wall clock by `delta` seconds: iOS posts
    /// `UIApplication.significantTimeChangeNotification` (Apple, "significantTimeChangeNotification":
    /// a significant change in time; that a clock set by the user is one is this model's assumption).
    ///
    /// The pending request stays at its true instant: `BGTaskRequest.earliestBeginDate` is a
    /// `Date`, an absolute instant, and Apple does not say that a change of the clock moves it
    /// (this model's assumption), nor the opportunity the system drew. Traced `os.time_changed`
    /// {notification, delta, pendingIdentifier, earliestBeginDate, plannedLaunch}.
    /// - Parameters:
    ///   - delta: the change of the wall clock, seconds (negative: set back).
    ///   - now: virtual (true) instant.
    public mutating func wallClockChanged(by delta: TimeInterval, at now: Date) {
        advance(to: now)
        trace.add(
            now, .osTimeChanged,
            [
                ("notification", .string("UIApplication.significantTimeChangeNotification")),
                ("delta", .double(delta)), ("pendingIdentifier", pending.map { .string($0.identifier) } ?? .null),
                ("earliestBeginDate", .schedulerDate(pending?.earliestBeginDate)),
                ("plannedLaunch", .schedulerDate(pending?.opportunity)),
            ])
    }

    /// Later requests draw their wait from `delay`, or from the built-in draws when nil
    /// (`OpportunityModel.empirical`); a pending request keeps its opportunity.
    public mutating func setEmpiricalDelay(_ delay: EmpiricalDelay?) {
        configuration.opportunity.empirical = delay
    }

    /// Later requests draw their launch by `kind` (`Configuration.opportunityModel`); a pending
    /// request keeps its opportunity. `.legacy` is stored as nil (the encoding of before).
    /// - Parameter kind: the opportunity model.
    public mutating func setOpportunityModel(_ kind: OpportunityModelKind) {
        configuration.opportunityModel = kind == .legacy ? nil : kind
    }

    /// Later budget draws and refills follow `budget` (`Configuration.budget`); the balances
    /// drawn so far are kept, and read up to the new capacity.
    /// - Parameter budget: the energy and data budgets.
    public mutating func setBackgroundBudget(_ budget: BackgroundBudget) {
        configuration.budget = budget == BackgroundBudget() ? nil : budget
    }

    /// From `now` the battery drains and charges at `battery`'s rates (`Configuration.battery`);
    /// the level reached at the old rates is kept.
    /// - Parameters:
    ///   - battery: the drain and charge rates.
    ///   - now: virtual instant.
    public mutating func setBatteryModel(_ battery: BatteryModel, at now: Date) {
        // The level reached so far at the old rates is the start of the new ones.
        advance(to: now)
        configuration.battery = battery == BatteryModel() ? nil : battery
    }

    /// Adds `identifier` to `BGTaskSchedulerPermittedIdentifiers` (an app build that lists it).
    /// - Parameter identifier: the task identifier.
    public mutating func permit(_ identifier: String) { configuration.permit(identifier) }

    /// Sets the app-refresh budget of later runs (`Configuration.runtimeBudget`; the expiration
    /// warning stays within it).
    /// - Parameter seconds: virtual seconds, > 0.
    public mutating func setRuntimeBudget(_ seconds: TimeInterval) {
        configuration.runtimeBudget = max(0.001, seconds)
        configuration.expirationWarning = min(configuration.expirationWarning, configuration.runtimeBudget)
    }

    /// Ignored on iOS (no standby buckets).
    public mutating func setStandbyBucket(_ bucket: StandbyBucket, at now: Date) { advance(to: now) }

    /// The device is plugged in or unplugged: the legacy opportunity model does not depend on it;
    /// under the usage model it lifts a critically low battery (`UsageModel.criticalBatteryLevel`);
    /// a processing request with `requiresExternalPower` starts only while it is on (Apple,
    /// `BGProcessingTaskRequest.requiresExternalPower`).
    public mutating func setCharging(_ on: Bool, at now: Date) {
        advance(to: now)
        let wasAllowed = launchesAllowed
        externalPower = on ? true : nil
        if wasAllowed != launchesAllowed { conditionsChanged(at: now, wasAllowed: wasAllowed) }
    }

    /// The battery's charge is `level` at `now`, a fraction in [0, 1]. Under the usage model a
    /// level below `UsageModel.criticalBatteryLevel` while not charging withholds app-refresh
    /// launches (WWDC20 "Background execution demystified": critically low battery, essential
    /// work only; not on a fitted wait, `batteryHolds`), and from `now` the level drains while
    /// unplugged and rises while charging at `Configuration.battery`'s rates (this model's
    /// assumptions); the legacy model ignores it.
    /// - Parameters:
    ///   - level: the charge, clamped to [0, 1].
    ///   - now: virtual instant.
    public mutating func setBatteryLevel(_ level: Double, at now: Date) {
        advance(to: now)
        let wasAllowed = launchesAllowed
        batteryLevel = min(1, max(0, level))
        batteryUpdatedAt = now
        if wasAllowed != launchesAllowed { conditionsChanged(at: now, wasAllowed: wasAllowed) }
    }

    /// Whether the usage model withholds launches for a critically low battery (`batteryHolds`):
    /// below `UsageModel.criticalBatteryLevel` and not charging, at the last call that brought the
    /// scheduler up to date (`batteryLevel(at:)` for any instant).
    public var batteryCritical: Bool { batteryCritical(level: batteryLevel) }

    private func batteryCritical(level: Double?) -> Bool {
        guard batteryHolds, let level, externalPower != true else { return false }
        return level < configuration.effectiveUsage.criticalBatteryLevel
    }

    /// Whether a critically low battery withholds launches: under the usage model, unless the
    /// wait is a fitted one (`OpportunityModel.empirical`). A fitted wait was measured on devices
    /// whose batteries held their launches back, so it holds those holds already: records show
    /// a held request only as a late one (docs/calibration.md, "What the records cannot
    /// identify"), and holding it again would count each hold twice. The level still drains and
    /// charges, and is reported.
    private var batteryHolds: Bool {
        configuration.effectiveOpportunityModel == .usage && configuration.opportunity.empirical == nil
    }

    /// Whether the battery level changes with time: the usage model is in effect and a level
    /// was set (a device never given one stays full).
    private var batteryDrifts: Bool {
        configuration.effectiveOpportunityModel == .usage && batteryLevel != nil && batteryUpdatedAt != nil
    }

    /// The battery's charge in [0, 1] at `now` (not before the last update): drained or charged
    /// at `Configuration.battery`'s rates under the usage model; nil when never set (full).
    /// - Parameter now: virtual instant.
    public func batteryLevel(at now: Date) -> Double? {
        guard let level = batteryLevel else { return nil }
        guard batteryDrifts, let since = batteryUpdatedAt else { return level }
        return configuration.effectiveBattery.level(level, after: now.timeIntervalSince(since), charging: charging)
    }

    /// When the draining battery falls below `UsageModel.criticalBatteryLevel`, nil when it does
    /// not (charging, no drain, never set, already below) or would hold nothing (`batteryHolds`).
    private var batteryCriticalAt: Date? {
        guard batteryHolds, batteryDrifts, !charging, let level = batteryLevel, let since = batteryUpdatedAt else {
            return nil
        }
        let critical = configuration.effectiveUsage.criticalBatteryLevel
        let drain = configuration.effectiveBattery.drainPerHour
        guard level >= critical, drain > 0 else { return nil }
        // The first instant strictly below the threshold is at (level − critical) / drain hours.
        return since.addingTimeInterval((level - critical) / drain * 3_600 + 0.001)
    }

    /// Brings the battery level up to `now`; a crossing of the critical level changes the
    /// conditions at the crossing instant.
    private mutating func advanceBattery(to now: Date) {
        guard batteryDrifts, let since = batteryUpdatedAt, now > since else { return }
        let crossing = batteryCriticalAt
        let wasAllowed = launchesAllowed
        batteryLevel = batteryLevel(at: now)
        batteryUpdatedAt = now
        if wasAllowed != launchesAllowed {
            conditionsChanged(at: min(crossing ?? now, now), wasAllowed: wasAllowed)
        }
    }

    // MARK: Energy and data budgets

    /// Whether the energy and data budgets apply: the usage model is in effect.
    private var budgetsApply: Bool { configuration.effectiveOpportunityModel == .usage }

    /// The energy budget's balance at `now`, running seconds (the capacity when never drawn);
    /// nil unless the usage model is in effect.
    /// - Parameter now: virtual instant.
    public func energyBudget(at now: Date) -> Double? {
        guard budgetsApply else { return nil }
        let b = configuration.effectiveBudget
        return energyBalance?.balance(at: now, rate: b.energyRate, capacity: b.energyCapacity) ?? b.energyCapacity
    }

    /// The data budget's balance at `now`, bytes (the capacity when never drawn); nil unless
    /// the usage model is in effect.
    /// - Parameter now: virtual instant.
    public func dataBudget(at now: Date) -> Double? {
        guard budgetsApply else { return nil }
        let b = configuration.effectiveBudget
        return dataBalance?.balance(at: now, rate: b.dataRate, capacity: b.dataCapacity) ?? b.dataCapacity
    }

    /// When the overdrawn energy budget is back to zero, nil when it is not overdrawn at `now`.
    private func energyRefill(after now: Date) -> Date? {
        guard budgetsApply, let balance = energyBalance else { return nil }
        let b = configuration.effectiveBudget
        return balance.refilled(after: now, rate: b.energyRate, capacity: b.energyCapacity)
    }

    /// When the overdrawn data budget is back to zero, nil when it is not overdrawn at `now`.
    private func dataRefill(after now: Date) -> Date? {
        guard budgetsApply, let balance = dataBalance else { return nil }
        let b = configuration.effectiveBudget
        return balance.refilled(after: now, rate: b.dataRate, capacity: b.dataCapacity)
    }

    /// The first instant from `now` at which neither budget is overdrawn, nil when none is.
    private func budgetRefill(after now: Date) -> Date? {
        [energyRefill(after: now), dataRefill(after: now)].compactMap { $0 }.max()
    }

    /// The app transferred `bytes` over the network during the app-refresh run in flight: under
    /// the usage model they are drawn from the data budget (WWDC20 "Background execution
    /// demystified": system data budgets); otherwise, or with no natural run in flight, nothing
    /// happens.
    /// - Parameters:
    ///   - bytes: bytes sent and received, ≥ 0.
    ///   - now: virtual instant.
    public mutating func recordDataTransfer(bytes: Int, at now: Date) {
        guard budgetsApply, let run = running, !run.simulated, bytes > 0 else { return }
        let b = configuration.effectiveBudget
        let balance = dataBalance ?? BudgetBalance(balance: b.dataCapacity, at: now)
        dataBalance = balance.drawn(Double(bytes), at: now, rate: b.dataRate, capacity: b.dataCapacity)
        budgetDrawn(at: now)
    }

    /// A natural app-refresh run that took `duration` seconds draws them from the energy budget
    /// (usage model only).
    private mutating func drawEnergy(_ run: BackgroundLaunch, duration: TimeInterval, at end: Date) {
        guard budgetsApply, !run.simulated else { return }
        let b = configuration.effectiveBudget
        let balance = energyBalance ?? BudgetBalance(balance: b.energyCapacity, at: end)
        energyBalance = balance.drawn(max(0, duration), at: end, rate: b.energyRate, capacity: b.energyCapacity)
    }

    /// A budget was drawn at `now`: a pending opportunity before the budgets refill is drawn
    /// again from the refill.
    private mutating func budgetDrawn(at now: Date) {
        guard launchesAllowed, var request = pending, configuration.opportunity.empirical == nil,
            let refill = budgetRefill(after: now)
        else { return }
        if let opportunity = request.opportunity, opportunity >= refill { return }
        drawOpportunities(&request, from: now)
        pending = request
    }

    /// The device's network connection comes or goes: a processing request with
    /// `requiresNetworkConnectivity` starts only while it is there (Apple,
    /// `BGProcessingTaskRequest.requiresNetworkConnectivity`); app refresh does not depend on it.
    /// - Parameters:
    ///   - on: connected.
    ///   - now: virtual instant.
    public mutating func setNetwork(_ on: Bool, at now: Date) {
        advance(to: now)
        networkOff = on ? nil : true
    }

    /// The user turns the screen on (starts using the device) or off (stops), traced `os.screen`
    /// {on, idleAt}.
    ///
    /// The device counts as idle from `effectiveIdleDelay` seconds after the screen went off
    /// (this model's assumption: Apple says only that processing tasks run while the device is
    /// idle). Turning it on while a processing task runs calls that task's expiration handler
    /// now (`os.task.expired` {reason}); the app then has `expirationWarning` seconds to call
    /// `setTaskCompleted` before it is killed (Apple, `BGProcessingTask`: the system expires it
    /// when the user starts using the device; the grace is this model's).
    /// - Parameters:
    ///   - on: true = the user uses the device (screen on).
    ///   - now: virtual instant.
    public mutating func setScreen(_ on: Bool, at now: Date) {
        advance(to: now)
        if on != (screenOffAt == nil) { screenOffAt = on ? nil : now }
        trace.add(
            now, .osScreen,
            [("on", .bool(on)), ("idleAt", .schedulerDate(idleAt))])
        if on, let run = processingRun, processingExpiredAt == nil {
            processingExpiredAt = now
            trace.add(
                now, .osTaskExpired,
                [("identifier", .string(run.identifier)), ("reason", .string("the user started using the device"))])
        }
    }

    // MARK: Observation

    /// The OS trace since the last call, in time order.
    public mutating func drainTrace() -> [(at: Date, event: OSEvent)] { trace.drain() }

    /// Whether the trace holds entries `drainTrace()` has not returned yet.
    var hasTrace: Bool { !trace.isEmpty }

    /// `platform`, `registrationMode`, `processRunning`, `launchPhase`, `pendingIdentifier`,
    /// `earliestBeginDate`, `nextLaunch`, `running`, `backgroundRefresh`, `lowPowerMode`, `forceQuit`.
    public func status() -> [(String, EventValue)] {
        [
            ("platform", .string(platform.rawValue)),
            ("registrationMode", .string(configuration.registrationMode.rawValue)),
            ("processRunning", .bool(processRunning)),
            ("launchPhase", .bool(launchPhase)),
            ("pendingIdentifier", pending.map { .string($0.identifier) } ?? .null),
            ("earliestBeginDate", .schedulerDate(pending?.earliestBeginDate)),
            ("nextLaunch", .schedulerDate(launchesAllowed ? pending?.opportunity : nil)),
            ("running", running.map { .string($0.identifier) } ?? .null),
            ("backgroundRefresh", .bool(refreshEnabled)),
            ("lowPowerMode", .bool(lowPower)),
            ("forceQuit", .bool(forceQuitted)),
        ] + processingStatus
    }

    /// The device and processing fields of `status()`, present once the device left its default
    /// state or a processing request was submitted: `screenOn`, `idleAt`, `charging`, `network`,
    /// `processingIdentifier`, `processingNextLaunch`, `processingRunning`.
    private var processingStatus: [(String, EventValue)] {
        guard processingIdentifier != nil || screenOffAt != nil || externalPower != nil || networkOff != nil else {
            return []
        }
        return [
            ("screenOn", .bool(screenOffAt == nil)), ("idleAt", .schedulerDate(idleAt)),
            ("charging", .bool(externalPower == true)), ("network", .bool(networkOff != true)),
            ("processingIdentifier", processing.map { .string($0.identifier) } ?? .null),
            ("processingNextLaunch", .schedulerDate(processingLaunch(after: Date.distantPast))),
            ("processingRunning", .bool(processingRun != nil)),
        ]
    }

    /// Whether Low Power Mode is on.
    public var lowPowerMode: Bool { lowPower }

    /// Every condition holding the app-refresh request back at `now` (docs/scheduler.md, "Why
    /// hasn't it run?"); pure. In order: the launch handler not registered in time (nothing but an
    /// app update lifts it), a run in flight, no pending request, force-quit, Background App
    /// Refresh off, Low Power Mode (only the user lifts them), then `earliestBeginDate` and the
    /// drawn opportunity (they lift at a known instant).
    /// - Parameter now: virtual instant.
    public func why(at now: Date) -> WhyAnswer {
        var reasons = handlerReasons
        if let run = running {
            reasons.append(PendingReason(.executing, "running", "a run is in flight", until: run.deadline))
        }
        guard let request = pending else {
            let state =
                configuration.registrationMode == .early
                ? "no pending request: the app submits one when it runs (open it)"
                : "no pending request: the handler, which submits the next one, never ran"
            reasons.append(PendingReason(.invalidJobID, "request", state))
            return WhyAnswer(identifier: nil, reasons: reasons, nextLaunch: nil)
        }
        reasons += userReasons(at: now)
        reasons += budgetReasons(at: now)
        if let earliest = request.earliestBeginDate, earliest > now {
            reasons.append(
                PendingReason(
                    .constraintMinimumLatency, "earliestBeginDate", "not yet eligible (earliestBeginDate)",
                    until: earliest))
        }
        if launchesAllowed, reasons.allSatisfy({ $0.condition != "battery" }), let critical = batteryCriticalAt,
            let opportunity = request.opportunity, critical <= max(opportunity, now)
        {
            let percent = Int((configuration.effectiveUsage.criticalBatteryLevel * 100).rounded())
            reasons.append(
                PendingReason(
                    .deviceState, "battery",
                    "the battery drains below \(percent) % at \(critical.osText), before the opportunity: "
                        + "nothing launches until it is charged"))
        }
        if launchesAllowed {
            if let opportunity = request.opportunity, opportunity > now {
                let missed = request.missed.filter { $0 > now }.count
                let passing =
                    missed == 0 ? "" : " (the system lets \(missed) earlier one\(missed == 1 ? "" : "s") pass)"
                reasons.append(
                    PendingReason(
                        .jobSchedulerOptimization, "opportunity",
                        "waiting for the opportunity the system drew\(passing)", until: opportunity))
            } else if request.opportunity == nil {
                let state =
                    configuration.effectiveOpportunityModel == .usage && configuration.opportunity.empirical == nil
                    ? "the system chooses no opportunity: the app is not used enough (open it)"
                    : "the system chooses no opportunity"
                reasons.append(PendingReason(.jobSchedulerOptimization, "opportunity", state))
            }
        }
        return WhyAnswer(identifier: request.identifier, reasons: reasons, nextLaunch: refreshLaunch(after: now))
    }

    /// The identifier of the pending app-refresh request, nil when none.
    public var pendingIdentifier: String? { pending?.identifier }

    /// The `earliestBeginDate` of the pending request, nil when none or unset.
    public var pendingEarliestBeginDate: Date? { pending?.earliestBeginDate }

    /// True when nothing forbids launches: refresh on, Low Power Mode off, not force-quit.
    public var launchesAllowed: Bool { refreshEnabled && !lowPower && !forceQuitted && !batteryCritical }

    /// Whether the user force-quit the app and has not opened it (nor restarted the device) since.
    public var isForceQuit: Bool { forceQuitted }

    /// Whether the Background App Refresh switch is on (`setBackgroundRefreshEnabled(_:at:)`).
    public var backgroundRefreshEnabled: Bool { refreshEnabled }

    // MARK: Processing tasks (BGProcessingTaskRequest)

    /// The app cancels its pending processing request of `identifier`
    /// (`BGTaskScheduler.cancel(taskRequestWithIdentifier:)`, traced `os.request.cancelled`);
    /// nothing when none is pending. A running task is not touched.
    /// - Parameters:
    ///   - identifier: the request's task identifier.
    ///   - now: virtual instant.
    public mutating func cancelProcessing(identifier: String, at now: Date) {
        advance(to: now)
        guard let request = processing, request.identifier == identifier else { return }
        processing = nil
        processingSubmittedAt = nil
        trace.add(
            now, .osRequestCancelled,
            [
                ("identifier", .string(identifier)),
                ("earliestBeginDate", request.earliestBeginDate.map { .date($0) } ?? .null),
            ])
    }

    /// Submits a `BGProcessingTaskRequest` beside the app-refresh request (docs/scheduler.md,
    /// "Processing tasks"; Apple, `BGTaskScheduler.submit(_:)`, `BGProcessingTaskRequest`).
    ///
    /// Checks, in order, as for app refresh: identifier not permitted → `notPermitted` (3); no
    /// handler registered in this process → crash; Background App Refresh off → `unavailable` (1);
    /// another processing identifier pending → `tooManyPendingTaskRequests` (2) (Apple allows 10;
    /// this model holds one, the app's one). The same identifier replaces the pending request
    /// (`os.request.replaced`). Nothing is drawn: the launch is the first instant (on the
    /// `quantum` grid) at which the request is eligible and its conditions hold.
    /// - Parameters:
    ///   - request: the request.
    ///   - now: virtual instant.
    /// - Throws: `SchedulerFailure.rejected(SchedulerError)` or `.crash(.noHandler(identifier))`.
    public mutating func submitProcessing(_ request: ProcessingRequest, at now: Date) throws(SchedulerFailure) {
        advance(to: now)
        let identifier = request.identifier
        try admit(identifier, at: now)
        if let old = processing {
            guard old.identifier == identifier else {
                throw reject(
                    .tooManyPendingTaskRequests("a processing request for \(old.identifier) is already pending"),
                    identifier, now)
            }
            trace.add(
                now, .osRequestReplaced,
                [
                    ("identifier", .string(identifier)),
                    ("previousEarliestBeginDate", .schedulerDate(old.earliestBeginDate)),
                ])
            // The same request again keeps its eligibility floor (its planned launch stands).
            if old != request { processingSubmittedAt = now }
        } else {
            processingSubmittedAt = now
        }
        processing = request
        processingIdentifier = identifier
        trace.add(
            now, .osRequestSubmitted,
            [
                ("identifier", .string(identifier)), ("earliestBeginDate", .schedulerDate(request.earliestBeginDate)),
                ("plannedLaunch", .schedulerDate(processingLaunch(after: now))), ("kind", .string("processing")),
                ("requiresExternalPower", .bool(request.requiresExternalPower)),
                ("requiresNetworkConnectivity", .bool(request.requiresNetworkConnectivity)),
            ])
    }

    /// The pending processing request, nil when none.
    public var pendingProcessing: ProcessingRequest? { processing }

    /// The processing run in flight, nil when none.
    public var runningProcessing: BackgroundLaunch? { processingRun }

    /// Whether the user is using the device (screen on): the state of a new device.
    public var deviceInUse: Bool { screenOffAt == nil }

    /// Whether the device is on external power.
    public var charging: Bool { externalPower == true }

    /// Whether the device has a network connection.
    public var networkAvailable: Bool { networkOff != true }

    /// The instant from which the device counts as idle (the screen off for `effectiveIdleDelay`
    /// seconds), nil while it is in use.
    public var idleAt: Date? { screenOffAt.map { $0.addingTimeInterval(configuration.effectiveIdleDelay) } }

    /// The processing request's launch under the current conditions (pure): the first instant on
    /// the `quantum` grid at or after its submission, its `earliestBeginDate` and `idleAt`, and not
    /// before `now`; nil when nothing is pending, a run is in flight, launches are forbidden (Low
    /// Power Mode, refresh off, force-quit: this model applies the app-refresh conditions), the
    /// device is in use, or power or network is required and missing.
    private func processingLaunch(after now: Date) -> Date? {
        guard launchesAllowed, processingRun == nil, let request = processing, let idle = idleAt else { return nil }
        if request.requiresExternalPower && !charging { return nil }
        if request.requiresNetworkConnectivity && !networkAvailable { return nil }
        let floor = [processingSubmittedAt, request.earliestBeginDate, idle].compactMap { $0 }.max() ?? idle
        let launch = max(configuration.opportunity.grid(floor, delay: 0), now)
        if let critical = batteryCriticalAt, critical <= launch { return nil }
        return launch
    }

    private mutating func launchProcessing(_ request: ProcessingRequest, at now: Date, simulated: Bool)
        -> BackgroundLaunch
    {
        let planned = processingLaunch(after: now)
        processing = nil
        processingSubmittedAt = nil
        coldLaunchIfNeeded(at: now)
        let entered = processRegistered.contains(request.identifier) && handlers[request.identifier] == true
        let budget = configuration.effectiveProcessingBudget
        let grant = BackgroundLaunch(
            identifier: request.identifier, startedAt: now, budget: budget,
            expirationWarning: min(configuration.expirationWarning, budget), handlerRegistered: entered,
            runAttemptCount: 0, simulated: simulated, earliestBeginDate: request.earliestBeginDate)
        trace.add(
            now, .osLaunch,
            [
                ("identifier", .string(request.identifier)), ("budget", .double(budget)),
                ("simulated", .bool(simulated)), ("earliestBeginDate", .schedulerDate(request.earliestBeginDate)),
                ("plannedLaunch", .schedulerDate(planned)), ("kind", .string("processing")),
            ])
        lastDroppedLaunch = entered ? nil : now
        if entered {
            processingRun = grant
            processingExpiredAt = nil
        } else {
            trace.add(
                now, .osLaunchDropped,
                [("identifier", .string(request.identifier)), ("reason", .string("no handler registered in time"))])
        }
        return grant
    }

    /// When the processing run in flight is killed if it has not completed: its budget's end, or
    /// `expirationWarning` seconds after the user started using the device, whichever is first.
    private var processingDeadline: Date? {
        guard let run = processingRun else { return nil }
        let byUse = processingExpiredAt.map { $0.addingTimeInterval(run.expirationWarning) }
        return [run.deadline, byUse].compactMap { $0 }.min()
    }

    private var processingKillReason: String {
        processingExpiredAt == nil
            ? "setTaskCompleted not called within budget"
            : "setTaskCompleted not called after the expiration handler (the user started using the device)"
    }

    private mutating func completeProcessing(
        _ run: BackgroundLaunch, outcome: RunOutcome, duration: TimeInterval, at now: Date
    ) {
        let end = run.startedAt.addingTimeInterval(max(0, duration))
        let deadline = processingDeadline ?? end
        if processingExpiredAt == nil, let budget = run.budget, duration > budget - run.expirationWarning,
            let expiry = run.expirationAt
        {
            trace.add(expiry, .osTaskExpired, [("identifier", .string(run.identifier))])
        }
        if end > deadline {
            kill(run, at: deadline, reason: processingKillReason)
        } else {
            processingRun = nil
            processingExpiredAt = nil
            trace.add(
                end, .osTaskCompleted,
                [
                    ("identifier", .string(run.identifier)), ("success", .bool(outcome == .success)),
                    ("duration", .double(duration)),
                ])
        }
        advance(to: now)
    }

    /// Kills the processing run in flight, if any, with `reason` (traced `os.app.killed`); the
    /// process itself is ended by the caller.
    private mutating func killProcessingRun(at now: Date, reason: String) {
        guard let run = processingRun else { return }
        trace.add(now, .osAppKilled, [("identifier", .string(run.identifier)), ("reason", .string(reason))])
        processingRun = nil
        processingExpiredAt = nil
    }

    /// Every condition holding the processing request back at `now` (docs/scheduler.md, "Why
    /// hasn't it run?"); pure; nil when the app never submitted one. In order: the launch handler
    /// not registered in time, a run in flight, no pending request, force-quit, Background App
    /// Refresh off, Low Power Mode, external power required and missing, network required and
    /// missing, the device in use or not yet idle, then `earliestBeginDate`.
    /// - Parameter now: virtual instant.
    public func whyProcessing(at now: Date) -> WhyAnswer? {
        guard let identifier = processingIdentifier else { return nil }
        var reasons = handlerReasons
        if processingRun != nil, let deadline = processingDeadline {
            reasons.append(PendingReason(.executing, "running", "a processing run is in flight", until: deadline))
        }
        guard let request = processing else {
            let state =
                configuration.registrationMode == .early
                ? "no pending processing request: the app submits one when it runs (open it)"
                : "no pending processing request: the handler, which submits the next one, never ran"
            reasons.append(PendingReason(.invalidJobID, "request", state))
            return WhyAnswer(identifier: identifier, reasons: reasons, nextLaunch: nil)
        }
        reasons += userReasons(at: now)
        if request.requiresExternalPower && !charging {
            reasons.append(
                PendingReason(
                    .constraintCharging, "requiresExternalPower",
                    "requires external power (requiresExternalPower): the device is not charging"))
        }
        if request.requiresNetworkConnectivity && !networkAvailable {
            reasons.append(
                PendingReason(
                    .constraintConnectivity, "requiresNetworkConnectivity",
                    "requires network connectivity (requiresNetworkConnectivity): no network"))
        }
        if let idle = idleAt {
            if idle > now {
                reasons.append(
                    PendingReason(
                        .constraintDeviceIdle, "deviceIdle", "the device is not idle yet (the screen went off)",
                        until: idle))
            }
        } else {
            reasons.append(
                PendingReason(
                    .constraintDeviceIdle, "deviceIdle",
                    "the device is in use: a processing task runs only while it is idle"))
        }
        if let earliest = request.earliestBeginDate, earliest > now {
            reasons.append(
                PendingReason(
                    .constraintMinimumLatency, "earliestBeginDate", "not yet eligible (earliestBeginDate)",
                    until: earliest))
        }
        return WhyAnswer(identifier: identifier, reasons: reasons, nextLaunch: processingLaunch(after: now))
    }

    /// The `handler` reason of `why` and `whyProcessing`: empty when the app registers early.
    private var handlerReasons: [PendingReason] {
        switch configuration.registrationMode {
        case .early: return []
        case .lateSilent:
            let state =
                lastDroppedLaunch == nil
                ? "the launch handler is registered after launch finished: the OS will launch, the handler is never entered"
                : "handler not registered in time: it is never entered"
            return [PendingReason(.handlerNotRegisteredInTime, "handler", state, launchedAt: lastDroppedLaunch)]
        case .lateCrash:
            let state =
                lastDroppedLaunch == nil
                ? "the launch handler is registered after launch finished: the app crashes at each launch"
                : "the app crashed registering its handler after launch finished"
            return [PendingReason(.handlerNotRegisteredInTime, "handler", state, launchedAt: lastDroppedLaunch)]
        }
    }

    /// The reasons only the user lifts, shared by `why` and `whyProcessing`: force-quit,
    /// Background App Refresh off, Low Power Mode, a critically low battery (at `now`).
    private func userReasons(at now: Date) -> [PendingReason] {
        var reasons: [PendingReason] = []
        if forceQuitted {
            reasons.append(
                PendingReason(
                    .user, "forceQuit", "the user force-quit the app: nothing launches until the user opens it"))
        }
        if !refreshEnabled {
            reasons.append(PendingReason(.backgroundRestriction, "backgroundRefresh", "Background App Refresh is off"))
        }
        if lowPower { reasons.append(PendingReason(.deviceState, "lowPower", "Low Power Mode is on")) }
        if batteryCritical(level: batteryLevel(at: now)) {
            let percent = Int((configuration.effectiveUsage.criticalBatteryLevel * 100).rounded())
            reasons.append(
                PendingReason(
                    .deviceState, "battery", "the battery is critically low (below \(percent) %): essential work only"))
        }
        return reasons
    }

    /// The energy and data budgets overdrawn at `now`, each until it is back to zero (usage model).
    private func budgetReasons(at now: Date) -> [PendingReason] {
        var reasons: [PendingReason] = []
        if let until = energyRefill(after: now) {
            reasons.append(
                PendingReason(
                    .quota, "energyBudget",
                    "the energy budget for background runs is used up: it refills through the day", until: until))
        }
        if let until = dataRefill(after: now) {
            reasons.append(
                PendingReason(
                    .quota, "dataBudget",
                    "the data budget for background runs is used up: it refills through the day", until: until))
        }
        return reasons
    }

    // MARK: Internals

    /// Traces what happened up to `now`: opportunities the OS let pass, and the kill of a run
    /// whose budget ran out (deadline ≤ now) without `setTaskCompleted`.
    private mutating func advance(to now: Date) {
        advanceBattery(to: now)
        if let run = running, let deadline = run.deadline, deadline <= now {
            kill(run, reason: "setTaskCompleted not called within budget")
        }
        if let run = processingRun, let deadline = processingDeadline, deadline <= now {
            kill(run, at: deadline, reason: processingKillReason)
        }
        guard var request = pending else { return }
        while let missed = request.missed.first, missed <= now {
            trace.add(
                missed, .osOpportunityMissed,
                [("identifier", .string(request.identifier)), ("reason", .string("not chosen by the system"))])
            request.missed.removeFirst()
        }
        pending = request
    }

    private mutating func drawOpportunities(_ request: inout Pending, from now: Date) {
        let model = configuration.opportunity
        request.missed = []
        request.opportunity = nil
        var eligible = max(now, request.earliestBeginDate ?? now)
        if let empirical = model.empirical {
            // One draw of the whole fitted wait; nil: the OS never launches this request.
            request.opportunity = empirical.draw(daysSinceOpen: daysSinceOpen(at: eligible), using: &rng).map {
                model.grid(eligible, delay: $0)
            }
            return
        }
        if configuration.effectiveOpportunityModel == .usage {
            let usage = configuration.effectiveUsage
            if let last = lastRefreshLaunch { eligible = max(eligible, last.addingTimeInterval(usage.minimumSpacing)) }
            if let refill = budgetRefill(after: now) { eligible = max(eligible, refill) }
            let floor = eligible
            request.opportunity = usage.draw(
                from: floor, opens: userOpens ?? [], meanDelay: model.meanDelay,
                grid: { model.grid(floor, delay: $0.timeIntervalSince(floor)) }, using: &rng)
            return
        }
        guard model.missProbability < 1 else { return }
        while true {
            let t = model.draw(from: eligible, using: &rng)
            if rng.schedulerUnitInterval() < model.missProbability {
                request.missed.append(t)
                eligible = t
            } else {
                request.opportunity = t
                return
            }
        }
    }

    /// `announced`: the user's own input changed them, and the app writes that input's event
    /// (`os.low_power`, `os.force_quit`, …), so the trace adds none: one change, one event.
    private mutating func conditionsChanged(at now: Date, wasAllowed: Bool, announced: Bool = false) {
        if !announced {
            trace.add(
                now, .osConditionsChanged,
                [
                    ("backgroundRefresh", .bool(refreshEnabled)), ("lowPowerMode", .bool(lowPower)),
                    ("forceQuit", .bool(forceQuitted)),
                ])
        }
        guard var request = pending, wasAllowed != launchesAllowed else { return }
        if launchesAllowed {
            drawOpportunities(&request, from: now)
        } else {
            request.missed = []
            request.opportunity = nil
        }
        pending = request
    }

    /// A background launch while no process runs is a cold launch: the app's code registers
    /// again as it did last time.
    private mutating func coldLaunchIfNeeded(at now: Date) {
        guard !processRunning else { return }
        processRunning = true
        launchPhase = false
        processRegistered = Set(handlers.keys)
        trace.add(now, .osAppLaunched, [("byUser", .bool(false))])
    }

    private mutating func launch(_ request: Pending, at now: Date, simulated: Bool) -> BackgroundLaunch {
        pending = nil
        coldLaunchIfNeeded(at: now)
        let entered = processRegistered.contains(request.identifier) && handlers[request.identifier] == true
        let grant = BackgroundLaunch(
            identifier: request.identifier, startedAt: now, budget: configuration.runtimeBudget,
            expirationWarning: configuration.expirationWarning, handlerRegistered: entered, runAttemptCount: 0,
            simulated: simulated, earliestBeginDate: request.earliestBeginDate)
        trace.add(
            now, .osLaunch,
            [
                ("identifier", .string(request.identifier)), ("budget", .double(configuration.runtimeBudget)),
                ("simulated", .bool(simulated)), ("earliestBeginDate", .schedulerDate(request.earliestBeginDate)),
                ("plannedLaunch", .schedulerDate(request.opportunity)),
            ])
        lastDroppedLaunch = entered ? nil : now
        if !simulated && configuration.effectiveOpportunityModel == .usage { lastRefreshLaunch = now }
        if entered {
            running = grant
        } else {
            trace.add(
                now, .osLaunchDropped,
                [("identifier", .string(request.identifier)), ("reason", .string("no handler registered in time"))])
        }
        return grant
    }

    private mutating func kill(_ run: BackgroundLaunch, at instant: Date? = nil, reason: String) {
        let at = instant ?? run.deadline ?? run.startedAt
        trace.add(at, .osAppKilled, [("identifier", .string(run.identifier)), ("reason", .string(reason))])
        endProcess()
    }

    /// The app process is gone: no run, no launch phase, no registrations of its own.
    private mutating func endProcess() {
        running = nil
        processingRun = nil
        processingExpiredAt = nil
        processRunning = false
        launchPhase = false
        processRegistered = []
    }

    private mutating func crash(_ crash: LaunchHandlerCrash, at now: Date) -> LaunchHandlerCrash {
        trace.add(now, .osAppCrashed, [("message", .string(crash.message))])
        running = nil
        processingRun = nil
        processingExpiredAt = nil
        processRunning = false
        launchPhase = false
        processRegistered = []
        return crash
    }

    private mutating func reject(_ error: SchedulerError, _ identifier: String, _ now: Date) -> SchedulerFailure {
        trace.add(
            now, .osRequestRejected,
            [
                ("identifier", .string(identifier)), ("code", .int(Int64(error.code))), ("error", .string(error.name)),
                ("reason", .string(error.reason)),
            ])
        return .rejected(error)
    }
}

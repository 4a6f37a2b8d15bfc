// SPDX-License-Identifier: Apache-2.0

public import Foundation
public import SleepTapOS

/// Virtual seconds each step of the consolidated refresh job costs, charged against the
/// background task's budget. The weather step costs what the provider reports.
package struct StepCosts: Equatable, Sendable {
    /// Submitting the next background request, seconds.
    package var renew: TimeInterval = 0.1
    /// Updating the bedtime notices, seconds.
    package var notices: TimeInterval = 0.1
    /// Making and sending the watch's wake-date batch, seconds.
    package var dates: TimeInterval = 0.2
    /// Updating the sunlight notice, seconds.
    package var sunlight: TimeInterval = 0.05
    /// Bytes a weather fetch transfers (request and response: a 2-day hourly forecast of four
    /// variables), drawn from the iOS data budget when a background run fetches (default 8,000;
    /// this project's assumption).
    package var weatherBytes = 8_000
    /// Costs of the job's steps in virtual seconds; the defaults are 0.1, 0.1, 0.2 and 0.05.
    package init(
        renew: TimeInterval = 0.1, notices: TimeInterval = 0.1, dates: TimeInterval = 0.2, sunlight: TimeInterval = 0.05
    ) {
        self.renew = renew
        self.notices = notices
        self.dates = dates
        self.sunlight = sunlight
    }
}

/// The phone app's settings that do not change while it runs.
public struct PhoneAppConfiguration: Sendable {
    /// The one registered refresh task (this project's rule: one consolidated job).
    public var taskIdentifier = "net.sleeptap.refresh"
    /// Local days of wake-ups per batch.
    public var horizonDays = BatchPlanner.defaultHorizonDays
    /// Virtual seconds each step of the job costs.
    package var stepCosts = StepCosts()
    /// When the weather step fetches and how long a forecast is cached (docs/weather.md).
    public var weatherPolicy = WeatherPolicy()
    /// When the sunlight notice is planned (docs/weather.md).
    public var sunlightPolicy = SunlightPolicy()
    /// The device's name in its run records (`RunRecord.device`); nil = `phone-` and the device
    /// seed in 16 hex digits, stable for a state dir.
    public var deviceID: String?
    /// The app's version in its run records (`RunRecord.appVersion`, `phone --app-version`);
    /// nil = not recorded.
    public var appVersion: String?
    /// Android: the user asked for a companion phone alarm (`phone --phone-alarm on`): the app
    /// sets a `setAlarmClock()` alarm for the next wake-up (docs/scheduler.md, "Alarms"); the
    /// watch rings either way. Default false.
    public var phoneAlarm = false
    /// iOS: the app also registers a `BGProcessingTask` and, at each run of the job, submits a
    /// nightly `BGProcessingTaskRequest` on the charger (`requiresExternalPower`), which runs the
    /// same job (`phone --processing-task on`; docs/scheduler.md, "Processing tasks"). Default false.
    public var processingTask = false
    /// The processing task's identifier (listed in `BGTaskSchedulerPermittedIdentifiers`).
    public var processingIdentifier = "net.sleeptap.processing"
    /// Whether the app's OS trace includes `os.why` whenever the answer to "why hasn't it run?"
    /// changes (`SimulatedOS.drainTrace(sayingWhy:)`). Default true: the processes and the twin
    /// say it; a fleet simulation, which reads only launches and run records off its twins,
    /// turns it off so that the answer is not computed after every call into the OS
    /// (docs/performance.md). Nothing else the app does depends on it.
    public var saysWhy = true

    /// Hours before the refresh request's earliestBeginDate (the next wake-up + 1 h) from which
    /// the nightly processing request is eligible: 12, so it runs the night before (this
    /// project's choice).
    public static let processingLeadHours: TimeInterval = 12

    /// The defaults: task `net.sleeptap.refresh`, a 7-day horizon, the default costs and policies.
    public init() {}
}

/// The phone app, sans I/O: launch and registration, the consolidated refresh job, the
/// foreground refresh when the user opens the app, the run history (`RefreshLog`), on top of a
/// simulated OS scheduler and the sync state machine.
///
/// The job, in this order (this project's rule: once the handler is entered, first renew the next
/// request, then update the bedtime notices and the watch's wake dates, and last try to refresh the
/// weather and the sunlight notice):
/// 1. renew: submit the next request first, earliestBeginDate = next wake-up + 1 h; a failed
///    submit is a `submit.failed` event with the reason, never swallowed;
/// 2. bedtime notices, then the wake-date batch for the watch;
/// 3. weather (`WeatherPolicy`: background only in [06:00, 18:00), 6 h cache, refetch when
///    moved), then the sunlight notice.
///
/// Each step costs virtual seconds (`StepCosts`; the weather step what the provider took). A
/// background run has a budget: when the next step does not fit before the expiration warning,
/// the expiration handler runs: the rest is cancelled, what finished stays done, and the task
/// completes unsuccessfully (`handler.expired`, `handler.completed {success: false}`). The order
/// and the budget are one run's `RefreshJob`; the app performs its actions (`perform(_:_:)`).
///
/// The weather step either asks the provider at once (`WeatherFetch.inline`) or stops the job
/// with a `fetchWeather` action and goes on when `weatherArrived(_:cost:at:)` brings the forecast
/// (`WeatherFetch.deferred`, the phone process): the order of the steps and the budget charged
/// are the same either way.
public struct PhoneApp: Sendable {
    /// The sync state machine (outbox, resend, HELLO answers).
    public private(set) var sync: PhoneCore
    /// The simulated OS the app runs on. It outlives the app: the phone process persists it on
    /// its own (`os.json`) and passes it back in at the next start.
    public var scheduler: SimulatedOS
    /// Where the weather step gets its forecast.
    public let weather: any WeatherProvider
    /// The settings this app was made with.
    public let configuration: PhoneAppConfiguration
    /// The user's wake schedule (the phone reads the schedule file again before every launch).
    public var schedule: WakeSchedule { didSet { resolveZone() } }
    /// Where the phone's zone can come from (`PhoneZone`'s precedence); travel sets `travel`.
    public var zones: PhoneZone { didSet { resolveZone() } }
    /// The phone's current zone: `zones` resolved against `schedule`.
    public private(set) var zone: TimeZone
    /// Where `zone` came from.
    public private(set) var zoneSource: PhoneZone.Source
    /// The phone's current location.
    public var location: Coordinate
    /// Set when the last launch crashed (late-crash registration); cleared by a launch that did not.
    public private(set) var crashed: LaunchHandlerCrash?
    /// Whether the handler was registered in the current launch.
    public private(set) var registered = false
    /// Whether the app process is running (launched and not force-quit or crashed since).
    public private(set) var running = false
    /// The job that stopped at its weather step (`.deferred`), nil when none waits.
    private var suspended: Job?
    /// When the app last ran its job for a watch's REQUEST (not stored: a restarted app starts
    /// afresh).
    public private(set) var lastServedRequest: Date?
    /// The wake-up whose companion alarm `AlarmManager` last refused (`alarm.refused` is said
    /// once per wake-up); not stored.
    private var refusedAlarm: Date?

    /// The tag (`PendingIntent`) of the companion phone alarm.
    public static let alarmTag = "wake-up"

    /// Virtual seconds after a served REQUEST during which another is refused: the app's guard
    /// against a watch that asks too often (this project's choice; no platform documents a limit
    /// for watch messages).
    public static let requestSpacing: TimeInterval = 15 * 60

    /// - Parameters:
    ///   - state: the sync state as loaded from disk, or a fresh one.
    ///   - scheduler: the simulated OS the app runs on.
    ///   - weather: the forecast provider.
    ///   - schedule: the wake schedule.
    ///   - zones: where the phone's zone comes from.
    ///   - location: the phone's location.
    ///   - configuration: the app's settings.
    ///   - randomSeed: seeds the sync core's random epochs (`SplitMix64`).
    public init(
        state: PhoneSyncState, scheduler: SimulatedOS, weather: any WeatherProvider,
        schedule: WakeSchedule, zones: PhoneZone, location: Coordinate,
        configuration: PhoneAppConfiguration = PhoneAppConfiguration(), randomSeed: UInt64 = 0
    ) {
        self.sync = PhoneCore(state: state, randomSeed: randomSeed)
        self.scheduler = scheduler
        self.weather = weather
        self.schedule = schedule
        self.zones = zones
        (self.zone, self.zoneSource) = zones.resolve(schedule: schedule)
        self.location = location
        self.configuration = configuration
    }

    /// An app whose zone is `zone`, whatever its schedule says (as `--time-zone zone`).
    public init(
        state: PhoneSyncState, scheduler: SimulatedOS, weather: any WeatherProvider,
        schedule: WakeSchedule, zone: TimeZone, location: Coordinate,
        configuration: PhoneAppConfiguration = PhoneAppConfiguration(), randomSeed: UInt64 = 0
    ) {
        self.init(
            state: state, scheduler: scheduler, weather: weather, schedule: schedule,
            zones: PhoneZone(flag: zone, machine: zone), location: location, configuration: configuration,
            randomSeed: randomSeed)
    }

    private mutating func resolveZone() {
        (zone, zoneSource) = zones.resolve(schedule: schedule)
    }

    /// The durable sync state (the sync core's `state`).
    public var state: PhoneSyncState { sync.state }

    /// Whether the installed app registers its handler in `didFinishLaunching`: the OS's record of
    /// the installed app's registration mode is `early` (an update changes it from the next launch).
    public var registersEarly: Bool { scheduler.registrationMode == .early }

    // MARK: launch

    /// The app process launches: didFinishLaunching registers the handler (early), or a SwiftUI
    /// scene registers it after launch finished (late modes, per the scheduler's
    /// `RegistrationMode`, `registersEarly`). A user launch then runs the foreground refresh.
    /// - Returns: actions; `app.crashed` {message} when registration kills the app (late-crash),
    ///   after which nothing else runs in this launch.
    public mutating func launch(at now: Date, byUser: Bool) -> [PhoneAction] {
        let early = registersEarly
        var actions: [PhoneAction] = byUser ? [record(.foreground, at: now)] : []
        // The app build lists its processing task in BGTaskSchedulerPermittedIdentifiers.
        if processingEnabled { scheduler.permit(configuration.processingIdentifier) }
        scheduler.appLaunched(at: now, byUser: byUser)
        // A build without the processing task cancels the request an earlier build left
        // pending, else the OS would launch it into no handler (as `--phone-alarm off` cancels
        // an alarm left set).
        if !processingEnabled { scheduler.cancelProcessing(identifier: configuration.processingIdentifier, at: now) }
        actions += drainTrace(at: now)
        crashed = nil
        registered = false
        running = true
        let identifiers =
            [configuration.taskIdentifier] + (processingEnabled ? [configuration.processingIdentifier] : [])
        func register() -> Bool {
            do {
                for identifier in identifiers {
                    let accepted = try scheduler.register(identifier: identifier, at: now)
                    if identifier == configuration.taskIdentifier { registered = accepted }
                    actions += drainTrace(at: now)
                    actions.append(
                        .emit(
                            Event(
                                .handlerRegistered,
                                [
                                    ("identifier", .string(identifier)), ("accepted", .bool(accepted)),
                                    ("phase", .string(early ? "didFinishLaunching" : "after launch")),
                                ]), at: now))
                }
                return true
            } catch {
                crashed = error
                running = false
                actions += drainTrace(at: now)
                actions.append(.emit(Event(.appCrashed, [("message", .string(error.message))]), at: now))
                return false
            }
        }
        if early {
            guard register() else { return actions + drainTrace(at: now) }
            scheduler.finishLaunching(at: now)
            actions += drainTrace(at: now)
        } else {
            scheduler.finishLaunching(at: now)
            actions += drainTrace(at: now)
            guard register() else { return actions + drainTrace(at: now) }
        }
        if byUser {
            actions += foregroundRefresh(at: now, reason: "open")
        }
        return actions + drainTrace(at: now)
    }

    /// Whether the app uses its processing task: `processingTask` on iOS.
    public var processingEnabled: Bool { configuration.processingTask && scheduler.platform == .ios }

    /// Whether `grant` is a launch for the processing task.
    private func isProcessing(_ grant: BackgroundLaunch) -> Bool {
        processingEnabled && grant.identifier == configuration.processingIdentifier
    }

    // MARK: background

    /// The OS's next background launch for this app, nil when none will come.
    public func nextBackgroundLaunch(after now: Date) -> Date? {
        scheduler.nextLaunch(after: now)
    }

    /// The OS launches the app in the background at `now` (it is due): the app process starts
    /// (registration as in `launch`), then the OS hands over the task; the handler runs the job
    /// only if it was registered in time.
    public mutating func backgroundLaunchDue(at now: Date) -> [PhoneAction] {
        var actions = launch(at: now, byUser: false)
        if crashed != nil {
            // The OS launched the app for its request and the app died: the request is spent.
            scheduler.launchCrashed(at: now)
            return actions + drainTrace(at: now)
        }
        guard let grant = scheduler.takeLaunch(at: now) else { return actions + drainTrace(at: now) }
        actions += drainTrace(at: now)
        guard grant.handlerRegistered else { return actions + [dropped(grant, at: now)] }
        actions += runJob(grant, at: now)
        return actions + drainTrace(at: now)
    }

    /// The debugger's simulate-launch: run the job now, whatever the scheduler planned.
    public mutating func simulateLaunch(at now: Date) -> [PhoneAction] {
        guard let grant = scheduler.simulateLaunch(identifier: configuration.taskIdentifier, at: now) else {
            return drainTrace(at: now)
        }
        var actions = drainTrace(at: now)
        if grant.handlerRegistered {
            actions += runJob(grant, at: now)
        } else {
            actions.append(dropped(grant, at: now))
        }
        return actions + drainTrace(at: now)
    }

    /// The debugger's simulate-launch followed by simulate-expiration
    /// (`_simulateExpirationForTaskWithIdentifier:`): the task starts, renews, and then its
    /// expiration handler runs.
    public mutating func simulateExpiration(at now: Date) -> [PhoneAction] {
        guard let grant = scheduler.simulateLaunch(identifier: configuration.taskIdentifier, at: now) else {
            return drainTrace(at: now)
        }
        var actions = drainTrace(at: now)
        if grant.handlerRegistered {
            actions += runJob(grant, at: now, forceExpiration: true)
        } else {
            actions.append(dropped(grant, at: now))
        }
        return actions + drainTrace(at: now)
    }

    // MARK: a message from the paired watch

    /// The paired watch asks for dates (a REQUEST, docs/protocol.md): the OS decides whether the
    /// app gets the message (`SimulatedOS.watchMessage`, docs/scheduler.md "A message from the
    /// watch"); a woken app that is not running launches in the background (registration as in
    /// `launch`: a late registration is accepted, or crashes the app in late-crash mode) and runs
    /// the consolidated job within the OS's budget. The batch the job publishes is the answer.
    ///
    /// - Returns: actions: `request.refused` {id, reason} and an ERROR to the watch when the app
    ///   does not run the job (another REQUEST was served less than `requestSpacing` ago, the OS
    ///   did not wake the app, the app crashed at launch); otherwise the job's actions, ending
    ///   with `request.served` {id, success, duration, seq} (and an ERROR when the run published
    ///   no batch).
    public mutating func watchRequest(_ request: DateRequest, at now: Date) -> [PhoneAction] {
        if let last = lastServedRequest, now.timeIntervalSince(last) < Self.requestSpacing, now >= last {
            return refuse(
                request,
                "another REQUEST was served at \(ISO8601.string(last)); at most one per \(Int(Self.requestSpacing)) s",
                at: now)
        }
        let appRunning = running && crashed == nil
        let delivery = scheduler.watchMessage(at: now, appRunning: appRunning)
        var actions = drainTrace(at: now)
        guard delivery.woken else {
            return actions
                + refuse(request, "the phone's OS did not wake the app: \(delivery.reason ?? "not delivered")", at: now)
        }
        if !appRunning {
            actions += launch(at: now, byUser: false)
            if let crashed {
                return actions + refuse(request, "the app crashed at launch: \(crashed.message)", at: now)
            }
        }
        lastServedRequest = now
        let budget = delivery.budget.map { max(0, $0 - delivery.expirationWarning) }
        var job = newJob(at: now, grant: nil, foreground: false, attempt: 0)
        job.request = request
        job.requestBudget = delivery.budget
        return actions + startJob(job, budget: budget) + drainTrace(at: now)
    }

    // MARK: a server push

    /// A server push reaches the device (docs/scheduler.md, "A server push"): the OS decides
    /// whether and when the app gets it (`SimulatedOS.backgroundPush`); delivered now, the app
    /// (launched in the background when it is not running) runs the consolidated job within the
    /// OS's budget; deferred by Doze (Android, normal priority), it comes with the OS's next
    /// timed activity (`alarmsDue(at:)`).
    /// - Returns: actions: `push.refused` {priority, reason} when the app does not get it,
    ///   `push.deferred` {priority, until} when it waits for Doze, else `runPush`'s.
    public mutating func pushReceived(_ priority: PushPriority, at now: Date) -> [PhoneAction] {
        let appRunning = running && crashed == nil
        let delivery = scheduler.backgroundPush(priority: priority, at: now, appRunning: appRunning)
        let actions = drainTrace(at: now)
        guard delivery.woken, let at = delivery.deliverAt else {
            let reason = delivery.reason ?? "not delivered"
            return actions
                + [
                    .emit(
                        Event(.pushRefused, [("priority", .string(priority.rawValue)), ("reason", .string(reason))]),
                        at: now)
                ]
        }
        guard at <= now else {
            return actions
                + [
                    .emit(
                        Event(.pushDeferred, [("priority", .string(priority.rawValue)), ("until", .date(at))]), at: now)
                ]
        }
        return actions + runPush(priority, delivery, at: now)
    }

    /// The app gets a push at `now`: `push.received` {priority, budget}, a background launch
    /// when it is not running, and the job (run history kind `push`; at its end a `push` run
    /// record, which answers no request, docs/metrics.md).
    private mutating func runPush(_ priority: PushPriority, _ delivery: PushDelivery, at now: Date) -> [PhoneAction] {
        var actions: [PhoneAction] = []
        if !(running && crashed == nil) {
            actions += launch(at: now, byUser: false)
            if let crashed {
                let reason = "the app crashed at launch: \(crashed.message)"
                return actions
                    + [
                        .emit(
                            Event(
                                .pushRefused, [("priority", .string(priority.rawValue)), ("reason", .string(reason))]),
                            at: now)
                    ]
            }
        }
        actions.append(
            .emit(
                Event(
                    .pushReceived,
                    [
                        ("priority", .string(priority.rawValue)),
                        ("budget", delivery.budget.map { .double($0) } ?? .null),
                    ]), at: now))
        let budget = delivery.budget.map { max(0, $0 - delivery.expirationWarning) }
        var job = newJob(at: now, grant: nil, foreground: false, attempt: 0)
        job.push = true
        return actions + startJob(job, budget: budget) + drainTrace(at: now)
    }

    private func refuse(_ request: DateRequest, _ reason: String, at now: Date) -> [PhoneAction] {
        [
            .emit(
                Event(.requestRefused, [("id", .int(Int64(clamping: request.id))), ("reason", .string(reason))]),
                at: now),
            .send(.error(reason: "REQUEST \(request.id) not served: \(reason)")),
        ]
    }

    /// The consolidated job for one background grant.
    mutating func runJob(_ grant: BackgroundLaunch, at now: Date, forceExpiration: Bool = false) -> [PhoneAction] {
        var budget = grant.budget.map { max(0, $0 - grant.expirationWarning) }
        // The debugger's simulate-expiration: the expiration handler fires right after renew.
        if forceExpiration { budget = configuration.stepCosts.renew }
        let entered = Event(
            .handlerEntered,
            [
                ("identifier", .string(grant.identifier)),
                ("budget", grant.budget.map { .double($0) } ?? .null),
                ("simulated", .bool(grant.simulated)), ("runAttemptCount", .int(Int64(grant.runAttemptCount))),
            ])
        let job = newJob(at: now, grant: grant, foreground: false, attempt: grant.runAttemptCount)
        return [.emit(entered, at: now)] + startJob(job, budget: budget)
    }

    // MARK: foreground

    /// Travel: the phone's zone becomes `zone`. A running app refreshes at once (wall-clock wake
    /// times are kept: 07:00 stays 07:00); an app that is not running picks the zone up at its
    /// next launch (`refresh.deferred`). The zone is the device's: it is kept with the simulated
    /// OS (`SimulatedOS.timeZoneIdentifier`, os.json) and outlives the app.
    public mutating func travel(to zone: TimeZone, at now: Date) -> [PhoneAction] {
        zones.travel = zone
        scheduler.setTimeZone(zone)  // the device's zone, kept with the OS (os.json)
        guard running, crashed == nil else {
            return [
                .emit(
                    Event(
                        .refreshDeferred,
                        [("reason", .string("the app is not running; the new zone applies at its next launch"))]),
                    at: now)
            ]
        }
        return foregroundRefresh(at: now, reason: "time-zone")
    }

    /// The pending notifications that have not fired by `now` on the device's wall clock (the OS
    /// drops delivered ones; a notice fires when the wall clock reads its `fireDate`).
    public func pendingNotifications(at now: Date) -> [NotificationRecord] {
        let wallNow = scheduler.wallClock(at: now)
        return state.notifications.records.filter { $0.fireDate > wallNow }
    }

    /// The user opened the app (already running): the same steps, no budget; the weather is
    /// refreshed when the cache expired or the location moved, otherwise the sunlight plan is
    /// recomputed from the cache.
    public mutating func foregroundRefresh(at now: Date, reason: String) -> [PhoneAction] {
        let started = Event(
            .refreshForeground,
            [
                ("reason", .string(reason)), ("timeZone", .string(zone.identifier)),
                (
                    "earliestBeginDate",
                    RefreshPlanner.earliestBeginDate(after: scheduler.wallClock(at: now), schedule: schedule, in: zone)
                        .map { .date($0) } ?? .null
                ),
            ])
        return [.emit(started, at: now)]
            + startJob(newJob(at: now, grant: nil, foreground: true, attempt: 0), budget: nil)
    }

    /// The batch of the schedule as it stands, made again at `now` after the state write that
    /// carried the last one failed: the bedtime notices and the wake dates (steps 2 of the job),
    /// no renew, no weather, no run record (it is not a launch).
    /// - Returns: one write of notices and batch, then `batch.generated` and the send.
    public mutating func republish(at now: Date) -> [PhoneAction] {
        let wallNow = scheduler.wallClock(at: now)
        let plan = RefreshPlan.make(
            schedule: schedule, zone: zone, now: wallNow, horizonDays: configuration.horizonDays,
            deviceSeed: sync.state.deviceSeed)
        let actions = post(
            plan.notices, prefix: BedtimeNoticePlanner.idPrefix, removingDeliveredBefore: wallNow, at: now)
        return actions + sync.publish(entries: plan.entries, generatedAt: wallNow, timeZone: zone.identifier, at: now)
    }

    // MARK: the steps

    /// How the job's weather step gets its forecast.
    public enum WeatherFetch: Sendable {
        /// The job asks `weather` itself and runs to its end in one call (unit tests of the job).
        case inline
        /// The job stops at the weather step with `PhoneAction.fetchWeather` and goes on when
        /// `weatherArrived(_:cost:at:)` brings the result (the phone process fetches off its socket
        /// thread, so a slow network never stalls the link).
        case deferred
    }

    /// How the weather step gets its forecast (default `.inline`).
    public var weatherFetch = WeatherFetch.inline

    /// Whether a job stopped at its weather step and waits for `weatherArrived(_:cost:at:)`.
    public var awaitsWeather: Bool { suspended != nil }

    /// One run of the job, from its start to its end (across a wait for the weather): the step
    /// machine (`RefreshJob`) and what the app needs to perform its steps.
    struct Job: Sendable {
        /// Which step comes next and whether it fits the budget.
        var machine: RefreshJob
        /// The virtual instant the run started; every step runs at it (its costs are charged, not
        /// waited for).
        let now: Date
        /// The background grant; nil for a foreground refresh and a watch's REQUEST.
        let grant: BackgroundLaunch?
        let foreground: Bool
        /// Android's `runAttemptCount` (0 in the foreground).
        let attempt: Int
        /// The notices and wake dates, made at the notices step.
        var plan: RefreshPlan?
        /// The forecast (or the provider's error) and what it cost, once it arrived.
        var forecast: WeatherOutcome?
        var fetchReason = ""
        /// The watch's REQUEST this run answers (the OS woke the app for it), nil otherwise.
        var request: DateRequest?
        /// The OS's budget for that run (seconds, nil = no limit).
        var requestBudget: TimeInterval?
        /// Whether the run is for a server push (`pushReceived`).
        var push = false
        /// The seq of the batch this run published, nil before the dates step.
        var published: UInt64?

        init(costs: StepCosts, now: Date, grant: BackgroundLaunch?, foreground: Bool, attempt: Int) {
            self.machine = RefreshJob(costs: costs)
            self.now = now
            self.grant = grant
            self.foreground = foreground
            self.attempt = attempt
        }
    }

    /// A new run at `now` (`RefreshJob` with this app's step costs).
    private func newJob(at now: Date, grant: BackgroundLaunch?, foreground: Bool, attempt: Int) -> Job {
        Job(costs: configuration.stepCosts, now: now, grant: grant, foreground: foreground, attempt: attempt)
    }

    /// Starts `job` with `budget` virtual seconds (nil = no limit) and performs its steps until it
    /// ends or waits for the weather.
    private mutating func startJob(_ job: Job, budget: TimeInterval?) -> [PhoneAction] {
        var job = job
        let action = job.machine.start(budget: budget)
        // A job starts in the step that made it: its events are stamped with its own instant.
        return perform(action, job, at: job.now)
    }

    /// The one place the job's steps (`RefreshJob.Action`) become the app's work and its
    /// `PhoneAction`s: performs `first`, reports its result to the job's machine, and goes on with
    /// the step that returns, until the run ends (`complete`, `abandon`) or waits for the weather
    /// (`.deferred`: the job is kept until `weatherArrived(_:cost:at:)` or `abandonJob(at:)`).
    /// Every step runs at the job's start (`Job.now`); what it returns is stamped with `now`, the
    /// virtual instant of the input that performs it (later than the start once the job goes on
    /// after a wait for the weather).
    private mutating func perform(_ first: RefreshJob.Action, _ start: Job, at now: Date) -> [PhoneAction] {
        var job = start
        var action = first
        var actions: [PhoneAction] = []
        let started = job.now
        while true {
            switch action {
            case .renew:
                // 1. renew first; a submit that kills the app (late-crash) ends the run. Steps 1
                // and 2 come before any wait for the weather: they run in the starting step.
                actions += renew(at: started, attempt: recordedAttempt(job), background: job.grant != nil)
                if crashed == nil {
                    actions += renewProcessing(at: started, servingNight: job.grant.map(isProcessing) ?? false)
                }
                action = job.machine.renewed(appAlive: crashed == nil)
            case .postNotices:
                // 2. bedtime notices, then wake dates, planned on the device's wall clock.
                let wallNow = scheduler.wallClock(at: started)
                let plan = RefreshPlan.make(
                    schedule: schedule, zone: zone, now: wallNow, horizonDays: configuration.horizonDays,
                    deviceSeed: sync.state.deviceSeed)
                job.plan = plan
                actions += post(
                    plan.notices, prefix: BedtimeNoticePlanner.idPrefix, removingDeliveredBefore: wallNow, at: now)
                action = job.machine.noticesPosted()
            case .publishDates:
                if let plan = job.plan {
                    // No churn: an OS-launched background run whose dates equal the acknowledged
                    // batch's sends none; a foreground open (the user asked) and a watch REQUEST (the
                    // watch asked, and a REQUEST is answered with a batch) always publish.
                    actions += sync.publish(
                        entries: plan.entries, generatedAt: scheduler.wallClock(at: started),
                        timeZone: zone.identifier, unlessUnchanged: !job.foreground && job.request == nil, at: now)
                    job.published = sync.state.outbox?.seq ?? sync.state.lastSeq
                    actions += companionAlarm(entries: plan.entries, at: started)
                }
                // 3. weather, then the sunlight notice.
                action = job.machine.datesPublished(
                    weather: configuration.weatherPolicy.decide(
                        now: started, zone: zone, location: location, cached: sync.state.weather,
                        foreground: job.foreground))
            case .fetchWeather(let reason):
                job.fetchReason = reason
                switch weatherFetch {
                case .deferred:
                    suspended = job
                    return actions + [.fetchWeather(location: location, at: started)]
                case .inline:
                    let (result, cost) = weather.forecast(for: location, now: started)
                    job.forecast = WeatherOutcome(result: result, cost: cost)
                    action = job.machine.weatherArrived(cost: cost)
                }
            case .skipWeather(let reason):
                actions.append(.emit(Event(.weatherSkipped, [("reason", .string(reason))]), at: now))
                action = job.machine.weatherSkipped()
            case .applyForecast:
                var outcome = RunOutcome.success
                if let forecast = job.forecast {
                    if case .success = forecast.result, job.grant != nil {
                        // The OS counts the fetch against the data budget of background runs.
                        scheduler.recordDataTransfer(
                            bytes: configuration.stepCosts.weatherBytes,
                            at: job.now.addingTimeInterval(job.machine.elapsed))
                    }
                    actions += applyForecast(forecast, reason: job.fetchReason, at: now)
                    if case .failure(let error) = forecast.result, job.grant != nil, scheduler.platform == .android {
                        outcome = WorkerRetryRule.result(networkError: error.isNetwork, runAttemptCount: job.attempt)
                    }
                }
                action = job.machine.forecastApplied(outcome: outcome)
            case .updateSunlight:
                if let plan = job.plan { actions += sunlight(plan: plan, at: now) }
                action = job.machine.sunlightUpdated()
            case .complete(let completion):
                return actions + end(job, completion, at: now)
            case .abandon(let completion):
                return actions + abandoned(job, completion)
            case .none:
                return actions
            }
        }
    }

    /// The forecast the job waits for arrived (`.deferred`): the job goes on from its weather
    /// step (the provider's `cost` is charged now), then the sunlight notice and the end.
    /// - Parameters:
    ///   - result: the forecast, or why the provider gave none.
    ///   - cost: virtual seconds the fetch took.
    ///   - now: the virtual instant (UTC) the forecast arrived, which the actions are stamped with.
    /// - Returns: the rest of the job's actions; none when no job waits.
    public mutating func weatherArrived(
        _ result: Result<Forecast, WeatherError>, cost: TimeInterval, at now: Date
    ) -> [PhoneAction] {
        guard var job = suspended else { return [] }
        suspended = nil
        job.forecast = WeatherOutcome(result: result, cost: cost)
        let action = job.machine.weatherArrived(cost: cost)
        return perform(action, job, at: now) + drainTrace(at: now)
    }

    /// Ends a job that waits for the weather without its remaining steps, because a write before
    /// the fetch failed: the OS hears that the run failed, and a background run keeps its run
    /// record (`success: false`); nothing is written to the state file.
    /// - Parameter now: the virtual instant (UTC) of the failed write, which the actions are
    ///   stamped with.
    /// - Returns: the OS's trace of the failed completion (`os.task.completed`, `os.work.completed`).
    @discardableResult
    public mutating func abandonJob(at now: Date) -> [PhoneAction] {
        guard var job = suspended else { return [] }
        suspended = nil
        let action = job.machine.abandon()
        return perform(action, job, at: now) + drainTrace(at: now)
    }

    /// An abandoned run (`abandonJob(at:)`): a background run's OS completion and its run record.
    private mutating func abandoned(_ job: Job, _ completion: RefreshJob.Completion) -> [PhoneAction] {
        guard let grant = job.grant else { return [] }
        let end = job.now.addingTimeInterval(completion.elapsed)
        scheduler.complete(grant, outcome: completion.outcome, duration: completion.elapsed, at: end)
        // The run happened: its record says it failed (the report counts it).
        return [
            record(
                .background, at: end, earliestBeginDate: grant.earliestBeginDate, success: false, expired: false,
                attempt: recordedAttempt(grant))
        ]
    }

    /// The weather step's result: a forecast is cached (`weather.fetched`), an error said
    /// (`weather.failed`).
    private mutating func applyForecast(_ forecast: WeatherOutcome, reason: String, at now: Date) -> [PhoneAction] {
        switch forecast.result {
        case .success(let value):
            return sync.update { $0.weather = value } + [
                .emit(
                    Event(
                        .weatherFetched,
                        [
                            ("reason", .string(reason)), ("provider", .string(value.source)),
                            ("hours", .int(Int64(value.hours.count))), ("cost", .double(forecast.cost)),
                        ]), at: now)
            ]
        case .failure(let error):
            return [
                .emit(
                    Event(.weatherFailed, [("reason", .string(error.reason)), ("network", .bool(error.isNetwork))]),
                    at: now)
            ]
        }
    }

    /// The end of a run: the expiration handler's event, the OS told the outcome (background),
    /// the run history.
    private mutating func end(_ job: Job, _ completion: RefreshJob.Completion, at now: Date) -> [PhoneAction] {
        let outcome = completion.outcome
        if let request = job.request {
            return finishRequest(job, request, completion, at: now)
        }
        if job.push {
            return finish(
                job.now, completion, success: outcome == .success, kind: .push, outcomeName: outcome.name, grant: nil,
                at: now)
        }
        guard let grant = job.grant else {
            return finish(
                job.now, completion, success: outcome == .success, kind: .foreground, outcomeName: outcome.name,
                grant: nil, at: now)
        }
        var actions: [PhoneAction] = []
        if let expiredAt = completion.expiredAt {
            actions.append(
                .emit(
                    Event(
                        .handlerExpired,
                        [
                            ("step", .string(expiredAt)), ("duration", .double(completion.elapsed)),
                            ("budget", grant.budget.map { .double($0) } ?? .null),
                        ]), at: now))
        }
        // Android: a Worker still working when its quota runs out is stopped by JobScheduler
        // (`onStopJob`, STOP_REASON_QUOTA): the OS hears the run went past the budget.
        let reported =
            scheduler.platform == .android ? (completion.attempted ?? completion.elapsed) : completion.elapsed
        scheduler.complete(
            grant, outcome: outcome, duration: reported, at: job.now.addingTimeInterval(completion.elapsed))
        // The OS's completion (at the run's end instant) after the app's own handler.completed.
        let kind: RunKind = isProcessing(grant) ? .processing : .background
        return actions
            + finish(
                job.now, completion, success: outcome == .success, kind: kind, outcomeName: outcome.name, grant: grant,
                at: now)
            + drainTrace(at: now)
    }

    /// The end of a run for a watch's REQUEST: `handler.expired` when the budget ran out, the run
    /// history, `request.served`, and an ERROR to the watch when no batch was published.
    private mutating func finishRequest(
        _ job: Job, _ request: DateRequest, _ completion: RefreshJob.Completion, at now: Date
    ) -> [PhoneAction] {
        let success = completion.outcome == .success
        var actions: [PhoneAction] = []
        if let expiredAt = completion.expiredAt {
            actions.append(
                .emit(
                    Event(
                        .handlerExpired,
                        [
                            ("step", .string(expiredAt)), ("duration", .double(completion.elapsed)),
                            ("budget", job.requestBudget.map { .double($0) } ?? .null),
                        ]), at: now))
        }
        actions += finish(
            job.now, completion, success: success, kind: .watchRequest, outcomeName: success ? "success" : "failure",
            grant: nil, at: now)
        actions.append(
            .emit(
                Event(
                    .requestServed,
                    [
                        ("id", .int(Int64(clamping: request.id))), ("success", .bool(success)),
                        ("duration", .double(completion.elapsed)),
                        ("seq", job.published.map { .int(Int64(clamping: $0)) } ?? .null),
                    ]), at: now))
        if job.published == nil {
            let reason = "REQUEST \(request.id) not served: the run ended before it published dates"
            actions.append(.send(.error(reason: reason)))
        }
        return actions
    }

    /// Step 1: submit the next request. A `submitted` run record is written for a background run's
    /// renewal (the request for the next period) and for any submit that gives the OS a request it
    /// did not hold; a foreground submit that only re-states the pending request is not one
    /// (docs/metrics.md), so that the execution rate counts requests the OS could answer.
    private mutating func renew(at now: Date, attempt: Int?, background: Bool) -> [PhoneAction] {
        // The next wake-up after the device's wall clock (the app's Date()): a clock set back
        // plans from a "now" in the past (docs/scheduler.md, "The user sets the clock").
        let wallNow = scheduler.wallClock(at: now)
        guard let earliest = RefreshPlanner.earliestBeginDate(after: wallNow, schedule: schedule, in: zone) else {
            let reason = "the schedule has no wake-up in the next 8 days"
            return [
                .emit(Event(.submitFailed, [("reason", .string(reason))]), at: now),
                record(.submitFailed, at: now, attempt: attempt, reason: reason),
            ]
        }
        let restated =
            !background
            && scheduler.holdsRequest(identifier: configuration.taskIdentifier, earliestBeginDate: earliest)
        do {
            try scheduler.submit(identifier: configuration.taskIdentifier, earliestBeginDate: earliest, at: now)
            // The OS's os.request.* now, in this step: never left for the next OS activity.
            var actions = drainTrace(at: now) + sync.update { $0.refreshLog.markScheduled(at: now) }
            actions.append(
                .emit(
                    Event(
                        .renewSubmitted,
                        [("identifier", .string(configuration.taskIdentifier)), ("earliestBeginDate", .date(earliest))]
                    ), at: now))
            if !restated { actions.append(record(.submitted, at: now, earliestBeginDate: earliest, attempt: attempt)) }
            return actions
        } catch {
            let trace = drainTrace(at: now)
            switch error {
            case .rejected(let rejection):
                return trace + [
                    .emit(Self.submitFailed(rejection), at: now),
                    record(.submitFailed, at: now, attempt: attempt, reason: rejection.name),
                ]
            case .crash(let crash):
                crashed = crash
                running = false
                return trace + [
                    .emit(Event(.appCrashed, [("message", .string(crash.message))]), at: now),
                    record(.submitFailed, at: now, attempt: attempt, reason: "crash: \(crash.message)"),
                ]
            }
        }
    }

    /// Step 1 for the processing task (`processingEnabled` only): submits the nightly
    /// `BGProcessingTaskRequest` (`requiresExternalPower` true, no network required), eligible
    /// `processingLeadHours` before the refresh request's earliestBeginDate, so the evening before
    /// the next wake-up; once that night is served (this run is a processing run, or one ended
    /// after that instant) the next evening's. A submit that only re-states the pending request is
    /// skipped. No run record: the records count the app-refresh requests (docs/metrics.md).
    private mutating func renewProcessing(at now: Date, servingNight: Bool) -> [PhoneAction] {
        guard processingEnabled else { return [] }
        let wallNow = scheduler.wallClock(at: now)
        guard let refreshEarliest = RefreshPlanner.earliestBeginDate(after: wallNow, schedule: schedule, in: zone)
        else { return [] }
        let lead = Self.processingLead
        var earliest = refreshEarliest.addingTimeInterval(-lead)
        let lastProcessing = state.refreshLog.history.last { $0.kind == .processing }?.at
        if servingNight || (lastProcessing.map { $0 >= earliest } ?? false) {
            earliest = refreshEarliest.addingTimeInterval(lead)
        }
        let request = ProcessingRequest(
            identifier: configuration.processingIdentifier, earliestBeginDate: earliest, requiresExternalPower: true)
        guard !scheduler.holdsProcessing(request) else { return [] }
        do {
            try scheduler.submitProcessing(request, at: now)
            return drainTrace(at: now) + [
                .emit(
                    Event(
                        .renewSubmitted,
                        [("identifier", .string(request.identifier)), ("earliestBeginDate", .date(earliest))]), at: now)
            ]
        } catch {
            let trace = drainTrace(at: now)
            switch error {
            case .rejected(let rejection):
                return trace + [.emit(Self.submitFailed(rejection), at: now)]
            case .crash(let crash):
                crashed = crash
                running = false
                return trace + [.emit(Event(.appCrashed, [("message", .string(crash.message))]), at: now)]
            }
        }
    }

    /// `submit.failed` for a request the OS refused: its reason, Apple's error name and code.
    private static func submitFailed(_ rejection: SchedulerError) -> Event {
        Event(
            .submitFailed,
            [
                ("reason", .string(rejection.reason)), ("error", .string(rejection.name)),
                ("code", .int(Int64(rejection.code))),
            ])
    }

    /// `PhoneAppConfiguration.processingLeadHours` in seconds.
    private static var processingLead: TimeInterval { PhoneAppConfiguration.processingLeadHours * 3_600 }

    private mutating func sunlight(plan: RefreshPlan, at now: Date) -> [PhoneAction] {
        guard let wake = plan.entries.first else {
            return [.emit(Event(.sunlightSkipped, [("reason", .string("no wake-up ahead"))]), at: now)]
        }
        switch SunlightPlanner.plan(
            wake: wake.wake, location: location, zone: zone, forecast: sync.state.weather,
            policy: configuration.sunlightPolicy)
        {
        case .notice(let record):
            return post([record], prefix: SunlightPlanner.idPrefix, removingDeliveredBefore: nil, at: now)
        case .none(let reason):
            var actions = sync.update { state in
                state.notifications.replace(prefix: SunlightPlanner.idPrefix, with: [])
            }
            actions.append(.emit(Event(.sunlightSkipped, [("reason", .string(reason))]), at: now))
            return actions
        }
    }

    private mutating func finish(
        _ started: Date, _ run: RefreshJob.Completion, success: Bool, kind: RunKind, outcomeName: String,
        grant: BackgroundLaunch?, at now: Date
    ) -> [PhoneAction] {
        let end = started.addingTimeInterval(run.elapsed)
        let lowPower = scheduler.lowPowerMode
        let bucket = scheduler.standbyBucket?.rawValue
        var actions = sync.update { state in
            state.refreshLog.markCompleted(
                at: end, scheduledAt: grant?.earliestBeginDate, success: success, lowPower: lowPower, bucket: bucket,
                kind: kind, duration: run.elapsed)
        }
        if let grant {
            // After markCompleted: a successful run's own record has staleness 0.
            actions.append(
                record(
                    .background, at: end, earliestBeginDate: grant.earliestBeginDate, success: success,
                    expired: run.expiredAt != nil, attempt: recordedAttempt(grant),
                    stopReason: scheduler.stopReason(of: grant)))
        } else if kind == .push {
            // A push's run answers no request: its own kind, no earliestBeginDate (docs/metrics.md).
            actions.append(record(.push, at: end, success: success, expired: run.expiredAt != nil))
        }
        // The end of every run the app got without the user (the ones staleness counts,
        // docs/metrics.md): the refresh task's, the processing task's, a server push's (iOS
        // calls the push's fetch completion handler; Android's onMessageReceived returns).
        if kind == .background || kind == .processing || kind == .push {
            actions.append(
                .emit(
                    Event(
                        .handlerCompleted,
                        [
                            ("success", .bool(success)), ("outcome", .string(outcomeName)),
                            ("duration", .double(run.elapsed)),
                        ]), at: now))
        }
        return actions
    }

    // MARK: run records

    /// The device's name in its run records.
    public var deviceName: String {
        configuration.deviceID ?? "phone-" + String(format: "%016llx", state.deviceSeed)
    }

    /// A run record of the app as it is now (docs/metrics.md): platform, Low Power, the standby
    /// bucket (Android), the staleness at `at`.
    private func record(
        _ kind: RunRecord.Kind, at: Date, earliestBeginDate: Date? = nil, success: Bool? = nil,
        expired: Bool? = nil, attempt: Int? = nil, reason: String? = nil, stopReason: Int? = nil
    ) -> PhoneAction {
        let platform = scheduler.platform
        return .record(
            RunRecord(
                device: deviceName, platform: platform, kind: kind, at: at, earliestBeginDate: earliestBeginDate,
                success: success, expired: expired, lowPower: scheduler.lowPowerMode,
                bucket: platform == .android ? scheduler.standbyBucket : nil,
                attempt: attempt, stalenessHours: state.refreshLog.stalenessHours(at: at), reason: reason,
                appVersion: configuration.appVersion, stopReason: stopReason))
    }

    /// The OS launched for `grant` but no handler was registered in time.
    private func dropped(_ grant: BackgroundLaunch, at now: Date) -> PhoneAction {
        record(.dropped, at: now, earliestBeginDate: grant.earliestBeginDate, attempt: recordedAttempt(grant))
    }

    /// WorkManager's run attempt for the records (Android background runs), else nil.
    private func recordedAttempt(_ grant: BackgroundLaunch) -> Int? {
        scheduler.platform == .android ? grant.runAttemptCount : nil
    }

    private func recordedAttempt(_ job: Job) -> Int? {
        job.grant.flatMap { recordedAttempt($0) }
    }

    // MARK: conditions and sync

    /// A message from the watch at virtual instant `now` (delegates to the sync state machine).
    public mutating func receive(_ message: WireMessage, at now: Date) -> [PhoneAction] {
        sync.receive(message, at: now)
    }
    /// The resend timer fired.
    public mutating func resendDue() -> [PhoneAction] { sync.resendDue() }
    /// Start-up: resume resending an unacknowledged outbox.
    public mutating func start() -> [PhoneAction] { sync.start() }
    /// The runtime wrote `saved` to disk (see `PhoneCore.persisted`).
    public mutating func persisted(_ saved: PhoneSyncState) { sync.persisted(saved) }
    /// A write failed: the sync state returns to what is on disk, the numbering stays ahead of
    /// every seq already issued (see `PhoneCore.persistFailed`).
    public mutating func persistFailed() { sync.persistFailed() }

    /// The user turns Low Power Mode on or off at virtual instant `now` (`os.low_power`).
    /// - Returns: the actions to perform, in order.
    public mutating func setLowPowerMode(_ on: Bool, at now: Date) -> [PhoneAction] {
        scheduler.setLowPowerMode(on, at: now)
        return [.emit(Event(.osLowPower, [("on", .bool(on))]), at: now)] + drainTrace(at: now)
    }

    /// The user turns Background App Refresh on or off at `now` (`os.background_refresh`).
    /// - Returns: the actions to perform, in order.
    public mutating func setBackgroundRefreshEnabled(_ on: Bool, at now: Date) -> [PhoneAction] {
        scheduler.setBackgroundRefreshEnabled(on, at: now)
        return [.emit(Event(.osBackgroundRefresh, [("on", .bool(on))]), at: now)] + drainTrace(at: now)
    }

    /// The device restarts: the app process is gone (it runs again at the next background launch
    /// or when the user opens it); what the OS keeps is `SimulatedOS.reboot(at:)`'s rule.
    public mutating func reboot(at now: Date) -> [PhoneAction] {
        running = false
        registered = false
        scheduler.reboot(at: now)
        return [.emit(Event(.osReboot, []), at: now)] + drainTrace(at: now)
    }

    /// The user installs an app update that registers its handler per `registration` (iOS): the
    /// running app process ends, and the new behaviour applies from the app's next launch (the
    /// user's `open`, a background launch, or the next start of the phone).
    public mutating func installUpdate(registration: RegistrationMode, at now: Date) -> [PhoneAction] {
        running = false
        registered = false
        scheduler.installUpdate(registration: registration, at: now)
        return [
            .emit(
                Event(
                    .osRegistration,
                    [("registration", .string(registration.rawValue)), ("appliesAt", .string("next launch"))]), at: now)
        ] + drainTrace(at: now)
    }

    /// The user force-quits the app at `now` (`os.force_quit`); iOS launches no background task
    /// for a force-quit app until the user opens it again (docs/scheduler.md).
    /// - Returns: the actions to perform, in order.
    public mutating func forceQuit(at now: Date) -> [PhoneAction] {
        running = false
        scheduler.forceQuit(at: now)
        return [.emit(Event(.osForceQuit, []), at: now)] + drainTrace(at: now)
    }

    /// Android moves the app to standby bucket `value` at `now` (`os.standby_bucket`).
    /// - Returns: the actions to perform, in order.
    public mutating func setStandbyBucket(_ value: StandbyBucket, at now: Date) -> [PhoneAction] {
        scheduler.setStandbyBucket(value, at: now)
        return [.emit(Event(.osStandbyBucket, [("bucket", .string(value.description))]), at: now)] + drainTrace(at: now)
    }

    /// The device is plugged in or unplugged at `now` (`os.charging`).
    /// - Returns: the actions to perform, in order.
    public mutating func setCharging(_ on: Bool, at now: Date) -> [PhoneAction] {
        scheduler.setCharging(on, at: now)
        return [.emit(Event(.osCharging, [("on", .bool(on))]), at: now)] + drainTrace(at: now)
    }

    /// Hands `records` to the OS in place of every pending notice whose id starts with `prefix`
    /// (delivered ones before `removingDeliveredBefore`, the wall clock, dropped first), and says
    /// what the user will see. iOS with the authorization `denied` or `not-determined`: every
    /// `UNUserNotificationCenter.add` fails (`notification.failed`, `UNErrorDomain` code 1) and
    /// none of `prefix` is pending; otherwise `notice(_:)`'s events.
    private mutating func post(
        _ records: [NotificationRecord], prefix: String, removingDeliveredBefore wallNow: Date?, at now: Date
    ) -> [PhoneAction] {
        let authorization = scheduler.notificationAuthorization
        var change = NotificationChange()
        let actions = sync.update { state in
            if let wallNow { state.notifications.removeDelivered(before: wallNow) }
            change = state.notifications.update(prefix: prefix, with: authorization.allowsAdding ? records : [])
        }
        guard authorization.allowsAdding else {
            return actions + NotificationChange.failures(records, authorization: authorization, at: now)
        }
        return actions + noticeEvents(change, at: now)
    }

    /// The events of a change of the pending notices: `NotificationChange.events(delivery:at:)`
    /// (`quiet` for an iOS provisional authorization, `none` while hidden, else `alert`), then,
    /// while the OS does not show the app's notifications (Android, permission revoked), one
    /// `notification.hidden` {id, fireDate, text, reason} per added notice: posted, never shown,
    /// no error.
    private func noticeEvents(_ change: NotificationChange, at now: Date) -> [PhoneAction] {
        guard !scheduler.notificationsShown else {
            return change.events(delivery: scheduler.notificationAuthorization.delivery, at: now)
        }
        let reason = "the notification permission (POST_NOTIFICATIONS) is revoked: posted, never shown, no error"
        return change.events(delivery: "none", at: now)
            + change.added.map { record in
                .emit(
                    Event(
                        .notificationHidden,
                        [
                            ("id", .string(record.id)), ("fireDate", .date(record.fireDate)),
                            ("text", .string(record.text)), ("reason", .string(reason)),
                        ]), at: now)
            }
    }

    /// Android: the user grants or revokes a permission at `now` (`os.permission`).
    /// - Returns: the actions to perform, in order.
    public mutating func setNotificationPermission(_ granted: Bool, at now: Date) -> [PhoneAction] {
        scheduler.setNotificationPermission(granted)
        return [
            .emit(
                Event(.osPermission, [("permission", .string("notifications")), ("granted", .bool(granted))]), at: now)
        ] + drainTrace(at: now)
    }

    /// iOS: the user changes the app's notification authorization at `now` (`os.notifications`);
    /// it applies to the next notices the app adds (`notification.failed` while `denied` or
    /// `not-determined`, `delivery` `quiet` while `provisional`).
    /// - Returns: the actions to perform, in order.
    public mutating func setNotificationAuthorization(_ state: NotificationAuthorization, at now: Date)
        -> [PhoneAction]
    {
        scheduler.setNotificationAuthorization(state)
        return [
            .emit(
                Event(
                    .osNotifications,
                    [("authorization", .string(state.rawValue)), ("delivery", .string(state.delivery))]), at: now)
        ] + drainTrace(at: now)
    }

    /// The user sets the device's wall clock by `delta` seconds at true instant `now`
    /// (`os.clock_set`, then the OS's `os.time_changed`). The app plans its next request, notices
    /// and batch from the wall clock at its next run; true time, and so the watch's alarm
    /// instants, do not move (docs/scheduler.md, "The user sets the clock").
    /// - Returns: the actions to perform, in order.
    public mutating func setClock(by delta: TimeInterval, at now: Date) -> [PhoneAction] {
        scheduler.setWallClock(by: delta, at: now)
        return [
            .emit(
                Event(
                    .osClockSet,
                    [
                        ("delta", .double(delta)), ("offset", .double(scheduler.wallClockOffset)),
                        ("wallClock", .date(scheduler.wallClock(at: now))),
                    ]), at: now)
        ] + drainTrace(at: now)
    }

    /// Android: the network connection comes or goes at `now` (`os.network`).
    /// - Returns: the actions to perform, in order.
    public mutating func setNetwork(_ on: Bool, at now: Date) -> [PhoneAction] {
        scheduler.setNetwork(on, at: now)
        return [.emit(Event(.osNetwork, [("on", .bool(on))]), at: now)] + drainTrace(at: now)
    }

    /// Android: the battery becomes low or not at `now` (`os.battery_low`).
    /// - Returns: the actions to perform, in order.
    public mutating func setBatteryLow(_ on: Bool, at now: Date) -> [PhoneAction] {
        scheduler.setBatteryLow(on, at: now)
        return [.emit(Event(.osBatteryLow, [("on", .bool(on))]), at: now)] + drainTrace(at: now)
    }

    /// iOS: the battery's charge is `level` at `now` (`os.battery` {level}); from
    /// there the OS drains or charges it (docs/scheduler.md, "Battery over the day").
    /// - Parameters:
    ///   - level: the charge in [0, 1].
    ///   - now: virtual instant.
    /// - Returns: the actions to perform, in order.
    public mutating func setBatteryLevel(_ level: Double, at now: Date) -> [PhoneAction] {
        scheduler.setBatteryLevel(level, at: now)
        return [.emit(Event(.osBattery, [("level", .double(level))]), at: now)] + drainTrace(at: now)
    }

    /// Android: storage becomes low or not at `now` (`os.storage_low`).
    /// - Returns: the actions to perform, in order.
    public mutating func setStorageLow(_ on: Bool, at now: Date) -> [PhoneAction] {
        scheduler.setStorageLow(on, at: now)
        return [.emit(Event(.osStorageLow, [("on", .bool(on))]), at: now)] + drainTrace(at: now)
    }

    /// Android: a TestDriver control at `now` (`os.test_driver`).
    /// - Returns: the actions to perform, in order.
    public mutating func testDriver(_ control: AndroidWorkScheduler.TestDriverControl, at now: Date) -> [PhoneAction] {
        scheduler.testDriver(control, at: now)
        return drainTrace(at: now)
    }

    /// Android: the OS stops the worker with `reason` at `now` (`os.work.stopped`, or armed for
    /// the next run: `os.test_driver`).
    /// - Returns: the actions to perform, in order.
    public mutating func stopWork(reason: WorkStopReason, at now: Date) -> [PhoneAction] {
        scheduler.stopWork(reason: reason, at: now)
        return drainTrace(at: now)
    }

    /// A Doze input reaches the device at `now` (Android; `os.doze` says the phase).
    /// - Returns: the actions to perform, in order.
    public mutating func doze(_ input: DozeInput, at now: Date) -> [PhoneAction] {
        scheduler.doze(input, at: now)
        return drainTrace(at: now)
    }

    // MARK: the companion phone alarm (Android)

    /// Keeps the companion phone alarm on the next wake-up of `entries` after `now`: with
    /// `phoneAlarm` on, sets (or moves) a `setAlarmClock()` alarm (`alarm.set`), or says the
    /// `SecurityException` (`alarm.refused`, once per wake-up); with it off, cancels one the OS
    /// still holds (`alarm.cancelled`). Nothing on iOS.
    /// - Returns: the actions to perform, in order.
    mutating func companionAlarm(entries: [WakeEntry], at now: Date) -> [PhoneAction] {
        guard scheduler.platform == .android else { return [] }
        let held = scheduler.pendingAlarms.first { $0.tag == Self.alarmTag }
        guard configuration.phoneAlarm else {
            guard let held, scheduler.cancelAlarm(tag: Self.alarmTag) != nil else { return [] }
            return [.emit(alarmEvent(.alarmCancelled, held.kind, held.triggerAt, reason: "--phone-alarm off"), at: now)]
        }
        guard let wake = entries.first(where: { $0.wake > now })?.wake, held?.triggerAt != wake,
            refusedAlarm != wake
        else { return [] }
        do {
            let replaced = try scheduler.setAlarm(.alarmClock, tag: Self.alarmTag, triggerAt: wake, at: now)
            refusedAlarm = nil
            var event = alarmEvent(.alarmSet, .alarmClock, wake)
            event.fields.append(("replaced", replaced.map { .date($0.triggerAt) } ?? .null))
            return [.emit(event, at: now)] + drainTrace(at: now)
        } catch {
            refusedAlarm = wake
            return [.emit(alarmEvent(.alarmRefused, .alarmClock, wake, reason: error.reason), at: now)]
        }
    }

    /// An alarm event {tag, kind, triggerAt, reason when given}.
    private func alarmEvent(_ name: EventName, _ kind: AlarmKind, _ triggerAt: Date, reason: String? = nil) -> Event {
        var fields: [(String, EventValue)] = [
            ("tag", .string(Self.alarmTag)), ("kind", .string(kind.rawValue)), ("triggerAt", .date(triggerAt)),
        ]
        if let reason { fields.append(("reason", .string(reason))) }
        return Event(name, fields)
    }

    /// The OS fires the alarms due by `now` (`os.alarm.fired`, at the alarm's own instant); the
    /// companion alarm's receiver sets the next one.
    /// - Returns: the actions to perform, in order.
    public mutating func alarmsDue(at now: Date) -> [PhoneAction] {
        let fired = scheduler.alarmsDue(at: now)
        var actions = drainTrace(at: now)
        if fired.contains(where: { $0.tag == Self.alarmTag }) {
            actions += companionAlarm(entries: state.outbox?.entries ?? [], at: now)
        }
        // Normal-priority pushes Doze deferred, handed over at its maintenance window.
        for delivery in scheduler.pushesDue(at: now) {
            actions += runPush(.normal, delivery, at: now)
        }
        return actions
    }

    /// Android: the user grants or revokes `SCHEDULE_EXACT_ALARM` at `now` (`os.permission`).
    /// Revoked, the OS deletes the companion alarm with no broadcast (`alarm.lost`); granted, its
    /// broadcast lets the app set it again (`alarm.set`).
    /// - Returns: the actions to perform, in order.
    public mutating func setExactAlarmPermission(_ granted: Bool, at now: Date) -> [PhoneAction] {
        guard let change = scheduler.setExactAlarmPermission(granted, at: now) else { return drainTrace(at: now) }
        let broadcast = "ACTION_SCHEDULE_EXACT_ALARM_PERMISSION_STATE_CHANGED"
        var actions: [PhoneAction] = [
            .emit(
                Event(
                    .osPermission,
                    [
                        ("permission", .string("exact-alarm")), ("granted", .bool(granted)),
                        ("applied", .bool(change.applied)),
                        ("broadcast", change.broadcast ? .string(broadcast) : .null),
                    ]), at: now)
        ]
        for alarm in change.deleted where alarm.tag == Self.alarmTag {
            actions.append(
                .emit(
                    alarmEvent(
                        .alarmLost, alarm.kind, alarm.triggerAt,
                        reason: "SCHEDULE_EXACT_ALARM revoked: the OS deleted the alarm with no broadcast "
                            + "(the app is killed and cannot know)"), at: now))
        }
        if change.broadcast {
            refusedAlarm = nil
            actions += companionAlarm(entries: state.outbox?.entries ?? [], at: now)
        }
        return actions + drainTrace(at: now)
    }

    /// The OS-side trace (`os.*` events) since the last call, as `emit` actions stamped with `now`,
    /// the virtual instant (UTC) of the step. The app drains it right after every call into the
    /// OS, so each entry is written in the step that caused it, in order with the app's own events
    /// and stamped with that step's instant (a completion's end is its `duration` later), never
    /// left for the next OS activity.
    public mutating func drainTrace(at now: Date) -> [PhoneAction] {
        scheduler.drainTrace(sayingWhy: configuration.saysWhy).map { .emit(Event($0.event), at: now) }
    }
}

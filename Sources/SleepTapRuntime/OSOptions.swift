// SPDX-License-Identifier: Apache-2.0

package import Foundation
import SleepTapCalibration
package import SleepTapCommandLine
package import SleepTapCore
package import SleepTapOS

/// The simulated OS the phone runs on (`--platform`, `--registration`, …).
///
/// The OS outlives the app: its state is kept in the state dir (`os.json`, `SimulatedOS`). A nil
/// field is a flag not given: a new OS takes the default, a stored OS keeps what it has. A flag
/// given at a restart overrides the stored value, as a user changing a setting (or installing
/// an app build) would; `--os-seed` only seeds a new OS, and `--platform` must match the stored
/// device (docs/scheduler.md, "The OS outlives the app").
package struct OSOptions: Equatable, Sendable {
    /// iOS (BGTaskScheduler) or Android (WorkManager); nil = the stored device's, else iOS.
    package var platform: Platform?
    /// How the installed app registers its refresh handler: early (AppDelegate), late-silent
    /// (SwiftUI `.backgroundTask` on iOS 26.6), late-crash; nil = stored, else early.
    package var registration: RegistrationMode?
    /// iOS app-refresh budget, virtual seconds; nil = stored, else 30.
    package var budget: TimeInterval?
    /// `--low-power`: true; nil = stored, else off.
    package var lowPower: Bool?
    /// Background App Refresh (iOS setting; off = submit fails `unavailable`); `--refresh-off`:
    /// false; nil = stored, else on.
    package var backgroundRefresh: Bool?
    /// `--charging`: true; nil = stored, else not charging.
    package var charging: Bool?
    /// Android App Standby bucket; nil = stored, else active.
    package var bucket: StandbyBucket?
    /// Android periodic interval, seconds (raised to 900); nil = stored, else 6 h.
    package var interval: TimeInterval?
    /// `--android-api`: the Android API level (21...36), which selects the quota table
    /// (`AndroidAPI.quotas(for:android16Flags:)`); nil = stored, else the pre-Android 13 table.
    package var androidAPI: Int?
    /// `--android16-quotas on|off`: Android 16's flagged quota values (API 36); nil = stored, else on.
    package var android16Flags: Bool?
    /// `--constraints`: the Android work request's `Constraints` (empty: `none`); nil = stored,
    /// else none.
    package var constraints: [WorkConstraint]?
    /// `--notifications`: iOS's notification authorization; nil = stored, else `authorized` (so
    /// a scenario without it means what it meant before the flag).
    package var notifications: NotificationAuthorization?
    /// `--phone-alarm on|off`: the companion phone alarm (Android `setAlarmClock()` for the next
    /// wake-up); the app's setting, given at each start (not stored); nil = off.
    package var phoneAlarm: Bool?
    /// `--processing-task on|off`: iOS, the app's nightly `BGProcessingTaskRequest` on the charger
    /// (docs/scheduler.md, "Processing tasks"); the app's setting, given at each start (not
    /// stored); nil = off.
    package var processingTask: Bool?
    /// `--exact-alarm-permission schedule|use`: the exact alarm permission the app declares
    /// (`SCHEDULE_EXACT_ALARM` or `USE_EXACT_ALARM`); nil = stored, else `schedule`.
    package var exactAlarmPermission: ExactAlarmDeclaration?
    /// `--opportunity-model legacy|usage`: iOS, the rule that draws app-refresh launches
    /// (docs/scheduler.md, "Usage model"); nil = stored, else `defaultOpportunityModel` (usage).
    package var opportunityModel: OpportunityModelKind?
    /// `--background-budgets energy=SECS,data=BYTES,window=SECS`: iOS, the usage model's energy
    /// and data budgets per 24 hours and the refill a full bucket holds
    /// (`IOSBackgroundScheduler.Configuration.budget`); a key not given keeps the stored (else
    /// the default) value; nil = stored, else the defaults.
    package var backgroundBudgets: BudgetSettings?
    /// `--battery-rates drain=FRACTION,charge=FRACTION`: iOS, the battery's drain while unplugged
    /// and charge on the charger per hour (`IOSBackgroundScheduler.Configuration.battery`); a key
    /// not given keeps the stored (else the default) value; nil = stored, else the defaults.
    package var batteryRates: BatteryRateSettings?
    /// Seed of a new OS's RNG; nil = 1. Never used for a stored OS (its RNG goes on).
    package var seed: UInt64?
    /// Virtual seconds each job step costs (the app's, not stored with the OS).
    package var stepCosts = StepCosts()
    /// `--app-version`: the installed app build's version, written in its run records
    /// (`RunRecord.appVersion`, docs/metrics.md); the app's, not stored with the OS; nil = none.
    package var appVersion: String?
    /// `--os-model FILE`: a model `sleeptap-calibrate` wrote; read by `loadOSModel()`.
    package var osModelPath: String?
    /// The fitted iOS wait `loadOSModel()` took from `osModelPath`; nil = stored, else the
    /// built-in draws.
    package var empiricalDelay: EmpiricalDelay?

    /// The seed of a new OS when `--os-seed` is not given.
    package static let defaultSeed: UInt64 = 1
    /// The Android interval when `--interval` is not given, seconds.
    package static let defaultInterval: TimeInterval = 6 * 3_600
    /// A new iOS OS's opportunity model when `--opportunity-model` is not given: `usage`
    /// (docs/scheduler.md, "Usage model"); a stored OS keeps its own.
    package static let defaultOpportunityModel = OpportunityModelKind.usage
    /// The iOS budget when `--budget` is not given, seconds.
    package static let defaultBudget: TimeInterval = 30

    package init() {}

    /// Reads `--os-model`'s file and keeps the fitted wait of its most specific iOS group for
    /// this app's `--app-version` (`CalibratedOS.delay(platform:bucket:appVersion:)`, groups
    /// with `CalibratedOS.minimumSamples` answered requests or more; docs/calibration.md).
    /// Nothing without `--os-model`.
    /// - Throws: `OSModelLoadError` naming the file and what is wrong: unreadable, not a model,
    ///   no iOS group with enough data, or an Android phone (the model fits iOS delays only;
    ///   Android keeps its documented rules).
    package mutating func loadOSModel() throws(OSModelLoadError) {
        guard let path = osModelPath else { return }
        if platform == .android {
            throw OSModelLoadError(
                "--os-model \(path): the model runs iOS's launch delays; an Android phone keeps WorkManager's and "
                    + "JobScheduler's documented rules (docs/calibration.md)")
        }
        let model: CalibratedOS
        do {
            model = try CalibratedOS(json: try BoundedFile.read(path, limit: 64 << 20))
        } catch {
            throw OSModelLoadError("--os-model \(path): \(error)")
        }
        guard let entry = model.delay(platform: .ios, appVersion: appVersion) else {
            throw OSModelLoadError(
                "--os-model \(path): no iOS group with \(CalibratedOS.minimumSamples) or more answered requests"
                    + (appVersion.map { " for app version \($0) or all versions" } ?? ""))
        }
        empiricalDelay = entry.delay
    }

    /// A new OS as these options describe (the first start on a state dir): a new install, with
    /// the permissions it starts with on its API level (`SimulatedOS.applyInstallDefaults()`). Device settings
    /// (`lowPower`, `backgroundRefresh`, `charging`, `bucket`) are not applied here: the phone
    /// applies them as events at start, the same way for a new and a stored OS.
    package func makeOS(taskIdentifier: String) -> SimulatedOS {
        if platform == .android {
            var configuration = AndroidWorkScheduler.Configuration(repeatInterval: interval ?? Self.defaultInterval)
            if let androidAPI {
                configuration.selectQuotas(androidAPI: androidAPI, android16Flags: android16Flags ?? true)
            }
            if let constraints, !constraints.isEmpty { configuration.constraints = constraints }
            configuration.exactAlarmDeclaration = exactAlarmPermission
            var os = SimulatedOS(AndroidWorkScheduler(configuration: configuration), seed: seed ?? Self.defaultSeed)
            // A new install: the permissions it starts with on this API level (notifications off
            // from 33, SCHEDULE_EXACT_ALARM denied from 34).
            os.applyInstallDefaults()
            return os
        }
        var configuration = IOSBackgroundScheduler.Configuration(permittedIdentifiers: [taskIdentifier])
        configuration.registrationMode = registration ?? .early
        configuration.runtimeBudget = budget ?? Self.defaultBudget
        configuration.opportunity.empirical = empiricalDelay
        let kind = opportunityModel ?? Self.defaultOpportunityModel
        if kind != .legacy { configuration.opportunityModel = kind }
        if let backgroundBudgets { configuration.budget = backgroundBudgets.applied(to: BackgroundBudget()) }
        if let batteryRates { configuration.battery = batteryRates.applied(to: BatteryModel()) }
        return SimulatedOS(IOSBackgroundScheduler(configuration: configuration, seed: seed ?? Self.defaultSeed))
    }

    /// The device settings given as flags (`--low-power`, `--refresh-off`, `--charging`,
    /// `--bucket`, `--notifications`), as the commands the phone applies at every start, in this order, to a new and
    /// a stored OS alike (the user changing the setting).
    package var settingCommands: [PhoneCommand] {
        var settings: [PhoneCommand] = []
        if let on = lowPower { settings.append(.lowPower(on)) }
        if let on = backgroundRefresh { settings.append(.backgroundRefresh(on)) }
        if let on = charging { settings.append(.charging(on)) }
        if let bucket { settings.append(.bucket(bucket)) }
        if let notifications { settings.append(.notificationAuthorization(notifications)) }
        return settings
    }

    /// The OS the phone runs on: `stored` with the flags given applied to it, or a new one.
    ///
    /// Applied to a stored OS: `--registration` (an app update, `os.app.updated`), `--opportunity-model`,
    /// `--background-budgets`, `--battery-rates`, `--budget`,
    /// `--interval`, `--constraints` (an app build whose request has them), `--exact-alarm-permission` (an app build that declares it), `--android-api` and `--android16-quotas` (an OS update). `--os-seed` is ignored for it (its RNG continues).
    /// - Parameters:
    ///   - stored: the OS read from the state dir, nil on the first start.
    ///   - taskIdentifier: the app's refresh task.
    ///   - now: virtual instant.
    /// - Returns: the OS to run on.
    /// - Throws: `UsageError` when a flag contradicts the stored device (another `--platform`, an
    ///   iOS registration mode, `--notifications`, `--background-budgets` or `--battery-rates` for a
    ///   stored Android device); the stored
    ///   state is not changed.
    package func resolve(stored: SimulatedOS?, taskIdentifier: String, at now: Date) throws(UsageError) -> SimulatedOS {
        guard var os = stored else { return makeOS(taskIdentifier: taskIdentifier) }
        if let platform, platform != os.platform {
            throw UsageError(
                "--platform \(platform): the state dir's os.json holds an \(os.platform) device, and a device "
                    + "does not change platform; use another --state-dir for an \(platform) phone")
        }
        if let registration {
            if os.platform == .android && registration != .early {
                throw UsageError(
                    "--registration \(registration.rawValue) is an iOS failure (BGTaskScheduler launch handlers); "
                        + "the state dir's os.json holds an android device, and WorkManager has no registration step")
            }
            if registration != os.registrationMode { os.installUpdate(registration: registration, at: now) }
        }
        if notifications != nil && os.platform == .android {
            throw UsageError(
                "--notifications is iOS's notification authorization (UNUserNotificationCenter); the state dir's "
                    + "os.json holds an android device: use stdin permission notifications grant|revoke")
        }
        if let empiricalDelay {
            guard os.platform == .ios else {
                throw UsageError(
                    "--os-model \(osModelPath ?? ""): the model runs iOS's launch delays; the state dir's os.json "
                        + "holds an android device, which keeps its documented rules")
            }
            os.setEmpiricalDelay(empiricalDelay)
        }
        if let opportunityModel {
            guard os.platform == .ios else {
                throw UsageError(
                    "--opportunity-model \(opportunityModel.rawValue) chooses iOS's app-refresh launches; the state "
                        + "dir's os.json holds an android device, which keeps WorkManager's documented rules")
            }
            os.setOpportunityModel(opportunityModel)
        }
        if backgroundBudgets != nil || batteryRates != nil {
            guard case .ios(let s) = os.device else {
                throw UsageError(
                    "--background-budgets and --battery-rates are iOS's usage model's settings; the state dir's "
                        + "os.json holds an android device, which keeps WorkManager's documented rules")
            }
            guard os.opportunityModel == .usage else {
                throw UsageError(
                    "--background-budgets and --battery-rates take effect on the usage model only; the state dir's "
                        + "os.json holds a device on the legacy opportunity model (no budgets, a battery that does "
                        + "not drain): add --opportunity-model usage, or leave them out")
            }
            if let backgroundBudgets {
                os.setBackgroundBudget(backgroundBudgets.applied(to: s.configuration.effectiveBudget))
            }
            if let batteryRates {
                os.setBatteryModel(batteryRates.applied(to: s.configuration.effectiveBattery), at: now)
            }
        }
        if let budget { os.setRuntimeBudget(budget) }
        if let interval { os.setRepeatInterval(interval) }
        if let constraints { os.setConstraints(constraints) }
        if let exactAlarmPermission { os.setExactAlarmDeclaration(exactAlarmPermission) }
        if androidAPI != nil || android16Flags != nil, case .android(let s) = os.device {
            let api = androidAPI ?? s.configuration.androidAPI ?? AndroidAPI.maximum
            os.setAndroidAPI(api, android16Flags: android16Flags ?? s.configuration.android16Flags ?? true)
        }
        return os
    }

    /// The app configuration these options describe, with `horizonDays` of wake-ups per batch.
    package func appConfiguration(horizonDays: Int = BatchPlanner.defaultHorizonDays) -> PhoneAppConfiguration {
        var configuration = PhoneAppConfiguration()
        configuration.stepCosts = stepCosts
        configuration.horizonDays = horizonDays
        configuration.appVersion = appVersion
        configuration.phoneAlarm = phoneAlarm ?? false
        configuration.processingTask = processingTask ?? false
        return configuration
    }
}

/// A `--os-model` file that cannot be used, in words naming the file.
package struct OSModelLoadError: Error, Equatable, Sendable, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}

/// `--background-budgets`' values: each nil keeps the value it is applied to.
package struct BudgetSettings: Equatable, Sendable {
    /// Running seconds per 24 hours (`BackgroundBudget.energyPerDay`).
    package var energyPerDay: TimeInterval?
    /// Bytes per 24 hours (`BackgroundBudget.dataPerDay`).
    package var dataPerDay: Double?
    /// Seconds of refill a full bucket holds (`BackgroundBudget.window`).
    package var window: TimeInterval?

    package init(energyPerDay: TimeInterval? = nil, dataPerDay: Double? = nil, window: TimeInterval? = nil) {
        self.energyPerDay = energyPerDay
        self.dataPerDay = dataPerDay
        self.window = window
    }

    /// `base` with the values given here.
    package func applied(to base: BackgroundBudget) -> BackgroundBudget {
        BackgroundBudget(
            energyPerDay: energyPerDay ?? base.energyPerDay, dataPerDay: dataPerDay ?? base.dataPerDay,
            window: window ?? base.window)
    }
}

/// `--battery-rates`' values: each nil keeps the value it is applied to.
package struct BatteryRateSettings: Equatable, Sendable {
    /// Charge lost per hour unplugged, a fraction (`BatteryModel.drainPerHour`).
    package var drainPerHour: Double?
    /// Charge gained per hour on the charger, a fraction (`BatteryModel.chargePerHour`).
    package var chargePerHour: Double?

    package init(drainPerHour: Double? = nil, chargePerHour: Double? = nil) {
        self.drainPerHour = drainPerHour
        self.chargePerHour = chargePerHour
    }

    /// `base` with the values given here.
    package func applied(to base: BatteryModel) -> BatteryModel {
        BatteryModel(
            drainPerHour: drainPerHour ?? base.drainPerHour, chargePerHour: chargePerHour ?? base.chargePerHour)
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
package import SleepTapCommandLine
package import SleepTapCore
import SleepTapOS

/// Command-line parsing for both executables, kept in the library so it is unit-tested; the
/// options are declared in `CommandDeclarations.swift`.
package enum CommandLineParser {
    /// Parses `keygen` arguments (those after `keygen`); `--help`, `-h` and `--version` win wherever
    /// they stand.
    /// - Returns: the directory to write, help or version.
    /// - Throws: `UsageError` naming the flag and what is wrong.
    package static func parseKeygen(_ arguments: [String]) throws(UsageError) -> Parsed<String> {
        if let request = Parsed<String>.informationRequest(in: arguments) { return request }
        var reader = ArgumentReader(arguments, command: keygenCommand(.phone))  // the same options for both roles
        var directory: String?
        while let flag = try reader.nextFlag() {
            switch flag {
            case "--dir": directory = try reader.nonEmpty(flag)
            default: throw ArgumentReader.unknown(flag)
            }
        }
        guard let directory else { throw UsageError("--dir is required") }
        return .run(directory)
    }

    /// Parses `phone` arguments (without the program name).
    /// - Throws: `UsageError` naming the flag and what is wrong with its value.
    package static func parsePhone(
        _ arguments: [String], workingDirectory: String = FileManager.default.currentDirectoryPath
    ) throws(UsageError) -> Parsed<PhoneOptions> {
        if let request = Parsed<PhoneOptions>.informationRequest(in: arguments) { return request }
        let zones = try zoneDatabaseFlag(in: arguments)
        return try ZoneDatabase.$scoped.withValue(zones ?? ZoneDatabase.current) {
            Result { () throws(UsageError) in
                var parsed = try phoneFlags(arguments, workingDirectory: workingDirectory)
                if case .run(var options) = parsed {
                    options.zoneDatabase = zones
                    parsed = .run(options)
                }
                return parsed
            }
        }.get()
    }

    private static func phoneFlags(_ arguments: [String], workingDirectory: String) throws(UsageError)
        -> Parsed<PhoneOptions>
    {
        var reader = ArgumentReader(arguments, command: phoneCommand)
        var endpoint: Endpoint?
        var stateDirectory: String?
        var schedule: String?
        var zone: TimeZone?
        var clock = ClockOptions()
        var watchId = "watch"
        var horizon = BatchPlanner.defaultHorizonDays
        var deviceSeed: UInt64?
        var os = OSOptions()
        var weather = WeatherOptions()
        var location = PhoneOptions.defaultLocation
        var insecure = false
        var keys: String?
        var metrics: String?
        while let flag = try reader.nextFlag() {
            switch flag {
            case "--endpoint": endpoint = try reader.endpoint(flag, workingDirectory: workingDirectory)
            case "--state-dir": stateDirectory = try reader.nonEmpty(flag)
            case "--schedule": schedule = try reader.nonEmpty(flag)
            case "--time-zone": zone = try reader.timeZone(flag)
            case "--tzdata": _ = try reader.nonEmpty(flag)
            case "--watch-id": watchId = try reader.routingId(flag)
            case "--horizon-days": horizon = try reader.integer(flag, in: 1...WireCodec.maxEntries)
            case "--device-seed": deviceSeed = try reader.unsignedInteger(flag)
            case "--platform":
                let text = try reader.value(flag)
                guard let platform = Platform(rawValue: text) else {
                    throw UsageError("\(flag) \"\(ArgumentReader.clip(text))\": expected ios or android")
                }
                os.platform = platform
            case "--registration":
                let text = try reader.value(flag)
                guard let mode = RegistrationMode(rawValue: text) else {
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": expected early, late-silent or late-crash")
                }
                os.registration = mode
            case "--budget": os.budget = try reader.seconds(flag, in: 0.1...600)
            case "--opportunity-model":
                let text = try reader.value(flag)
                guard let kind = OpportunityModelKind(rawValue: text) else {
                    throw UsageError("\(flag) \"\(ArgumentReader.clip(text))\": expected legacy or usage")
                }
                os.opportunityModel = kind
            case "--background-budgets":
                let numbers = try reader.keyedNumbers(
                    flag, ["energy": 0.001...86_400, "data": 1...1e12, "window": 60...86_400])
                if let data = numbers["data"], data != data.rounded() {
                    throw UsageError("\(flag): data \"\(data)\" is not a whole number of bytes")
                }
                os.backgroundBudgets = BudgetSettings(
                    energyPerDay: numbers["energy"], dataPerDay: numbers["data"], window: numbers["window"])
            case "--battery-rates":
                let numbers = try reader.keyedNumbers(flag, ["drain": 0...1, "charge": 0...10])
                os.batteryRates = BatteryRateSettings(drainPerHour: numbers["drain"], chargePerHour: numbers["charge"])
            case "--insecure": insecure = true
            case "--keys": keys = try reader.nonEmpty(flag)
            case "--metrics-dir": metrics = try reader.nonEmpty(flag)
            case "--os-model": os.osModelPath = try reader.nonEmpty(flag)
            case "--app-version":
                let text = try reader.value(flag)
                guard RunRecord.isValidAppVersion(text) else {
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": expected 1 to 64 printable ASCII characters, e.g. 1.4.2"
                    )
                }
                os.appVersion = text
            case "--low-power": os.lowPower = true
            case "--refresh-off": os.backgroundRefresh = false
            case "--charging": os.charging = true
            case "--notifications":
                let text = try reader.value(flag)
                guard let state = NotificationAuthorization(rawValue: text) else {
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": expected authorized, denied, provisional or "
                            + "not-determined")
                }
                os.notifications = state
            case "--bucket":
                let text = try reader.value(flag)
                guard let bucket = StandbyBucket(name: text) else {
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": expected active, working_set, frequent, rare or restricted"
                    )
                }
                os.bucket = bucket
            case "--interval":
                os.interval = try reader.seconds(flag, in: 1...(30 * 86_400))
            case "--android-api":
                let text = try reader.value(flag)
                guard let api = Int(text), (AndroidAPI.minimum...AndroidAPI.maximum).contains(api) else {
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": expected an API level from \(AndroidAPI.minimum) to "
                            + "\(AndroidAPI.maximum) (Android 13 is 33, Android 15 is 35, Android 16 is 36)")
                }
                os.androidAPI = api
            case "--android16-quotas": os.android16Flags = try reader.onOff(flag)
            case "--constraints":
                let text = try reader.value(flag)
                switch WorkConstraint.parseList(text) {
                case .success(let list): os.constraints = list
                case .failure(let error) where error.isDuplicate:
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": \"\(ArgumentReader.clip(error.value))\" is given "
                            + "twice; name each constraint once")
                case .failure(let error):
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": \"\(ArgumentReader.clip(error.value))\" is not a "
                            + "constraint; expected a comma-separated list of \(WorkConstraint.names), or none")
                }
            case "--phone-alarm": os.phoneAlarm = try reader.onOff(flag)
            case "--processing-task": os.processingTask = try reader.onOff(flag)
            case "--exact-alarm-permission":
                let text = try reader.value(flag)
                guard let declaration = ExactAlarmDeclaration(rawValue: text) else {
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": expected schedule (SCHEDULE_EXACT_ALARM) or use "
                            + "(USE_EXACT_ALARM, an alarm-clock app's)")
                }
                os.exactAlarmPermission = declaration
            case "--os-seed": os.seed = try reader.unsignedInteger(flag)
            case "--step-costs": os.stepCosts = try reader.stepCosts(flag)
            case "--weather":
                let text = try reader.value(flag)
                if text == "offline" {
                    weather.openMeteoBase = nil
                } else if text == "open-meteo" {
                    weather.openMeteoBase = OpenMeteo.defaultBaseURL
                } else if let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil {
                    weather.openMeteoBase = url
                } else {
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": expected offline, open-meteo, or an http(s) base URL of an Open-Meteo server"
                    )
                }
            case "--weather-cost": weather.offlineCost = try reader.seconds(flag, in: 0...600)
            case "--location":
                let text = try reader.value(flag)
                guard let coordinate = PhoneOptions.parseCoordinate(text) else {
                    throw UsageError(
                        "\(flag) \"\(ArgumentReader.clip(text))\": expected LAT,LON in decimal degrees, e.g. 52.52,13.405"
                    )
                }
                location = coordinate
            default:
                if try reader.clockFlag(flag, into: &clock) { continue }
                throw ArgumentReader.unknown(flag)
            }
        }
        guard let endpoint else { throw UsageError("--endpoint is required") }
        guard let stateDirectory else { throw UsageError("--state-dir is required") }
        try clock.check()
        var options = PhoneOptions(endpoint: endpoint, stateDirectory: stateDirectory)
        options.schedulePath = schedule
        options.timeZone = zone
        options.clock = clock
        options.watchId = watchId
        options.horizonDays = horizon
        options.deviceSeed = deviceSeed
        options.os = os
        options.weather = weather
        options.location = location
        options.insecure = insecure
        options.keysDirectory = keys
        options.metricsDirectory = metrics
        try requireCurveOnTCP(endpoint: endpoint, keys: keys, insecure: insecure)
        if os.platform != .android && (os.bucket != nil || os.charging != nil || os.interval != nil) {
            throw UsageError("--bucket, --charging and --interval are Android settings: add --platform android")
        }
        if os.platform == .android && os.notifications != nil {
            throw UsageError(
                "--notifications is iOS's notification authorization (UNUserNotificationCenter); on Android "
                    + "the app's notifications follow its permission: stdin permission notifications grant|revoke")
        }
        if os.platform != .android && os.constraints != nil {
            throw UsageError(
                "--constraints is an Android setting (WorkManager Constraints); iOS BGAppRefreshTask has no "
                    + "constraints in this model: add --platform android")
        }
        if os.platform != .android && os.phoneAlarm == true {
            throw UsageError(
                "--phone-alarm on sets an Android AlarmManager.setAlarmClock() alarm; this model has no iOS alarm "
                    + "API (the watch rings either way): add --platform android, or leave --phone-alarm off")
        }
        if os.platform == .android && os.opportunityModel != nil {
            throw UsageError(
                "--opportunity-model chooses how iOS draws BGAppRefreshTask launches; Android's WorkManager runs "
                    + "by its documented rules (interval, standby bucket, Doze): leave it out on Android")
        }
        if os.platform == .android && (os.backgroundBudgets != nil || os.batteryRates != nil) {
            throw UsageError(
                "--background-budgets and --battery-rates are iOS's usage model's settings (energy and data "
                    + "budgets, the battery over the day); Android's WorkManager runs by its documented rules: "
                    + "leave them out on Android")
        }
        if os.opportunityModel == .legacy && (os.backgroundBudgets != nil || os.batteryRates != nil) {
            throw UsageError(
                "--background-budgets and --battery-rates take effect on the usage model only; "
                    + "--opportunity-model legacy has no budgets and a battery that does not drain: use "
                    + "--opportunity-model usage, or leave them out")
        }
        if os.platform == .android, let path = os.osModelPath {
            throw UsageError(
                "--os-model \(path): the model runs iOS's launch delays; an Android phone keeps WorkManager's and "
                    + "JobScheduler's documented rules (docs/calibration.md): leave it out on Android")
        }
        if os.platform == .android && os.processingTask == true {
            throw UsageError(
                "--processing-task on submits an iOS BGProcessingTaskRequest; WorkManager's equivalent is "
                    + "--constraints charging,device-idle: leave --processing-task off on Android")
        }
        if os.platform != .android && os.exactAlarmPermission != nil {
            throw UsageError(
                "--exact-alarm-permission is an Android setting (SCHEDULE_EXACT_ALARM or USE_EXACT_ALARM): add "
                    + "--platform android")
        }
        if os.platform != .android && (os.androidAPI != nil || os.android16Flags != nil) {
            throw UsageError("--android-api and --android16-quotas are Android settings: add --platform android")
        }
        if let api = os.androidAPI, api < AndroidAPI.android16, os.android16Flags != nil {
            throw UsageError(
                "--android16-quotas switches Android 16's flagged quota values: it needs --android-api 36, not \(api)")
        }
        if os.androidAPI == nil, os.android16Flags != nil {
            throw UsageError(
                "--android16-quotas switches Android 16's flagged quota values: give it with --android-api 36, also "
                    + "at a restart of an Android 16 device (without --android-api a new device has the pre-Android "
                    + "13 table, where the switch means nothing)")
        }
        if os.platform == .android, let registration = os.registration, registration != .early {
            throw UsageError(
                "--registration \(registration.rawValue) is an iOS failure (BGTaskScheduler launch handlers); "
                    + "WorkManager has no registration step")
        }
        return .run(options)
    }

    /// Parses `watch` arguments (without the program name).
    /// - Throws: `UsageError` naming the flag and what is wrong with its value.
    package static func parseWatch(
        _ arguments: [String], workingDirectory: String = FileManager.default.currentDirectoryPath
    ) throws(UsageError) -> Parsed<WatchOptions> {
        if let request = Parsed<WatchOptions>.informationRequest(in: arguments) { return request }
        let zones = try zoneDatabaseFlag(in: arguments)
        return try ZoneDatabase.$scoped.withValue(zones ?? ZoneDatabase.current) {
            Result { () throws(UsageError) in
                var parsed = try watchFlags(arguments, workingDirectory: workingDirectory)
                if case .run(var options) = parsed {
                    options.zoneDatabase = zones
                    parsed = .run(options)
                }
                return parsed
            }
        }.get()
    }

    private static func watchFlags(_ arguments: [String], workingDirectory: String) throws(UsageError)
        -> Parsed<WatchOptions>
    {
        var reader = ArgumentReader(arguments, command: watchCommand)
        var endpoint: Endpoint?
        var stateDirectory: String?
        var zone: TimeZone?
        var clock = ClockOptions()
        var id = "watch"
        var bedAt: LocalTime?
        var manualWake: LocalTime?
        var warnNights = WatchNode.Configuration.defaultWarnNights
        var requestDates = false
        var insecure = false
        var keys: String?
        var stopAlarmAfter: TimeInterval?
        var snoozeMinutes = Int(WatchNode.Configuration.defaultSnooze / 60)
        var complicationBudget = Complication.defaultBudget
        var activeSeconds: TimeInterval?
        while let flag = try reader.nextFlag() {
            switch flag {
            case "--endpoint": endpoint = try reader.endpoint(flag, workingDirectory: workingDirectory)
            case "--state-dir": stateDirectory = try reader.nonEmpty(flag)
            case "--time-zone": zone = try reader.timeZone(flag)
            case "--tzdata": _ = try reader.nonEmpty(flag)
            case "--id": id = try reader.routingId(flag)
            case "--stop-alarm-after": stopAlarmAfter = try reader.plainSeconds(flag, in: 0...86_400)
            case "--snooze-minutes": snoozeMinutes = try reader.integer(flag, in: 1...60)
            case "--complication-budget": complicationBudget = try reader.integer(flag, in: 1...1_000)
            case "--bed-at": bedAt = try reader.localTime(flag)
            case "--manual-wake": manualWake = try reader.localTime(flag)
            case "--warn-nights": warnNights = try reader.integer(flag, in: 0...WireCodec.maxEntries)
            case "--request-dates": requestDates = true
            case "--active-seconds": activeSeconds = try reader.plainSeconds(flag, in: 0...3_600)
            case "--insecure": insecure = true
            case "--keys": keys = try reader.nonEmpty(flag)
            default:
                if try reader.clockFlag(flag, into: &clock) { continue }
                throw ArgumentReader.unknown(flag)
            }
        }
        guard let endpoint else { throw UsageError("--endpoint is required") }
        guard let stateDirectory else { throw UsageError("--state-dir is required") }
        if manualWake != nil && bedAt == nil {
            throw UsageError("--manual-wake needs --bed-at (it answers the simulated user's prompt)")
        }
        if stopAlarmAfter != nil && bedAt == nil {
            throw UsageError("--stop-alarm-after needs --bed-at (it is the simulated user's stop)")
        }
        if requestDates && warnNights == 0 {
            throw UsageError(
                "--request-dates needs --warn-nights 1 or more (it asks when the nights left fall to that many)")
        }
        if activeSeconds != nil && !requestDates {
            throw UsageError("--active-seconds needs --request-dates (only a REQUEST waits for the app to be active)")
        }
        try clock.check()
        var options = WatchOptions(endpoint: endpoint, stateDirectory: stateDirectory)
        options.timeZone = zone
        options.clock = clock
        options.id = id
        options.bedAt = bedAt
        options.manualWake = manualWake
        options.warnNights = warnNights
        options.requestDates = requestDates
        options.activeSeconds = activeSeconds ?? WatchNode.Configuration.defaultActiveSeconds
        options.snooze = TimeInterval(snoozeMinutes * 60)
        options.complicationBudget = complicationBudget
        options.userStopsAlarmAfter =
            bedAt == nil ? nil : stopAlarmAfter ?? WatchNode.Configuration.defaultUserStop
        options.insecure = insecure
        options.keysDirectory = keys
        if case .tcp(_, nil) = endpoint {
            throw UsageError(
                "--endpoint \"\(ArgumentReader.clip(endpoint.description))\": a watch connects to a real port, not *")
        }
        try requireCurveOnTCP(endpoint: endpoint, keys: keys, insecure: insecure)
        return .run(options)
    }
}

/// The database `--tzdata DIR` (or `--tzdata=DIR`) names (the last one given), read before the
/// other flags so that `--time-zone` is checked against it (and `--version` prints its version);
/// nil without the flag.
/// - Throws: `UsageError` when DIR is not given, does not exist, is not a directory or holds no
///   tz database (`ZoneDatabase.holdsTimeZoneFiles(_:)`).
package func zoneDatabaseFlag(in arguments: [String]) throws(UsageError) -> ZoneDatabase? {
    // `--tzdata DIR` or `--tzdata=DIR`, as the flag parsers read every flag.
    guard
        let index = arguments.lastIndex(where: { $0 == "--tzdata" || $0.hasPrefix("--tzdata=") })
    else { return nil }
    let path: String
    if arguments[index] == "--tzdata" {
        guard index + 1 < arguments.count else { throw UsageError("--tzdata needs a directory of TZif files") }
        path = arguments[index + 1]
    } else {
        path = String(arguments[index].dropFirst("--tzdata=".count))
    }
    guard !path.isEmpty else { throw UsageError("--tzdata needs a directory of TZif files") }
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
        throw UsageError("--tzdata \"\(ArgumentReader.clip(path))\": no such directory")
    }
    guard ZoneDatabase.holdsTimeZoneFiles(path) else {
        throw UsageError(
            "--tzdata \"\(ArgumentReader.clip(path))\": holds no tz database (no TZif file in it or one directory "
                + "below; point it at a directory zic wrote, such as /usr/share/zoneinfo)")
    }
    return ZoneDatabase.directory(path)
}

/// tcp carries the link beyond this user's reach: CURVE is required unless `--insecure`.
func requireCurveOnTCP(endpoint: Endpoint, keys: String?, insecure: Bool) throws(UsageError) {
    if keys != nil && insecure {
        throw UsageError("--keys and --insecure exclude each other: CURVE with the paired keys, or plaintext")
    }
    guard case .tcp = endpoint, keys == nil, !insecure else { return }
    throw UsageError(
        "--endpoint \"\(ArgumentReader.clip(endpoint.description))\": tcp needs CURVE: pass --keys DIR (certificates from `keygen --dir DIR`), "
            + "or --insecure for plaintext")
}

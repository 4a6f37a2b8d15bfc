// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCommandLine
import SleepTapCore
import SleepTapOS
import Testing

@testable import SleepTapRuntime

/// Each simulated-OS and weather flag of `phone`, parsed and then handed to the core types the
/// way `PhoneRuntime` builds them (`OSOptions.makeOS`, `OSOptions.appConfiguration`,
/// `WeatherOptions.makeProvider`): a flag that is parsed and then dropped fails here. The
/// effects that only the running process shows are in IntegrationTests/FlagEffectTests.swift.
@Suite("Phone options reach the scheduler, the job and the weather provider")
struct OptionEffectTests {
    static let base = ["--endpoint", "ipc:///tmp/s.sock", "--state-dir", "/tmp/st"]
    static let t0 = ISO8601.date("2026-06-01T08:00:00Z")!
    static let task = PhoneAppConfiguration().taskIdentifier

    static func phoneOptions(_ extra: [String]) throws -> PhoneOptions {
        guard case .run(let options) = try CommandLineParser.parsePhone(base + extra) else {
            Issue.record("\(extra) parsed as a help request")
            throw CancellationError()
        }
        return options
    }

    /// Each of `cases`' flags is refused at parse time with a usage error whose message contains
    /// its text.
    static func expectRefused(
        _ cases: [([String], String)], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for (bad, named) in cases {
            do {
                _ = try phoneOptions(bad)
                Issue.record("\(bad) accepted", sourceLocation: sourceLocation)
            } catch {
                #expect(
                    (error as? UsageError)?.message.contains(named) == true, "\(error)", sourceLocation: sourceLocation)
            }
        }
    }

    /// A launched app's scheduler with one refresh request submitted at `t0`.
    static func scheduler(_ extra: [String]) throws -> any BackgroundScheduler {
        var scheduler: any BackgroundScheduler = try phoneOptions(extra).os.makeOS(taskIdentifier: task)
        scheduler.appLaunched(at: t0, byUser: true)
        #expect(try scheduler.register(identifier: task, at: t0))
        scheduler.finishLaunching(at: t0)
        try scheduler.submit(identifier: task, earliestBeginDate: t0.addingTimeInterval(3_600), at: t0)
        return scheduler
    }

    @Test("--budget is the budget of the background task the OS grants")
    func budget() throws {
        var small = try Self.scheduler(["--budget", "1.3"])
        let smallGrant = small.simulateLaunch(identifier: Self.task, at: Self.t0)
        #expect(try #require(smallGrant).budget == 1.3)
        var standard = try Self.scheduler([])
        let standardGrant = standard.simulateLaunch(identifier: Self.task, at: Self.t0)
        #expect(try #require(standardGrant).budget == 30)
    }

    @Test("--os-seed picks the OS's launch times: the same seed the same time, another seed another")
    func osSeed() throws {
        let one = try #require(Self.scheduler(["--os-seed", "1"]).nextLaunch(after: Self.t0))
        let two = try #require(Self.scheduler(["--os-seed", "2"]).nextLaunch(after: Self.t0))
        let twoAgain = try #require(Self.scheduler(["--os-seed", "2"]).nextLaunch(after: Self.t0))
        #expect(two == twoAgain)
        #expect(one != two)
        #expect(try #require(Self.scheduler([]).nextLaunch(after: Self.t0)) == one, "the default seed is 1")
    }

    @Test("--step-costs sets the virtual seconds each job step is charged")
    func stepCosts() throws {
        let options = try Self.phoneOptions(["--step-costs", "renew=1,notices=2,dates=3,sunlight=4"])
        let costs = options.os.appConfiguration(horizonDays: options.horizonDays).stepCosts
        #expect(costs == StepCosts(renew: 1, notices: 2, dates: 3, sunlight: 4))
        let partial = try Self.phoneOptions(["--step-costs", "dates=5"]).os.appConfiguration().stepCosts
        #expect(partial == StepCosts(dates: 5))
        #expect(partial.weatherBytes == 8_000)
        let bytes = try Self.phoneOptions(["--step-costs", "weather-bytes=120000,renew=1"]).os.appConfiguration()
            .stepCosts
        #expect(bytes.weatherBytes == 120_000)
        #expect(bytes.renew == 1)
        for bad in ["weather-bytes=-1", "weather-bytes=1.5", "weather-bytes=1e9", "weather-bytes=9999999999"] {
            #expect(throws: UsageError.self, "\(bad)") { try Self.phoneOptions(["--step-costs", bad]) }
        }
        // A step given twice, or an empty item, is named: the first would silently lose.
        for (bad, says) in [
            ("dates=1,dates=2", "dates is given twice"), ("dates=1,,notices=2", "\"\" is not"),
            ("weather-bytes=1,weather-bytes=2", "weather-bytes is given twice"), ("dates=1,", "\"\" is not"),
        ] {
            do {
                _ = try Self.phoneOptions(["--step-costs", bad])
                Issue.record("\(bad) was accepted")
            } catch {
                #expect("\(error)".contains(says), "\(bad): \(error)")
            }
        }
    }

    @Test("--weather-cost is what an offline fetch costs")
    func weatherCost() throws {
        let options = try Self.phoneOptions(["--weather-cost", "2.5"])
        let fetched = options.weather.makeProvider(seed: 7).forecast(for: options.location, now: Self.t0)
        #expect(fetched.cost == 2.5)
        #expect(try fetched.result.get().source == "offline")
        let standard = try Self.phoneOptions([])
        #expect(standard.weather.makeProvider(seed: 7).forecast(for: standard.location, now: Self.t0).cost == 0.3)
    }

    @Test("--weather chooses the provider: offline, Open-Meteo, or Open-Meteo at a given base URL")
    func weatherProvider() throws {
        let offline = try Self.phoneOptions(["--weather", "offline"]).weather.makeProvider(seed: 7)
        #expect(offline is OfflineWeatherProvider)
        let openMeteo = try Self.phoneOptions(["--weather", "open-meteo"]).weather.makeProvider(seed: 7)
        #expect(try #require(openMeteo as? OpenMeteoClient).baseURL == OpenMeteo.defaultBaseURL)
        let local = try Self.phoneOptions(["--weather", "http://127.0.0.1:8080/om"]).weather.makeProvider(seed: 7)
        #expect(try #require(local as? OpenMeteoClient).baseURL == URL(string: "http://127.0.0.1:8080/om"))
    }

    @Test("--location is the phone's location, in degrees")
    func location() throws {
        let options = try Self.phoneOptions(["--location", "-33.87,151.21"])
        #expect(options.location == Coordinate(latitude: -33.87, longitude: 151.21))
        #expect(try Self.phoneOptions([]).location == Coordinate(latitude: 52.52, longitude: 13.405))
    }

    @Test("--low-power asks for Low Power Mode at start")
    func lowPower() throws {
        #expect(try Self.phoneOptions(["--low-power"]).os.lowPower == true)
        #expect(try Self.phoneOptions([]).os.lowPower == nil, "not given: a stored OS keeps its setting")
    }

    @Test("--android-api selects the quota table; --android16-quotas off keeps Android 13-15's at API 36")
    func androidAPI() throws {
        func configuration(_ extra: [String]) throws -> AndroidWorkScheduler.Configuration {
            let os = try Self.phoneOptions(["--platform", "android"] + extra).os.makeOS(taskIdentifier: Self.task)
            guard case .android(let s) = os.device else { throw CancellationError() }
            return s.configuration
        }
        #expect(try configuration([]).quotas == StandbyQuota.preAndroid13)
        #expect(try configuration([]).executionCap == nil)
        #expect(try configuration(["--android-api", "34"]).quotas == StandbyQuota.android13to15)
        #expect(try configuration(["--android-api", "34"]).executionCap == StandbyQuota.executionCap)
        #expect(try configuration(["--android-api", "36"]).quotas == StandbyQuota.android16Flagged)
        let off = try configuration(["--android-api", "36", "--android16-quotas", "off"])
        #expect(off.quotas == StandbyQuota.android13to15 && off.androidAPI == 36)
        // A stored OS takes the new version at a restart (an OS update).
        var options = try Self.phoneOptions(["--platform", "android", "--android-api", "36"]).os
        let stored = try Self.phoneOptions(["--platform", "android"]).os.makeOS(taskIdentifier: Self.task)
        let updated = try options.resolve(stored: stored, taskIdentifier: Self.task, at: Self.t0)
        #expect(updated.androidAPI == 36)
        options.androidAPI = nil
        #expect(try options.resolve(stored: updated, taskIdentifier: Self.task, at: Self.t0).androidAPI == 36)
        for bad in [
            ["--platform", "android", "--android-api", "16"], ["--platform", "android", "--android-api", "x"],
            ["--android-api", "34"], ["--platform", "android", "--android-api", "34", "--android16-quotas", "on"],
            ["--platform", "android", "--android-api", "36", "--android16-quotas", "maybe"],
        ] {
            #expect(throws: UsageError.self, "\(bad)") { try Self.phoneOptions(bad) }
        }
        // --android16-quotas without --android-api: refused (a new device would be pre-Android 13, where
        // the switch means nothing), saying to give --android-api 36 with it, also at a restart.
        for value in ["on", "off"] {
            do {
                _ = try Self.phoneOptions(["--platform", "android", "--android16-quotas", value])
                Issue.record("--android16-quotas \(value) accepted without --android-api")
            } catch {
                let message = (error as? UsageError)?.message ?? ""
                #expect(
                    message.hasPrefix(
                        "--android16-quotas switches Android 16's flagged quota values: give it with "
                            + "--android-api 36"), "\(message)")
            }
        }
    }

    @Test(
        "--processing-task on reaches the app (iOS): its processing task is enabled; off is the default; Android and bad values are refused naming them"
    )
    func processingTask() throws {
        #expect(try Self.phoneOptions(["--processing-task", "on"]).os.appConfiguration().processingTask)
        #expect(try !Self.phoneOptions([]).os.appConfiguration().processingTask)
        #expect(try !Self.phoneOptions(["--processing-task", "off"]).os.appConfiguration().processingTask)
        // The app built with it runs on iOS with its processing task; the flag is the app's, not the OS's.
        let options = try Self.phoneOptions(["--processing-task", "on"]).os
        let app = PhoneApp(
            state: PhoneSyncState(deviceSeed: 1), scheduler: options.makeOS(taskIdentifier: Self.task),
            weather: OfflineWeatherProvider(seed: 1), schedule: .everyDayAtSeven,
            zone: TimeZone(identifier: "UTC")!, location: Coordinate(latitude: 52.52, longitude: 13.405)!,
            configuration: options.appConfiguration())
        #expect(app.processingEnabled)
        Self.expectRefused([
            (["--processing-task", "maybe"], "\"maybe\""),
            (["--platform", "android", "--processing-task", "on"], "BGProcessingTaskRequest"),
        ])
    }

    @Test(
        "--opportunity-model reaches the iOS OS (usage by default, which learns the user's opens), is kept with a stored OS and changed by a later flag; Android and bad values are refused naming them"
    )
    func opportunityModel() throws {
        #expect(try Self.phoneOptions([]).os.makeOS(taskIdentifier: Self.task).opportunityModel == .usage)
        let usage = try Self.phoneOptions(["--opportunity-model", "usage"]).os
        var os = usage.makeOS(taskIdentifier: Self.task)
        #expect(os.opportunityModel == .usage)
        os.appLaunched(at: Self.t0, byUser: true)
        guard case .ios(let ios) = os.device else {
            Issue.record("not an iOS device")
            return
        }
        #expect(ios.openHistory == [Self.t0])
        // A stored OS keeps its model without the flag; the flag changes it at a restart.
        #expect(
            try Self.phoneOptions([]).os.resolve(stored: os, taskIdentifier: Self.task, at: Self.t0).opportunityModel
                == .usage)
        let legacy = try Self.phoneOptions(["--opportunity-model", "legacy"]).os
        #expect(try legacy.resolve(stored: os, taskIdentifier: Self.task, at: Self.t0).opportunityModel == .legacy)
        let android = try Self.phoneOptions(["--platform", "android"]).os.makeOS(taskIdentifier: Self.task)
        #expect(throws: UsageError.self) {
            try usage.resolve(stored: android, taskIdentifier: Self.task, at: Self.t0)
        }
        Self.expectRefused([
            (["--opportunity-model", "maybe"], "expected legacy or usage"),
            (["--platform", "android", "--opportunity-model", "usage"], "BGAppRefreshTask"),
            // --os-model is iOS's too: refused on a new Android phone at parse time (exit 64), as a
            // stored Android device refuses it in `resolve` (`UsageError`, exit 64).
            (["--platform", "android", "--os-model", "model.json"], "--os-model model.json: the model runs iOS's"),
        ])
    }

    @Test(
        "--background-budgets and --battery-rates reach the iOS usage model, are kept with a stored OS and changed key by key; Android, legacy and bad values are refused naming them"
    )
    func budgetsAndBatteryRates() throws {
        func ios(_ os: SimulatedOS) throws -> IOSBackgroundScheduler {
            guard case .ios(let s) = os.device else { throw CancellationError() }
            return s
        }
        let flags = [
            "--opportunity-model", "usage", "--background-budgets", "energy=24,window=3600", "--battery-rates",
            "drain=0.1",
        ]
        var os = try Self.phoneOptions(flags).os.makeOS(taskIdentifier: Self.task)
        let configuration = try ios(os).configuration
        #expect(configuration.effectiveBudget == BackgroundBudget(energyPerDay: 24, window: 3_600))
        #expect(configuration.effectiveBattery == BatteryModel(drainPerHour: 0.1))
        // 24 s a day, a 1 h bucket: 1 s in a full bucket.
        #expect(abs(try #require(os.budgetBalances(at: Self.t0)).energy - 1) < 1e-9)
        // The faster drain empties the battery faster: 10 points an hour against the default 3.
        os.setBatteryLevel(0.5, at: Self.t0)
        let hourLater = Self.t0.addingTimeInterval(3_600)
        #expect(abs(try #require(os.batteryLevel(at: hourLater)) - 0.4) < 1e-9)
        var standard = try Self.phoneOptions(["--opportunity-model", "usage"]).os.makeOS(taskIdentifier: Self.task)
        standard.setBatteryLevel(0.5, at: Self.t0)
        #expect(try #require(standard.batteryLevel(at: hourLater)) > 0.4)
        // A stored OS keeps them; a later flag changes only the keys it gives, from the level reached.
        let kept = try Self.phoneOptions([]).os.resolve(stored: os, taskIdentifier: Self.task, at: hourLater)
        #expect(try ios(kept).configuration == configuration)
        let changed = try Self.phoneOptions(["--background-budgets", "data=5000", "--battery-rates", "drain=0.2"]).os
            .resolve(stored: os, taskIdentifier: Self.task, at: hourLater)
        #expect(
            try ios(changed).configuration.effectiveBudget
                == BackgroundBudget(energyPerDay: 24, dataPerDay: 5_000, window: 3_600))
        #expect(try ios(changed).configuration.effectiveBattery == BatteryModel(drainPerHour: 0.2))
        let twoHours = Self.t0.addingTimeInterval(2 * 3_600)
        #expect(abs(try #require(changed.batteryLevel(at: twoHours)) - 0.2) < 1e-9)
        let android = try Self.phoneOptions(["--platform", "android"]).os.makeOS(taskIdentifier: Self.task)
        #expect(throws: UsageError.self) {
            try Self.phoneOptions(["--battery-rates", "charge=1"]).os.resolve(
                stored: android, taskIdentifier: Self.task, at: Self.t0)
        }
        // A stored legacy device would keep settings that do nothing: refused, unless the same
        // start moves it to usage.
        let legacy = try Self.phoneOptions(["--opportunity-model", "legacy"]).os.makeOS(taskIdentifier: Self.task)
        do {
            _ = try Self.phoneOptions(["--background-budgets", "energy=5"]).os.resolve(
                stored: legacy, taskIdentifier: Self.task, at: Self.t0)
            Issue.record("budgets accepted on a stored legacy device")
        } catch {
            #expect((error as? UsageError)?.message.contains("legacy opportunity model") == true, "\(error)")
        }
        let moved = try Self.phoneOptions(["--opportunity-model", "usage", "--background-budgets", "energy=5"]).os
            .resolve(stored: legacy, taskIdentifier: Self.task, at: Self.t0)
        #expect(try ios(moved).configuration.effectiveBudget.energyPerDay == 5)
        Self.expectRefused([
            (["--background-budgets", "energy=0"], "energy \"0\" is not a number from 0.001 to 86400"),
            (["--background-budgets", "fuel=3"], "KEY one of energy, data, window; \"fuel=3\" is not"),
            (["--background-budgets", "energy=3,energy=4"], "energy is given twice"),
            (["--background-budgets", "data=1.5"], "data \"1.5\" is not a whole number of bytes"),
            (["--background-budgets", ""], "expected KEY=NUMBER"),
            (["--battery-rates", "drain=1.5"], "drain \"1.5\" is not a number from 0 to 1"),
            (["--battery-rates", "charge=x"], "charge \"x\" is not a number from 0 to 10"),
            (["--platform", "android", "--battery-rates", "drain=0.1"], "leave them out on Android"),
            (["--opportunity-model", "legacy", "--background-budgets", "energy=10"], "usage model only"),
        ])
    }

    @Test(
        "--phone-alarm and --exact-alarm-permission reach the app and the OS; a new install on API 33 starts without notifications, on 34 without SCHEDULE_EXACT_ALARM; bad values and iOS are refused naming them"
    )
    func phoneAlarmAndPermissions() throws {
        func os(_ extra: [String]) throws -> SimulatedOS {
            try Self.phoneOptions(["--platform", "android"] + extra).os.makeOS(taskIdentifier: Self.task)
        }
        func android(_ os: SimulatedOS) throws -> AndroidWorkScheduler {
            guard case .android(let s) = os.device else { throw CancellationError() }
            return s
        }
        #expect(
            try Self.phoneOptions(["--platform", "android", "--phone-alarm", "on"]).os.appConfiguration().phoneAlarm)
        #expect(try !Self.phoneOptions(["--platform", "android"]).os.appConfiguration().phoneAlarm)
        #expect(try !Self.phoneOptions(["--phone-alarm", "off"]).os.appConfiguration().phoneAlarm)
        #expect(try os([]).notificationsShown && android(os([])).canScheduleExactAlarms)
        #expect(try os(["--android-api", "32"]).notificationsShown)
        #expect(try !os(["--android-api", "33"]).notificationsShown)
        #expect(try android(os(["--android-api", "33"])).canScheduleExactAlarms)
        #expect(try !android(os(["--android-api", "34"])).canScheduleExactAlarms)
        let alarmClockApp = try android(os(["--android-api", "34", "--exact-alarm-permission", "use"]))
        #expect(alarmClockApp.canScheduleExactAlarms && alarmClockApp.exactAlarmDeclaration == .use)
        // A stored OS keeps its grants at a restart; an app build that declares USE_EXACT_ALARM may.
        let stored = try os(["--android-api", "34"])
        let restarted = try Self.phoneOptions(["--platform", "android", "--android-api", "34"]).os.resolve(
            stored: stored, taskIdentifier: Self.task, at: Self.t0)
        #expect(try !android(restarted).canScheduleExactAlarms)
        let updated = try Self.phoneOptions(["--platform", "android", "--exact-alarm-permission", "use"]).os.resolve(
            stored: stored, taskIdentifier: Self.task, at: Self.t0)
        #expect(try android(updated).canScheduleExactAlarms)
        Self.expectRefused([
            (["--platform", "android", "--phone-alarm", "maybe"], "\"maybe\""),
            (["--platform", "android", "--exact-alarm-permission", "always"], "\"always\""),
            (["--phone-alarm", "on"], "no iOS alarm API"),
            (["--exact-alarm-permission", "use"], "Android setting"),
        ])
    }

    @Test("--constraints sets the work request's constraints, kept by a stored OS; bad items and iOS are refused")
    func constraints() throws {
        let os = try Self.phoneOptions(["--platform", "android", "--constraints", "charging,network"]).os
            .makeOS(taskIdentifier: Self.task)
        #expect(os.constraints == [.network, .charging])
        #expect(
            try Self.phoneOptions(["--platform", "android"]).os.makeOS(taskIdentifier: Self.task).constraints == [])
        // A restart without the flag keeps them; --constraints none clears them.
        let kept = try Self.phoneOptions(["--platform", "android"]).os.resolve(
            stored: os, taskIdentifier: Self.task, at: Self.t0)
        #expect(kept.constraints == [.network, .charging])
        let cleared = try Self.phoneOptions(["--platform", "android", "--constraints", "none"]).os.resolve(
            stored: os, taskIdentifier: Self.task, at: Self.t0)
        #expect(cleared.constraints == [])
        do {
            _ = try Self.phoneOptions(["--platform", "android", "--constraints", "network,wifi"])
            Issue.record("--constraints wifi accepted")
        } catch {
            #expect((error as? UsageError)?.message.contains("\"wifi\" is not a constraint") == true)
        }
        do {
            _ = try Self.phoneOptions(["--constraints", "network"])
            Issue.record("--constraints accepted on iOS")
        } catch {
            #expect((error as? UsageError)?.message.contains("Android setting") == true)
        }
        // A constraint given twice is refused, naming the flag and the duplicate.
        for (list, twice) in [("network,network", "network"), ("charging,network,charging", "charging")] {
            do {
                _ = try Self.phoneOptions(["--platform", "android", "--constraints", list])
                Issue.record("--constraints \(list) accepted")
            } catch {
                #expect(
                    (error as? UsageError)?.message
                        == "--constraints \"\(list)\": \"\(twice)\" is given twice; name each constraint once")
            }
        }
    }

    @Test(
        "--notifications is a device setting applied at start like --low-power (nil: the stored one, else authorized); bad states and Android are refused"
    )
    func notifications() throws {
        #expect(try Self.phoneOptions([]).os.notifications == nil)
        #expect(try Self.phoneOptions([]).os.settingCommands.isEmpty)
        let denied = try Self.phoneOptions(["--notifications", "denied"]).os
        #expect(denied.notifications == .denied)
        #expect(denied.settingCommands == [.notificationAuthorization(.denied)])
        #expect(
            try Self.phoneOptions(["--low-power", "--notifications", "not-determined"]).os.settingCommands
                == [.lowPower(true), .notificationAuthorization(.notDetermined)])
        do {
            _ = try Self.phoneOptions(["--notifications", "maybe"])
            Issue.record("--notifications maybe accepted")
        } catch {
            #expect((error as? UsageError)?.message.contains("\"maybe\"") == true)
        }
        do {
            _ = try Self.phoneOptions(["--platform", "android", "--notifications", "denied"])
            Issue.record("--notifications accepted on Android")
        } catch {
            #expect((error as? UsageError)?.message.contains("permission notifications grant|revoke") == true)
        }
        // A stored Android device without --platform: refused at resolve, the state unchanged.
        let android = try Self.phoneOptions(["--platform", "android"]).os.makeOS(taskIdentifier: Self.task)
        #expect(throws: UsageError.self) {
            try Self.phoneOptions(["--notifications", "denied"]).os.resolve(
                stored: android, taskIdentifier: Self.task, at: Self.t0)
        }
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import SleepTapOSTestFixtures
import Testing

@testable import SleepTapCore

/// The simulated OS as a durable value: what it keeps across an app restart (an encode and a
/// decode, as the phone does with os.json), what a registration change and a reboot do.
@Suite("Simulated OS state outlives the app")
struct SimulatedOSTests {
    typealias F = SchedulerFixture
    let id = F.refreshID
    let t0 = F.start

    /// The phone process restarts: the OS is written and read back (exact instants, as os.json).
    static func restarted(_ os: SimulatedOS) throws -> SimulatedOS {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(SimulatedOS.self, from: encoder.encode(os))
    }

    static func ios(seed: UInt64, mode: RegistrationMode = .early) -> SimulatedOS {
        SimulatedOS(F.ios(mode: mode, seed: seed))
    }

    /// The user opens the app: a launch that registers in time, then the refresh request.
    static func open(_ os: inout SimulatedOS, at now: Date, earliest: Date) throws {
        os.appLaunched(at: now, byUser: true)
        #expect(try os.register(identifier: F.refreshID, at: now))
        os.finishLaunching(at: now)
        try os.submit(identifier: F.refreshID, earliestBeginDate: earliest, at: now)
    }

    /// Serves the OS's launches before `end`; each run resubmits for 20 h after its start and
    /// succeeds after 5 s.
    static func serve(_ os: inout SimulatedOS, from start: Date, to end: Date) -> [BackgroundLaunch] {
        F.drive(&os, from: start, to: end) { os, launch in
            try? os.submit(
                identifier: launch.identifier, earliestBeginDate: launch.startedAt.addingTimeInterval(20 * 3600),
                at: launch.startedAt)
            return (5, .success)
        }
    }

    /// The trace as comparable lines: instant, name, fields.
    static func lines(_ trace: [(at: Date, event: OSEvent)]) -> [String] {
        trace.map { "\($0.at.timeIntervalSince1970) \(Event($0.event).jsonLine(time: $0.at, process: .phone))" }
    }

    /// The delay the OS drew for each submitted request: plannedLaunch - earliestBeginDate, seconds.
    static func delays(_ trace: [(at: Date, event: OSEvent)]) -> [TimeInterval] {
        trace.compactMap { entry in
            guard entry.event.name == .osRequestSubmitted, case .date(let planned)? = entry.event["plannedLaunch"],
                case .date(let earliest)? = entry.event["earliestBeginDate"]
            else { return nil }
            return planned.timeIntervalSince(earliest)
        }
    }

    /// Three app lives a day apart: each opens the app with a new request (2 h later) and serves
    /// the OS's launches until the next life. `restart` is how the OS passes from one life to the
    /// next. - Returns: the whole trace.
    static func threeLives(seed: UInt64, restart: (SimulatedOS) throws -> SimulatedOS) throws -> [(
        at: Date, event: OSEvent
    )] {
        var os = ios(seed: seed)
        var trace: [(at: Date, event: OSEvent)] = []
        for life in 0..<3 {
            let start = F.start.addingTimeInterval(Double(life) * F.day)
            if life > 0 { os = try restart(os) }
            try open(&os, at: start, earliest: start.addingTimeInterval(2 * 3600))
            _ = serve(&os, from: start, to: start.addingTimeInterval(F.day - 60))
            trace += os.drainTrace()
        }
        return trace
    }

    // MARK: Round trip and restarts

    @Test("os.json round trip keeps the pending request, the plan, the RNG position, settings and launch history")
    func roundTrip() throws {
        var os = Self.ios(seed: 7)
        try Self.open(&os, at: t0, earliest: t0.addingTimeInterval(3600))
        _ = Self.serve(&os, from: t0, to: t0.addingTimeInterval(F.day))
        os.setBackgroundRefreshEnabled(true, at: t0.addingTimeInterval(F.day))
        #expect(os.launchHistory.count >= 1)
        _ = os.drainTrace()
        var copy = try Self.restarted(os)
        #expect(copy.seed == 7)
        #expect(copy.launchHistory == os.launchHistory)
        #expect(copy.status().map(\.0) == os.status().map(\.0))
        #expect(copy.status().map(\.1) == os.status().map(\.1))
        let now = t0.addingTimeInterval(F.day)
        #expect(copy.nextLaunch(after: now) != nil)
        #expect(copy.nextLaunch(after: now) == os.nextLaunch(after: now))
        // The RNG continues from the same position: the next week is the same for both.
        let end = now.addingTimeInterval(7 * F.day)
        let original = Self.serve(&os, from: now, to: end).map(\.startedAt)
        let decoded = Self.serve(&copy, from: now, to: end).map(\.startedAt)
        #expect(original.count >= 5)
        #expect(decoded == original)
        #expect(Self.lines(copy.drainTrace()) == Self.lines(os.drainTrace()))
    }

    @Test("A restarted app finds its pending request: resubmitting the same request keeps the planned launch")
    func restartKeepsPendingRequest() throws {
        var os = Self.ios(seed: 3)
        try Self.open(&os, at: t0, earliest: t0.addingTimeInterval(3600))
        // Until 20 h: the first launch (at least 1 h in), not yet the one its run resubmits.
        let first = try #require(Self.serve(&os, from: t0, to: t0.addingTimeInterval(20 * 3600)).first)
        // The run resubmitted for 20 h after it: that request is pending now, its launch drawn.
        let earliest = first.startedAt.addingTimeInterval(20 * 3600)
        let planned = try #require(os.nextLaunch(after: first.startedAt.addingTimeInterval(60)))
        let restartAt = first.startedAt.addingTimeInterval(2 * 3600)
        var restarted = try Self.restarted(os)
        try Self.open(&restarted, at: restartAt, earliest: earliest)
        #expect(restarted.nextLaunch(after: restartAt) == planned)
        let launches = Self.serve(&restarted, from: restartAt, to: planned.addingTimeInterval(1))
        #expect(launches.map(\.startedAt) == [planned])
        // An OS started again from the seed (what a phone without os.json did) plans another time.
        var reseeded = Self.ios(seed: 3)
        try Self.open(&reseeded, at: restartAt, earliest: earliest)
        #expect(reseeded.nextLaunch(after: restartAt) != planned)
    }

    @Test("Restarts continue the OS's draws: each restart draws a new delay, and a restart changes nothing")
    func restartsContinueTheDraws() throws {
        let withRestarts = try Self.threeLives(seed: 12, restart: Self.restarted)
        let continuous = try Self.threeLives(seed: 12, restart: { $0 })
        #expect(Self.lines(withRestarts) == Self.lines(continuous))
        #expect(try Self.lines(Self.threeLives(seed: 12, restart: Self.restarted)) == Self.lines(withRestarts))
        // The first request of each life: three different delays.
        let opened = withRestarts.filter { $0.event.name == .osAppLaunched && $0.event["byUser"] == .bool(true) }
        #expect(opened.count == 3)
        let firstDelays = opened.compactMap { open in
            Self.delays(withRestarts.filter { $0.at == open.at }).first
        }
        #expect(firstDelays.count == 3)
        #expect(Set(firstDelays).count == 3, "\(firstDelays)")
        // Re-seeding at each start (no os.json) replays the same delay every time.
        let reseeded = try Self.threeLives(seed: 12, restart: { _ in Self.ios(seed: 12) })
        let reseededOpened = reseeded.filter { $0.event.name == .osAppLaunched && $0.event["byUser"] == .bool(true) }
        let replayed = reseededOpened.compactMap { open in Self.delays(reseeded.filter { $0.at == open.at }).first }
        #expect(replayed.count == 3 && Set(replayed).count == 1, "\(replayed)")
    }

    // MARK: Registration changes

    /// A new iOS OS whose app permits the phone app's refresh task.
    static func phoneOS(mode: RegistrationMode = .early) -> SimulatedOS {
        SimulatedOS(F.ios(mode: mode, seed: 1, permitted: [PhoneAppConfiguration().taskIdentifier]))
    }

    static func app(_ os: SimulatedOS) -> PhoneApp {
        PhoneApp(
            state: PhoneSyncState(deviceSeed: 5), scheduler: os, weather: OfflineWeatherProvider(seed: 5),
            schedule: .everyDayAtSeven, zone: TimeZone(identifier: "Europe/Berlin")!,
            location: Coordinate(latitude: 52.52, longitude: 13.405)!)
    }

    static func names(_ effects: [PhoneAction]) -> [EventName] {
        effects.compactMap { $0.event?.name }
    }

    @Test("An update to late-silent ends the app process and applies at its next launch: the handler is not entered")
    func updateToLateSilent() throws {
        var app = Self.app(Self.phoneOS())
        _ = app.launch(at: t0, byUser: true)
        #expect(app.registered && app.running)
        let update = app.installUpdate(registration: .lateSilent, at: t0.addingTimeInterval(60))
        // os.why says it at once: from now on the handler is not registered in time.
        #expect(Self.names(update) == [.osRegistration, .osAppUpdated, .osWhy])
        #expect(app.scheduler.why(at: t0.addingTimeInterval(60)).code == .handlerNotRegisteredInTime)
        #expect(!app.running && !app.registersEarly)
        // The setting is the OS's record of the installed app: it survives a restart.
        app.scheduler = try Self.restarted(app.scheduler)
        #expect(app.scheduler.registrationMode == .lateSilent)
        let due = try #require(app.nextBackgroundLaunch(after: t0.addingTimeInterval(60)), "the request is kept")
        let run = Self.names(app.backgroundLaunchDue(at: due))
        #expect(run.contains(.osLaunchDropped), "\(run)")
        #expect(!run.contains(.handlerEntered), "\(run)")
    }

    @Test("An update to early (the fix) applies at the next launch: the next background launch enters the handler")
    func updateToEarly() throws {
        var app = Self.app(Self.phoneOS(mode: .lateSilent))
        _ = app.launch(at: t0, byUser: true)
        _ = app.installUpdate(registration: .early, at: t0.addingTimeInterval(60))
        #expect(app.registersEarly)
        let due = try #require(app.nextBackgroundLaunch(after: t0.addingTimeInterval(60)))
        let run = Self.names(app.backgroundLaunchDue(at: due))
        #expect(run.contains(.handlerEntered), "\(run)")
        #expect(!run.contains(.osLaunchDropped), "\(run)")
    }

    @Test("An update to late-crash: the app dies registering at its next launch")
    func updateToLateCrash() throws {
        var app = Self.app(Self.phoneOS())
        _ = app.launch(at: t0, byUser: true)
        _ = app.installUpdate(registration: .lateCrash, at: t0.addingTimeInterval(60))
        let relaunch = Self.names(app.launch(at: t0.addingTimeInterval(120), byUser: true))
        #expect(relaunch.contains(.appCrashed), "\(relaunch)")
        #expect(app.crashed == .registeredAfterLaunch)
    }

    /// Found by `sleeptap-soak exhaustion` (seed 1, timeline 20: `registration late-crash` on an
    /// iOS phone with a pending request): the background launch crashed before the OS took it,
    /// the request stayed due, and the OS launched the app again at the same instant forever.
    @Test("A background launch that crashes spends the request: no second launch at the same instant")
    func backgroundLaunchCrashSpendsTheRequest() throws {
        var app = Self.app(Self.phoneOS())
        _ = app.launch(at: t0, byUser: true)
        _ = app.installUpdate(registration: .lateCrash, at: t0.addingTimeInterval(60))
        let due = try #require(app.nextBackgroundLaunch(after: t0.addingTimeInterval(60)))
        let run = app.backgroundLaunchDue(at: due)
        #expect(Self.names(run).contains(.appCrashed), "\(Self.names(run))")
        #expect(Self.names(run).contains(.osLaunchDropped), "\(Self.names(run))")
        #expect(app.nextBackgroundLaunch(after: due) == nil)
    }

    // MARK: Reboot

    @Test("iOS reboot: the app process is gone, a run is killed, the request and its plan are kept, force-quit lifted")
    func rebootIOS() throws {
        var os = Self.ios(seed: 5)
        try Self.open(&os, at: t0, earliest: t0.addingTimeInterval(3600))
        let planned = try #require(os.nextLaunch(after: t0))
        _ = os.drainTrace()
        os.reboot(at: t0.addingTimeInterval(60))
        #expect(os.nextLaunch(after: t0.addingTimeInterval(60)) == planned)
        #expect(os.status().first { $0.0 == "processRunning" }?.1 == .bool(false))
        #expect(os.reboots == 1 && os.lastReboot == t0.addingTimeInterval(60))
        #expect(F.names(os.drainTrace()) == [.osRebooted])

        // A force-quit holds launches back until the user opens the app, or the device restarts.
        os.forceQuit(at: t0.addingTimeInterval(120))
        #expect(os.nextLaunch(after: t0.addingTimeInterval(120)) == nil)
        os.reboot(at: t0.addingTimeInterval(180))
        #expect(os.nextLaunch(after: t0.addingTimeInterval(180)) != nil)
        #expect(os.status().first { $0.0 == "forceQuit" }?.1 == .bool(false))

        // A run in flight dies with the device.
        var running = Self.ios(seed: 5)
        try Self.open(&running, at: t0, earliest: t0.addingTimeInterval(3600))
        let grant = running.simulateLaunch(identifier: id, at: t0.addingTimeInterval(10))
        #expect(grant?.handlerRegistered == true)
        _ = running.drainTrace()
        running.reboot(at: t0.addingTimeInterval(12))
        let killed = try #require(running.drainTrace().first { $0.event.name == .osAppKilled })
        #expect(killed.event["reason"] == .string("reboot"))
    }

    @Test("Android reboot: work persists with its next run time; a force stop survives it; a running worker is stopped")
    func rebootAndroid() throws {
        var os = SimulatedOS(F.android(interval: 3600), seed: 2)
        try os.submit(identifier: id, earliestBeginDate: t0.addingTimeInterval(600), at: t0)
        guard case .android(let before) = os.device else { throw CancellationError() }
        let nextRun = try #require(before.nextRunTime(of: id))
        _ = os.drainTrace()
        os.reboot(at: t0.addingTimeInterval(60))
        guard case .android(let after) = os.device else { throw CancellationError() }
        #expect(after.nextRunTime(of: id) == nextRun)
        #expect(os.nextLaunch(after: t0.addingTimeInterval(60)) == nextRun)
        let rescheduled = try #require(os.drainTrace().first { $0.event.name == .osWorkRescheduled })
        #expect(rescheduled.event["reason"] == .string("boot completed"))

        // Force stop: the app stays stopped through a reboot, until the user opens it.
        os.forceQuit(at: t0.addingTimeInterval(120))
        _ = os.drainTrace()
        os.reboot(at: t0.addingTimeInterval(180))
        #expect(!F.names(os.drainTrace()).contains(.osWorkRescheduled))
        #expect(os.nextLaunch(after: t0.addingTimeInterval(180)) == nil)
        os.appLaunched(at: t0.addingTimeInterval(240), byUser: true)
        #expect(os.nextLaunch(after: t0.addingTimeInterval(240)) != nil)

        // A worker running at the reboot is stopped; its attempt counts.
        let due = try #require(os.nextLaunch(after: t0.addingTimeInterval(240)))
        let launch = os.takeLaunch(at: due)
        #expect(launch != nil)
        _ = os.drainTrace()
        os.reboot(at: due.addingTimeInterval(1))
        let stopped = try #require(os.drainTrace().first { $0.event.name == .osWorkStopped })
        #expect(stopped.event["reason"] == .string("reboot"))
        guard case .android(let rebooted) = os.device else { throw CancellationError() }
        #expect(rebooted.runAttemptCount(of: id) == 1)
    }

    @Test("Android state round trip: enqueued work, quota sessions, bucket and charging are kept")
    func androidRoundTrip() throws {
        var os = SimulatedOS(F.android(interval: 900, bucket: .rare), seed: 2)
        try os.submit(identifier: id, earliestBeginDate: nil, at: t0)
        _ = Self.serve(&os, from: t0, to: t0.addingTimeInterval(3 * 3600))
        os.setCharging(true, at: t0.addingTimeInterval(3 * 3600))
        let now = t0.addingTimeInterval(3 * 3600)
        var copy = try Self.restarted(os)
        #expect(copy.platform == .android && copy.standbyBucket == .rare)
        #expect(copy.status().map(\.1) == os.status().map(\.1))
        os.setCharging(false, at: now)
        copy.setCharging(false, at: now)
        #expect(copy.nextLaunch(after: now) == os.nextLaunch(after: now))
        let end = now.addingTimeInterval(2 * F.day)
        #expect(
            Self.serve(&copy, from: now, to: end).map(\.startedAt)
                == Self.serve(&os, from: now, to: end).map(\.startedAt))
    }

    @Test("A stored OS of another version, or an unknown platform, is refused with the reason")
    func badStoredState() throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        var object = try #require(
            JSONSerialization.jsonObject(with: encoder.encode(Self.ios(seed: 1))) as? [String: Any])
        object["version"] = 2
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        // Another build's version is refused first, before the fields it may not have.
        #expect(throws: DecodingError.self) {
            try decoder.decode(SimulatedOS.self, from: JSONSerialization.data(withJSONObject: object))
        }
        #expect(Self.ios(seed: 1).validationProblem == nil)
        object["version"] = 1
        object["platform"] = "symbian"
        #expect(throws: DecodingError.self) {
            try decoder.decode(SimulatedOS.self, from: JSONSerialization.data(withJSONObject: object))
        }
    }

    @Test("Values no OS writes are refused on load: reboots below 0, an Android interval or backoff out of range")
    func absurdStoredValues() throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        func problem(_ os: SimulatedOS, _ change: (inout [String: Any]) -> Void) throws -> String? {
            var object = try #require(JSONSerialization.jsonObject(with: encoder.encode(os)) as? [String: Any])
            change(&object)
            return try decoder.decode(SimulatedOS.self, from: JSONSerialization.data(withJSONObject: object))
                .validationProblem
        }
        #expect(try problem(Self.ios(seed: 1)) { $0["reboots"] = 0 } == nil)
        #expect(try problem(Self.ios(seed: 1)) { $0["reboots"] = -1 } == "reboots -1: expected a count ≥ 0")
        let android = SimulatedOS(F.android(interval: 900), seed: 2)
        #expect(try problem(android) { _ in } == nil)
        func configured(_ key: String, _ value: Any) -> (inout [String: Any]) -> Void {
            { object in
                var scheduler = object["android"] as? [String: Any] ?? [:]
                var configuration = scheduler["configuration"] as? [String: Any] ?? [:]
                configuration[key] = value
                scheduler["configuration"] = configuration
                object["android"] = scheduler
            }
        }
        #expect(try problem(android, configured("repeatInterval", 2_592_000)) == nil)
        #expect(
            try problem(android, configured("repeatInterval", 1e300))
                == "configuration.repeatInterval 1e+300: expected 1 to 2592000 seconds (30 days)")
        #expect(
            try problem(android, configured("maxBackoff", -5))
                == "configuration.maxBackoff -5.0: expected a finite number ≥ 0")
        #expect(
            try problem(android, configured("backoffDelay", -1))
                == "configuration.backoffDelay -1.0: expected a finite number ≥ 0")
        // Deeper values: a quota, an enqueued work, iOS's wait.
        func nested(_ path: [String], _ value: Any) -> (inout [String: Any]) -> Void {
            func set(_ object: [String: Any], _ path: ArraySlice<String>) -> [String: Any] {
                var object = object
                guard let key = path.first else { return object }
                if path.count == 1 {
                    object[key] = value
                } else {
                    object[key] = set(object[key] as? [String: Any] ?? [:], path.dropFirst())
                }
                return object
            }
            return { object in object = set(object, path[...]) }
        }
        #expect(
            try problem(android, nested(["android", "configuration", "quotas", "20", "maxSessions"], -3))
                == "configuration.quotas.20.maxSessions -3: expected a count ≥ 0")
        #expect(
            try problem(android, nested(["android", "configuration", "quotas", "20", "allowedTime"], -600))
                == "configuration.quotas.20.allowedTime -600.0: expected a finite number ≥ 0")
        var enqueued = android
        try enqueued.submit(identifier: id, earliestBeginDate: nil, at: t0)
        #expect(try problem(enqueued) { _ in } == nil)
        #expect(
            try problem(enqueued, nested(["android", "works", id, "initialDelay"], 1e300))
                == "works.\(id).initialDelay 1e+300: expected a finite number ≥ 0"
                || problem(enqueued, nested(["android", "works", id, "initialDelay"], 1e300))
                    == "works.\(id).initialDelay 1e+300: the first run would come after 9999"
        )
        #expect(
            try problem(enqueued, nested(["android", "works", id, "runAttemptCount"], -7))
                == "works.\(id).runAttemptCount -7: expected a count ≥ 0")
        #expect(
            try problem(Self.ios(seed: 1), nested(["ios", "configuration", "opportunity", "meanDelay"], 1e300))
                == "configuration.opportunity.meanDelay 1e+300: expected 1 to 31536000 seconds (a year)")
        // The budget `--budget` allows (up to 600 s), and a pending request of an identifier the
        // app may not submit (it would block every later submit).
        #expect(try problem(Self.ios(seed: 1), nested(["ios", "configuration", "runtimeBudget"], 600)) == nil)
        #expect(
            try problem(Self.ios(seed: 1), nested(["ios", "configuration", "runtimeBudget"], 1e308))
                == "configuration.runtimeBudget 1e+308: expected more than 0 and at most 600 seconds")
        var pending = Self.ios(seed: 1)
        try Self.open(&pending, at: t0, earliest: t0.addingTimeInterval(3_600))
        #expect(try problem(pending) { _ in } == nil)
        #expect(
            try problem(pending, nested(["ios", "pending", "identifier"], "com.example.other"))
                == "pending.identifier \"com.example.other\" is not in configuration.permittedIdentifiers")
    }

    @Test("The device's zone is kept in the encoding (absent until set; an unknown name is refused)")
    func timeZoneRoundTrip() throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        var os = Self.ios(seed: 1)
        #expect(!String(decoding: try encoder.encode(os), as: UTF8.self).contains("timeZone"))
        os.setTimeZone(try #require(TimeZone(identifier: "Asia/Tokyo")))
        let copy = try decoder.decode(SimulatedOS.self, from: encoder.encode(os))
        #expect(copy.timeZoneIdentifier == "Asia/Tokyo" && copy.timeZone?.identifier == "Asia/Tokyo")
        var object = try #require(JSONSerialization.jsonObject(with: encoder.encode(os)) as? [String: Any])
        object["timeZone"] = "Atlantis/Capital"
        let bad = try decoder.decode(SimulatedOS.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(bad.validationProblem == "timeZone: " + WakeCalendar.unknownZoneReason("Atlantis/Capital"))
    }

    @Test("The launch history keeps the most recent launches, at most the limit")
    func launchHistoryLimit() throws {
        var os = SimulatedOS(F.android(interval: 900), seed: 2)
        try os.submit(identifier: id, earliestBeginDate: nil, at: t0)
        let launches = Self.serve(&os, from: t0, to: t0.addingTimeInterval(F.day))
        #expect(launches.count > SimulatedOS.launchHistoryLimit)
        #expect(os.launchHistory.count == SimulatedOS.launchHistoryLimit)
        #expect(os.launchHistory.last?.at == launches.last?.startedAt)
        #expect(os.launchHistory.first?.at == launches[launches.count - SimulatedOS.launchHistoryLimit].startedAt)
    }
}

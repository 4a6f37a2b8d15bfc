// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

/// A provider with a fixed cost and result, to steer the weather step.
struct FixedWeather: WeatherProvider {
    var name = "fixed"
    var cost: TimeInterval
    var error: WeatherError?
    func forecast(for location: Coordinate, now: Date) -> (result: Result<Forecast, WeatherError>, cost: TimeInterval) {
        if let error { return (.failure(error), cost) }
        return (.success(Forecast(fetchedAt: now, location: location, source: name, hours: [])), cost)
    }
}

/// The consolidated refresh job, step by step (the month-long runs are in the twin's tests).
@Suite("Consolidated refresh job")
struct RefreshJobTests {
    static let zone = TimeZone(identifier: "America/New_York")!
    static let berlin = Coordinate(latitude: 52.52, longitude: 13.405)!
    static let identifier = PhoneAppConfiguration().taskIdentifier
    /// Thu 2025-03-06 12:00 EST: the demo's week, crossing spring-forward.
    static let start = ISO8601.date("2025-03-06T17:00:00Z")!

    static func iOS(_ mode: RegistrationMode, seed: UInt64 = 1, budget: TimeInterval = 30) -> SimulatedOS {
        var configuration = IOSBackgroundScheduler.Configuration(permittedIdentifiers: [identifier])
        configuration.registrationMode = mode
        configuration.runtimeBudget = budget
        return SimulatedOS(IOSBackgroundScheduler(configuration: configuration, seed: seed))
    }

    static func app(
        scheduler: SimulatedOS, weather: any WeatherProvider = OfflineWeatherProvider(seed: 9),
        costs: StepCosts = StepCosts()
    ) -> PhoneApp {
        var configuration = PhoneAppConfiguration()
        configuration.stepCosts = costs
        return PhoneApp(
            state: PhoneSyncState(deviceSeed: 7), scheduler: scheduler, weather: weather, schedule: .everyDayAtSeven,
            zone: zone, location: berlin, configuration: configuration)
    }

    static func names(_ effects: [PhoneAction]) -> [EventName] {
        effects.compactMap { $0.event?.name }
    }

    static func event(_ name: EventName, in effects: [PhoneAction]) -> Event? {
        effects.lazy.compactMap { $0.event?.name == name ? $0.event : nil }.first
    }

    @Test("late-crash: registration after launch kills the app with the launch-handler error")
    func lateCrash() {
        var app = Self.app(scheduler: Self.iOS(.lateCrash))
        let effects = app.launch(at: Self.start, byUser: true)
        let crash = Self.event(.appCrashed, in: effects)
        #expect(
            crash?["message"] == .string("All launch handlers must be registered before application finishes launching")
        )
        #expect(!Self.names(effects).contains(.batchGenerated))
        #expect(!Self.names(effects).contains(.renewSubmitted))
        #expect(app.nextBackgroundLaunch(after: Self.start) == nil)
    }

    @Test(
        "Scenario 4: budget 3 s, renew 0.1, notices 0.5, dates 2, weather 2: renewed, notices done, dates cut, weather skipped"
    )
    func scenarioFourBudget() throws {
        var app = Self.app(
            scheduler: Self.iOS(.early, budget: 3), weather: FixedWeather(cost: 2),
            costs: StepCosts(renew: 0.1, notices: 0.5, dates: 2, sunlight: 0.05))
        _ = app.launch(at: Self.start, byUser: true)
        // 10:00 EST Friday: inside the weather window.
        let effects = app.simulateLaunch(at: ISO8601.date("2025-03-07T15:00:00Z")!)
        let names = Self.names(effects)
        #expect(names.first(where: { $0 != .handlerRegistered && !$0.rawValue.hasPrefix("os.") }) == .handlerEntered)
        #expect(names.contains(.renewSubmitted))
        #expect(names.contains(.notificationAdded))
        #expect(!names.contains(.batchGenerated), "dates do not fit before the expiration warning")
        #expect(!names.contains { $0.rawValue.hasPrefix("weather.") })
        let expired = try #require(Self.event(.handlerExpired, in: effects))
        #expect(expired["step"] == .string("dates"))
        #expect(Self.event(.handlerCompleted, in: effects)?["success"] == .bool(false))
        #expect(!names.contains(.osAppKilled))
        #expect(
            app.nextBackgroundLaunch(after: ISO8601.date("2025-03-07T15:00:10Z")!) != nil, "the next request is pending"
        )
    }

    @Test("A slow weather provider makes the task expire after renew and dates; the next request is still pending")
    func slowWeatherExpires() throws {
        var app = Self.app(scheduler: Self.iOS(.early), weather: FixedWeather(cost: 45))
        _ = app.launch(at: Self.start, byUser: true)
        let now = ISO8601.date("2025-03-07T15:00:00Z")!
        let effects = app.simulateLaunch(at: now)
        let names = Self.names(effects)
        let renew = try #require(names.firstIndex(of: .renewSubmitted))
        let dates = try #require(names.firstIndex(of: .batchGenerated))
        let expired = try #require(names.firstIndex(of: .handlerExpired))
        #expect(renew < dates && dates < expired)
        #expect(Self.event(.handlerExpired, in: effects)?["step"] == .string("weather"))
        #expect(!names.contains(.weatherFetched))
        #expect(Self.event(.handlerCompleted, in: effects)?["success"] == .bool(false))
        #expect(app.state.outbox?.seq == 2, "what finished stays done")
        #expect(app.nextBackgroundLaunch(after: now.addingTimeInterval(60)) != nil, "the next request is pending")
        #expect(app.state.refreshLog.history.last?.success == false)
    }

    @Test("Weather: background only in 06:00-18:00; the foreground refreshes an expired cache at any hour")
    func weatherWindow() {
        var app = Self.app(scheduler: Self.iOS(.early), weather: FixedWeather(cost: 0.2))
        // 20:00 EST: outside the window.
        let evening = ISO8601.date("2025-03-07T01:00:00Z")!
        _ = app.launch(at: Self.start, byUser: true)
        let background = app.simulateLaunch(at: evening)
        #expect(Self.event(.weatherSkipped, in: background)?["reason"] == .string("outside 06:00-18:00"))
        let foreground = app.foregroundRefresh(at: evening.addingTimeInterval(7 * 3_600), reason: "open")
        #expect(Self.event(.weatherFetched, in: foreground)?["reason"] == .string("expired"))
        let again = app.foregroundRefresh(at: evening.addingTimeInterval(8 * 3_600), reason: "open")
        #expect(Self.event(.weatherSkipped, in: again)?["reason"] == .string("fresh"))
        #expect(Self.names(again).contains(.batchGenerated))
    }

    /// Acknowledges the phone's outbox as the watch would, at `now`.
    static func acknowledge(_ app: inout PhoneApp, at now: Date) throws {
        let outbox = try #require(app.sync.state.outbox)
        _ = app.receive(.ack(outbox.ref, coverageEnd: outbox.coverageEnd), at: now)
        #expect(app.sync.state.acked)
    }

    @Test("No churn: a background run whose dates equal the acknowledged batch's sends none (batch.unchanged)")
    func noChurn() throws {
        var app = Self.app(scheduler: Self.iOS(.early), weather: FixedWeather(cost: 0.2))
        _ = app.launch(at: Self.start, byUser: true)
        let first = try #require(app.sync.state.outbox)
        // 15 minutes on, before any wake-up passes: the same dates.
        let same = Self.start.addingTimeInterval(15 * 60)
        // Not acknowledged yet: published again, as before.
        let unacked = app.simulateLaunch(at: same)
        #expect(Self.names(unacked).contains(.batchGenerated))
        let second = try #require(app.sync.state.outbox)
        #expect(second.seq == first.seq + 1 && second.digest == first.digest)
        try Self.acknowledge(&app, at: same)
        let quiet = app.simulateLaunch(at: same.addingTimeInterval(15 * 60))
        #expect(!Self.names(quiet).contains(.batchGenerated), "\(Self.names(quiet))")
        #expect(!quiet.contains { if case .send(.batch) = $0 { true } else { false } })
        let unchanged = try #require(Self.event(.batchUnchanged, in: quiet))
        #expect(unchanged["seq"] == .int(Int64(second.seq)))
        #expect(unchanged["digest"] == .string(Hex64.string(second.digest)))
        #expect(app.sync.state.outbox == second && app.sync.state.lastSeq == second.seq)
        // The run still succeeds, and names the batch that holds its dates.
        #expect(Self.event(.handlerCompleted, in: quiet)?["outcome"] == .string("success"))
        // A foreground open publishes anyway (the user asked).
        let open = app.foregroundRefresh(at: same.addingTimeInterval(30 * 60), reason: "open")
        #expect(Self.names(open).contains(.batchGenerated))
        try Self.acknowledge(&app, at: same.addingTimeInterval(30 * 60))
        // Once the first wake-up (Fri 07:00 EST) has passed, the dates differ: a new batch.
        let after = ISO8601.date("2025-03-07T13:00:00Z")!
        let next = app.simulateLaunch(at: after)
        #expect(Self.names(next).contains(.batchGenerated))
    }

    @Test("Android: a network error in the weather step retries (the worker rule), other errors fail")
    func androidRetry() {
        for (error, outcome) in [
            (WeatherError.network("offline"), "retry"), (WeatherError.http(status: 500, "server"), "failure"),
        ] {
            var app = Self.app(
                scheduler: SimulatedOS(AndroidWorkScheduler(configuration: .init(repeatInterval: 3_600))),
                weather: FixedWeather(cost: 1, error: error))
            _ = app.launch(at: Self.start, byUser: true)
            var effects: [PhoneAction] = []
            var now = Self.start
            for _ in 0..<5 where Self.event(.handlerCompleted, in: effects) == nil {
                guard let due = app.nextBackgroundLaunch(after: now) else { break }
                now = due
                effects = app.backgroundLaunchDue(at: due)
            }
            #expect(Self.event(.handlerCompleted, in: effects)?["outcome"] == .string(outcome), "\(error)")
        }
    }

    @Test("Travel while the app is force-quit waits for the next launch instead of crashing on submit")
    func travelWhileNotRunning() {
        var app = Self.app(scheduler: Self.iOS(.early))
        _ = app.launch(at: Self.start, byUser: true)
        _ = app.forceQuit(at: Self.start)
        let moved = Self.start.addingTimeInterval(60)
        let reason = "the app is not running; the new zone applies at its next launch"
        #expect(
            app.travel(to: TimeZone(identifier: "Europe/Berlin")!, at: moved)
                == [.emit(Event(.refreshDeferred, [("reason", .string(reason))]), at: moved)])
        #expect(app.crashed == nil)
        let reopened = app.launch(at: Self.start.addingTimeInterval(120), byUser: true)
        #expect(Self.event(.batchGenerated, in: reopened)?["timeZone"] == .string("Europe/Berlin"))
    }

    @Test("A job that waits for its forecast stamps what it says after the wait with the forecast's arrival")
    func deferredWeatherStamps() throws {
        var app = Self.app(scheduler: Self.iOS(.early), weather: FixedWeather(cost: 0.2))
        app.weatherFetch = .deferred
        let opened = app.launch(at: Self.start, byUser: true)
        #expect(opened.contains(.fetchWeather(location: Self.berlin, at: Self.start)), "\(Self.names(opened))")
        #expect(Self.stamps(opened) == [Self.start] && Self.names(opened).contains(.batchGenerated))
        #expect(!Self.names(opened).contains(.weatherFetched))
        let arrival = Self.start.addingTimeInterval(5)
        let (result, cost) = app.weather.forecast(for: Self.berlin, now: Self.start)
        let rest = app.weatherArrived(result, cost: cost, at: arrival)
        #expect(Self.names(rest).contains(.weatherFetched), "\(Self.names(rest))")
        #expect(Self.stamps(rest) == [arrival])
        #expect(app.weatherArrived(result, cost: cost, at: arrival).isEmpty, "no job waits any more")
    }

    /// The distinct instants the `emit` actions of `actions` are stamped with.
    static func stamps(_ actions: [PhoneAction]) -> Set<Date> {
        Set(actions.compactMap { if case .emit(_, let at) = $0 { at } else { nil } })
    }

    @Test("A submit that kills the app ends the run: no dates, no success in the history")
    func crashOnSubmitStopsTheRun() {
        var app = Self.app(scheduler: Self.iOS(.early))
        // No launch: no handler registered in this process, so submit raises the launch-handler error.
        let effects = app.foregroundRefresh(at: Self.start, reason: "open")
        #expect(Self.names(effects).contains(.appCrashed))
        #expect(!Self.names(effects).contains(.batchGenerated))
        #expect(app.state.refreshLog.history.last?.success == false)
    }

    @Test("Delivered notices are not pending any more")
    func deliveredNotices() {
        var app = Self.app(scheduler: Self.iOS(.early))
        _ = app.launch(at: Self.start, byUser: true)
        let all = app.pendingNotifications(at: Self.start)
        #expect(all.count >= 7)
        let later = Self.start.addingTimeInterval(3 * 86_400)
        let pending = app.pendingNotifications(at: later)
        #expect(pending.count < all.count && pending.allSatisfy { $0.fireDate > later })
    }

    @Test(
        "stalenessHours is a plain non-negative number of hours, null only before the first run",
        arguments: [(-7_200.0, 0.0), (0.0, 0.0), (5_400.0, 1.5), (90_000.0, 25.0)])
    func stalenessNeverNegative(secondsAfterRun: Double, hours: Double) throws {
        var log = RefreshLog()
        #expect(log.stalenessHours(at: Self.start) == nil)
        log.markCompleted(at: Self.start, success: true, lowPower: false, bucket: nil, kind: .background, duration: 5)
        // A negative offset: the clock reads before the last run (set back, or a restart with an
        // earlier --clock-start).
        let staleness = try #require(log.stalenessHours(at: Self.start.addingTimeInterval(secondsAfterRun)))
        #expect(staleness == hours)
        #expect(staleness.sign == .plus)
    }

    @Test(
        "run.record names the standby bucket (as os.launch and os.standby_bucket do) and gives its duration in seconds")
    func runRecordFields() {
        let android = RefreshRun(
            at: Self.start, scheduledAt: nil, success: true, lowPower: false, bucket: StandbyBucket.rare.rawValue,
            kind: .background, duration: 2.5)
        #expect(android.event["bucket"] == .string("rare"))
        #expect(android.event["duration"] == .double(2.5))
        let ios = RefreshRun(
            at: Self.start, scheduledAt: nil, success: true, lowPower: false, bucket: nil, kind: .foreground,
            duration: 1)
        #expect(ios.event["bucket"] == .null)
    }
}

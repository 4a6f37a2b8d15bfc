// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

/// iOS notification authorization (docs/scheduler.md, "Notification authorization"): stdin
/// `notifications STATE` and `--notifications`; denied and not-determined make every
/// `UNUserNotificationCenter.add` fail with `UNErrorDomain` code 1, provisional delivers quietly.
@Suite("iOS notification authorization")
struct NotificationAuthorizationTests {
    /// Clear hours (cloud 5 %, rain 0 %) for 10 days from the fetch: every morning gets a
    /// sunlight notice.
    struct ClearSky: WeatherProvider {
        var name: String { "offline" }
        func forecast(for location: Coordinate, now: Date) -> (
            result: Result<Forecast, WeatherError>, cost: TimeInterval
        ) {
            let first = Date(timeIntervalSince1970: (now.timeIntervalSince1970 / 3_600).rounded(.down) * 3_600)
            let hours = (0..<240).map {
                HourlyWeather(
                    time: first.addingTimeInterval(Double($0) * 3_600), cloudCover: 5, precipitationProbability: 0,
                    weatherCode: 0, temperature: 10)
            }
            return (.success(Forecast(fetchedAt: now, location: location, source: name, hours: hours)), 0.3)
        }
    }

    /// The `notification.*` events of an `open`, after `lines` were typed on a started phone
    /// whose weather is clear (so a sunlight notice is planned as well as the bedtime ones).
    static func openAfter(_ lines: [String], app: PhoneApp = PhoneHarness.app()) -> PhoneHarness {
        var bench = PhoneHarness(app: app)
        bench.weather = ClearSky()
        bench.start()
        bench.advance(60)
        for line in lines { bench.type(line) }
        bench.clearEvents()
        bench.type("open")
        return bench
    }

    @Test(
        "denied and not-determined: every notice the app adds fails with UNErrorDomain 1 (bedtime and sunlight), no notification.added, nothing pending"
    )
    func deniedFails() throws {
        for state in ["denied", "not-determined"] {
            var bench = Self.openAfter(["notifications \(state)"])
            let failed = bench.events(.notificationFailed)
            #expect(
                failed.contains { $0.stringField("id")?.hasPrefix(BedtimeNoticePlanner.idPrefix) == true }, "\(state)")
            #expect(!bench.names().contains(.notificationAdded), "\(state)")
            #expect(failed.allSatisfy { $0.stringField("domain") == "UNErrorDomain" && $0["code"] == .int(1) })
            #expect(failed.allSatisfy { $0.stringField("error") == "notificationsNotAllowed" })
            #expect(bench.node.app.pendingNotifications(at: bench.now).isEmpty, "\(state)")
            bench.clearEvents()
            bench.type("notifications")
            #expect(!bench.names().contains(.notificationPending))
            // The sunlight notice fails the same way.
            #expect(failed.contains { $0.stringField("id")?.hasPrefix(SunlightPlanner.idPrefix) == true }, "\(state)")
        }
    }

    @Test("provisional: the notices are pending and notification.added says delivery quiet; authorized says alert")
    func provisionalQuiet() throws {
        let quiet = Self.openAfter(["notifications provisional"])
        let added = quiet.events(.notificationAdded)
        #expect(added.contains { $0.stringField("id")?.hasPrefix(SunlightPlanner.idPrefix) == true })
        #expect(added.contains { $0.stringField("id")?.hasPrefix(BedtimeNoticePlanner.idPrefix) == true })
        #expect(added.allSatisfy { $0.stringField("delivery") == "quiet" })
        #expect(!quiet.node.app.pendingNotifications(at: quiet.now).isEmpty)
        let loud = Self.openAfter([])
        #expect(loud.events(.notificationAdded).allSatisfy { $0.stringField("delivery") == "alert" })
        #expect(!loud.names().contains(.notificationFailed))
    }

    @Test(
        "the authorization is the device's: os.notifications, kept in os.json across a restart; authorized again adds")
    func keptAcrossRestart() throws {
        var bench = PhoneHarness()
        bench.start()
        bench.type("notifications denied")
        let said = try #require(bench.events(.osNotifications).first)
        #expect(said.stringField("authorization") == "denied")
        #expect(said.stringField("delivery") == "none")
        let stored = try JSONDecoder().decode(
            SimulatedOS.self, from: JSONEncoder().encode(bench.node.app.scheduler))
        #expect(stored.notificationAuthorization == .denied)
        var app = PhoneHarness.app()
        app.scheduler = stored
        var restarted = PhoneHarness(app: app)
        restarted.start()
        #expect(restarted.names().contains(.notificationFailed))
        #expect(!restarted.names().contains(.notificationAdded))
        restarted.type("notifications authorized")
        restarted.clearEvents()
        restarted.type("open")
        #expect(restarted.names().contains(.notificationAdded))
        #expect(!restarted.names().contains(.notificationFailed))
    }

    @Test("--notifications (a setting applied at start) as the stdin command: denied at start fails the first open")
    func settingAtStart() throws {
        var bench = PhoneHarness(
            configuration: PhoneHarness.configuration(settings: [.notificationAuthorization(.denied)]))
        bench.start()
        #expect(bench.names().contains(.osNotifications))
        #expect(bench.names().contains(.notificationFailed))
        #expect(!bench.names().contains(.notificationAdded))
    }

    @Test(
        "notifications STATE is refused on Android (pointing to permission notifications) and for an unknown state; notifications alone still lists"
    )
    func parse() throws {
        #expect(
            try PhoneCommand.parse("notifications provisional", platform: .ios)
                == .notificationAuthorization(.provisional))
        #expect(
            try PhoneCommand.parse("notifications not-determined", platform: .ios)
                == .notificationAuthorization(.notDetermined))
        #expect(try PhoneCommand.parse("notifications", platform: .android) == .notifications)
        do {
            _ = try PhoneCommand.parse("notifications denied", platform: .android)
            Issue.record("accepted on Android")
        } catch {
            #expect(error.reason.contains("permission notifications grant|revoke"), "\(error.reason)")
        }
        do {
            _ = try PhoneCommand.parse("notifications maybe", platform: .ios)
            Issue.record("accepted maybe")
        } catch {
            #expect(error.reason.contains("\"maybe\""), "\(error.reason)")
        }
        do {
            _ = try PhoneCommand.parse("notifications denied now", platform: .ios)
            Issue.record("accepted three words")
        } catch {
            #expect(error.reason.contains("notifications authorized|denied|provisional|not-determined"))
        }
    }
}

extension Event {
    /// The string value of field `key`, nil when absent or not a string.
    fileprivate func stringField(_ key: String) -> String? {
        if case .string(let text)? = self[key] { return text }
        return nil
    }
}

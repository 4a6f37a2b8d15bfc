// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

/// iOS notification authorization through the phone machine (docs/scheduler.md, "Notification authorization"): stdin
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

    typealias M = PhoneMachineTests

    /// A started phone node whose weather is clear (so a sunlight notice is planned as well as
    /// the bedtime ones), `lines` typed on it a minute on, then an `open`: the node and the open's
    /// actions.
    static func openAfter(_ lines: [String], app: PhoneApp = PhoneFixture.app()) -> (PhoneNode, [PhoneAction]) {
        var node = PhoneNode(app: app, configuration: PhoneFixture.configuration())
        _ = M.answered(&node, node.start(at: M.at(0)), at: M.at(0), provider: ClearSky())
        for line in lines { _ = M.typed(&node, line, at: 60, provider: ClearSky()) }
        let open = M.typed(&node, "open", at: 60, provider: ClearSky())
        return (node, open)
    }

    static func ids(_ events: [Event], prefix: String) -> [Event] {
        events.filter { $0.stringField("id")?.hasPrefix(prefix) == true }
    }

    @Test(
        "denied and not-determined: every notice the app adds fails with UNErrorDomain 1 (bedtime and sunlight), no notification.added, nothing pending",
        arguments: ["denied", "not-determined"])
    func deniedFails(state: String) throws {
        var (node, open) = Self.openAfter(["notifications \(state)"])
        let failed = M.events(.notificationFailed, in: open)
        #expect(!Self.ids(failed, prefix: BedtimeNoticePlanner.idPrefix).isEmpty)
        // The sunlight notice fails the same way.
        #expect(Self.ids(failed, prefix: SunlightPlanner.idPrefix).count == 1)
        #expect(M.events(.notificationAdded, in: open) == [])
        let unError: [EventValue?] = [.string("UNErrorDomain"), .int(1), .string("notificationsNotAllowed")]
        #expect(failed.allSatisfy { [$0["domain"], $0["code"], $0["error"]] == unError })
        #expect(node.app.pendingNotifications(at: M.at(60).now).isEmpty)
        #expect(M.events(.notificationPending, in: node.commandLine("notifications", at: M.at(61))) == [])
    }

    @Test("provisional: the notices are pending and notification.added says delivery quiet; authorized says alert")
    func provisionalQuiet() throws {
        let (quiet, open) = Self.openAfter(["notifications provisional"])
        let added = M.events(.notificationAdded, in: open)
        #expect(Self.ids(added, prefix: SunlightPlanner.idPrefix).count == 1)
        #expect(!Self.ids(added, prefix: BedtimeNoticePlanner.idPrefix).isEmpty)
        #expect(Set(added.map { $0.stringField("delivery") }) == ["quiet"])
        #expect(!quiet.app.pendingNotifications(at: M.at(60).now).isEmpty)
        let (_, loud) = Self.openAfter([])
        #expect(Set(M.events(.notificationAdded, in: loud).map { $0.stringField("delivery") }) == ["alert"])
        #expect(M.events(.notificationFailed, in: loud) == [])
    }

    @Test(
        "the authorization is the device's: os.notifications, kept in os.json across a restart; authorized again adds")
    func keptAcrossRestart() throws {
        var node = M.started()
        let denied = M.typed(&node, "notifications denied", at: 60)
        let said = try #require(M.events(.osNotifications, in: denied).first)
        #expect([said.stringField("authorization"), said.stringField("delivery")] == ["denied", "none"])
        let stored = try JSONDecoder().decode(SimulatedOS.self, from: JSONEncoder().encode(node.app.scheduler))
        #expect(stored.notificationAuthorization == .denied)
        var app = PhoneFixture.app()
        app.scheduler = stored
        var restarted = PhoneNode(app: app, configuration: PhoneFixture.configuration())
        let start = M.names(M.answered(&restarted, restarted.start(at: M.at(120)), at: M.at(120)))
        #expect(start.contains(.notificationFailed) && !start.contains(.notificationAdded))
        _ = M.typed(&restarted, "notifications authorized", at: 180)
        let open = M.names(M.typed(&restarted, "open", at: 180))
        #expect(open.contains(.notificationAdded) && !open.contains(.notificationFailed))
    }

    @Test("--notifications (a setting applied at start) as the stdin command: denied at start fails the first open")
    func settingAtStart() throws {
        var node = PhoneNode(
            app: PhoneFixture.app(),
            configuration: PhoneFixture.configuration(settings: [.notificationAuthorization(.denied)]))
        let start = M.names(M.answered(&node, node.start(at: M.at(0)), at: M.at(0)))
        #expect(start.contains(.osNotifications) && start.contains(.notificationFailed))
        #expect(!start.contains(.notificationAdded))
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

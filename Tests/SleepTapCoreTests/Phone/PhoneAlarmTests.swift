// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

/// The companion phone alarm through the phone machine, its actions checked as equalities (docs/scheduler.md, "Alarms"): `alarm.set`,
/// `os.alarm.fired` at its own instant, `alarm.refused`, `alarm.lost`, the permission's broadcast.
@Suite("Phone node: the companion phone alarm (Android)")
struct PhoneAlarmTests {
    /// 2025-03-07 07:00 EST, the first wake-up after the bench's start (Thu 12:00 EST).
    static let wake = ISO8601.date("2025-03-07T12:00:00Z")!

    typealias M = PhoneMachineTests

    static func app(api: Int? = nil, declaration: ExactAlarmDeclaration? = nil, phoneAlarm: Bool = true) -> PhoneApp {
        var configuration = AndroidWorkScheduler.Configuration(repeatInterval: 3_600)
        if let api { configuration.selectQuotas(androidAPI: api) }
        configuration.exactAlarmDeclaration = declaration
        var os = SimulatedOS(AndroidWorkScheduler(configuration: configuration), seed: 4)
        os.applyInstallDefaults()
        var appConfiguration = PhoneAppConfiguration()
        appConfiguration.phoneAlarm = phoneAlarm
        return PhoneApp(
            state: PhoneSyncState(deviceSeed: 7), scheduler: os, weather: OfflineWeatherProvider(seed: 9),
            schedule: .everyDayAtSeven, zone: PhoneFixture.zone, location: PhoneFixture.berlin,
            configuration: appConfiguration, randomSeed: 42)
    }

    /// A phone node on `app`, started at `t0` and answered; the start's actions.
    static func started(_ app: PhoneApp) -> (PhoneNode, [PhoneAction]) {
        var node = PhoneNode(app: app, configuration: PhoneFixture.configuration())
        let actions = M.answered(&node, node.start(at: M.at(0)), at: M.at(0))
        return (node, actions)
    }

    /// The `osAlarm` timer's arms and cancels among `actions`.
    static func alarmTimer(_ actions: [PhoneAction]) -> [PhoneAction] {
        M.timers(actions).filter {
            switch $0 {
            case .arm(.osAlarm, _), .cancel(.osAlarm): true
            default: false
            }
        }
    }

    @Test(
        "--phone-alarm on: alarm.set for the next wake-up at the first open; os.alarm.fired stamped at that instant, then the next alarm.set"
    )
    func setAndFire() throws {
        var (node, start) = Self.started(Self.app())
        let set = M.events(.alarmSet, in: start)
        #expect(set.map { [$0["triggerAt"], $0["kind"]] } == [[.date(Self.wake), .string("alarm-clock")]])
        #expect(Self.alarmTimer(start) == [.arm(.osAlarm, .at(Self.wake))])
        // Another open with the same dates sets nothing again.
        #expect(M.events(.alarmSet, in: M.typed(&node, "open", at: 60)) == [])
        // The driver wakes a little late: the alarm is still said at its own instant.
        let late = M.at(Self.wake.addingTimeInterval(2))
        let fired = M.answered(&node, node.timerFired(.osAlarm, at: late), at: late)
        #expect(PhoneNodeTests.stamp(fired, .osAlarmFired) == [Self.wake])
        let tomorrow = Self.wake.addingTimeInterval(86_400)
        #expect(M.events(.alarmSet, in: fired).map { $0["triggerAt"] } == [.date(tomorrow)])
        #expect(Self.alarmTimer(fired).last == .arm(.osAlarm, .at(tomorrow)))
    }

    @Test(
        "API 34, a new install: alarm.refused (SecurityException) once; the grant's broadcast sets it; revoking loses it with no broadcast"
    )
    func refusedGrantedLost() throws {
        var (node, start) = Self.started(Self.app(api: 34))
        #expect(M.events(.alarmSet, in: start) == [])
        let refused = try #require(M.events(.alarmRefused, in: start).first)
        #expect(refused["triggerAt"] == .date(Self.wake))
        guard case .string(let reason) = refused["reason"] else { throw CancellationError() }
        #expect(reason.contains("SecurityException") && reason.contains("SCHEDULE_EXACT_ALARM"))
        #expect(Self.alarmTimer(start).allSatisfy { $0 == .cancel(.osAlarm) })
        #expect(M.events(.alarmRefused, in: M.typed(&node, "open", at: 60)) == [], "said once per wake-up")
        let grant = M.typed(&node, "permission exact-alarm grant", at: 61)
        #expect(
            M.events(.osPermission, in: grant).first?["broadcast"]
                == .string("ACTION_SCHEDULE_EXACT_ALARM_PERMISSION_STATE_CHANGED"))
        #expect(M.events(.alarmSet, in: grant).map { $0["triggerAt"] } == [.date(Self.wake)])
        #expect(Self.alarmTimer(grant).last == .arm(.osAlarm, .at(Self.wake)))
        let revoke = M.typed(&node, "permission exact-alarm revoke", at: 62)
        #expect(M.events(.osPermission, in: revoke).first?["broadcast"] == .null)
        #expect(M.events(.alarmLost, in: revoke).map { $0["triggerAt"] } == [.date(Self.wake)])
        #expect(M.events(.alarmSet, in: revoke) + M.events(.alarmRefused, in: revoke) == [])
        #expect(Self.alarmTimer(revoke) == [.cancel(.osAlarm)])
        #expect(node.app.scheduler.pendingAlarms.isEmpty)
        // The next refresh tries again and is refused.
        #expect(M.events(.alarmRefused, in: M.typed(&node, "open", at: 63)).count == 1)
    }

    @Test(
        "USE_EXACT_ALARM on API 34: set at once, and revoke changes nothing (applied false); --phone-alarm off cancels a left alarm"
    )
    func useExactAlarmAndOff() throws {
        var (node, start) = Self.started(Self.app(api: 34, declaration: .use))
        #expect(M.events(.alarmSet, in: start).count == 1)
        let revoke = M.typed(&node, "permission exact-alarm revoke", at: 60)
        #expect(M.events(.osPermission, in: revoke).first?["applied"] == .bool(false))
        #expect(M.events(.alarmLost, in: revoke) == [])
        #expect(node.app.scheduler.pendingAlarms.count == 1)
        // The same device, the app started again with the phone alarm off.
        let app = PhoneApp(
            state: PhoneSyncState(deviceSeed: 7), scheduler: node.app.scheduler,
            weather: OfflineWeatherProvider(seed: 9),
            schedule: .everyDayAtSeven, zone: PhoneFixture.zone, location: PhoneFixture.berlin, randomSeed: 42)
        let (off, restart) = Self.started(app)
        #expect(M.events(.alarmCancelled, in: restart).map { $0["triggerAt"] } == [.date(Self.wake)])
        #expect(off.app.scheduler.pendingAlarms.isEmpty)
    }

    @Test("stdin permission exact-alarm: bad words are refused naming them; iOS refuses it")
    func parsing() throws {
        let grant = try PhoneCommand.parse("permission exact-alarm grant", platform: .android)
        #expect(grant == .exactAlarmPermission(true))
        let revoke = try PhoneCommand.parse("permission exact-alarm revoke", platform: .android)
        #expect(revoke == .exactAlarmPermission(false))
        for (line, word) in [("permission exact-alarm maybe", "maybe"), ("permission alarms grant", "alarms")] {
            do {
                _ = try PhoneCommand.parse(line, platform: .android)
                Issue.record("\(line) accepted")
            } catch {
                #expect(error.reason.contains("\"\(word)\""), "\(error.reason)")
            }
        }
        #expect(throws: PhoneCommand.Rejection.self) {
            try PhoneCommand.parse("permission exact-alarm grant", platform: .ios)
        }
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

/// The companion phone alarm through the phone node (docs/scheduler.md, "Alarms"): `alarm.set`,
/// `os.alarm.fired` at its own instant, `alarm.refused`, `alarm.lost`, the permission's broadcast.
@Suite("Phone node: the companion phone alarm (Android)")
struct PhoneAlarmTests {
    /// 2025-03-07 07:00 EST, the first wake-up after the bench's start (Thu 12:00 EST).
    static let wake = ISO8601.date("2025-03-07T12:00:00Z")!

    static func bench(api: Int? = nil, declaration: ExactAlarmDeclaration? = nil, phoneAlarm: Bool = true)
        -> PhoneHarness
    {
        var configuration = AndroidWorkScheduler.Configuration(repeatInterval: 3_600)
        if let api { configuration.selectQuotas(androidAPI: api) }
        configuration.exactAlarmDeclaration = declaration
        var os = SimulatedOS(AndroidWorkScheduler(configuration: configuration), seed: 4)
        os.applyInstallDefaults()
        var appConfiguration = PhoneAppConfiguration()
        appConfiguration.phoneAlarm = phoneAlarm
        let app = PhoneApp(
            state: PhoneSyncState(deviceSeed: 7), scheduler: os, weather: OfflineWeatherProvider(seed: 9),
            schedule: .everyDayAtSeven, zone: PhoneHarness.zone, location: PhoneHarness.berlin,
            configuration: appConfiguration, randomSeed: 42)
        return PhoneHarness(app: app)
    }

    @Test(
        "--phone-alarm on: alarm.set for the next wake-up at the first open; os.alarm.fired stamped at that instant, then the next alarm.set"
    )
    func setAndFire() throws {
        var bench = Self.bench()
        bench.start()
        let set = bench.events(.alarmSet)
        #expect(set.count == 1)
        #expect(set.first?["triggerAt"] == .date(Self.wake))
        #expect(set.first?["kind"] == .string("alarm-clock"))
        #expect(bench.armed[.osAlarm] == .at(Self.wake))
        // Another open with the same dates sets nothing again.
        bench.clearEvents()
        bench.advance(60)
        bench.type("open")
        #expect(bench.events(.alarmSet).isEmpty)
        // The driver wakes a little late: the alarm is still said at its own instant.
        bench.clearEvents()
        bench.now = Self.wake.addingTimeInterval(2)
        bench.fire(.osAlarm)
        let fired = try #require(bench.stamped.first { $0.name == .osAlarmFired })
        #expect(fired.at == Self.wake)
        #expect(bench.events(.alarmSet).first?["triggerAt"] == .date(Self.wake.addingTimeInterval(86_400)))
        #expect(bench.armed[.osAlarm] == .at(Self.wake.addingTimeInterval(86_400)))
    }

    @Test(
        "API 34, a new install: alarm.refused (SecurityException) once; the grant's broadcast sets it; revoking loses it with no broadcast"
    )
    func refusedGrantedLost() throws {
        var bench = Self.bench(api: 34)
        bench.start()
        #expect(bench.events(.alarmSet).isEmpty)
        let refused = try #require(bench.events(.alarmRefused).first)
        #expect(refused["triggerAt"] == .date(Self.wake))
        guard case .string(let reason) = refused["reason"] else { throw CancellationError() }
        #expect(reason.contains("SecurityException") && reason.contains("SCHEDULE_EXACT_ALARM"))
        #expect(bench.armed[.osAlarm] == nil)
        bench.clearEvents()
        bench.advance(60)
        bench.type("open")
        #expect(bench.events(.alarmRefused).isEmpty, "said once per wake-up")
        bench.clearEvents()
        bench.type("permission exact-alarm grant")
        let granted = try #require(bench.events(.osPermission).first)
        #expect(granted["broadcast"] == .string("ACTION_SCHEDULE_EXACT_ALARM_PERMISSION_STATE_CHANGED"))
        #expect(bench.events(.alarmSet).first?["triggerAt"] == .date(Self.wake))
        #expect(bench.armed[.osAlarm] == .at(Self.wake))
        bench.clearEvents()
        bench.type("permission exact-alarm revoke")
        #expect(bench.events(.osPermission).first?["broadcast"] == .null)
        #expect(bench.events(.alarmLost).first?["triggerAt"] == .date(Self.wake))
        #expect(bench.events(.alarmSet).isEmpty && bench.events(.alarmRefused).isEmpty)
        #expect(bench.armed[.osAlarm] == nil)
        #expect(bench.node.app.scheduler.pendingAlarms.isEmpty)
        // The next refresh tries again and is refused.
        bench.clearEvents()
        bench.type("open")
        #expect(bench.events(.alarmRefused).count == 1)
    }

    @Test(
        "USE_EXACT_ALARM on API 34: set at once, and revoke changes nothing (applied false); --phone-alarm off cancels a left alarm"
    )
    func useExactAlarmAndOff() throws {
        var bench = Self.bench(api: 34, declaration: .use)
        bench.start()
        #expect(bench.events(.alarmSet).count == 1)
        bench.clearEvents()
        bench.type("permission exact-alarm revoke")
        #expect(bench.events(.osPermission).first?["applied"] == .bool(false))
        #expect(bench.events(.alarmLost).isEmpty)
        #expect(bench.node.app.scheduler.pendingAlarms.count == 1)
        // The same device, the app started again with the phone alarm off.
        let os = bench.node.app.scheduler
        let app = PhoneApp(
            state: PhoneSyncState(deviceSeed: 7), scheduler: os, weather: OfflineWeatherProvider(seed: 9),
            schedule: .everyDayAtSeven, zone: PhoneHarness.zone, location: PhoneHarness.berlin, randomSeed: 42)
        var off = PhoneHarness(app: app)
        off.start()
        #expect(off.events(.alarmCancelled).first?["triggerAt"] == .date(Self.wake))
        #expect(off.node.app.scheduler.pendingAlarms.isEmpty)
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

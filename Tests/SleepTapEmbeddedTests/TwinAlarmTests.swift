// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapEmbedded
import SleepTapOS
import Testing

/// The companion phone alarm and the Android permissions in the twin, in virtual time
/// (docs/scheduler.md, "Alarms" and "Permissions").
@Suite("Twin: the phone alarm and Android permissions")
struct TwinAlarmTests {
    /// Sat 2025-03-08 07:00 EST, the second wake-up: the app's periodic refresh first runs an
    /// hour after the first one (its initial delay), hourly from then on, so Doze has work to
    /// defer on the second night.
    static let wake = ISO8601.date("2025-03-08T12:00:00Z")!
    /// Fri 23:00 EST: the phone goes on the nightstand.
    static let down = ISO8601.date("2025-03-08T04:00:00Z")!
    /// The first wake-up, Fri 07:00 EST (no Doze: the screen is on).
    static let firstWake = ISO8601.date("2025-03-07T12:00:00Z")!

    static func twin(
        api: Int? = nil, phoneAlarm: Bool, steps: [(String, Date)] = [], until: Date = wake.addingTimeInterval(1_800)
    ) -> Twin {
        let base = TwinTests.twin(.early)
        var setup = base.phoneSetup
        var configuration = AndroidWorkScheduler.Configuration(repeatInterval: 3_600)
        if let api { configuration.selectQuotas(androidAPI: api) }
        var os = SimulatedOS(AndroidWorkScheduler(configuration: configuration), seed: 4)
        os.applyInstallDefaults()  // a new install, as `phone` makes a new os.json
        setup.os = os
        setup.appConfiguration.phoneAlarm = phoneAlarm
        var twin = Twin(start: TwinTests.start, speed: 3_600, phone: setup, watch: base.watchSetup, seed: 7)
        twin.boot()
        twin.schedule(.phone("screen off"), at: down)
        for (line, at) in steps { twin.schedule(.phone(line), at: at) }
        twin.run(until: until)
        return twin
    }

    @Test(
        "A Doze night with --phone-alarm on: Doze ends 3 min before the 07:00 alarm, the deferred refresh runs then, and the alarm fires at 07:00"
    )
    func dozeNightAlarm() throws {
        let twin = Self.twin(phoneAlarm: true)
        let set = twin.events(.alarmSet, from: .phone)
        #expect(set.first?.event["triggerAt"] == .date(Self.firstWake))
        // Set by the first alarm's receiver, for the second wake-up.
        #expect(set.dropFirst().first?.at == Self.firstWake)
        #expect(set.dropFirst().first?.event["triggerAt"] == .date(Self.wake))
        let exit = Self.wake.addingTimeInterval(-180)
        let dozeExit = twin.events(.osDoze).filter { $0.event["reason"] == .string("alarm-clock") }
        #expect(dozeExit.map(\.at) == [exit])
        // Idle from 00:00 with windows at 01:00 and 03:05; the hourly work waits in idle from
        // 03:15 and runs at the exit, before the wake-up (without the alarm: at 07:15).
        let runs = twin.events(.handlerEntered).map(\.at).filter { $0 > Self.down.addingTimeInterval(5 * 3_600) }
        #expect(runs.first == exit, "\(runs)")
        let fired = twin.events(.osAlarmFired)
        #expect(fired.map(\.at) == [Self.firstWake, Self.wake])
        #expect(fired.allSatisfy { $0.event["late"] == .double(0) })
        // The receiver sets tomorrow's alarm.
        // Sunday 07:00 is EDT (DST began at 02:00): 11:00 UTC.
        #expect(set.last?.event["triggerAt"] == .date(ISO8601.date("2025-03-09T11:00:00Z")!))
        #expect(set.last?.at == Self.wake)

        let without = Self.twin(phoneAlarm: false)
        #expect(without.events(.alarmSet, from: .phone).isEmpty && without.events(.osAlarmFired).isEmpty)
        #expect(without.events(.osDoze).allSatisfy { $0.event["reason"] == nil })
        let late = without.events(.handlerEntered).map(\.at).filter { $0 > Self.down.addingTimeInterval(5 * 3_600) }
        #expect(late.first == Self.down.addingTimeInterval(29_700), "\(late)")
    }

    @Test("Revoking SCHEDULE_EXACT_ALARM in the night: alarm.lost, no phone alarm fires; the watch still rings")
    func revokedLost() throws {
        let revokeAt = Self.down.addingTimeInterval(3 * 3_600)
        let twin = Self.twin(phoneAlarm: true, steps: [("permission exact-alarm revoke", revokeAt)])
        let lost = try #require(twin.events(.alarmLost).first)
        #expect(lost.at == revokeAt && lost.event["triggerAt"] == .date(Self.wake))
        #expect(twin.events(.osAlarmFired).map(\.at) == [Self.firstWake])
        #expect(twin.events(.osDoze).allSatisfy { $0.event["reason"] == nil })
        #expect(!twin.events(.alarmFired, from: .watch).isEmpty, "the watch rings")
    }

    @Test(
        "API 34, a new install with --phone-alarm on: alarm.refused, no alarm; API 33: bedtime notices are notification.hidden"
    )
    func freshInstallPermissions() throws {
        let api34 = Self.twin(api: 34, phoneAlarm: true, until: Self.down)
        #expect(api34.events(.alarmRefused).first?.event["triggerAt"] == .date(Self.firstWake))
        #expect(api34.events(.alarmSet, from: .phone).isEmpty)
        let api33 = Self.twin(api: 33, phoneAlarm: true, until: Self.down)
        #expect(api33.events(.alarmSet, from: .phone).first?.event["triggerAt"] == .date(Self.firstWake))
        let added = api33.events(.notificationAdded).count
        #expect(added > 0)
        #expect(api33.events(.notificationHidden).count == added)
        // Below 33 a new install shows them.
        let api32 = Self.twin(api: 32, phoneAlarm: false, until: Self.down)
        #expect(api32.events(.notificationHidden).isEmpty && !api32.events(.notificationAdded).isEmpty)
    }
}

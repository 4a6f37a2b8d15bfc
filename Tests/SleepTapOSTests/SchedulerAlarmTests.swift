// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOSTestFixtures
import Testing

@testable import SleepTapOS

/// Android alarms on the simulated OS (docs/scheduler.md, "Alarms"): `setAlarmClock` in Doze, the
/// exact alarm permission, the while-idle limits.
@Suite("Simulated Android alarms")
struct SchedulerAlarmTests {
    typealias F = SchedulerFixture
    let id = F.refreshID
    let t0 = F.start

    func at(_ offset: TimeInterval) -> Date { t0.addingTimeInterval(offset) }

    /// Screen off at t0: idle [1 h, 2 h), window 5 min, idle 2 h, window 10 min, idle
    /// [4 h 15 min, 8 h 15 min), window, idle …; an alarm clock at 6 h is in the third idle period.
    @Test("A setAlarmClock alarm in deep Doze fires on time; Doze ends 3 min before it, so deferred work runs first")
    func alarmClockInDeepDoze() throws {
        var s = F.android(interval: 3600)
        try s.submit(identifier: id, earliestBeginDate: nil, at: t0)
        s.setScreen(false, at: t0)
        _ = F.drive(&s, from: t0, to: at(16_000)) { _, _ in (20, .success) }
        #expect(s.dozePhase(at: at(16_000)).0 == .idle)
        // Without an alarm the hourly work waits for the window at 8 h 15 min.
        #expect(s.nextLaunch(after: at(16_000)) == at(29_700))
        let wake = at(21_600)
        try s.setAlarm(.alarmClock, tag: "wake-up", triggerAt: wake, at: at(16_000))
        _ = s.drainTrace()
        let exit = at(21_600 - 180)
        #expect(s.dozePhase(at: exit.addingTimeInterval(-1)) == (.idle, at(15_300), exit))
        #expect(s.dozePhase(at: exit) == (.maintenance, exit, wake))
        #expect(s.why(at: exit).reason("doze") == nil)
        // The work deferred by Doze runs in the exit, before the wake-up.
        #expect(s.nextLaunch(after: at(16_000)) == exit)
        #expect(s.nextAlarmInstant() == exit)
        #expect(s.alarmsDue(at: exit).isEmpty)
        let exitTrace = s.drainTrace()
        #expect(exitTrace.count == 1 && exitTrace[0].at == exit && exitTrace[0].event.name == .osDoze)
        #expect(exitTrace[0].event.fields.first { $0.key == "reason" }?.value == .string("alarm-clock"))
        let taken = s.takeLaunch(at: exit)
        let launch = try #require(taken)
        s.complete(launch, outcome: .success, duration: 20, at: exit.addingTimeInterval(20))
        #expect(s.nextAlarmInstant() == wake)
        let fired = s.alarmsDue(at: wake)
        #expect(fired.map(\.tag) == ["wake-up"])
        let trace = s.drainTrace().filter { $0.event.name == .osAlarmFired }
        #expect(trace.map(\.at) == [wake])
        #expect(trace.first?.event.fields.first { $0.key == "late" }?.value == .double(0))
        #expect(s.pendingAlarms.isEmpty && s.nextAlarmInstant() == nil)
        // After the alarm Doze goes on with its own timeline.
        #expect(s.dozePhase(at: wake).0 == .idle)
    }

    @Test("setExact in deep Doze waits for the maintenance window; an alarm clock at the same instant does not")
    func exactDeferredAlarmClockNot() throws {
        var s = F.android(interval: 3600)
        s.setScreen(false, at: t0)
        try s.setAlarm(.exact, tag: "exact", triggerAt: at(21_600), at: at(16_000))
        #expect(s.fireTime(of: s.pendingAlarms[0]) == at(29_700))
        try s.setAlarm(.alarmClock, tag: "clock", triggerAt: at(21_600), at: at(16_000))
        let clock = try #require(s.pendingAlarms.first { $0.tag == "clock" })
        #expect(s.fireTime(of: clock) == at(21_600))
        // The alarm clock's exit is a maintenance window: the exact alarm fires in it.
        let exact = try #require(s.pendingAlarms.first { $0.tag == "exact" })
        #expect(s.fireTime(of: exact) == at(21_600))
    }

    @Test(
        "API 34, a new install: SCHEDULE_EXACT_ALARM denied, setAlarmClock throws SecurityException; USE_EXACT_ALARM and API 33 may"
    )
    func refusedWithoutPermission() throws {
        var s = F.android()
        s.setAndroidAPI(34)
        s.applyInstallDefaults()
        #expect(!s.canScheduleExactAlarms)
        for kind in [AlarmKind.alarmClock, .exact, .exactAllowWhileIdle] {
            #expect(throws: AlarmRefusal.self) { try s.setAlarm(kind, tag: "a", triggerAt: at(3600), at: t0) }
        }
        #expect(s.pendingAlarms.isEmpty)
        try s.setAlarm(.allowWhileIdle, tag: "a", triggerAt: at(3600), at: t0)
        try s.setAlarm(.inexact, tag: "b", triggerAt: at(3600), at: t0)
        #expect(s.pendingAlarms.count == 2)

        var alarmClockApp = F.android()
        alarmClockApp.setAndroidAPI(34)
        alarmClockApp.setExactAlarmDeclaration(.use)
        alarmClockApp.applyInstallDefaults()
        try alarmClockApp.setAlarm(.alarmClock, tag: "a", triggerAt: at(3600), at: t0)
        // USE_EXACT_ALARM has no toggle.
        #expect(!alarmClockApp.setExactAlarmPermission(false, at: t0).applied)
        #expect(alarmClockApp.pendingAlarms.count == 1)

        var api33 = F.android()
        api33.setAndroidAPI(33)
        api33.applyInstallDefaults()
        try api33.setAlarm(.alarmClock, tag: "a", triggerAt: at(3600), at: t0)
    }

    @Test(
        "Revoking SCHEDULE_EXACT_ALARM deletes the exact alarms with no broadcast; granting broadcasts and restores none"
    )
    func revokeDeletes() throws {
        var s = F.android()
        try s.setAlarm(.alarmClock, tag: "clock", triggerAt: at(3600), at: t0)
        try s.setAlarm(.inexact, tag: "inexact", triggerAt: at(3600), at: t0)
        let revoked = s.setExactAlarmPermission(false, at: at(60))
        #expect(revoked.deleted.map(\.tag) == ["clock"])
        #expect(!revoked.broadcast)
        #expect(s.pendingAlarms.map(\.tag) == ["inexact"])
        #expect(s.alarmsDue(at: at(3600)).map(\.tag) == ["inexact"])
        let granted = s.setExactAlarmPermission(true, at: at(4000))
        #expect(granted.broadcast && granted.deleted.isEmpty)
        #expect(s.pendingAlarms.isEmpty)
        // A second grant changes nothing and sends nothing.
        #expect(!s.setExactAlarmPermission(true, at: at(4100)).broadcast)
    }

    @Test(
        "While idle: inexact while-idle alarms at most one per 9 min, exact while-idle 72 per hour; outside Doze on time"
    )
    func whileIdleLimits() throws {
        var s = F.android()
        s.forceIdle(at: t0)
        try s.setAlarm(.allowWhileIdle, tag: "w1", triggerAt: at(60), at: t0)
        try s.setAlarm(.allowWhileIdle, tag: "w2", triggerAt: at(120), at: t0)
        #expect(s.alarmsDue(at: at(60)).map(\.tag) == ["w1"])
        #expect(s.nextAlarmInstant() == at(60 + 540))
        #expect(s.alarmsDue(at: at(599)).isEmpty)
        #expect(s.alarmsDue(at: at(600)).map(\.tag) == ["w2"])

        var e = F.android()
        e.forceIdle(at: t0)
        for i in 0..<73 {
            try e.setAlarm(.exactAllowWhileIdle, tag: "e\(i)", triggerAt: at(Double(10 * (i + 1))), at: t0)
        }
        #expect(e.alarmsDue(at: at(730)).count == 72)
        #expect(e.nextAlarmInstant() == at(10 + 3600))
        #expect(e.alarmsDue(at: at(3_609)).isEmpty)
        #expect(e.alarmsDue(at: at(3_610)).map(\.tag) == ["e72"])

        var awake = F.android()
        try awake.setAlarm(.allowWhileIdle, tag: "w1", triggerAt: at(60), at: t0)
        try awake.setAlarm(.allowWhileIdle, tag: "w2", triggerAt: at(120), at: t0)
        #expect(awake.alarmsDue(at: at(120)).map(\.tag) == ["w1", "w2"])
    }

    @Test("Alarms are part of os.json; a reboot clears them; an older os.json has none")
    func persistence() throws {
        var s = F.android()
        s.setAndroidAPI(34)
        s.applyInstallDefaults()
        try s.setAlarm(.inexact, tag: "a", triggerAt: at(3600), at: t0)
        let data = try JSONEncoder().encode(s)
        var back = try JSONDecoder().decode(AndroidWorkScheduler.self, from: data)
        #expect(back.pendingAlarms == s.pendingAlarms)
        #expect(!back.canScheduleExactAlarms)
        back.reboot(at: at(60))
        #expect(back.pendingAlarms.isEmpty)
        let old = try JSONDecoder().decode(AndroidWorkScheduler.self, from: JSONEncoder().encode(F.android()))
        #expect(old.pendingAlarms.isEmpty && old.canScheduleExactAlarms)
    }

    /// The processes' phone polls `alarmsDue(at:)` when its timer fires, which under load can be
    /// after the next input was handled; the twin polls on time. What is stored must not depend
    /// on which came first.
    @Test(
        "os.json does not record when the host polled alarmsDue: on time before an input, or late after it, store the same value (with and without an alarm clock)"
    )
    func storedValueIndependentOfPollTime() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for withAlarm in [false, true] {
            var onTime = F.android(interval: 3600)
            onTime.setScreen(false, at: t0)
            if withAlarm { try onTime.setAlarm(.alarmClock, tag: "wake-up", triggerAt: at(21_600), at: at(60)) }
            var late = onTime
            // Deep idle begins at 1 h (a phase change the host's timer is armed for); with the
            // alarm clock, Doze's exit before it at 6 h − 3 min.
            let due = withAlarm ? at(21_600 - 180) : at(3_600)
            let input = due.addingTimeInterval(120)  // before the alarm clock fires
            _ = onTime.alarmsDue(at: due)
            onTime.setScreen(true, at: input)
            late.setScreen(true, at: input)
            _ = late.alarmsDue(at: input)
            let (a, b) = (try encoder.encode(onTime), try encoder.encode(late))
            #expect(
                a == b,
                "withAlarm \(withAlarm):\n\(String(decoding: a, as: UTF8.self))\n\(String(decoding: b, as: UTF8.self))")
        }
    }
}

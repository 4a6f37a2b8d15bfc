// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

/// The watch's alarm (docs/protocol.md, "Rules"): set by each answered bed tap and typed wake
/// time, rung at its instant, ringing until someone stops it.
@Suite("Watch alarm")
struct WatchAlarmTests {
    typealias W = WatchNodeTests
    /// 2026-06-20T22:00Z: the first wake-up of `W.tokyoBatch()` (07:00 in Tokyo).
    static let wake = ISO8601.date("2026-06-20T22:00:00Z")!

    static func node(
        bedAt: String? = nil, manualWake: String? = nil, userStop: TimeInterval? = nil, batch: Bool = true
    ) -> WatchNode {
        WatchNode(
            configuration: WatchNode.Configuration(
                endpoint: W.endpoint, statePath: "/state/watch.json", flagZone: W.tokyo, systemZone: W.utc,
                bedAt: bedAt.flatMap(LocalTime.init(parsing:)),
                manualWake: manualWake.flatMap(LocalTime.init(parsing:)),
                userStopsAlarmAfter: userStop),
            state: batch ? WatchSyncState(lastAppliedSeq: 1, batch: W.tokyoBatch()) : nil)
    }

    static func armedAlarm(_ actions: [WatchAction]) -> Date? {
        actions.compactMap { if case .arm(.alarm, .at(let at)) = $0 { at } else { nil } }.last
    }

    static func stamped(_ name: EventName, in actions: [WatchAction]) -> [Date] {
        actions.compactMap { if case .emit(let event, let at) = $0, event.name == name { at } else { nil } }
    }

    @Test("A cached bed tap sets the alarm; it rings at the wake-up and goes on ringing until stop")
    func ringsUntilStop() throws {
        var node = Self.node()
        let tapped = node.command(.bed, at: W.at(1))
        #expect(W.names(tapped) == [.bedWakeTime, .alarmSet])
        #expect(try W.event(.alarmSet, in: tapped).fields.first { $0.key == "alarmTime" }?.value == .date(Self.wake))
        #expect(Self.armedAlarm(tapped) == Self.wake)
        // The driver wakes two minutes late: the ring is still stamped at the wake-up.
        let fired = node.timerFired(.alarm, at: W.at(2, Self.wake.addingTimeInterval(120)))
        #expect(W.names(fired) == [.alarmFired])
        #expect(Self.stamped(.alarmFired, in: fired) == [Self.wake])
        let local = try W.event(.alarmFired, in: fired)
        #expect(local.fields.first { $0.key == "localTime" }?.value == .string("07:00"))
        // Nobody stops it: nothing is armed to end it, and hours later it still rings.
        #expect(Self.armedAlarm(fired) == nil)
        let later = Self.wake.addingTimeInterval(3 * 3_600)
        let status = try W.event(.cacheStatus, in: node.command(.status, at: W.at(3, later)))
        #expect(status.fields.first { $0.key == "alarmRinging" }?.value == .bool(true))
        let stopped = node.command(.stopAlarm, at: W.at(4, later))
        let event = try W.event(.alarmStopped, in: stopped)
        #expect(event.fields.first { $0.key == "rangFor" }?.value == .double(10_800))
        #expect(event.fields.first { $0.key == "by" }?.value == .string("user"))
        #expect(node.alarm.ringing == nil)
        #expect(W.names(node.command(.stopAlarm, at: W.at(5, later))) == [.inputRejected])
    }

    @Test("snooze silences the ringing alarm for 9 minutes, then it rings again")
    func snooze() throws {
        var node = Self.node()
        _ = node.command(.bed, at: W.at(1))
        _ = node.timerFired(.alarm, at: W.at(2, Self.wake))
        let snoozed = node.command(.snooze, at: W.at(3, Self.wake.addingTimeInterval(30)))
        let until = Self.wake.addingTimeInterval(30 + 540)
        #expect(W.names(snoozed) == [.alarmSnoozed])
        #expect(Self.armedAlarm(snoozed) == until)
        #expect(W.names(node.command(.snooze, at: W.at(4, Self.wake.addingTimeInterval(60)))) == [.inputRejected])
        let again = node.timerFired(.alarm, at: W.at(5, until))
        #expect(Self.stamped(.alarmFired, in: again) == [until])
        #expect(try W.event(.alarmFired, in: again).fields.first { $0.key == "snoozes" }?.value == .int(1))
    }

    @Test("The simulated user stops the alarm --stop-alarm-after seconds after it began")
    func simulatedUserStops() throws {
        var node = Self.node(userStop: 60)
        _ = node.command(.bed, at: W.at(1))
        let fired = node.timerFired(.alarm, at: W.at(2, Self.wake))
        #expect(Self.armedAlarm(fired) == Self.wake.addingTimeInterval(60))
        let stopped = node.timerFired(.alarm, at: W.at(3, Self.wake.addingTimeInterval(60)))
        #expect(Self.stamped(.alarmStopped, in: stopped) == [Self.wake.addingTimeInterval(60)])
        #expect(
            try W.event(.alarmStopped, in: stopped).fields.first { $0.key == "by" }?.value == .string("simulated user"))
    }

    @Test("A typed wake time after the manual-entry prompt sets the alarm the same way")
    func manualEntry() throws {
        var node = Self.node(batch: false)
        #expect(W.names(node.command(.bed, at: W.at(1))).contains(.fallbackManualEntry))
        let typed = node.command(.wakeTime(LocalTime(hour: 6, minute: 30)!), at: W.at(2))
        #expect(W.names(typed) == [.manualWakeTime, .alarmSet])
        #expect(Self.armedAlarm(typed) == ISO8601.date("2026-06-20T21:30:00Z"))
    }

    @Test("An input read after the alarm's instant comes after the ring, which keeps its instant")
    func lateInputAfterTheRing() throws {
        var node = Self.node()
        _ = node.command(.bed, at: W.at(1))
        let late = node.command(.status, at: W.at(2, Self.wake.addingTimeInterval(300)))
        #expect(W.names(late) == [.alarmFired, .cacheStatus])
        #expect(Self.stamped(.alarmFired, in: late) == [Self.wake])
    }

    @Test("The simulated user's nightly taps ring every morning, each alarm at its own wake-up")
    func everyNight() throws {
        var node = Self.node(bedAt: "22:30", userStop: 60)
        var actions = node.start(processID: 1, at: W.at(0))
        var fired: [Date] = []
        var now = W.t0
        // Seven nights: fire every due bed and alarm timer in deadline order, as the twin does.
        for step in 0..<200 {
            let next = [
                node.armed.contains(.bed) ? node.nextBed.map { ($0, WatchTimer.bed) } : nil,
                node.armed.contains(.alarm)
                    ? node.alarm.nextDue(userStop: 60).map { ($0, WatchTimer.alarm) } : nil,
            ].compactMap { $0 }.min { $0.0 < $1.0 }
            guard let (at, timer) = next, at < W.t0.addingTimeInterval(7 * 86_400) else { break }
            now = at
            actions = node.timerFired(timer, at: W.at(Double(step), now))
            fired += Self.stamped(.alarmFired, in: actions)
        }
        #expect(fired == W.tokyoBatch().entries.prefix(fired.count).map(\.wake))
        #expect(fired.count == 7)
    }

    // MARK: Alarms in the state file

    /// The state of the last `.persist` in `actions`.
    static func written(_ actions: [WatchAction]) -> WatchSyncState? {
        actions.compactMap { if case .persist(let state) = $0 { state } else { nil } }.last
    }

    static func field(_ name: String, of event: Event) -> EventValue? {
        event.fields.first { $0.key == name }?.value
    }

    @Test("A set alarm is written to the state file; a watch started on that file re-arms it and rings")
    func survivesRestart() throws {
        var node = Self.node()
        let tapped = W.drive(&node, node.command(.bed, at: W.at(1)), at: W.at(1))
        let state = try #require(Self.written(tapped))
        #expect(state.alarms == [Self.wake])
        #expect(state.batch == W.tokyoBatch())
        // The process is killed; a new one starts on what the file holds, before the wake-up.
        var restarted = WatchNode(configuration: node.configuration, state: state)
        let started = restarted.start(processID: 2, at: W.at(0, W.t0.addingTimeInterval(3_600)))
        #expect(try Self.field("alarms", of: W.event(.watchStarted, in: started)) == .int(1))
        #expect(Self.armedAlarm(started) == Self.wake)
        #expect(Self.written(started) == nil)  // nothing changed: no write
        let fired = W.drive(&restarted, restarted.timerFired(.alarm, at: W.at(1, Self.wake)), at: W.at(1, Self.wake))
        #expect(Self.stamped(.alarmFired, in: fired) == [Self.wake])
        #expect(try Self.field("late", of: W.event(.alarmFired, in: fired)) == .double(0))
        // Rung: the file no longer holds it, so a later restart does not ring it again.
        let after = try #require(Self.written(fired))
        #expect(after.alarms == nil)
        var again = WatchNode(configuration: node.configuration, state: after)
        let quiet = again.start(processID: 3, at: W.at(0, Self.wake.addingTimeInterval(600)))
        #expect(!W.names(quiet).contains(.alarmFired))
        #expect(try Self.field("alarms", of: W.event(.watchStarted, in: quiet)) == .int(0))
    }

    @Test("An alarm whose instant passed while the watch was down rings at start, stamped then, saying how late")
    func ringsLateAtStart() throws {
        let next = Self.wake.addingTimeInterval(86_400)
        let state = WatchSyncState(lastAppliedSeq: 1, batch: W.tokyoBatch(), alarms: [Self.wake, next])
        var node = WatchNode(configuration: Self.node().configuration, state: state)
        let start = Self.wake.addingTimeInterval(2 * 3_600)
        let started = W.drive(&node, node.start(processID: 2, at: W.at(0, start)), at: W.at(0, start))
        #expect(W.names(started).prefix(2) == [.watchStarted, .alarmFired])
        #expect(Self.stamped(.alarmFired, in: started) == [start])
        let ring = try W.event(.alarmFired, in: started)
        #expect(Self.field("alarmTime", of: ring) == .date(Self.wake))
        #expect(Self.field("late", of: ring) == .double(7_200))
        #expect(node.alarm.ringing?.since == start)
        // The later alarm stays set and armed; the file drops the one that rang.
        #expect(Self.armedAlarm(started) == next)
        #expect(Self.written(started)?.alarms == [next])
    }

    @Test("A later alarm that comes due while one rings takes its place: the replaced one gets alarm.stopped")
    func replacedGetsStopped() throws {
        var node = Self.node(batch: false)
        _ = node.command(.bed, at: W.at(1))
        _ = node.command(.wakeTime(LocalTime(hour: 6, minute: 30)!), at: W.at(2))
        let first = try #require(ISO8601.date("2026-06-20T21:30:00Z"))
        _ = node.command(.bed, at: W.at(3, W.t0.addingTimeInterval(60)))
        _ = node.command(.wakeTime(LocalTime(hour: 6, minute: 40)!), at: W.at(4, W.t0.addingTimeInterval(60)))
        let second = first.addingTimeInterval(600)
        _ = node.timerFired(.alarm, at: W.at(5, first))
        let replaced = node.timerFired(.alarm, at: W.at(6, second))
        #expect(W.names(replaced) == [.alarmStopped, .alarmFired])
        let stopped = try W.event(.alarmStopped, in: replaced)
        #expect(Self.field("by", of: stopped) == .string("replaced"))
        #expect(Self.field("alarmTime", of: stopped) == .date(first))
        #expect(Self.field("rangFor", of: stopped) == .double(600))
        #expect(Self.stamped(.alarmStopped, in: replaced) == [second])
        #expect(node.alarm.ringing?.alarmTime == second)
    }

    @Test("A failed alarm write says persist.failed once; the alarm still rings; the next change writes again")
    func failedAlarmWrite() throws {
        var node = Self.node()
        let failure = PersistResult.failed(errno: 28, reason: "No space left on device")
        let tapped = W.drive(&node, node.command(.bed, at: W.at(1)), persist: failure, at: W.at(1))
        #expect(W.names(tapped).filter { $0 == .persistFailed }.count == 1)
        #expect(Self.armedAlarm(tapped) == Self.wake)
        let fired = W.drive(&node, node.timerFired(.alarm, at: W.at(2, Self.wake)), at: W.at(2, Self.wake))
        #expect(W.names(fired).contains(.alarmFired))
        // The file still holds no alarm (the write failed), and none is set now: nothing to write.
        #expect(Self.written(fired) == nil)
    }
}

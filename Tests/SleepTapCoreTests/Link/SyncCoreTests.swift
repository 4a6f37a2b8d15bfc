// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import SleepTapCore

@Suite("Phone and watch sync state machines")
struct SyncCoreTests {
    static let t0 = ISO8601.date("2025-03-06T17:00:00Z")!
    static let zone = TimeZone(identifier: "America/New_York")!

    static func entries(after now: Date = t0) -> [WakeEntry] {
        BatchPlanner.entries(for: .everyDayAtSeven, in: zone, after: now)
    }

    /// `phone` publishes the wake-ups of `entries()` in `timeZone`, made and stamped at `t0`.
    static func publish(_ phone: inout PhoneCore, timeZone: String = zone.identifier) -> [PhoneAction] {
        phone.publish(entries: entries(), generatedAt: t0, timeZone: timeZone, at: t0)
    }

    static func sent(_ effects: [PhoneAction]) -> [WireMessage] {
        effects.compactMap { if case .send(let m) = $0 { m } else { nil } }
    }

    static func sent(_ effects: [WatchEffect]) -> [WireMessage] {
        effects.compactMap { if case .send(let m) = $0 { m } else { nil } }
    }

    static func events(_ effects: [WatchEffect]) -> [Event] {
        effects.compactMap { if case .emit(let e) = $0 { e } else { nil } }
    }

    @Test("publish persists before it sends, numbers batches from 1 and arms a resend")
    func publishOrder() throws {
        var phone = PhoneCore()
        let effects = Self.publish(&phone)
        let persistIndex = try #require(effects.firstIndex { if case .persist = $0 { true } else { false } })
        let sendIndex = try #require(effects.firstIndex { if case .send = $0 { true } else { false } })
        #expect(persistIndex < sendIndex)
        #expect(effects.contains(.arm(.resend, .after(0.25))))
        let batches = { (effects: [PhoneAction]) -> [WakeBatch] in
            Self.sent(effects).compactMap { if case .batch(let batch) = $0 { batch } else { nil } }
        }
        let batch = try #require(batches(effects).first, "the first publish sent no batch")
        #expect(batch.seq == 1 && batch.entries.count == 7)
        #expect(phone.state == PhoneSyncState(epoch: batch.epoch, lastSeq: 1, outbox: batch, acked: false))
        let second = Self.publish(&phone)
        let next = try #require(batches(second).first, "the second publish sent no batch")
        #expect(next.seq == 2)
    }

    @Test("Resends back off exponentially up to the cap and stop at the ACK")
    func resendBackoff() throws {
        var phone = PhoneCore(resendPolicy: ResendPolicy(initial: 0.25, maximum: 1))
        _ = Self.publish(&phone)
        let outbox = try #require(phone.state.outbox)
        let ref = outbox.ref
        let resends = (0..<4).map { _ in phone.resendDue() }
        #expect(resends == [0.5, 1, 1, 1].map { [.send(.batch(outbox)), .arm(.resend, .after($0))] })
        let acked = phone.receive(.ack(ref, coverageEnd: nil), at: Self.t0)
        #expect(acked.contains(.cancel(.resend)))
        #expect(phone.state.acked)
        #expect(phone.resendDue().isEmpty)
        // A second ACK of the same seq changes nothing durable.
        #expect(
            !phone.receive(.ack(ref, coverageEnd: nil), at: Self.t0).contains {
                if case .persist = $0 { true } else { false }
            })
    }

    @Test("HELLO is answered with the newest batch, UP_TO_DATE, or the newest batch in a new epoch after a phone reset")
    func helloAnswers() throws {
        var phone = PhoneCore()
        _ = Self.publish(&phone)
        let first = try #require(phone.state.outbox)
        _ = Self.publish(&phone)
        let newest = try #require(phone.state.outbox)
        let answer = try #require(Self.sent(phone.receive(.hello(first.ref), at: Self.t0)).first)
        #expect(answer == .batch(newest))
        #expect(Self.sent(phone.receive(.hello(newest.ref), at: Self.t0)) == [.upToDate(seq: 2)])
        #expect(phone.state.acked, "a HELLO naming exactly the newest batch proves the watch has it")

        // A phone whose state was reset meets a watch holding seq 40 of its (restored) epoch.
        var reset = PhoneCore(state: PhoneSyncState(epoch: 0xabc), randomSeed: 3)
        _ = Self.publish(&reset)
        let sent = Self.sent(reset.receive(.hello(BatchRef(epoch: 0xabc, seq: 40, digest: 1)), at: Self.t0))
        guard case .batch(let renewed) = try #require(sent.first) else {
            Issue.record("a phone behind the watch must send its newest batch in a new epoch, sent \(sent)")
            return
        }
        #expect(renewed.epoch != 0xabc && renewed.seq == 2 && reset.state.lastSeq == 2)
        // A watch holding another epoch simply gets the newest batch.
        let other = BatchRef(epoch: 0xdef, seq: 900, digest: 1)
        #expect(Self.sent(reset.receive(.hello(other), at: Self.t0)) == [.batch(renewed)])
    }

    @Test("The watch persists before it acks, re-acks duplicates without writing, and never applies older over newer")
    func watchApply() throws {
        var phone = PhoneCore()
        let b1 = Self.sent(Self.publish(&phone, timeZone: "America/New_York"))[0]
        let b2 = Self.sent(Self.publish(&phone, timeZone: "America/New_York"))[0]
        var watch = WatchCore()
        #expect(Self.sent(watch.connected()) == [.hello(nil)])

        let first = watch.receive(b2)
        let persist = try #require(first.firstIndex { if case .persist = $0 { true } else { false } })
        let ack = try #require(
            first.firstIndex { if case .send(.ack(let ref, _)) = $0 { ref.seq == 2 } else { false } })
        #expect(persist < ack)
        #expect(watch.state.lastAppliedSeq == 2)

        let duplicate = watch.receive(b2)
        #expect(!duplicate.contains { if case .persist = $0 { true } else { false } })
        #expect(Self.sent(duplicate).count == 1)
        #expect(Self.events(duplicate).map(\.name) == [.batchDuplicate])

        let stale = watch.receive(b1)
        #expect(watch.state.lastAppliedSeq == 2)
        guard case .batch(let held) = b2 else { throw CancellationError() }
        #expect(Self.sent(stale) == [.hello(held.ref)])
        #expect(Self.events(stale).map(\.name) == [.batchStale])
        #expect(watch.staleIgnored == 1)
    }

    @Test(
        "Bed tap shows the coming cached wake-up; with none it asks for the time and takes HH:MM; each event names its night"
    )
    func bedTapAndManualEntry() {
        var watch = WatchCore()
        var phone = PhoneCore()
        let batch = Self.sent(Self.publish(&phone, timeZone: "America/New_York"))[0]
        _ = watch.receive(batch)
        let firstNight = ISO8601.date("2025-03-07T03:30:00Z")!  // Thu Mar 6 22:30 EST
        let shown = Self.events(watch.bedTap(at: firstNight, in: Self.zone))
        #expect(shown.map(\.name) == [.bedWakeTime])
        #expect(shown.first?["localDate"] == .string("2025-03-07"))
        #expect(shown.first?["remaining"] == .int(7), "all 7 cached wake-ups are ahead, the one shown included")
        #expect(shown.first?["tapLocalDate"] == .string("2025-03-06"))
        #expect(shown.first?["tapLocalTime"] == .string("22:30"))
        #expect(shown.first?["tapTimeZone"] == .string("America/New_York"))

        let eighthNight = ISO8601.date("2025-03-14T02:30:00Z")!  // Thu Mar 13 22:30 EDT
        let fallback = Self.events(watch.bedTap(at: eighthNight, in: Self.zone))
        #expect(fallback.map(\.name) == [.fallbackManualEntry])
        #expect(fallback.first?["tapLocalDate"] == .string("2025-03-13"))
        #expect(fallback.first?["tapLocalTime"] == .string("22:30"))
        #expect(fallback.first?["tapTimeZone"] == .string("America/New_York"))
        #expect(watch.awaitingManualEntry)
        #expect(
            Self.events(watch.manualWakeTime("7am", at: eighthNight, in: Self.zone)).map(\.name) == [.inputRejected])
        let typed = Self.events(watch.manualWakeTime("06:30", at: eighthNight, in: Self.zone))
        #expect(typed.map(\.name) == [.manualWakeTime])
        #expect(typed.first?["wakeTime"] == .date(ISO8601.date("2025-03-14T10:30:00Z")!))
        #expect(typed.first?["localDate"] == .string("2025-03-14"))
        #expect(typed.first?["localTime"] == .string("06:30"))
        #expect(typed.first?["tapLocalDate"] == .string("2025-03-13"))
        #expect(typed.first?["tapLocalTime"] == .string("22:30"))
        #expect(!watch.awaitingManualEntry)
    }

    @Test(
        "remaining has one meaning: the cached wake-ups ahead of the instant, in bed.wake_time and cache.status alike",
        arguments: ["2025-03-07T03:30:00Z", "2025-03-10T02:30:00Z", "2025-03-13T02:30:00Z"])
    func remainingHasOneMeaning(tapAt: String) throws {
        var watch = WatchCore()
        var phone = PhoneCore()
        _ = watch.receive(Self.sent(Self.publish(&phone, timeZone: "America/New_York"))[0])
        let now = try #require(ISO8601.date(tapAt))
        let ahead = Int64(try #require(watch.state.batch).entries.filter { $0.wake > now }.count)
        let tap = try #require(Self.events(watch.bedTap(at: now, in: Self.zone)).first)
        #expect(tap["remaining"] == .int(ahead))
        #expect(watch.status(at: now)["remaining"] == .int(ahead))
    }

    @Test("Wrong-direction messages are rejected with an ERROR reply, state unchanged")
    func wrongDirection() {
        var watch = WatchCore()
        let effects = watch.receive(.hello(BatchRef(epoch: 1, seq: 3, digest: 2)))
        #expect(Self.events(effects).map(\.name) == [.messageRejected])
        #expect(watch.state == WatchSyncState())
        var phone = PhoneCore()
        let before = phone.state
        #expect(Self.sent(phone.receive(.upToDate(seq: 1), at: Self.t0)).first?.typeName == "ERROR")
        #expect(phone.state == before)
    }
}

@Suite("Replayed sequences")
struct ReplayedSequenceTests {
    static func batch(_ seq: UInt64) -> WakeBatch {
        WakeBatch(seq: seq, generatedAt: Date(timeIntervalSince1970: Double(seq)), timeZone: "UTC", entries: [])
    }

    @Test(
        "A watch idle for days replays 618, 621, 621, 624, 630, 630, then older: it ends at 630, never older over newer"
    )
    func replayedState() {
        var watch = WatchCore()
        var applied: [UInt64] = []
        for seq: UInt64 in [618, 621, 621, 624, 630, 630, 618, 624, 629] {
            for effect in watch.receive(.batch(Self.batch(seq))) {
                if case .persist(let state) = effect { applied.append(state.lastAppliedSeq) }
            }
        }
        #expect(applied == [618, 621, 624, 630])
        #expect(watch.state.lastAppliedSeq == 630)
        #expect(watch.state.batch?.seq == 630)
        #expect(watch.staleIgnored == 3)
    }
}

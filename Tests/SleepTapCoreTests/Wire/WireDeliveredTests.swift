// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

/// `WireCodec.delivered` (the twin's typed link) gives exactly what `decode(encode(message))`
/// gives, or nil; nil whenever `decode` would refuse the frame.
@Suite("Wire protocol v1: a message as delivered without its frame")
struct WireDeliveredTests {
    /// `decode(encode(message))`, nil when `decode` refuses the frame.
    static func roundTrip(_ message: WireMessage) -> WireMessage? {
        try? WireCodec.decode(WireCodec.encode(message))
    }

    @Test("ISO8601.wholeSecond is the instant ISO8601.string writes, read back by ISO8601.date: 20,000 seeded instants")
    func wholeSecond() {
        var rng = SplitMix64(state: 0x5EED_0013)
        var instants = [0, 0.999, 86_399.5, 253_402_300_799.9, 1_741_280_400.000_1].map(
            Date.init(timeIntervalSince1970:))
        for _ in 0..<20_000 { instants.append(WireEncodingTests.instant(&rng)) }
        for instant in instants {
            #expect(ISO8601.wholeSecond(instant) == ISO8601.date(ISO8601.string(instant)), "\(instant)")
        }
        #expect(ISO8601.wholeSecond(Date(timeIntervalSince1970: -0.5)) == nil)
        #expect(ISO8601.wholeSecond(Date(timeIntervalSince1970: 253_402_300_800)) == nil)
    }

    @Test("5,000 seeded random messages, valid or not: delivered is nil or what decode(encode(m)) gives")
    func randomMessages() {
        var rng = SplitMix64(state: 0x5EED_0014)
        var delivered = 0
        for round in 0..<5_000 {
            let message = WireEncodingTests.message(&rng)
            guard let value = WireCodec.delivered(message) else { continue }
            delivered += 1
            #expect(Self.roundTrip(message) == value, "round \(round): \(message)")
        }
        #expect(delivered > 1_000)
    }

    /// Batches the planner makes, at instants with fractions of a second, and broken copies of
    /// them (entries swapped or repeated, a local field or offset off by one, a zone that is not
    /// a name, an entry's zone not the batch's).
    @Test(
        "Planned batches and 12 kinds of broken ones: delivered equals decode(encode(m)), nil exactly when decode refuses"
    )
    func plannedBatches() {
        var rng = SplitMix64(state: 0x5EED_0015)
        let zones = [
            "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kolkata", "Pacific/Auckland", "UTC",
        ]
        var refused = 0
        for round in 0..<600 {
            let name = zones[Int(rng.next() % UInt64(zones.count))]
            let zone = WakeCalendar.zone(named: name)!
            let now = Date(timeIntervalSince1970: 1_700_000_000 + Double(rng.next() % 200_000_000) / 3)
            var times: [Weekday: LocalTime] = [:]
            for day in Weekday.allCases where rng.next() % 5 != 0 {
                times[day] = LocalTime(hour: Int(rng.next() % 24), minute: Int(rng.next() % 60))
            }
            let entries = BatchPlanner.entries(
                for: WakeSchedule(wakeTimes: times, timeZoneIdentifier: name), in: zone, after: now)
            var batch = WakeBatch(
                epoch: rng.next(), seq: 1 + rng.next() % 1_000, generatedAt: now, timeZone: zone.identifier,
                entries: entries)
            let valid = WireMessage.batch(batch)
            #expect(WireCodec.delivered(valid) != nil, "round \(round): \(batch)")
            #expect(WireCodec.delivered(valid) == Self.roundTrip(valid), "round \(round)")
            guard !batch.entries.isEmpty else { continue }
            let index = Int(rng.next() % UInt64(batch.entries.count))
            switch round % 12 {
            case 0: batch.entries[index].utcOffset += 60
            case 1: batch.entries[index].localTime = "24:00"
            case 2: batch.entries[index].localDate = "2025-02-30"
            case 3: batch.entries.append(batch.entries[index])
            case 4: batch.entries.reverse()
            case 5: batch.entries[index].timeZone = "Asia/Tokyo"
            case 6: batch.timeZone = "EST"
            case 7: batch.seq = 0
            case 8: batch.entries[index].wake.addTimeInterval(0.75)
            case 9: batch.entries[index].utcOffset = 19 * 3_600
            case 10: batch.entries[index].wake = Date(timeIntervalSince1970: -10)
            default: batch.generatedAt = Date(timeIntervalSince1970: 1e13)
            }
            let broken = WireMessage.batch(batch)
            let expected = Self.roundTrip(broken)
            if expected == nil { refused += 1 }
            #expect(WireCodec.delivered(broken) == expected, "round \(round) kind \(round % 12): \(batch)")
        }
        #expect(refused > 300)
    }

    @Test(
        "HELLO naming seq 0 arrives without a batch; seqs and ids beyond the wire's range, and long reasons, go as frames"
    )
    func edges() {
        let ref = BatchRef(epoch: 9, seq: 0, digest: 4)
        #expect(WireCodec.delivered(.hello(ref)) == .hello(nil))
        #expect(Self.roundTrip(.hello(ref)) == .hello(nil))
        for message: WireMessage in [
            .hello(BatchRef(epoch: 1, seq: WireCodec.maxSeq + 1, digest: 1)), .upToDate(seq: WireCodec.maxSeq + 1),
            .ack(BatchRef(epoch: 1, seq: 0, digest: 1), coverageEnd: nil),
            .request(DateRequest(id: 0, nightsLeft: 1, coverageEnd: nil)),
            .request(DateRequest(id: 1, nightsLeft: -1, coverageEnd: nil)),
            .request(DateRequest(id: 1, nightsLeft: 65, coverageEnd: nil)),
        ] {
            #expect(WireCodec.delivered(message) == nil, "\(message)")
        }
        // A long reason goes clipped, as the encoder sends it (`WireCodec.clipped`).
        let long = WireMessage.error(reason: String(repeating: "\u{1}", count: 20_000))
        let delivered = WireCodec.delivered(long)
        #expect(delivered == Self.roundTrip(long), "the frame's reason, not the message's")
        if case .error(let reason)? = delivered {
            #expect(reason.utf8.count <= WireCodec.maxReasonBytes && reason.hasSuffix("…"))
        } else {
            Issue.record("a long ERROR is not delivered")
        }
        let end = Date(timeIntervalSince1970: 1_741_280_400.75)
        let ack = WireMessage.ack(BatchRef(epoch: 1, seq: 2, digest: 3), coverageEnd: end)
        #expect(WireCodec.delivered(ack) == Self.roundTrip(ack))
        #expect(WireCodec.delivered(ack) != ack)
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import Testing

@testable import SleepTapEmbedded

/// The twin's byte meter counts what `WireCodec.encode` would put on the link, though it sizes a
/// new BATCH from its parts and an unchanged message from the last one of its type.
@Suite("The twin's byte meter")
struct LinkByteMeterTests {
    static let start = ISO8601.date("2026-03-05T12:00:00Z")!

    /// A batch of `days` wake-ups after `after` in `zone`, each day at `time` local.
    static func batch(seq: UInt64, zone: String, after: Date, days: Int, time: String = "07:00") -> WakeBatch {
        let tz = WakeCalendar.zone(named: zone)!
        let wake = LocalTime(parsing: time)!
        let schedule = WakeSchedule(wakeTimes: Dictionary(uniqueKeysWithValues: Weekday.allCases.map { ($0, wake) }))
        return WakeBatch(
            epoch: 0xDEAD_BEEF_0000_0001, seq: seq, generatedAt: after, timeZone: zone,
            entries: BatchPlanner.entries(for: schedule, in: tz, after: after, horizonDays: days))
    }

    /// Batches a month of days would send: the window slides a day at a time (sharing all but one
    /// entry with the day before's), then the zone, the horizon and the wake time change, across
    /// a DST change (America/New_York, 2026-03-08) and a zone with a negative offset and `-` in
    /// its name; and every other message type between them.
    static var messages: [WireMessage] {
        var all: [WireMessage] = []
        for day in 0..<30 {
            let after = Calendar(identifier: .gregorian).date(byAdding: .day, value: day, to: start)!
            let zone = day < 12 ? "America/New_York" : day < 20 ? "America/Port-au-Prince" : "Asia/Kathmandu"
            let b = batch(seq: UInt64(day + 1), zone: zone, after: after, days: day % 9 == 0 ? 1 + day : 7)
            all.append(.batch(b))
            all.append(.batch(b))  // resent
            all.append(.ack(BatchRef(epoch: b.epoch, seq: b.seq, digest: b.digest), coverageEnd: b.entries.last?.wake))
            all.append(.ping)
            all.append(.hello(day % 2 == 0 ? nil : BatchRef(epoch: b.epoch, seq: b.seq, digest: b.digest)))
        }
        all.append(.batch(batch(seq: 99, zone: "UTC", after: start, days: 0)))  // no entries
        all.append(.batch(batch(seq: 100, zone: "Europe/Berlin", after: start, days: 7, time: "06:45")))
        all.append(.upToDate(seq: 100))
        all.append(.error(reason: "unknown type \"x\"/\\ \u{1}"))
        // Shapes: every digit count of a sequence number, ids of every width of their hex, and
        // instants with and without fractions, at the ends of what ISO8601.string writes in 20
        // characters and beyond them.
        let ends = [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 253_402_300_799.9),
            start.addingTimeInterval(0.5), Date(timeIntervalSince1970: -1),
            Date(timeIntervalSince1970: 253_402_300_800),
        ]
        for (index, seq) in [0, 1, 9, 10, 99, 100, 12_345, 9_007_199_254_740_991].enumerated() {
            let id = UInt64(1) << (index * 8 % 64)
            let ref = BatchRef(epoch: id, seq: UInt64(seq), digest: ~id)
            let end = ends[index % ends.count]
            all.append(.ack(ref, coverageEnd: end))
            all.append(.ack(ref, coverageEnd: nil))
            all.append(.hello(ref))
            all.append(.upToDate(seq: UInt64(seq)))
            all.append(.request(DateRequest(id: UInt64(seq) + 1, nightsLeft: index * 2, coverageEnd: end)))
            all.append(.request(DateRequest(id: UInt64(seq) + 1, nightsLeft: 0, coverageEnd: nil)))
            let empty = WakeBatch(epoch: id, seq: UInt64(seq), generatedAt: end, timeZone: "Etc/GMT+5", entries: [])
            all.append(.batch(empty))
            var dated = batch(seq: UInt64(seq), zone: "America/New_York", after: start, days: 2)
            dated.generatedAt = end
            all.append(.batch(dated))
        }
        return all
    }

    @Test("Message after message, the count is the sum of the frames WireCodec.encode writes")
    func countsTheEncodedFrames() {
        var meter = LinkByteMeter()
        meter.isOn = true
        var expected = 0
        for message in Self.messages {
            meter.count(message)
            expected += WireCodec.encode(message).count
            #expect(meter.bytes == expected, "after \(message)")
        }
        #expect(expected > 30 * 7 * 80, "the batches are counted with their entries")
    }

    @Test("A batch with more entries counts more bytes; an off meter counts nothing")
    func direction() {
        var entrySizes: [WakeEntry: Int] = [:]
        let week = Self.batch(seq: 1, zone: "America/New_York", after: Self.start, days: 7)
        let fortnight = Self.batch(seq: 1, zone: "America/New_York", after: Self.start, days: 14)
        #expect(
            LinkByteMeter.size(of: .batch(fortnight), entrySizes: &entrySizes)
                > LinkByteMeter.size(of: .batch(week), entrySizes: &entrySizes))
        var off = LinkByteMeter()
        off.count(.batch(week))
        #expect(off.bytes == 0)
    }
}

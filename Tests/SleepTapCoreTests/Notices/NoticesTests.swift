// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

@Suite("Bedtime notices, rotation, next request, travel")
struct NoticesTests {
    static let newYork = TimeZone(identifier: "America/New_York")!
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    @Test("Daily rotation is SplitMix64(seed &+ day) mod count, with the reference SplitMix64 outputs")
    func rotation() throws {
        // Seed 0 on day 0 (1970-01-01) is SplitMix64(0)'s first output mod count.
        let epoch = try #require(LocalDate(parsing: "1970-01-01"))
        #expect(epoch.daysSinceEpoch == 0)
        #expect(
            DailyRotation.entryIndex(for: epoch, seed: 0, count: 1_000)
                == Int(UInt64(16_294_208_416_658_607_535) % 1_000))
        // seed &+ day: seed 0 on day 1 equals seed 1 on day 0.
        let day1 = try #require(LocalDate(parsing: "1970-01-02"))
        #expect(
            DailyRotation.entryIndex(for: day1, seed: 0, count: 97)
                == DailyRotation.entryIndex(for: epoch, seed: 1, count: 97))
        // The day as Int(t / 86400) of a Unix time t agrees with the local-date form for UTC.
        var rng = SplitMix64(state: 7)
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = .gmt
        for _ in 0..<200 {
            let instant = Date(timeIntervalSince1970: Double(rng.next() % 4_000_000_000))
            let seedDay = Int(instant.timeIntervalSince1970 / 86_400)
            #expect(LocalDate(instant, in: utc).daysSinceEpoch == seedDay, "\(instant)")
        }
        // Different devices see different texts on the same day (not all users the same one).
        let today = try #require(LocalDate(parsing: "2026-11-30"))
        let indices = Set((0..<50).map { DailyRotation.entryIndex(for: today, seed: UInt64($0), count: 5) })
        #expect(indices.count == 5)
    }

    @Test("A notice per night at wake - sleep target - lead; the spring-forward night is an hour shorter on the wall")
    func noticeTimes() throws {
        let schedule = WakeSchedule.everyDayAtSeven  // 8 h target, 30 min lead
        let now = try #require(ISO8601.date("2026-03-06T12:00:00Z"))
        let entries = BatchPlanner.entries(for: schedule, in: Self.newYork, after: now, horizonDays: 3)
        let notices = BedtimeNoticePlanner.notices(
            for: entries, schedule: schedule, in: Self.newYork, now: now, seed: 1)
        #expect(notices.map(\.id) == ["bedtime-2026-03-07", "bedtime-2026-03-08", "bedtime-2026-03-09"])
        #expect(
            notices.map(\.fireDate)
                == [
                    "2026-03-07T03:30:00Z",  // Fri 22:30 EST for Sat 07:00 EST
                    "2026-03-08T02:30:00Z",  // Sat 21:30 EST for Sun 07:00 EDT (11:00Z): 8 h 30 elapsed
                    "2026-03-09T02:30:00Z",  // Sun 22:30 EDT for Mon 07:00 EDT
                ].compactMap(ISO8601.date))
        #expect(notices[0].text.contains("23:00") && notices[0].text.contains("07:00"), "\(notices[0].text)")
        // A notice already due is not added.
        let late = try #require(ISO8601.date("2026-03-07T04:00:00Z"))
        #expect(
            BedtimeNoticePlanner.notices(for: entries, schedule: schedule, in: Self.newYork, now: late, seed: 1).count
                == 2)
    }

    static func record(_ id: String, hours: Double) -> NotificationRecord {
        NotificationRecord(id: id, fireDate: Date(timeIntervalSince1970: 1_800_000_000 + hours * 3_600), text: id)
    }

    @Test("At most 64 pending, the soonest kept; an update replaces the previous set of its kind")
    func cap() {
        var pending = PendingNotifications()
        let sunlight = (0..<10).map { Self.record("sunlight-\($0)", hours: Double($0) * 24 + 2) }
        pending.replace(prefix: "sunlight-", with: sunlight)
        let bedtime = (0..<70).reversed().map { Self.record("bedtime-\($0)", hours: Double($0) * 24 + 1) }
        let added = pending.replace(prefix: "bedtime-", with: bedtime)
        #expect(pending.records.count == 64)
        #expect(pending.records == pending.records.sorted { $0.fireDate < $1.fireDate })
        // 10 sunlight + 54 bedtime fit: the soonest 64 of the 80.
        #expect(added.count == 54 && added.first?.id == "bedtime-0" && added.last?.id == "bedtime-53")
        #expect(pending.records.filter { $0.id.hasPrefix("sunlight-") }.count == 10)

        let replacement = [Self.record("bedtime-x", hours: 0.5)]
        #expect(pending.replace(prefix: "bedtime-", with: replacement) == replacement)
        #expect(pending.records.count == 11)
        #expect(pending.records.first?.id == "bedtime-x")
        pending.removeDelivered(before: Date(timeIntervalSince1970: 1_800_000_000 + 3_600 * 2))
        #expect(pending.records.map(\.id).first == "sunlight-1")
    }

    @Test(
        "An update is the rule's answer: 2,000 seeded updates (ties, repeats, ids without the prefix, past the limit) against the rule written plainly"
    )
    func updateMatchesTheRule() throws {
        // The rule, written plainly: the others and `new`, the later of an id winning, sorted,
        // the soonest `limit` kept; added = the new records kept; dropped = the rest, sorted.
        func reference(_ records: [NotificationRecord], prefix: String, new: [NotificationRecord]) -> (
            records: [NotificationRecord], change: NotificationChange
        ) {
            func sooner(_ a: NotificationRecord, _ b: NotificationRecord) -> Bool {
                (a.fireDate, a.id) < (b.fireDate, b.id)
            }
            let candidates = records.filter { !$0.id.hasPrefix(prefix) } + new
            var seen = Set<String>()
            let unique = candidates.reversed().filter { seen.insert($0.id).inserted }.sorted(by: sooner)
            let kept = Array(unique.prefix(PendingNotifications.limit))
            let keptIDs = Set(kept.map(\.id))
            return (
                kept,
                NotificationChange(
                    added: new.filter { keptIDs.contains($0.id) }.sorted(by: sooner),
                    dropped: Array(unique.dropFirst(PendingNotifications.limit)))
            )
        }
        var rng = SplitMix64(state: 11)
        func draw(_ n: UInt64) -> Int { Int(rng.next() % n) }
        var pending = PendingNotifications()
        var fast = 0
        for round in 0..<2_000 {
            let prefix = ["bedtime-", "sunlight-"][draw(2)]
            let count = [0, 1, 3, 7, 16, 40, 70][draw(7)]
            let new = (0..<count).map { index -> NotificationRecord in
                let id =
                    draw(20) == 0
                    ? "other-\(draw(5))" : draw(10) == 0 ? "\(prefix)\(draw(3))" : "\(prefix)\(round)-\(index)"
                // Whole hours in a short span: equal fire dates are common.
                return NotificationRecord(
                    id: id, fireDate: Date(timeIntervalSince1970: 1_800_000_000 + Double(draw(90)) * 3_600),
                    text: "t\(draw(3))")
            }
            let expected = reference(pending.records, prefix: prefix, new: new)
            let unique = Set(new.map(\.id)).count == new.count && new.allSatisfy { $0.id.hasPrefix(prefix) }
            if unique && new.count <= 16 { fast += 1 }
            let change = pending.update(prefix: prefix, with: new)
            #expect(change == expected.change, "round \(round)")
            #expect(pending.records == expected.records, "round \(round)")
            if draw(8) == 0 { pending.removeDelivered(before: Date(timeIntervalSince1970: 1_800_000_000 + 40 * 3_600)) }
        }
        #expect(fast > 1_000, "the merge took \(fast) of the updates")
        // A stored list out of order is read back in the list's order.
        let stored = #"{"records":[{"id":"b","fireDate":2000,"text":"x"},{"id":"a","fireDate":1000,"text":"y"}]}"#
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let read = try decoder.decode(PendingNotifications.self, from: Data(stored.utf8))
        #expect(read.records.map(\.id) == ["a", "b"])
    }

    @Test(
        "earliestBeginDate is the next wake-up + 1 h, right across DST changes",
        arguments: [
            // Sat 15:00 EST before spring-forward: Sun 07:00 EDT = 11:00Z, + 1 h.
            ("2026-03-07T20:00:00Z", "07:00", "2026-03-08T12:00:00Z"),
            // Sat before fall-back: Sun 07:00 EST = 12:00Z, + 1 h.
            ("2026-10-31T20:00:00Z", "07:00", "2026-11-01T13:00:00Z"),
            // 01:30 on the fall-back day is its first occurrence (05:30Z); one elapsed hour later.
            ("2026-10-31T20:00:00Z", "01:30", "2026-11-01T06:30:00Z"),
            // 02:30 on the spring-forward day does not exist: 03:30 EDT (07:30Z), + 1 h.
            ("2026-03-07T20:00:00Z", "02:30", "2026-03-08T08:30:00Z"),
        ])
    func earliestBeginDate(now: String, wake: String, expected: String) throws {
        let time = try #require(LocalTime(parsing: wake))
        let schedule = WakeSchedule(wakeTimes: Dictionary(uniqueKeysWithValues: Weekday.allCases.map { ($0, time) }))
        let got = RefreshPlanner.earliestBeginDate(
            after: try #require(ISO8601.date(now)), schedule: schedule, in: Self.newYork)
        #expect(got == ISO8601.date(expected))
        // A refresh plan takes it from its batch's first entry: the same instant at any horizon.
        for horizon in [1, 7, 14] {
            let plan = RefreshPlan.make(
                schedule: schedule, zone: Self.newYork, now: try #require(ISO8601.date(now)), horizonDays: horizon,
                deviceSeed: 1)
            #expect(plan.earliestBeginDate == got, "horizon \(horizon)")
        }
    }

    @Test("A plan's earliestBeginDate is the planner's, hour by hour over two weeks of a schedule with days off")
    func planEarliestBeginDate() throws {
        let weekdays = WakeSchedule(
            wakeTimes: [.monday: LocalTime(hour: 6, minute: 30), .wednesday: LocalTime(hour: 2, minute: 30)]
                .compactMapValues { $0 })
        let start = try #require(ISO8601.date("2026-03-01T00:00:00Z"))
        for hour in 0..<(14 * 24) {
            let now = start.addingTimeInterval(Double(hour) * 3_600 + 1_234)
            for zone in [Self.newYork, Self.berlin] {
                #expect(
                    RefreshPlan.make(schedule: weekdays, zone: zone, now: now, deviceSeed: 2).earliestBeginDate
                        == RefreshPlanner.earliestBeginDate(after: now, schedule: weekdays, in: zone))
            }
        }
    }

    @Test("Travel keeps the wall-clock wake time: 07:00 in New York, then 07:00 in Berlin, in the next batch")
    func travel() throws {
        let now = try #require(ISO8601.date("2026-06-01T12:00:00Z"))
        var phone = PhoneCore()
        _ = phone.refresh(
            RefreshPlan.make(schedule: .everyDayAtSeven, zone: Self.newYork, now: now, deviceSeed: 3), at: now)
        let later = now.addingTimeInterval(3_600)
        _ = phone.refresh(
            RefreshPlan.make(schedule: .everyDayAtSeven, zone: Self.berlin, now: later, deviceSeed: 3), at: later)
        let batch = try #require(phone.state.outbox)
        #expect(batch.seq == 2 && batch.timeZone == "Europe/Berlin")
        #expect(batch.entries.allSatisfy { $0.localTime == "07:00" && $0.timeZone == "Europe/Berlin" })
        #expect(batch.entries.first?.wake == ISO8601.date("2026-06-02T05:00:00Z"))  // 07:00 CEST
        #expect(phone.state.notifications.records.allSatisfy { $0.text.contains("07:00") })
        #expect(phone.state.notifications.records.first?.fireDate == ISO8601.date("2026-06-01T20:30:00Z"))
    }

    @Test("Overrides win over the weekday: another time, or off")
    func overrides() throws {
        let zone = Self.berlin
        var schedule = WakeSchedule.everyDayAtSeven
        schedule.overrides[try #require(LocalDate(parsing: "2026-12-25"))] = .off
        schedule.overrides[try #require(LocalDate(parsing: "2026-12-26"))] = .time(
            try #require(LocalTime(parsing: "09:30")))
        let entries = BatchPlanner.entries(
            for: schedule, in: zone, after: try #require(ISO8601.date("2026-12-24T12:00:00Z")), horizonDays: 3)
        // The 3-day horizon starts at the first wake day, Dec 26.
        #expect(entries.map(\.localDate) == ["2026-12-26", "2026-12-27", "2026-12-28"])
        #expect(entries.map(\.localTime) == ["09:30", "07:00", "07:00"])
    }
}

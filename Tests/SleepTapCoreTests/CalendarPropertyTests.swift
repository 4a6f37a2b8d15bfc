import Foundation
import Testing

@testable import SleepTapCore

/// Seeded property tests of batch generation over every known zone, 2020-2030, random schedules.
/// A failure names its seed and case; rerun with that seed to replay it.
@Suite("Batch generation properties")
struct CalendarPropertyTests {
    static let seed: UInt64 = 0x51EE_97A9_2026_1130
    static let cases = 1_500

    struct Case: CustomStringConvertible {
        var zone: TimeZone
        var now: Date
        var schedule: WakeSchedule
        var number: Int
        var description: String {
            let times = Weekday.allCases.map { "\($0)=\(schedule.wakeTimes[$0]?.description ?? "off")" }
            let overrides = schedule.overrides.map { "\($0.key)=\($0.value)" }.sorted()
            return
                "case \(number): zone \(zone.identifier), now \(ISO8601.string(now)), \(times), overrides \(overrides)"
        }
    }

    static func randomTime(_ rng: inout SplitMix64) -> LocalTime {
        // Half of the times fall in 00:00-03:59, where the DST transitions are.
        let hour = rng.next() % 2 == 0 ? Int(rng.next() % 4) : Int(rng.next() % 24)
        let minute = [0, 15, 30, 45, 59][Int(rng.next() % 5)]
        return LocalTime(hour: hour, minute: minute)!
    }

    static func makeCase(_ number: Int, _ rng: inout SplitMix64, zones: [String]) -> Case {
        let zone = TimeZone(identifier: zones[Int(rng.next() % UInt64(zones.count))])!
        let start = ISO8601.date("2020-01-01T00:00:00Z")!.timeIntervalSince1970
        let end = ISO8601.date("2030-12-31T00:00:00Z")!.timeIntervalSince1970
        var now = Date(timeIntervalSince1970: start + Double(rng.next() % UInt64(end - start)))
        // Half of the cases start up to 4 days before one of the zone's transitions.
        if rng.next() % 2 == 0, let transition = zone.nextDaylightSavingTimeTransition(after: now) {
            now = transition.addingTimeInterval(-Double(rng.next() % (4 * 86_400)))
        }
        var times: [Weekday: LocalTime] = [:]
        for day in Weekday.allCases where rng.next() % 5 != 0 { times[day] = randomTime(&rng) }
        var overrides: [LocalDate: WakeOverride] = [:]
        let calendar = WakeCalendar.calendar(in: zone)
        for _ in 0..<(rng.next() % 3) {
            let offset = Int(rng.next() % 8)
            if let day = calendar.date(byAdding: .day, value: offset, to: now) {
                overrides[LocalDate(day, in: calendar)] = rng.next() % 2 == 0 ? .off : .time(randomTime(&rng))
            }
        }
        return Case(
            zone: zone, now: now, schedule: WakeSchedule(wakeTimes: times, overrides: overrides), number: number)
    }

    @Test("Instants increase, one entry per wake day, local time is the scheduled or gap-shifted time")
    func properties() {
        let zones = TimeZone.knownTimeZoneIdentifiers.sorted()
        #expect(zones.count > 300)
        var rng = SplitMix64(state: Self.seed)
        var transitionDays = 0
        for number in 0..<Self.cases {
            let c = Self.makeCase(number, &rng, zones: zones)
            transitionDays += check(c)
        }
        // The generator must actually reach DST days, or the properties prove little.
        #expect(transitionDays > 50, "seed \(Self.seed): only \(transitionDays) entries on transition days")
    }

    /// Checks one case. - Returns: how many entries fell on a day with a UTC-offset change.
    func check(_ c: Case) -> Int {
        let label = "seed \(Self.seed), \(c)"
        let calendar = WakeCalendar.calendar(in: c.zone)
        let entries = BatchPlanner.entries(for: c.schedule, in: c.zone, after: c.now)
        var transitionDays = 0

        // 1. Strictly increasing, all after now.
        for (a, b) in zip(entries, entries.dropFirst()) where !(a.wake < b.wake) {
            Issue.record("not increasing: \(a) then \(b); \(label)")
        }
        if let first = entries.first, first.wake <= c.now { Issue.record("entry not after now; \(label)") }

        // 2. Exactly the wake days of the horizon: one entry each, none for days off.
        guard let first = entries.first else {
            // No entry: then no day in the next 8 has a wake-up after now.
            for offset in 0..<8 {
                let day = calendar.date(byAdding: .day, value: offset, to: calendar.startOfDay(for: c.now))!
                if let time = c.schedule.wakeTime(onDayOf: day, in: calendar),
                    let instant = WakeCalendar.instant(of: time, onDayOf: day, in: calendar), instant > c.now
                {
                    Issue.record("empty batch but \(LocalDate(day, in: calendar)) has a wake-up; \(label)")
                }
            }
            return 0
        }
        let firstDay = calendar.startOfDay(for: first.wake)
        var expectedDates: [String] = []
        for offset in 0..<BatchPlanner.defaultHorizonDays {
            let day = calendar.date(byAdding: .day, value: offset, to: firstDay)!
            if c.schedule.wakeTime(onDayOf: day, in: calendar) != nil {
                expectedDates.append(LocalDate(day, in: calendar).description)
            }
        }
        let dates = entries.map(\.localDate)
        if dates != expectedDates {
            Issue.record("dates \(dates) != wake days \(expectedDates); \(label)")
        }

        // 3. Local wall time: as scheduled, or moved forward by exactly the gap.
        for entry in entries {
            let day = calendar.startOfDay(for: entry.wake)
            guard let scheduled = c.schedule.wakeTime(onDayOf: day, in: calendar) else {
                Issue.record("entry on a day off: \(entry); \(label)")
                continue
            }
            let parts = calendar.dateComponents([.hour, .minute], from: entry.wake)
            let local = (parts.hour ?? -1) * 60 + (parts.minute ?? -1)
            let wanted = scheduled.hour * 60 + scheduled.minute
            let before = c.zone.secondsFromGMT(for: day.addingTimeInterval(-1))
            let after = c.zone.secondsFromGMT(for: calendar.date(byAdding: .day, value: 1, to: day)!)
            if before != after { transitionDays += 1 }
            if local != wanted {
                // Allowed only inside a spring-forward gap: the scheduled time does not exist, and
                // the shift equals the gap (offset after − offset before).
                let shift = (local - wanted) * 60
                let offsetBefore = c.zone.secondsFromGMT(for: entry.wake.addingTimeInterval(-Double(shift) - 1))
                let offsetAfter = c.zone.secondsFromGMT(for: entry.wake)
                if shift <= 0 || offsetAfter - offsetBefore != shift {
                    Issue.record("local \(entry.localTime) for scheduled \(scheduled) is not a gap shift; \(label)")
                }
            }
            if entry.localTime != WakeCalendar.localTimeString(entry.wake, in: calendar)
                || entry.localDate != LocalDate(entry.wake, in: calendar).description
                || entry.timeZone != c.zone.identifier
            {
                Issue.record("entry fields disagree with its instant: \(entry); \(label)")
            }
            // Repeated times take the first occurrence: no earlier instant reads the same wall time.
            for back in [1_800.0, 3_600, 7_200] {
                let earlier = entry.wake.addingTimeInterval(-back)
                if WakeCalendar.localTimeString(earlier, in: calendar) == entry.localTime
                    && calendar.isDate(earlier, inSameDayAs: entry.wake)
                {
                    Issue.record("not the first occurrence (\(back) s earlier reads the same): \(entry); \(label)")
                }
            }
        }
        return transitionDays
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import SleepTapTestFixtures
import Testing

@testable import SleepTapCore

/// Seeded property tests of batch generation over every known zone, 2020-2030, random schedules,
/// against a model that computes the expected wake-ups without the planner's helpers.
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
        var overrides: [LocalDate: WakeOverride] = [:]
        // Half of the cases start up to 4 days before one of the zone's transitions; half of those
        // wake up on the transition's date at a wall time the transition skips or repeats.
        if rng.next() % 2 == 0, let transition = zone.nextDaylightSavingTimeTransition(after: now) {
            now = transition.addingTimeInterval(-Double(rng.next() % (4 * 86_400)))
            let before = WakeCalendar.utcOffset(of: zone, at: transition.addingTimeInterval(-1))
            let after = WakeCalendar.utcOffset(of: zone, at: transition)
            let minutes = abs(after - before) / 60
            if rng.next() % 2 == 0, minutes > 0 {
                let wall =
                    Int(transition.timeIntervalSince1970) + min(before, after) + Int(rng.next() % UInt64(minutes)) * 60
                let day = OffsetModel.dayNumber(ofWall: wall)
                let seconds = wall - day * OffsetModel.secondsPerDay
                overrides[LocalDate(parsing: OffsetModel.dateString(day))!] = .time(
                    LocalTime(hour: seconds / 3_600, minute: seconds % 3_600 / 60)!)
            }
        }
        var times: [Weekday: LocalTime] = [:]
        for day in Weekday.allCases where rng.next() % 5 != 0 { times[day] = randomTime(&rng) }
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

    @Test(
        "Batches match an independent model: date, local time, gap shift and first occurrence from UTC offsets")
    func matchesOffsetModel() throws {
        // The database is built here with zic from the machine's tz source, so the planner and
        // the model read the same rules whatever tzdata the machine has.
        let source = try String(contentsOfFile: ZoneDatabase.systemDirectory + "/tzdata.zi", encoding: .utf8)
        let database = try ZoneFixture.database(source, version: "zic")
        try ZoneDatabase.$scoped.withValue(database) { try matchesOffsetModel(on: database) }
    }

    func matchesOffsetModel(on database: ZoneDatabase) throws {
        let zones = TimeZone.knownTimeZoneIdentifiers.sorted().filter { database.contains($0) }
        #expect(zones.count > 300)
        var rng = SplitMix64(state: Self.seed)
        var tally = OffsetModel.Tally()
        var reused = 0
        for number in 0..<Self.cases {
            let c = Self.makeCase(number, &rng, zones: zones)
            let horizon = [1, 3, 7, 7, 7, 14][Int(rng.next() % 6)]
            let label = "seed \(Self.seed), \(c), horizon \(horizon)"
            let model = OffsetModel(zone: c.zone)
            let expected = model.entries(for: c.schedule, after: c.now, horizonDays: horizon, tally: &tally)
            let actual = BatchPlanner.entries(for: c.schedule, in: c.zone, after: c.now, horizonDays: horizon)
            if actual != expected {
                Issue.record("planner \(actual.map(Self.show)) != model \(expected.map(Self.show)); \(label)")
            }
            // A later planning instant before the first wake-up plans from the same first day, so
            // it may take the batch kept for it (`BatchCache`): that must be the model's batch
            // for the later instant too, for this horizon and another.
            guard let first = expected.first else { continue }
            var other = SplitMix64(state: Self.seed ^ UInt64(number))
            let later = c.now.addingTimeInterval(
                first.wake.timeIntervalSince(c.now) * Double(other.next() % 1_000) / 1_000)
            for days in [horizon, horizon == 7 ? 14 : 7] {
                let again = model.entries(for: c.schedule, after: later, horizonDays: days, tally: &tally)
                let kept = BatchPlanner.entries(for: c.schedule, in: c.zone, after: later, horizonDays: days)
                if kept != again {
                    Issue.record(
                        "planner \(kept.map(Self.show)) != model \(again.map(Self.show)) at \(ISO8601.string(later)), horizon \(days); \(label)"
                    )
                }
                if c.schedule.overrides.isEmpty { reused += 1 }
            }
        }
        #expect(reused > 300, "seed \(Self.seed): only \(reused) plans could reuse a kept batch")
        // The generator must reach both kinds of transition, or the comparison proves little.
        #expect(tally.gapShifted > 30, "seed \(Self.seed): only \(tally.gapShifted) wake-ups in a spring-forward gap")
        #expect(tally.repeated > 30, "seed \(Self.seed): only \(tally.repeated) wake-ups at a repeated time")
        #expect(
            tally.nearTransition > 50, "seed \(Self.seed): only \(tally.nearTransition) wake-ups near an offset change")
    }

    static func show(_ entry: WakeEntry) -> String {
        "\(ISO8601.string(entry.wake)) \(entry.localDate) \(entry.localTime)"
    }
}

/// The planner's rules computed a second way: local dates by civil-calendar arithmetic on day
/// numbers, instants from the UTC offsets alone (`WakeCalendar.utcOffset`, the database's). No
/// `Calendar`, no wall-time search of `WakeCalendar`, no 86,400 s steps between instants.
///
/// A wall time that occurs twice (autumn overlap) takes its first instant; a wall time that does
/// not occur (spring-forward gap) is moved forward by the gap, and dropped if that leaves its day.
/// Day numbers are days since 1970-01-01 on the local calendar; civil dates follow Howard
/// Hinnant, "chrono-Compatible Low-Level Date Algorithms" (civil_from_days).
struct OffsetModel {
    let zone: TimeZone

    struct Tally {
        var gapShifted = 0
        var repeated = 0
        /// Wake-ups within 12 h of a change of UTC offset.
        var nearTransition = 0
    }

    static let secondsPerDay = 86_400

    func offset(_ instant: Int) -> Int {
        WakeCalendar.utcOffset(of: zone, at: Date(timeIntervalSince1970: TimeInterval(instant)))
    }

    /// Local wall-clock seconds since 1970-01-01 00:00 local.
    func wall(_ instant: Int) -> Int { instant + offset(instant) }

    static func floorDivide(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : -((-a + b - 1) / b) }

    static func dayNumber(ofWall wall: Int) -> Int { floorDivide(wall, secondsPerDay) }

    /// (year, month, day) of a day number.
    static func civil(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func dateString(_ days: Int) -> String {
        let c = civil(days)
        return String(format: "%04d-%02d-%02d", c.year, c.month, c.day)
    }

    static func timeString(ofWall wall: Int) -> String {
        let seconds = wall - dayNumber(ofWall: wall) * secondsPerDay
        return String(format: "%02d:%02d", seconds / 3_600, seconds % 3_600 / 60)
    }

    /// 1970-01-01 was a Thursday; `Weekday` numbers Sunday 1 ... Saturday 7.
    static func weekday(_ days: Int) -> Weekday? {
        Weekday(rawValue: ((days + 4) % 7 + 7) % 7 + 1)
    }

    func wakeTime(_ schedule: WakeSchedule, on days: Int) -> LocalTime? {
        let c = Self.civil(days)
        if let override = schedule.overrides.first(where: {
            $0.key.year == c.year && $0.key.month == c.month && $0.key.day == c.day
        }) {
            if case .time(let time) = override.value { return time }
            return nil
        }
        return Self.weekday(days).flatMap { schedule.wakeTimes[$0] }
    }

    enum Kind { case plain, repeated, gapShifted }

    /// The instant of `time` on local day `days`, or nil when a gap shift moves it off the day.
    func instant(of time: LocalTime, on days: Int) -> (at: Int, kind: Kind)? {
        let target = days * Self.secondsPerDay + time.hour * 3_600 + time.minute * 60
        // Offsets span UTC-12 to UTC+14, so every instant reading `target` lies within these samples.
        let offsets = Set([target - 15 * 3_600, target, target + 13 * 3_600].map(offset))
        let readings = offsets.map { target - $0 }.filter { wall($0) == target }.sorted()
        if let first = readings.first { return (first, readings.count > 1 ? .repeated : .plain) }
        // A gap: the instant the earlier offset gives reads `target` plus the gap.
        let shifted = target - offset(target - 15 * 3_600)
        guard wall(shifted) > target, Self.dayNumber(ofWall: wall(shifted)) == days else { return nil }
        return (shifted, .gapShifted)
    }

    /// The wake-ups of `horizonDays` local days from the day of the first wake-up after `now`.
    func entries(
        for schedule: WakeSchedule, after now: Date, horizonDays: Int, tally: inout Tally
    ) -> [WakeEntry] {
        let instantNow = Int(now.timeIntervalSince1970.rounded(.down))
        // `instant > now` for whole-second instants and a possibly fractional now.
        func isAfterNow(_ instant: Int) -> Bool { TimeInterval(instant) > now.timeIntervalSince1970 }
        let today = Self.dayNumber(ofWall: wall(instantNow))
        guard
            let start = (today...today + 7).first(where: { day in
                wakeTime(schedule, on: day).flatMap { instant(of: $0, on: day) }.map { isAfterNow($0.at) } ?? false
            })
        else { return [] }
        var result: [WakeEntry] = []
        var last: Int?
        for day in start..<start + horizonDays {
            guard let time = wakeTime(schedule, on: day), let found = instant(of: time, on: day),
                isAfterNow(found.at), last.map({ found.at > $0 }) ?? true
            else { continue }
            last = found.at
            switch found.kind {
            case .plain: break
            case .repeated: tally.repeated += 1
            case .gapShifted: tally.gapShifted += 1
            }
            if offset(found.at - Self.secondsPerDay / 2) != offset(found.at + Self.secondsPerDay / 2) {
                tally.nearTransition += 1
            }
            let wallTime = wall(found.at)
            result.append(
                WakeEntry(
                    wake: Date(timeIntervalSince1970: TimeInterval(found.at)),
                    localDate: Self.dateString(Self.dayNumber(ofWall: wallTime)),
                    localTime: Self.timeString(ofWall: wallTime), timeZone: zone.identifier))
        }
        return result
    }
}

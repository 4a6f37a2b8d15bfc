// SPDX-License-Identifier: Apache-2.0
package import Foundation
package import SleepTapCore

/// The wake-ups a batch must hold, computed from the schedule alone, for the date-exhaustion
/// soak (docs/scenarios.md, "Soak"). It does not call the phone's planner (`BatchPlanner`,
/// `WakeCalendar`): local dates are stepped on a UTC Gregorian calendar (no zone involved) and a
/// wall time becomes an instant by trying the zone's UTC offsets around it, so a mistake in the
/// phone's calendar code shows up as a difference instead of being copied.
///
/// The rules are the documented ones (docs/schedule-format.md): a batch holds the wake-ups of
/// `horizonDays` consecutive local days, starting with the day of the next wake-up strictly
/// after its generation; an override wins over the weekday; a wall time in a spring-forward gap
/// moves forward by the gap; a repeated wall time takes its first occurrence (zone rules from
/// the IANA tz database in use, `WakeCalendar.utcOffset`; the wall-time search is its own).
package struct SoakOracle: Sendable {
    /// One wake-up: the instant, and its local date (`yyyy-MM-dd`) and wall time (`HH:MM`) in
    /// the zone.
    package struct Wake: Equatable, Sendable {
        package var instant: Date
        package var localDate: String
        package var localTime: String
    }

    package var schedule: WakeSchedule
    /// Wake instants already computed, by zone, local date and wall time (a run generates many
    /// batches over the same days).
    private var instants: [InstantKey: Date] = [:]

    private struct InstantKey: Hashable {
        var zone: String
        var date: Date
        var time: LocalTime
    }

    package init(schedule: WakeSchedule) {
        self.schedule = schedule
    }

    /// A Gregorian calendar on UTC: local dates are stepped on it as dates, with no zone.
    static let dates: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? .gmt
        return calendar
    }()

    /// The wall time the schedule gives for a local date (midnight UTC of that date on `dates`),
    /// nil for a day off.
    func wakeTime(onDate date: Date) -> LocalTime? {
        if let override = schedule.overrides[LocalDate(date, in: Self.dates)] {
            switch override {
            case .time(let time): return time
            case .off: return nil
            }
        }
        guard let weekday = Weekday(rawValue: Self.dates.component(.weekday, from: date)) else { return nil }
        return schedule.wakeTimes[weekday]
    }

    /// The instant at which the wall clock of `zone` reads `time` on the local date `date`
    /// (midnight UTC of that date): of the zone's UTC offsets within a day and a half of it, the
    /// ones that read back; the first if two do (a repeated time); none reads back inside a
    /// gap, which then takes the offset before the gap (the time moves forward by the gap).
    static func instant(of time: LocalTime, onDate date: Date, in zone: TimeZone) -> Date {
        // The wall time read as if it were UTC.
        let naive = date.addingTimeInterval(TimeInterval(time.hour * 3600 + time.minute * 60))
        let hour: TimeInterval = 3600
        var offsets = Set<Int>()
        for step in -6...6 {
            offsets.insert(
                WakeCalendar.utcOffset(of: zone, at: naive.addingTimeInterval(TimeInterval(step) * 6 * hour)))
        }
        let candidates = offsets.map { naive.addingTimeInterval(-TimeInterval($0)) }
        let readBack = candidates.filter { candidate in
            WakeCalendar.utcOffset(of: zone, at: candidate) == Int(naive.timeIntervalSince(candidate))
        }
        if let first = readBack.min() { return first }
        // In a gap: the offset in force just before it is the smallest one near it.
        return naive.addingTimeInterval(-TimeInterval(offsets.min() ?? 0))
    }

    /// The wake-ups a batch generated at `generatedAt` in `zone` holds.
    /// - Parameters:
    ///   - generatedAt: the instant the phone generated the batch (entries are strictly after it).
    ///   - zone: the phone's zone at that instant.
    ///   - horizonDays: local days covered (the phone's `--horizon-days`), at least 1.
    /// - Returns: the wake-ups, strictly increasing; empty when no day of the coming week has one.
    package mutating func batch(generatedAt: Date, in zone: TimeZone, horizonDays: Int) -> [Wake] {
        let shifted = generatedAt.addingTimeInterval(TimeInterval(WakeCalendar.utcOffset(of: zone, at: generatedAt)))
        let parts = Self.dates.dateComponents([.year, .month, .day], from: shifted)
        guard let today = Self.dates.date(from: DateComponents(year: parts.year, month: parts.month, day: parts.day))
        else { return [] }
        func day(_ offset: Int) -> Date? { Self.dates.date(byAdding: .day, value: offset, to: today) }
        func wake(on date: Date) -> Date? {
            guard let time = wakeTime(onDate: date) else { return nil }
            let key = InstantKey(zone: zone.identifier, date: date, time: time)
            if let known = instants[key] { return known }
            let instant = Self.instant(of: time, onDate: date, in: zone)
            instants[key] = instant
            return instant
        }
        // The first day, today or within the next week, with a wake-up after generation.
        var firstDay: Int?
        for offset in 0...7 {
            if let date = day(offset), let instant = wake(on: date), instant > generatedAt {
                firstDay = offset
                break
            }
        }
        guard let first = firstDay else { return [] }
        var result: [Wake] = []
        for offset in first..<(first + max(1, horizonDays)) {
            guard let date = day(offset), let instant = wake(on: date), instant > generatedAt else { continue }
            if let last = result.last, instant <= last.instant { continue }
            result.append(
                Wake(instant: instant, localDate: Self.localDate(instant, zone), localTime: Self.wall(instant, zone)))
        }
        return result
    }

    /// `yyyy-MM-dd` of `instant` on the wall clock of `zone` (its UTC offset added, read on UTC).
    static func localDate(_ instant: Date, _ zone: TimeZone) -> String {
        let shifted = instant.addingTimeInterval(TimeInterval(WakeCalendar.utcOffset(of: zone, at: instant)))
        let c = dates.dateComponents([.year, .month, .day], from: shifted)
        return String(format: "%04d-%02d-%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
    }

    /// `HH:MM` of `instant` on the wall clock of `zone`.
    static func wall(_ instant: Date, _ zone: TimeZone) -> String {
        let shifted = instant.addingTimeInterval(TimeInterval(WakeCalendar.utcOffset(of: zone, at: instant)))
        let c = dates.dateComponents([.hour, .minute], from: shifted)
        return String(format: "%02d:%02d", c.hour ?? 0, c.minute ?? 0)
    }
}

// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization

/// Local days, kept: which local day an instant falls in (its first instant and the next day's,
/// what Foundation's `Calendar.dateInterval(of: .day, for:)` gives) and that day's date and
/// weekday, from the zone's offsets in the tz database in use (`WakeCalendar.offsets(of:)`) and
/// Gregorian arithmetic on wall seconds. The phone's job, the watch's bed tap and the twin ask
/// about the same few days again and again.
///
/// An instant in [start, end) of a known day is in that day: a local day is one interval of
/// instants. A day whose midnight falls in a gap starts at the change of offset. Shared by every
/// thread; a calendar's list is emptied when it holds `capacity` days.
enum LocalDayCache {
    /// One local day of a calendar.
    struct Day: Sendable {
        /// The day's first instant and the next day's first instant.
        var start: Date
        var end: Date
        var date: LocalDate
        /// 1 = Sunday … 7 = Saturday (Gregorian, `Calendar.Component.weekday`).
        var weekday: Int
    }

    /// Days are kept per calendar system and zone (a day's bounds depend on nothing else).
    struct Key: Hashable {
        var database: Int
        var zone: String
    }

    /// Days kept at most per calendar and zone.
    static let capacity = 20_000

    /// The days of every calendar and zone asked about, and the last one asked about (found by
    /// comparing its key, without hashing: a twin asks about one zone and UTC in turn).
    private struct Store {
        var days: [Key: [Day]] = [:]
        var lastKey: Key?
        var lastDays: [Day] = []
        var previousKey: Key?
        var previousDays: [Day] = []

        mutating func days(for key: Key) -> [Day]? {
            if key == lastKey { return lastDays }
            if key == previousKey {
                swap(&lastKey, &previousKey)
                swap(&lastDays, &previousDays)
                return lastDays
            }
            guard let found = days[key] else { return nil }
            previousKey = lastKey
            previousDays = lastDays
            lastKey = key
            lastDays = found
            return found
        }

        mutating func set(_ list: [Day], for key: Key) {
            days[key] = list
            if key == lastKey { lastDays = list }
            if key == previousKey { previousDays = list }
        }
    }

    private static let shared = Mutex(Store())

    /// The local day containing `instant` in `calendar` (nil only when Foundation has none).
    static func day(containing instant: Date, in calendar: Calendar) -> Day? {
        let key = Key(database: WakeCalendar.databaseKey(of: calendar.timeZone), zone: calendar.timeZone.identifier)
        let known = shared.withLock { cache -> Day? in
            guard let days = cache.days(for: key) else { return nil }
            let index = insertionIndex(of: instant, in: days)
            guard index > 0, instant < days[index - 1].end else { return nil }
            return days[index - 1]
        }
        if let known { return known }
        let offsets = WakeCalendar.offsets(of: calendar.timeZone)
        let seconds = WakeCalendar.seconds(instant)
        var number = floorDiv(offsets.wall(at: seconds), 86_400)
        var start = offsets.start(ofDay: number)
        var end = offsets.start(ofDay: number + 1)
        // After a fall back across midnight, the repeated hour belongs to the new day.
        if seconds >= end {
            number += 1
            start = end
            end = offsets.start(ofDay: number + 1)
        }
        let civil = CivilDate(days: number)
        let day = Day(
            start: Date(timeIntervalSince1970: TimeInterval(start)),
            end: Date(timeIntervalSince1970: TimeInterval(end)),
            date: LocalDate(known: civil.year, month: civil.month, day: civil.day),
            weekday: Int(floorMod(number + 4, 7)) + 1)
        guard day.start <= instant, instant < day.end else { return day }
        shared.withLock { cache in
            var days = cache.days(for: key) ?? []
            if days.count >= capacity { days.removeAll(keepingCapacity: true) }
            let index = insertionIndex(of: day.start, in: days)
            if index > 0, days[index - 1].start == day.start { return }
            days.insert(day, at: index)
            cache.set(days, for: key)
        }
        return day
    }

    /// The first instant of the local day containing `instant` (`Calendar.startOfDay(for:)`).
    static func startOfDay(_ instant: Date, in calendar: Calendar) -> Date {
        day(containing: instant, in: calendar)?.start ?? calendar.startOfDay(for: instant)
    }

    /// The index of the first day starting after `instant` (binary search on the starts).
    private static func insertionIndex(of instant: Date, in days: [Day]) -> Int {
        var low = 0
        var high = days.count
        while low < high {
            let middle = (low + high) / 2
            if days[middle].start <= instant { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// UTC calendar days as Foundation's Gregorian calendar in UTC gives them, kept: the day an
/// instant falls in (`LocalDayCache`, `Calendar.dateInterval(of: .day, for:)`) and the first
/// instant of a calendar date (`Calendar.date(from:)`). Writing and reading ISO-8601 instants
/// asks about the same few days again and again; every answer is Foundation's, only kept.
enum UTCDays {
    /// The Gregorian calendar in UTC.
    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .gmt
        return calendar
    }()

    /// The UTC day containing `instant`: its first instant, the next day's, and its date.
    static func day(containing instant: Date) -> LocalDayCache.Day? {
        LocalDayCache.day(containing: instant, in: calendar)
    }

    /// The first instant of `date` in UTC (nil only when Foundation has none).
    static func start(of date: LocalDate) -> Date? {
        let key = (date.year * 100 + date.month) * 100 + date.day
        if let known = starts.withLock({ $0[key] }) { return known }
        guard let start = calendar.date(from: DateComponents(year: date.year, month: date.month, day: date.day))
        else { return nil }
        starts.withLock { cache in
            if cache.count >= LocalDayCache.capacity { cache.removeAll(keepingCapacity: true) }
            cache[key] = start
        }
        return start
    }

    private static let starts = Mutex<[Int: Date]>([:])
}

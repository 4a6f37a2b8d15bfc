public import Foundation

/// One wake-up: the absolute instant and how it reads on the wall clock of the batch's zone.
public struct WakeEntry: Codable, Equatable, Hashable, Sendable {
    /// The wake-up instant (serialised as ISO-8601 UTC, e.g. `2025-03-07T11:30:00Z`).
    public var wake: Date
    /// Local calendar date of the wake-up in its zone, `yyyy-MM-dd`.
    public var localDate: String
    /// Local wall time of the wake-up in its zone, `HH:MM` (after any gap shift).
    public var localTime: String
    /// IANA identifier of the zone `localDate` and `localTime` are in (the zone used).
    public var timeZone: String

    public init(wake: Date, localDate: String, localTime: String, timeZone: String) {
        self.wake = wake
        self.localDate = localDate
        self.localTime = localTime
        self.timeZone = timeZone
    }
}

/// A numbered set of upcoming wake-ups, the unit the phone sends and the watch caches.
public struct WakeBatch: Codable, Equatable, Sendable {
    /// Sequence number, ≥ 1, strictly increasing per phone; the watch never applies a lower one
    /// over a higher one.
    public var seq: UInt64
    /// When the phone generated it (virtual time).
    public var generatedAt: Date
    /// IANA identifier of the zone the entries' local dates and times are in.
    public var timeZone: String
    /// Wake-ups, strictly increasing by instant, at most one per local day.
    public var entries: [WakeEntry]

    public init(seq: UInt64, generatedAt: Date, timeZone: String, entries: [WakeEntry]) {
        self.seq = seq
        self.generatedAt = generatedAt
        self.timeZone = timeZone
        self.entries = entries
    }

    /// The last wake-up instant the batch covers, or nil for an empty batch.
    public var coverageEnd: Date? { entries.last?.wake }
}

/// Turns a schedule into the wake-ups the watch should hold.
public enum BatchPlanner {
    /// The default horizon: 7 local days of wake-ups (seed 000).
    public static let defaultHorizonDays = 7

    /// The wake-ups of `horizonDays` consecutive local days, starting with the day of the next
    /// wake-up strictly after `now`.
    ///
    /// Each day's instant follows the gap / repeated-time rule of `WakeCalendar` (calendar.md);
    /// days are stepped with `Calendar.date(byAdding: .day, ...)`, never 86,400 s. Days off
    /// contribute nothing, so a schedule with days off yields fewer than `horizonDays` entries.
    ///
    /// - Parameters:
    ///   - schedule: weekly wake times.
    ///   - zone: the zone the wall times are meant in.
    ///   - now: entries are strictly after this instant.
    ///   - horizonDays: number of local days covered, ≥ 1.
    /// - Returns: entries strictly increasing by instant; empty when the schedule has no wake-up.
    /// - Complexity: O(horizonDays) calendar look-ups.
    public static func entries(
        for schedule: WakeSchedule, in zone: TimeZone, after now: Date,
        horizonDays: Int = defaultHorizonDays
    ) -> [WakeEntry] {
        let calendar = WakeCalendar.calendar(in: zone)
        let today = calendar.startOfDay(for: now)
        // Find the first local day (today or within the next week) with a wake-up after now.
        var firstDay: Date?
        for offset in 0...7 {
            guard let day = calendar.date(byAdding: .day, value: offset, to: today) else { break }
            if let time = schedule.wakeTime(onDayOf: day, in: calendar),
                let instant = WakeCalendar.instant(of: time, onDayOf: day, in: calendar),
                instant > now
            {
                firstDay = day
                break
            }
        }
        guard let start = firstDay else { return [] }
        var result: [WakeEntry] = []
        for offset in 0..<max(1, horizonDays) {
            guard let day = calendar.date(byAdding: .day, value: offset, to: start),
                let time = schedule.wakeTime(onDayOf: day, in: calendar),
                let instant = WakeCalendar.instant(of: time, onDayOf: day, in: calendar),
                instant > now
            else { continue }
            if let last = result.last, instant <= last.wake { continue }
            result.append(
                WakeEntry(
                    wake: instant,
                    localDate: WakeCalendar.localDateString(instant, in: calendar),
                    localTime: WakeCalendar.localTimeString(instant, in: calendar), timeZone: zone.identifier))
        }
        return result
    }
}

// SPDX-License-Identifier: Apache-2.0

public import Foundation
import Synchronization

/// A wall-clock time of day, `HH:MM` in 24-hour form, with no date and no zone.
public struct LocalTime: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    /// 0...23.
    public let hour: Int
    /// 0...59.
    public let minute: Int

    /// - Returns: nil when `hour` is not in 0...23 or `minute` not in 0...59.
    public init?(hour: Int, minute: Int) {
        guard (0...23).contains(hour), (0...59).contains(minute) else { return nil }
        self.hour = hour
        self.minute = minute
    }

    /// Parses exactly `HH:MM` (two digits each, 00:00 through 23:59).
    /// - Returns: nil for anything else ("7:00", "24:00", "07:60", "07:00:00").
    public init?(parsing text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":") else { return nil }
        let digits = [bytes[0], bytes[1], bytes[3], bytes[4]]
        guard digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        let d = digits.map { Int($0 - UInt8(ascii: "0")) }
        self.init(hour: d[0] * 10 + d[1], minute: d[2] * 10 + d[3])
    }

    /// `HH:MM`.
    public var description: String {
        padded(hour, 2) + ":" + padded(minute, 2)
    }

    public static func < (lhs: LocalTime, rhs: LocalTime) -> Bool {
        (lhs.hour, lhs.minute) < (rhs.hour, rhs.minute)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = LocalTime(parsing: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "expected HH:MM (00:00-23:59), got \"\(text)\"")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// Calendar maths for wake times, all through Foundation's `Calendar` (never 86,400 s per day).
///
/// The rule (Foundation's `Calendar.nextDate(after:matching:matchingPolicy:
/// .nextTimePreservingSmallerComponents, repeatedTimePolicy: .first)`): a local time inside a
/// spring-forward gap moves forward by the length of the gap; a local time that occurs twice
/// (fall-back) takes the first occurrence.
public enum WakeCalendar {
    /// The zone for an IANA identifier ("Area/Location", or "UTC"/"GMT"), nil otherwise.
    ///
    /// Foundation also accepts abbreviations and offsets ("EST", "GMT+5"); those are refused
    /// here because they are not IANA names and carry no DST rules.
    public static func zone(named identifier: String) -> TimeZone? {
        guard isZoneName(identifier) else { return nil }
        // Foundation on Linux turns "UTC" into a zone named "GMT"; the tz database's canonical
        // name of UTC is Etc/UTC ("UTC" is a link to it, tz database file `backward`).
        return TimeZone(identifier: identifier == "UTC" ? "Etc/UTC" : identifier)
    }

    /// Whether `identifier` has the form of an IANA time-zone name, known here or not: `UTC`,
    /// `GMT`, or `Area/Location[/More]`, each part a letter followed by letters, digits, `_`, `+`
    /// or `-`, at most 64 bytes in all. Abbreviations and offsets (`EST`, `GMT+5`, `+09:00`) are
    /// not names (tz database Theory file, "Names of timezones").
    public static func isZoneName(_ identifier: String) -> Bool {
        if identifier == "UTC" || identifier == "GMT" { return true }
        let bytes = Array(identifier.utf8)
        guard bytes.count <= 64 else { return false }
        let parts = bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count >= 2 else { return false }
        return parts.allSatisfy { part in
            guard let first = part.first, isLetter(first) else { return false }
            return part.allSatisfy {
                isLetter($0) || (48...57).contains($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "+")
                    || $0 == UInt8(ascii: "-")
            }
        }
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (65...90).contains(byte) || (97...122).contains(byte) }

    /// A Gregorian calendar in `zone`.
    public static func calendar(in zone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar
    }

    /// The instant of `time` on the local day that contains `day`, in the calendar's zone.
    ///
    /// - Parameters:
    ///   - time: wall-clock time.
    ///   - day: any instant inside the wanted local day.
    ///   - calendar: carries the zone.
    /// - Returns: the instant; a gap time is shifted forward by the gap, a repeated time is the
    ///   first occurrence. nil only if Foundation finds no such time on that day.
    public static func instant(of time: LocalTime, onDayOf day: Date, in calendar: Calendar)
        -> Date?
    {
        let startOfDay = LocalDayCache.startOfDay(day, in: calendar)
        let key = InstantCache.Key(
            calendar: calendar.identifier, zone: calendar.timeZone.identifier,
            startOfDay: startOfDay.timeIntervalSince1970, minuteOfDay: time.hour * 60 + time.minute)
        if let known = InstantCache.shared.withLock({ $0.value(for: key) }) { return known }
        let found = searchInstant(of: time, startOfDay: startOfDay, in: calendar)
        InstantCache.shared.withLock { $0.keep(found, for: key) }
        return found
    }

    /// The search behind `instant(of:onDayOf:in:)`, from the day's first instant.
    private static func searchInstant(of time: LocalTime, startOfDay: Date, in calendar: Calendar) -> Date? {
        // A local day whose UTC offset does not change has each wall time exactly once: Foundation's
        // `date(from:)` gives its instant without `nextDate`'s search (the same answer).
        if let day = LocalDayCache.day(containing: startOfDay, in: calendar), day.date.year >= 1,
            steadyOffset(day, in: calendar.timeZone),
            let found = calendar.date(
                from: DateComponents(
                    year: day.date.year, month: day.date.month, day: day.date.day, hour: time.hour,
                    minute: time.minute, second: 0)),
            found >= day.start, found < day.end
        {
            return found
        }
        // Search from just before the day's first instant so that 00:00 itself matches.
        let searchFrom = startOfDay.addingTimeInterval(-1)
        let wanted = DateComponents(hour: time.hour, minute: time.minute, second: 0)
        if let found = calendar.nextDate(
            after: searchFrom, matching: wanted,
            matchingPolicy: .nextTimePreservingSmallerComponents,
            repeatedTimePolicy: .first, direction: .forward),
            calendar.isDate(found, inSameDayAs: startOfDay)
        {
            return found
        }
        // swift-corelibs-foundation's `nextDate` shifts only one-hour gaps; inside any other gap
        // (Australia/Lord_Howe's 30 minutes, Antarctica/Troll's 2 hours) it returns the next
        // day's match. Resolving the full date shifts forward by the gap the zone really has.
        var components = calendar.dateComponents([.era, .year, .month, .day], from: startOfDay)
        components.hour = time.hour
        components.minute = time.minute
        components.second = 0
        guard let shifted = calendar.date(from: components), shifted >= startOfDay,
            calendar.isDate(shifted, inSameDayAs: startOfDay)
        else { return nil }
        // Only a gap needs the shift: the time it lands on is later than the one asked for.
        let landed = calendar.dateComponents([.hour, .minute], from: shifted)
        guard (landed.hour ?? 0) * 60 + (landed.minute ?? 0) > time.hour * 60 + time.minute else { return nil }
        return shifted
    }

    /// Whether the zone's UTC offset is the same through all of `day`: no transition from just
    /// before its first instant to its end (`TimeZone.nextDaylightSavingTimeTransition(after:)`), and
    /// the same `secondsFromGMT` at both ends. Foundation's answers, kept per zone and day.
    private static func steadyOffset(_ day: LocalDayCache.Day, in zone: TimeZone) -> Bool {
        let key = SteadyDayCache.Key(zone: zone.identifier, start: day.start.timeIntervalSince1970)
        if let known = SteadyDayCache.shared.withLock({ $0.value(for: key) }) { return known }
        let last = day.end.addingTimeInterval(-1)
        let steady =
            zone.secondsFromGMT(for: day.start) == zone.secondsFromGMT(for: last)
            && (zone.nextDaylightSavingTimeTransition(after: day.start.addingTimeInterval(-1)).map { $0 > day.end }
                ?? true)
        SteadyDayCache.shared.withLock { $0.keep(steady, for: key) }
        return steady
    }

    /// The first instant strictly after `instant` whose local wall time is `time` (gap and
    /// repeated-time rule as above).
    public static func next(_ time: LocalTime, after instant: Date, in calendar: Calendar) -> Date? {
        var day = instant
        for _ in 0..<3 {
            if let candidate = self.instant(of: time, onDayOf: day, in: calendar),
                candidate > instant
            {
                return candidate
            }
            guard let nextDay = adding(.day, 1, to: LocalDayCache.startOfDay(day, in: calendar), in: calendar)
            else { return nil }
            day = nextDay
        }
        return nil
    }

    /// Foundation's `calendar.date(byAdding: component, value: value, to: date)`, its answers
    /// kept (`AddingCache`): the batch planner steps over the same local days for every batch.
    static func adding(_ component: Calendar.Component, _ value: Int, to date: Date, in calendar: Calendar) -> Date? {
        let key = AddingCache.Key(
            calendar: calendar.identifier, zone: calendar.timeZone.identifier, component: component, value: value,
            from: date.timeIntervalSince1970)
        if let known = AddingCache.shared.withLock({ $0.value(for: key) }) { return known }
        let found = calendar.date(byAdding: component, value: value, to: date)
        AddingCache.shared.withLock { $0.keep(found, for: key) }
        return found
    }

    /// The wake-up entry for `instant` in `zone` (`calendar` is in `zone`): its local date and
    /// time (`localDateString`, `localTimeString`) and the zone's offset (`secondsFromGMT`), all
    /// Foundation's answers, kept (`EntryCache`) because every batch repeats most of the last one.
    static func entry(at instant: Date, in zone: TimeZone, calendar: Calendar) -> WakeEntry {
        let key = EntryCache.Key(
            calendar: calendar.identifier, zone: zone.identifier, instant: instant.timeIntervalSince1970)
        if let known = EntryCache.shared.withLock({ $0.value(for: key) }) { return known }
        let entry = WakeEntry(
            wake: instant, localDate: localDateString(instant, in: calendar),
            localTime: localTimeString(instant, in: calendar), timeZone: zone.identifier,
            utcOffset: zone.secondsFromGMT(for: instant))
        EntryCache.shared.withLock { $0.keep(entry, for: key) }
        return entry
    }

    /// `yyyy-MM-dd` of the local day containing `instant`.
    public static func localDateString(_ instant: Date, in calendar: Calendar) -> String {
        if let day = LocalDayCache.day(containing: instant, in: calendar) { return day.date.description }
        let c = calendar.dateComponents([.year, .month, .day], from: instant)
        return padded(c.year ?? 0, 4) + "-" + padded(c.month ?? 0, 2) + "-" + padded(c.day ?? 0, 2)
    }

    /// `HH:MM` of `instant` on the wall clock of the calendar's zone.
    ///
    /// Foundation's answers are kept (`LocalTimeCache`): the batch planner, the wire decoder and
    /// the sunlight notice ask about the same few instants again and again.
    public static func localTimeString(_ instant: Date, in calendar: Calendar) -> String {
        let key = LocalTimeCache.Key(
            calendar: calendar.identifier, zone: calendar.timeZone.identifier, instant: instant.timeIntervalSince1970)
        if let known = LocalTimeCache.shared.withLock({ $0.value(for: key) }) { return known }
        let c = calendar.dateComponents([.hour, .minute], from: instant)
        let text = padded(c.hour ?? 0, 2) + ":" + padded(c.minute ?? 0, 2)
        LocalTimeCache.shared.withLock { $0.keep(text, for: key) }
        return text
    }
}

/// Answers of `WakeCalendar.localTimeString(_:in:)`, fixed by the calendar, the zone's rules and
/// the instant. Shared by every thread, in two generations (`Memo`).
enum LocalTimeCache {
    struct Key: Hashable {
        var calendar: Calendar.Identifier
        var zone: String
        var instant: TimeInterval
    }

    static let shared = Mutex(Memo<Key, String>(generation: 25_000))
}

/// Answers of `WakeCalendar.instant(of:onDayOf:in:)`, which are fixed by the calendar, the
/// zone's rules, the local day and the time: Foundation's `nextDate` search costs microseconds, and
/// the phone's job and the watch's bed tap ask for the same days again and again (a fleet of
/// devices in one zone, each day's batch overlapping the last). Shared by every thread, in two
/// generations (`Memo`).
enum InstantCache {
    struct Key: Hashable {
        var calendar: Calendar.Identifier
        var zone: String
        var startOfDay: TimeInterval
        var minuteOfDay: Int
    }

    static let shared = Mutex(Memo<Key, Date?>(generation: 25_000))
}

/// Answers of `WakeCalendar.adding(_:_:to:in:)` (`Calendar.date(byAdding:value:to:)`), fixed by
/// the calendar, the zone's rules, the component, the amount and the instant.
enum AddingCache {
    struct Key: Hashable {
        var calendar: Calendar.Identifier
        var zone: String
        var component: Calendar.Component
        var value: Int
        var from: TimeInterval
    }

    static let shared = Mutex(Memo<Key, Date?>(generation: 25_000))
}

/// Whether a zone's offset stays the same through a local day (`WakeCalendar.steadyOffset`).
enum SteadyDayCache {
    struct Key: Hashable {
        var zone: String
        var start: TimeInterval
    }

    static let shared = Mutex(Memo<Key, Bool>(generation: 25_000))
}

/// Wake-up entries of `WakeCalendar.entry(at:in:calendar:)`, fixed by the zone and the instant.
enum EntryCache {
    struct Key: Hashable {
        var calendar: Calendar.Identifier
        var zone: String
        var instant: TimeInterval
    }

    static let shared = Mutex(Memo<Key, WakeEntry>(generation: 25_000))
}

/// Answers kept in two generations of at most `generation` each: a new answer goes into the
/// current one; when it is full it becomes the previous one (the older previous one is dropped),
/// and an answer found in the previous one moves back into the current. Answers asked for again
/// and again stay, where emptying one full dictionary would drop them with the rest (a fleet's
/// devices ask about thousands of one-off instants besides the few every device asks about).
struct Memo<Key: Hashable, Value> {
    let generation: Int
    private var current: [Key: Value] = [:]
    private var previous: [Key: Value] = [:]

    init(generation: Int) { self.generation = generation }

    /// The answer kept for `key`, if any.
    mutating func value(for key: Key) -> Value? {
        if let known = current[key] { return known }
        guard let known = previous[key] else { return nil }
        keep(known, for: key)
        return known
    }

    /// Keeps `value` as the answer for `key`.
    mutating func keep(_ value: Value, for key: Key) {
        if current.count >= generation {
            previous = current
            current = [:]
            current.reserveCapacity(generation)
        }
        current[key] = value
    }
}

/// `value` in decimal, zero-padded on the left to `width` digits: what `String(format: "%0Nd")`
/// writes (a negative value keeps its sign in front of the zeros), without the format parser.
func padded(_ value: Int, _ width: Int) -> String {
    let digits = String(value.magnitude)
    let zeros = max(0, width - digits.count - (value < 0 ? 1 : 0))
    return (value < 0 ? "-" : "") + String(repeating: "0", count: zeros) + digits
}

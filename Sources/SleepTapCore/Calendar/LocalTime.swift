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

/// Calendar maths for wake times: the UTC offsets from the IANA tz database in use
/// (`ZoneDatabase.current`, TZif files), the days and weekdays from Gregorian arithmetic on wall
/// clock seconds (never 86,400 s per day across a change of offset).
///
/// A `Calendar` given here only names the zone (`calendar.timeZone.identifier`); Foundation's
/// `TimeZone` rules (the ICU data bundled with the toolchain) are never asked for an offset,
/// except for a zone the database lacks (a machine zone read from `/etc/localtime`, say; `phone`
/// and `watch` refuse a `TZ` that names one), which keeps them.
///
/// The rule (Foundation's `Calendar.nextDate(after:matching:matchingPolicy:
/// .nextTimePreservingSmallerComponents, repeatedTimePolicy: .first)`): a local time inside a
/// spring-forward gap moves forward by the length of the gap; a local time that occurs twice
/// (fall-back) takes the first occurrence.
public enum WakeCalendar {
    /// The zone for an IANA identifier ("Area/Location", or "UTC"/"GMT") that the tz database
    /// in use has (`ZoneDatabase.current`), nil otherwise.
    ///
    /// Foundation also accepts abbreviations and offsets ("EST", "GMT+5"); those are refused
    /// here because they are not IANA names and carry no DST rules.
    public static func zone(named identifier: String) -> TimeZone? {
        guard isZoneName(identifier) else { return nil }
        if identifier != "UTC" && identifier != "GMT" && !ZoneDatabase.current.contains(identifier) { return nil }
        // Foundation on Linux turns "UTC" into a zone named "GMT"; the tz database's canonical
        // name of UTC is Etc/UTC ("UTC" is a link to it, tz database file `backward`).
        return TimeZone(identifier: identifier == "UTC" ? "Etc/UTC" : identifier)
    }

    /// Why `value` is not a zone this build can use, in the one wording the phone and the watch
    /// give wherever a zone comes in (the `--time-zone` flag, stdin `time-zone`, a schedule file,
    /// os.json, a BATCH's `timeZone`): `unknown time zone "Mars/Base": not in the tz database
    /// 2026b at /usr/share/zoneinfo`, or `unknown time zone "EST": not an IANA name
    /// (Area/Location, UTC or GMT, e.g. Europe/Berlin)` for an abbreviation or an offset. The value
    /// is clipped to 120 characters. A zone whose file is there but empty or not TZif gets the
    /// database's own words (`ZoneError.corrupt`, naming the file) and the database. Names: the
    /// tz database Theory file, "Names of timezones".
    public static func unknownZoneReason(_ value: String) -> String {
        let shown = "unknown time zone \"\(clipped(value))\": "
        guard isZoneName(value) else {
            return shown + "not an IANA name (Area/Location, UTC or GMT, e.g. Europe/Berlin)"
        }
        if let error = zoneError(named: value), error.isFileProblem {
            return "\(error) (\(ZoneDatabase.current))"
        }
        return shown + "not in the \(ZoneDatabase.current)"
    }

    /// Why the tz database in use (`ZoneDatabase.current`) cannot give the rules of
    /// `identifier`: `.missing` (not in the database at DIR), `.corrupt` (its file
    /// DIR/Area/Location is empty or not TZif, RFC 8536) or `.badName`; nil when it can, and for
    /// `UTC` and `GMT` (known without a file).
    package static func zoneError(named identifier: String) -> ZoneError? {
        if identifier == "UTC" || identifier == "GMT" { return nil }
        do {
            _ = try ZoneDatabase.current.rules(for: identifier)
            return nil
        } catch {
            return error
        }
    }

    /// Whether `identifier` has the form of an IANA time-zone name, known here or not: `UTC`,
    /// `GMT`, or `Area/Location[/More]`, each part a letter followed by letters, digits, `_`, `+`
    /// or `-`, at most 64 bytes in all. Abbreviations and offsets (`EST`, `GMT+5`, `+09:00`) are
    /// not names (tz database Theory file, "Names of timezones").
    public static func isZoneName(_ identifier: String) -> Bool {
        if identifier == "UTC" || identifier == "GMT" { return true }
        // One pass over the bytes, no copies: it runs for every zone name a batch or a flag gives.
        var count = 0
        var parts = 1
        var atPartStart = true
        for byte in identifier.utf8 {
            count += 1
            guard count <= 64 else { return false }
            if byte == UInt8(ascii: "/") {
                guard !atPartStart else { return false }
                parts += 1
                atPartStart = true
            } else if atPartStart {
                guard isLetter(byte) else { return false }
                atPartStart = false
            } else {
                guard
                    isLetter(byte) || (48...57).contains(byte) || byte == UInt8(ascii: "_")
                        || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
                else { return false }
            }
        }
        return parts >= 2 && !atPartStart
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (65...90).contains(byte) || (97...122).contains(byte) }

    /// A Gregorian calendar in `zone` (the zone names the rules `WakeCalendar` looks up).
    public static func calendar(in zone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar
    }

    /// The offsets of a zone: from the database in use, or fixed for Foundation's fixed-offset
    /// zones (`GMT`, `GMT+0100`: no rules to read), or Foundation's for a zone the database lacks.
    struct Offsets {
        /// The database's id in memo keys (0: the answers do not depend on a database).
        var database: Int
        var rules: ZoneRules?
        var foundation: TimeZone

        /// UTC offset at `instant` (UNIX seconds), seconds east.
        func offset(at instant: Int64) -> Int64 {
            if let rules { return Int64(rules.offset(at: instant)) }
            return Int64(foundation.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant))))
        }

        /// Local wall seconds of `instant`.
        func wall(at instant: Int64) -> Int64 { instant + offset(at: instant) }

        /// The instant of wall time `wall` (gap forward, first of a repeated time).
        func instant(ofWall wall: Int64) -> Int64 {
            if let rules { return rules.instant(ofWall: wall) }
            let window: Int64 = 28 * 3600
            let before = offset(at: wall - window)
            let after = offset(at: wall + window)
            var best: Int64?
            for candidate in [before, offset(at: wall - before), after] {
                let instant = wall - candidate
                if offset(at: instant) == candidate, best.map({ instant < $0 }) ?? true { best = instant }
            }
            return best ?? wall - before
        }

        /// The first instant of local day `day` (days since 1970-01-01 local): midnight, or the
        /// change of offset when midnight falls in a gap (the day starts at the change).
        func start(ofDay day: Int64) -> Int64 {
            let midnight = day * 86_400
            let found = instant(ofWall: midnight)
            guard wall(at: found) != midnight else { return found }
            // In a gap: the first instant whose wall time is midnight or later.
            var low = found - 86_400
            var high = found
            while low < high {
                let middle = low + (high - low) / 2
                if wall(at: middle) >= midnight { high = middle } else { low = middle + 1 }
            }
            return low
        }
    }

    /// The offsets of `zone` in the database in use.
    static func offsets(of zone: TimeZone) -> Offsets {
        let identifier = zone.identifier
        if identifier == "GMT" || identifier.hasPrefix("GMT+") || identifier.hasPrefix("GMT-") {
            return Offsets(
                database: 0, rules: ZoneRules(name: identifier, fixedOffset: Int32(zone.secondsFromGMT())),
                foundation: zone)
        }
        let database = ZoneDatabase.current
        return Offsets(database: database.id, rules: try? database.rules(for: identifier), foundation: zone)
    }

    /// The database id that answers about `zone` (the memo keys' part).
    static func databaseKey(of zone: TimeZone) -> Int {
        let identifier = zone.identifier
        // Only a name whose first byte is "G" can be one of these (the comparisons below are
        // Unicode-aware, so they cost more than this test, and most zones are not GMT's).
        if identifier.utf8.first == UInt8(ascii: "G"),
            identifier == "GMT" || identifier.hasPrefix("GMT+") || identifier.hasPrefix("GMT-")
        {
            return 0
        }
        return ZoneDatabase.current.id
    }

    /// The UTC offset of `zone` at `instant`, seconds east of UTC, from the tz database in use.
    public static func utcOffset(of zone: TimeZone, at instant: Date) -> Int {
        Int(offsets(of: zone).offset(at: seconds(instant)))
    }

    /// Whole UNIX seconds of `instant`, rounded down.
    static func seconds(_ instant: Date) -> Int64 {
        let value = instant.timeIntervalSince1970.rounded(.down)
        guard value.isFinite, abs(value) < 1e15 else { return 0 }
        return Int64(value)
    }

    /// The first instant of the local day containing `instant` in the calendar's zone.
    public static func startOfDay(_ instant: Date, in calendar: Calendar) -> Date {
        LocalDayCache.startOfDay(instant, in: calendar)
    }

    /// The instant of `time` on the local day that contains `day`, in the calendar's zone.
    ///
    /// - Parameters:
    ///   - time: wall-clock time.
    ///   - day: any instant inside the wanted local day.
    ///   - calendar: carries the zone.
    /// - Returns: the instant; a gap time is shifted forward by the gap, a repeated time is the
    ///   first occurrence. nil when the shift leaves the day (a gap at its end).
    public static func instant(of time: LocalTime, onDayOf day: Date, in calendar: Calendar)
        -> Date?
    {
        let startOfDay = LocalDayCache.startOfDay(day, in: calendar)
        let key = InstantCache.Key(
            database: databaseKey(of: calendar.timeZone), zone: calendar.timeZone.identifier,
            startOfDay: startOfDay.timeIntervalSince1970, minuteOfDay: time.hour * 60 + time.minute)
        if let known = InstantCache.shared.withLock({ $0.value(for: key) }) { return known }
        let found = searchInstant(of: time, startOfDay: startOfDay, in: calendar)
        InstantCache.shared.withLock { $0.keep(found, for: key) }
        return found
    }

    /// The instant of `time` on local date `date` in the calendar's zone (gap forward, first of
    /// a repeated time); nil when the shift leaves the date.
    public static func instant(of time: LocalTime, onDate date: LocalDate, in calendar: Calendar) -> Date? {
        let wall = date.daysSince1970 * 86_400 + Int64(time.hour * 3600 + time.minute * 60)
        let found = Date(timeIntervalSince1970: TimeInterval(offsets(of: calendar.timeZone).instant(ofWall: wall)))
        return instant(of: time, onDayOf: found, in: calendar)
    }

    /// The computation behind `instant(of:onDayOf:in:)`, from the day's first instant.
    private static func searchInstant(of time: LocalTime, startOfDay: Date, in calendar: Calendar) -> Date? {
        guard let day = LocalDayCache.day(containing: startOfDay, in: calendar) else { return nil }
        let offsets = offsets(of: calendar.timeZone)
        let wall = day.date.daysSince1970 * 86_400 + Int64(time.hour * 3600 + time.minute * 60)
        let found = Date(timeIntervalSince1970: TimeInterval(offsets.instant(ofWall: wall)))
        guard found >= day.start, found < day.end else { return nil }
        return found
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

    /// `date` moved by `value` of `component` in the calendar's zone, as Foundation's
    /// `Calendar.date(byAdding:value:to:)` does: hours, minutes and seconds are elapsed time;
    /// days, weeks, months and years keep the wall time (gap forward, first of a repeated time).
    /// Answers kept (`AddingCache`): the batch planner steps over the same local days for every batch.
    public static func adding(_ component: Calendar.Component, _ value: Int, to date: Date, in calendar: Calendar)
        -> Date?
    {
        let key = AddingCache.Key(
            database: databaseKey(of: calendar.timeZone), zone: calendar.timeZone.identifier, component: component,
            value: value, from: date.timeIntervalSince1970)
        if let known = AddingCache.shared.withLock({ $0.value(for: key) }) { return known }
        let found = computeAdding(component, value, to: date, in: calendar)
        AddingCache.shared.withLock { $0.keep(found, for: key) }
        return found
    }

    private static func computeAdding(
        _ component: Calendar.Component, _ value: Int, to date: Date, in calendar: Calendar
    )
        -> Date?
    {
        switch component {
        case .hour: return date.addingTimeInterval(TimeInterval(value) * 3600)
        case .minute: return date.addingTimeInterval(TimeInterval(value) * 60)
        case .second: return date.addingTimeInterval(TimeInterval(value))
        default: break
        }
        let offsets = offsets(of: calendar.timeZone)
        let whole = seconds(date)
        let fraction = date.timeIntervalSince1970 - TimeInterval(whole)
        let wall = offsets.wall(at: whole)
        let moved: Int64
        switch component {
        case .day: moved = wall + Int64(value) * 86_400
        case .weekOfYear, .weekOfMonth, .weekday: moved = wall + Int64(value) * 7 * 86_400
        default:
            // Months and years: Gregorian arithmetic on the wall clock, in UTC.
            guard
                let shifted = UTCDays.calendar.date(
                    byAdding: component, value: value, to: Date(timeIntervalSince1970: TimeInterval(wall)))
            else { return nil }
            moved = seconds(shifted)
        }
        return Date(timeIntervalSince1970: TimeInterval(offsets.instant(ofWall: moved)) + fraction)
    }

    /// The local date, hour, minute and second of `instant` in the calendar's zone.
    public static func wallClock(_ instant: Date, in calendar: Calendar) -> (
        date: LocalDate, hour: Int, minute: Int, second: Int
    ) {
        let wall = offsets(of: calendar.timeZone).wall(at: seconds(instant))
        let days = floorDiv(wall, 86_400)
        let second = Int(wall - days * 86_400)
        let civil = CivilDate(days: days)
        return (
            LocalDate(known: civil.year, month: civil.month, day: civil.day), second / 3600, second / 60 % 60,
            second % 60
        )
    }

    /// The wake-up entry for `instant` in `zone` (`calendar` is in `zone`): its local date and
    /// time (`localDateString`, `localTimeString`) and the zone's offset (`utcOffset`, from the
    /// database), kept (`EntryCache`) because every batch repeats most of the last one.
    static func entry(at instant: Date, in zone: TimeZone, calendar: Calendar) -> WakeEntry {
        let key = EntryCache.Key(
            database: databaseKey(of: zone), zone: zone.identifier, instant: instant.timeIntervalSince1970)
        if let known = EntryCache.shared.withLock({ $0.value(for: key) }) { return known }
        let entry = WakeEntry(
            wake: instant, localDate: localDateString(instant, in: calendar),
            localTime: localTimeString(instant, in: calendar), timeZone: zone.identifier,
            utcOffset: utcOffset(of: zone, at: instant))
        EntryCache.shared.withLock { $0.keep(entry, for: key) }
        return entry
    }

    /// `yyyy-MM-dd` of the local day containing `instant`.
    public static func localDateString(_ instant: Date, in calendar: Calendar) -> String {
        if let day = LocalDayCache.day(containing: instant, in: calendar) { return day.date.description }
        return wallClock(instant, in: calendar).date.description
    }

    /// `HH:MM` of `instant` on the wall clock of the calendar's zone.
    ///
    /// Answers are kept (`LocalTimeCache`): the batch planner, the wire decoder and the sunlight
    /// notice ask about the same few instants again and again.
    public static func localTimeString(_ instant: Date, in calendar: Calendar) -> String {
        let key = LocalTimeCache.Key(
            database: databaseKey(of: calendar.timeZone), zone: calendar.timeZone.identifier,
            instant: instant.timeIntervalSince1970)
        if let known = LocalTimeCache.shared.withLock({ $0.value(for: key) }) { return known }
        let wall = wallClock(instant, in: calendar)
        let text = padded(wall.hour, 2) + ":" + padded(wall.minute, 2)
        LocalTimeCache.shared.withLock { $0.keep(text, for: key) }
        return text
    }
}

/// Answers of `WakeCalendar.localTimeString(_:in:)`, fixed by the calendar, the zone's rules and
/// the instant. Shared by every thread, in two generations (`Memo`).
enum LocalTimeCache {
    struct Key: Hashable {
        var database: Int
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
        var database: Int
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
        var database: Int
        var zone: String
        var component: Calendar.Component
        var value: Int
        var from: TimeInterval
    }

    static let shared = Mutex(Memo<Key, Date?>(generation: 25_000))
}

/// Wake-up entries of `WakeCalendar.entry(at:in:calendar:)`, fixed by the zone and the instant.
enum EntryCache {
    struct Key: Hashable {
        var database: Int
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

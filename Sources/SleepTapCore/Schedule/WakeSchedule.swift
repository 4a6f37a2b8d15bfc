// SPDX-License-Identifier: Apache-2.0

public import Foundation
import Synchronization

/// A day of the week, numbered as Foundation's Gregorian `Calendar` numbers `.weekday`
/// (1 = Sunday … 7 = Saturday).
public enum Weekday: Int, CaseIterable, Sendable, Comparable, CustomStringConvertible {
    /// Sunday, weekday 1.
    case sunday = 1
    /// Monday, weekday 2.
    case monday
    /// Tuesday, weekday 3.
    case tuesday
    /// Wednesday, weekday 4.
    case wednesday
    /// Thursday, weekday 5.
    case thursday
    /// Friday, weekday 6.
    case friday
    /// Saturday, weekday 7.
    case saturday

    /// Lower-case English name, the key used in schedule files (`"monday"`).
    public var description: String {
        switch self {
        case .sunday: "sunday"
        case .monday: "monday"
        case .tuesday: "tuesday"
        case .wednesday: "wednesday"
        case .thursday: "thursday"
        case .friday: "friday"
        case .saturday: "saturday"
        }
    }

    /// Parses a schedule-file key (`"monday"`).
    public init?(name: String) {
        guard let day = Weekday.allCases.first(where: { $0.description == name }) else { return nil }
        self = day
    }

    public static func < (lhs: Weekday, rhs: Weekday) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A local calendar date, `yyyy-MM-dd`, with no zone (a day on the user's wall calendar).
public struct LocalDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The Gregorian year (`2026`).
    public let year: Int
    /// The month, 1 to 12.
    public let month: Int
    /// The day of the month, 1 to 31.
    public let day: Int

    /// Parses exactly `yyyy-MM-dd` and checks the day exists in the Gregorian calendar
    /// (`2026-02-30` is refused).
    public init?(parsing text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for b in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) else { return nil }
                value = value * 10 + Int(b - UInt8(ascii: "0"))
            }
            return value
        }
        guard let y = number(0..<4), let m = number(5..<7), let d = number(8..<10), (1...12).contains(m) else {
            return nil
        }
        guard y >= 1, let days = Self.days(year: y, month: m), days.contains(d) else { return nil }
        year = y
        month = m
        day = d
    }

    /// The days of a month in Foundation's Gregorian calendar (`range(of: .day, in: .month)`),
    /// kept once asked: parsing a date is frequent (every instant on the wire) and the answer is fixed.
    private static func days(year: Int, month: Int) -> Range<Int>? {
        let key = year * 12 + month
        if let known = monthLengths.withLock({ $0[key] }) { return known }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let days = calendar.date(from: DateComponents(year: year, month: month, day: 1)).flatMap {
            calendar.range(of: .day, in: .month, for: $0)
        }
        monthLengths.withLock { cache in
            if cache.count >= 10_000 { cache.removeAll(keepingCapacity: true) }
            cache[key] = days
        }
        return days
    }

    private static let monthLengths = Mutex<[Int: Range<Int>?]>([:])

    /// A date whose parts are known to exist (from Foundation's calendar).
    init(known year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The local date of `instant` in the calendar's zone.
    public init(_ instant: Date, in calendar: Calendar) {
        if let known = LocalDayCache.day(containing: instant, in: calendar) {
            self = known.date
            return
        }
        let c = calendar.dateComponents([.year, .month, .day], from: instant)
        year = c.year ?? 1970
        month = c.month ?? 1
        day = c.day ?? 1
    }

    /// Days from 1970-01-01 to this date (proleptic Gregorian).
    var daysSince1970: Int64 { CivilDate(year: year, month: month, day: day).daysSince1970 }

    /// `yyyy-MM-dd`.
    public var description: String { padded(year, 4) + "-" + padded(month, 2) + "-" + padded(day, 2) }

    /// Days since 1970-01-01 of this calendar date (proleptic Gregorian; Howard Hinnant's
    /// days_from_civil). Pure date arithmetic: no instants, no 86,400 s steps, no zone.
    public var daysSinceEpoch: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    public static func < (lhs: LocalDate, rhs: LocalDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }
}

/// A one-off change for one local date: another wake time, or no wake-up.
public enum WakeOverride: Hashable, Sendable {
    /// Wake at this local time on that date.
    case time(LocalTime)
    /// No wake-up on that date.
    case off
}

/// The user's wake schedule: a local wake time per weekday (a missing day is a day off), one-off
/// overrides for dates, a sleep target and a bedtime-notice lead, and optionally the IANA zone
/// the times are meant in.
public struct WakeSchedule: Sendable, Equatable {
    /// Wall-clock wake time per weekday; a weekday absent from the map has no wake-up.
    public var wakeTimes: [Weekday: LocalTime]
    /// One-off overrides by local date; they win over `wakeTimes`.
    public var overrides: [LocalDate: WakeOverride]
    /// Sleep target in minutes (default 480 = 8 h); the bedtime notice fires this long, plus
    /// the lead, before the wake-up.
    public var sleepTargetMinutes: Int
    /// Bedtime-notice lead in minutes (default 30): how long before bedtime the notice fires.
    public var bedtimeNoticeLeadMinutes: Int
    /// IANA identifier from the schedule file, if it named one. The phone's `--time-zone`
    /// overrides it; without either the system zone is used.
    public var timeZoneIdentifier: String?

    /// The default sleep target, minutes (8 h).
    public static let defaultSleepTargetMinutes = 480
    /// The default bedtime-notice lead, minutes.
    public static let defaultBedtimeNoticeLeadMinutes = 30

    /// A schedule with the given fields; the sleep target and lead default to 480 and 30 minutes.
    public init(
        wakeTimes: [Weekday: LocalTime], overrides: [LocalDate: WakeOverride] = [:],
        sleepTargetMinutes: Int = defaultSleepTargetMinutes,
        bedtimeNoticeLeadMinutes: Int = defaultBedtimeNoticeLeadMinutes, timeZoneIdentifier: String? = nil
    ) {
        self.wakeTimes = wakeTimes
        self.overrides = overrides
        self.sleepTargetMinutes = sleepTargetMinutes
        self.bedtimeNoticeLeadMinutes = bedtimeNoticeLeadMinutes
        self.timeZoneIdentifier = timeZoneIdentifier
    }

    /// The built-in default: 07:00 every day.
    public static let everyDayAtSeven = WakeSchedule(
        wakeTimes: Dictionary(
            uniqueKeysWithValues: Weekday.allCases.map { ($0, LocalTime(hour: 7, minute: 0)!) }))

    /// The wake time for the local day containing `instant`, or nil for a day off: the date's
    /// override if there is one, else the weekday's time.
    public func wakeTime(onDayOf instant: Date, in calendar: Calendar) -> LocalTime? {
        if !overrides.isEmpty, let override = overrides[LocalDate(instant, in: calendar)] {
            switch override {
            case .time(let time): return time
            case .off: return nil
            }
        }
        let number =
            LocalDayCache.day(containing: instant, in: calendar)?.weekday
            ?? calendar.component(.weekday, from: instant)
        guard let day = Weekday(rawValue: number) else { return nil }
        return wakeTimes[day]
    }
}

/// A schedule file that cannot be used. `field` is a JSON path (`wake.monday`), `value` the
/// offending text as found, `reason` what is wrong. Executables exit 65 (EX_DATAERR) on it.
package struct ScheduleError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The JSON path of the field (`wake.monday`).
    package var field: String
    /// The offending text, as found.
    package var value: String
    /// What is wrong with it.
    package var reason: String

    /// An error about `field` holding `value`, for `reason`.
    package init(field: String, value: String, reason: String) {
        self.field = field
        self.value = value
        self.reason = reason
    }

    package var description: String {
        field.isEmpty ? reason : "\(field) = \(value): \(reason)"
    }
}

/// The documented schedule file, format version 1 (see docs/schedule-format.md):
///
/// ```json
/// { "schemaVersion": 1,
///   "timeZone": "America/New_York",
///   "wake": { "monday": "06:30", "tuesday": "06:30", "wednesday": "06:30",
///             "thursday": "06:30", "friday": "06:30", "saturday": "off", "sunday": "08:00" } }
/// ```
///
/// Every weekday must appear, as `"HH:MM"` (24-hour, local wall time) or `"off"`. `timeZone` is
/// optional (an IANA identifier). Unknown keys are errors, so a typo never silently means "off";
/// so is a key given twice in one object, and any text that is not strict JSON (RFC 8259).
package enum ScheduleFile {
    /// The only schema version this build reads.
    package static let schemaVersion = 1
    /// Largest schedule file read, in bytes (1 MiB; a full one is a few kilobytes).
    package static let maxBytes = 1 << 20

    /// Decodes and validates a schedule file's bytes.
    /// - Throws: `ScheduleError` naming the field and the bad value.
    package static func decode(_ data: Data) throws(ScheduleError) -> WakeSchedule {
        guard data.count <= maxBytes else {
            throw ScheduleError(
                field: "", value: "", reason: "\(data.count) bytes; a schedule file is at most \(maxBytes) bytes")
        }
        let object: [String: Any]
        do {
            object = try JSONDiagnosis.object(from: data)
        } catch {
            throw ScheduleError(field: "", value: "", reason: error.description)
        }
        return try decode(object: object)
    }

    /// Validates a schedule file's object as `JSONDiagnosis.object(from:)` gives it (its numbers
    /// keep how they were written): what `decode(_:)` does after the JSON, for a schedule held
    /// inline in another file (a scenario's `schedule`).
    /// - Throws: `ScheduleError` naming the field and the bad value.
    package static func decode(object: [String: Any]) throws(ScheduleError) -> WakeSchedule {
        let known: Set<String> = [
            "schemaVersion", "timeZone", "wake", "overrides", "sleepTargetMinutes", "bedtimeNoticeLeadMinutes",
        ]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw ScheduleError(
                field: clipped(unknown), value: render(object[unknown]),
                reason:
                    "unknown key (expected schemaVersion, timeZone, wake, overrides, sleepTargetMinutes, bedtimeNoticeLeadMinutes)"
            )
        }
        guard let version = object["schemaVersion"] else {
            throw ScheduleError(field: "schemaVersion", value: "(missing)", reason: "required; use \(schemaVersion)")
        }
        guard let number = version as? NSNumber, !isBool(number), isInteger(number) else {
            // 1.0 is the number 1 in JSON's grammar, but the version is an integer (no fraction).
            throw ScheduleError(
                field: "schemaVersion", value: render(version),
                reason: "must be the whole number \(schemaVersion), written without a fraction or quotes")
        }
        guard number.doubleValue == Double(schemaVersion) else {
            throw ScheduleError(
                field: "schemaVersion", value: render(version),
                reason: "unsupported schema version; this build reads \(schemaVersion)")
        }
        var zoneIdentifier: String?
        if let zone = object["timeZone"] {
            guard let text = zone as? String, WakeCalendar.zone(named: text) != nil else {
                // A corrupt or empty file of a known zone is said as such, naming the file.
                if let text = zone as? String, WakeCalendar.isZoneName(text),
                    let error = WakeCalendar.zoneError(named: text), error.isFileProblem
                {
                    throw ScheduleError(field: "timeZone", value: render(zone), reason: error.description)
                }
                throw ScheduleError(
                    field: "timeZone", value: render(zone),
                    reason: (zone as? String).map(WakeCalendar.unknownZoneReason)
                        ?? "not a string; expected an IANA zone name, e.g. \"Europe/Berlin\"")
            }
            zoneIdentifier = text
        }
        guard let wakeAny = object["wake"] else {
            throw ScheduleError(
                field: "wake", value: "(missing)", reason: "required: an object with one entry per weekday")
        }
        guard let wake = wakeAny as? [String: Any] else {
            throw ScheduleError(field: "wake", value: render(wakeAny), reason: "must be an object keyed by weekday")
        }
        if let unknown = wake.keys.sorted().first(where: { Weekday(name: $0) == nil }) {
            throw ScheduleError(
                field: "wake.\(clipped(unknown))", value: render(wake[unknown]),
                reason: "not a weekday (use monday ... sunday, lower case)")
        }
        var times: [Weekday: LocalTime] = [:]
        for day in Weekday.allCases {
            let field = "wake.\(day)"
            guard let value = wake[day.description] else {
                throw ScheduleError(
                    field: field, value: "(missing)", reason: "every weekday is required: \"HH:MM\" or \"off\"")
            }
            guard let text = value as? String else {
                throw ScheduleError(field: field, value: render(value), reason: "must be a string \"HH:MM\" or \"off\"")
            }
            if text == "off" { continue }
            guard let time = LocalTime(parsing: text) else {
                throw ScheduleError(
                    field: field, value: render(value), reason: "not a 24-hour time HH:MM (00:00-23:59) or \"off\"")
            }
            times[day] = time
        }
        var overrides: [LocalDate: WakeOverride] = [:]
        if let overridesAny = object["overrides"] {
            guard let map = overridesAny as? [String: Any] else {
                throw ScheduleError(
                    field: "overrides", value: render(overridesAny),
                    reason: "must be an object keyed by local date yyyy-MM-dd")
            }
            for key in map.keys.sorted() {
                let field = "overrides.\(clipped(key))"
                guard let date = LocalDate(parsing: key) else {
                    throw ScheduleError(field: field, value: render(map[key]), reason: "not a calendar date yyyy-MM-dd")
                }
                guard let text = map[key] as? String else {
                    throw ScheduleError(
                        field: field, value: render(map[key]), reason: "must be a string \"HH:MM\" or \"off\"")
                }
                if text == "off" {
                    overrides[date] = .off
                } else if let time = LocalTime(parsing: text) {
                    overrides[date] = .time(time)
                } else {
                    throw ScheduleError(
                        field: field, value: render(map[key]),
                        reason: "not a 24-hour time HH:MM (00:00-23:59) or \"off\"")
                }
            }
        }
        let sleepTarget = try minutes(
            object, "sleepTargetMinutes", in: 60...960, default: WakeSchedule.defaultSleepTargetMinutes)
        let lead = try minutes(
            object, "bedtimeNoticeLeadMinutes", in: 0...240, default: WakeSchedule.defaultBedtimeNoticeLeadMinutes)
        return WakeSchedule(
            wakeTimes: times, overrides: overrides, sleepTargetMinutes: sleepTarget, bedtimeNoticeLeadMinutes: lead,
            timeZoneIdentifier: zoneIdentifier)
    }

    private static func minutes(
        _ object: [String: Any], _ key: String, in range: ClosedRange<Int>, default value: Int
    ) throws(ScheduleError) -> Int {
        guard let raw = object[key] else { return value }
        if let number = raw as? NSNumber, !isBool(number), !isInteger(number),
            number.doubleValue.rounded() == number.doubleValue
        {
            throw ScheduleError(
                field: key, value: render(raw),
                reason: "must be a whole number of minutes written without a fraction, e.g. \(Int(number.doubleValue))")
        }
        guard let number = raw as? NSNumber, isInteger(number),
            let whole = Int(exactly: number.doubleValue), range.contains(whole)
        else {
            throw ScheduleError(
                field: key, value: render(raw),
                reason: "must be a whole number of minutes from \(range.lowerBound) to \(range.upperBound)")
        }
        return whole
    }

    /// JSON `true`/`false` arrive as NSNumber too (`JSONNumber`).
    private static func isBool(_ number: NSNumber) -> Bool {
        JSONNumber(number).isBool
    }

    /// A JSON integer written without fraction or exponent (`JSONNumber`).
    private static func isInteger(_ number: NSNumber) -> Bool {
        JSONNumber(number).isInteger
    }

    private static func render(_ value: Any?) -> String {
        switch value {
        case nil: return "(missing)"
        case let text as String: return "\"\(clipped(text))\""
        case let number as NSNumber: return isBool(number) ? (number.boolValue ? "true" : "false") : number.stringValue
        case is NSNull: return "null"
        case let some?:
            if JSONSerialization.isValidJSONObject(some),
                let data = try? JSONSerialization.data(withJSONObject: some, options: [.sortedKeys]),
                let text = String(data: data, encoding: .utf8)
            {
                return clipped(text)
            }
            return clipped(String(describing: some))
        }
    }
}

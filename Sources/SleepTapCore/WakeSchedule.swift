public import Foundation

/// A day of the week, numbered as Foundation's Gregorian `Calendar` numbers `.weekday`
/// (1 = Sunday … 7 = Saturday).
public enum Weekday: Int, CaseIterable, Sendable, Comparable, CustomStringConvertible {
    case sunday = 1
    case monday, tuesday, wednesday, thursday, friday, saturday

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

/// The user's weekly wake schedule: a local wake time per weekday (a missing day is a day off)
/// and, optionally, the IANA time zone the times are meant in.
public struct WakeSchedule: Sendable, Equatable {
    /// Wall-clock wake time per weekday; a weekday absent from the map has no wake-up.
    public var wakeTimes: [Weekday: LocalTime]
    /// IANA identifier from the schedule file, if it named one. The phone's `--time-zone`
    /// overrides it; without either the system zone is used.
    public var timeZoneIdentifier: String?

    public init(wakeTimes: [Weekday: LocalTime], timeZoneIdentifier: String? = nil) {
        self.wakeTimes = wakeTimes
        self.timeZoneIdentifier = timeZoneIdentifier
    }

    /// The built-in default: 07:00 every day.
    public static let everyDayAtSeven = WakeSchedule(
        wakeTimes: Dictionary(
            uniqueKeysWithValues: Weekday.allCases.map { ($0, LocalTime(hour: 7, minute: 0)!) }))

    /// The wake time for the local day containing `instant`, or nil for a day off.
    public func wakeTime(onDayOf instant: Date, in calendar: Calendar) -> LocalTime? {
        let number = calendar.component(.weekday, from: instant)
        guard let day = Weekday(rawValue: number) else { return nil }
        return wakeTimes[day]
    }
}

/// A schedule file that cannot be used. `field` is a JSON path (`wake.monday`), `value` the
/// offending text as found, `reason` what is wrong. Executables exit 65 (EX_DATAERR) on it.
public struct ScheduleError: Error, Equatable, Sendable, CustomStringConvertible {
    public var field: String
    public var value: String
    public var reason: String

    public init(field: String, value: String, reason: String) {
        self.field = field
        self.value = value
        self.reason = reason
    }

    public var description: String {
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
/// optional (an IANA identifier). Unknown keys are errors, so a typo never silently means "off".
public enum ScheduleFile {
    /// The only schema version this build reads.
    public static let schemaVersion = 1

    /// Decodes and validates a schedule file's bytes.
    /// - Throws: `ScheduleError` naming the field and the bad value.
    public static func decode(_ data: Data) throws(ScheduleError) -> WakeSchedule {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data, options: [])
        } catch {
            throw ScheduleError(field: "", value: "", reason: "not valid JSON (\(error.localizedDescription))")
        }
        guard let object = root as? [String: Any] else {
            throw ScheduleError(field: "", value: "", reason: "the top level must be a JSON object")
        }
        let known: Set<String> = ["schemaVersion", "timeZone", "wake"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw ScheduleError(
                field: unknown, value: render(object[unknown]),
                reason: "unknown key (expected schemaVersion, timeZone, wake)")
        }
        guard let version = object["schemaVersion"] else {
            throw ScheduleError(field: "schemaVersion", value: "(missing)", reason: "required; use \(schemaVersion)")
        }
        guard let number = version as? NSNumber, !isBool(number),
            number.doubleValue == Double(schemaVersion)
        else {
            throw ScheduleError(
                field: "schemaVersion", value: render(version),
                reason: "unsupported schema version; this build reads \(schemaVersion)")
        }
        var zoneIdentifier: String?
        if let zone = object["timeZone"] {
            guard let text = zone as? String, TimeZone(identifier: text) != nil else {
                throw ScheduleError(
                    field: "timeZone", value: render(zone),
                    reason: "not a known IANA time zone identifier (e.g. \"Europe/Berlin\")")
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
                field: "wake.\(unknown)", value: render(wake[unknown]),
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
        return WakeSchedule(wakeTimes: times, timeZoneIdentifier: zoneIdentifier)
    }

    /// JSON `true`/`false` arrive as NSNumber too; Foundation marks them with objCType "c".
    private static func isBool(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c"
    }

    private static func render(_ value: Any?) -> String {
        switch value {
        case nil: return "(missing)"
        case let text as String: return "\"\(text)\""
        case let number as NSNumber: return number.stringValue
        case is NSNull: return "null"
        case let some?:
            if JSONSerialization.isValidJSONObject(some),
                let data = try? JSONSerialization.data(withJSONObject: some, options: [.sortedKeys]),
                let text = String(data: data, encoding: .utf8)
            {
                return text
            }
            return String(describing: some)
        }
    }
}

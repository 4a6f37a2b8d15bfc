import Foundation
import SleepTapCore

/// Walks `--flag value` pairs (also `--flag=value`); each option may be given once.
struct ArgumentReader {
    private var items: [String]
    private var index = 0
    private var pendingValue: String?
    /// The options read so far.
    private var seen: Set<String> = []

    init(_ arguments: [String]) { items = arguments }

    /// The next option, nil at the end.
    /// - Throws: `UsageError` when the option was given before (`--endpoint A --endpoint B`):
    ///   which one should win is a guess, so neither does.
    mutating func nextFlag() throws(UsageError) -> String? {
        guard index < items.count else { return nil }
        let item = items[index]
        index += 1
        var flag = item
        pendingValue = nil
        if item.hasPrefix("--"), let eq = item.firstIndex(of: "=") {
            pendingValue = String(item[item.index(after: eq)...])
            flag = String(item[..<eq])
        }
        guard seen.insert(flag).inserted else {
            throw UsageError("\(Self.clip(flag)) is given twice; give each option once")
        }
        return flag
    }

    mutating func value(_ flag: String) throws(UsageError) -> String {
        if let pending = pendingValue {
            pendingValue = nil
            return pending
        }
        guard index < items.count else { throw UsageError("\(flag) needs a value") }
        let value = items[index]
        // `--state-dir --help` is a forgotten value, not a directory named "--help".
        if value.hasPrefix("--") && value.count > 2 {
            throw UsageError("\(flag) needs a value (found the option \(Self.clip(value)) instead)")
        }
        index += 1
        return value
    }

    mutating func nonEmpty(_ flag: String) throws(UsageError) -> String {
        let text = try value(flag)
        guard !text.isEmpty else { throw UsageError("\(flag) must not be empty") }
        return text
    }

    /// The value of `flag` as an endpoint (`Endpoint.parse`), a relative ipc path resolved
    /// against `workingDirectory`.
    /// - Throws: `UsageError` naming the flag, the text and what is wrong.
    mutating func endpoint(_ flag: String, workingDirectory: String) throws(UsageError) -> Endpoint {
        try Endpoint.parse(nonEmpty(flag), flag: flag, workingDirectory: workingDirectory)
    }

    /// At most 120 characters of user input, for messages.
    static func clip(_ text: String) -> String {
        text.count <= 120 ? text : String(text.prefix(117)) + "..."
    }

    /// A plain decimal number (digits, one dot, optional exponent): no hex, inf or nan.
    static func decimal(_ text: String) -> Double? {
        let allowed = Set("0123456789.eE+-")
        guard !text.isEmpty, text.allSatisfy({ allowed.contains($0) }) else { return nil }
        return Double(text)
    }

    mutating func timeZone(_ flag: String) throws(UsageError) -> TimeZone {
        let text = try nonEmpty(flag)
        guard let zone = WakeCalendar.zone(named: text) else {
            throw UsageError(
                "\(flag) \"\(Self.clip(text))\": not a known IANA time zone identifier (e.g. Europe/Berlin)")
        }
        return zone
    }

    mutating func routingId(_ flag: String) throws(UsageError) -> String {
        let text = try nonEmpty(flag)
        guard text.utf8.count <= 255, text.utf8.first != 0 else {
            throw UsageError(
                "\(flag) \"\(Self.clip(text))\": a routing id is 1-255 bytes and must not start with a zero byte")
        }
        return text
    }

    mutating func localTime(_ flag: String) throws(UsageError) -> LocalTime {
        let text = try value(flag)
        guard let time = LocalTime(parsing: text) else {
            throw UsageError("\(flag) \"\(Self.clip(text))\": expected a 24-hour time HH:MM (00:00-23:59)")
        }
        return time
    }

    mutating func integer(_ flag: String, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        let text = try value(flag)
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(
                "\(flag) \"\(Self.clip(text))\": expected a whole number from \(range.lowerBound) to \(range.upperBound)"
            )
        }
        return number
    }

    /// Seconds as a plain decimal within `range`.
    mutating func seconds(_ flag: String, in range: ClosedRange<Double>) throws(UsageError) -> TimeInterval {
        let text = try value(flag)
        guard let number = Self.decimal(text), range.contains(number) else {
            throw UsageError(
                "\(flag) \"\(Self.clip(text))\": expected seconds from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// `renew=0.1,notices=0.5,dates=2,sunlight=0.05` (any subset; virtual seconds).
    mutating func stepCosts(_ flag: String) throws(UsageError) -> StepCosts {
        let text = try value(flag)
        var costs = StepCosts()
        for item in text.split(separator: ",") {
            let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2, let number = Self.decimal(pair[1]), (0...600).contains(number) else {
                throw UsageError(
                    "\(flag) \"\(Self.clip(text))\": expected STEP=SECONDS[,...] with seconds from 0 to 600")
            }
            switch pair[0] {
            case "renew": costs.renew = number
            case "notices": costs.notices = number
            case "dates": costs.dates = number
            case "sunlight": costs.sunlight = number
            default:
                throw UsageError(
                    "\(flag): unknown step \"\(Self.clip(pair[0]))\" (renew, notices, dates, sunlight; weather costs what the provider takes)"
                )
            }
        }
        return costs
    }

    /// Handles the three clock flags. - Returns: false if `flag` is not one of them.
    mutating func clockFlag(_ flag: String, into clock: inout ClockOptions) throws(UsageError) -> Bool {
        switch flag {
        case "--clock-start":
            let text = try value(flag)
            guard let date = ISO8601.date(text), date >= ClockOptions.earliest, date <= ClockOptions.latest else {
                throw UsageError(
                    "\(flag) \"\(Self.clip(text))\": expected an ISO-8601 instant from 1970 to 2199, such as 2025-03-06T17:00:00Z"
                )
            }
            clock.start = date
        case "--clock-speed":
            let text = try value(flag)
            guard let speed = Self.decimal(text), speed.isFinite, speed > 0, speed <= ClockOptions.maxSpeed else {
                throw UsageError(
                    "\(flag) \"\(Self.clip(text))\": expected a number > 0 and <= 10000000 (virtual seconds per wall second)"
                )
            }
            clock.speed = speed
        case "--clock-anchor":
            let text = try value(flag)
            guard let seconds = Self.decimal(text), seconds >= 0,
                seconds <= ClockOptions.latest.timeIntervalSince1970
            else {
                throw UsageError(
                    "\(flag) \"\(Self.clip(text))\": expected UNIX seconds from 0 to 7258118400 (e.g. 1767225600.5)")
            }
            clock.anchor = Date(timeIntervalSince1970: seconds)
        default:
            return false
        }
        return true
    }
}

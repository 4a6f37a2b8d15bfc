// SPDX-License-Identifier: Apache-2.0

public import Foundation
public import SleepTapOS

/// One observable event, written by the executables as one JSON object per line:
/// `{"event": name, "time": <virtual ISO-8601 UTC, milliseconds>, "source": who, ...fields}`
/// (docs/protocol.md, "Events").
public struct Event: Equatable, Sendable {
    /// The event's name from the catalogue, e.g. `.batchSent` (`batch.sent`).
    public var name: EventName
    /// Fields in the order they are written.
    public var fields: [(key: String, value: EventValue)]

    /// The keys every line starts with; no field may take one of them.
    public static let lineKeys: Set<String> = ["event", "time", "source"]

    /// An event named `name` with `fields` in the order given; no field may be named like a line key
    /// (`lineKeys`: `event`, `time`, `source`).
    public init(_ name: EventName, _ fields: [(String, EventValue)] = []) {
        assert(fields.allSatisfy { !Self.lineKeys.contains($0.0) }, "\(name): a field named like a line key")
        self.name = name
        self.fields = fields.map { (key: $0.0, value: $0.1) }
    }

    /// The value of `key`, if present.
    public subscript(key: String) -> EventValue? {
        fields.first(where: { $0.key == key })?.value
    }

    public static func == (lhs: Event, rhs: Event) -> Bool {
        lhs.name == rhs.name && lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    /// The JSON Lines form, without the trailing newline: `event` first, then `time` (with
    /// milliseconds), then `source`, then the fields.
    /// - Parameters:
    ///   - time: the (virtual) instant of the event.
    ///   - process: the process writing the line; the `os.*` events are the simulated OS's
    ///     (`EventName.source(in:)`).
    public func jsonLine(time: Date, process: EventSource) -> String {
        var out = "{\"event\":\(Self.quote(name.rawValue)),\"time\":\(Self.quote(ISO8601.millisecondString(time)))"
        out += ",\"source\":\(Self.quote(name.source(in: process).rawValue))"
        for field in fields {
            out += ",\(Self.quote(field.key)):\(Self.render(field.value))"
        }
        return out + "}"
    }

    private static func render(_ value: EventValue) -> String {
        switch value {
        case .string(let s): return quote(s)
        case .int(let i): return String(i)
        case .double(let d): return d.isFinite ? String(d) : "null"
        case .bool(let b): return b ? "true" : "false"
        case .date(let d): return quote(ISO8601.string(d))
        case .object(let object):
            return "{" + object.fields.map { "\(quote($0.key)):\(render($0.value))" }.joined(separator: ",") + "}"
        case .null: return "null"
        }
    }

    /// Whether `quote` escapes a scalar that JSON allows raw: DEL, the C1 controls and the format
    /// characters (Unicode Cf, such as U+202E, which reverses the text after it), so that no line
    /// read on a terminal is moved or disguised by its content. A JSON reader gets the text back.
    private static func escapedAbove(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value <= 0x9f || scalar.properties.generalCategory == .format
    }

    /// JSON string literal with RFC 8259 escaping, and `escapedAbove(_:)`'s characters escaped.
    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += String(format: "\\u%04x", scalar.value)
            case _ where scalar.value >= 0x7f && Self.escapedAbove(scalar): out += escape(scalar)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// JSON text (`JSONSerialization`'s, which escapes only U+0000 to U+001F) with
    /// `escapedAbove(_:)`'s characters escaped as `quote` escapes them, for a value a tool echoes.
    package static func escapingAbove(_ json: String) -> String {
        var out = ""
        for scalar in json.unicodeScalars {
            if scalar.value >= 0x7f && escapedAbove(scalar) {
                out += escape(scalar)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `scalar` as a UTF-16 escape, a pair of surrogates above the BMP (RFC 8259, section 7).
    private static func escape(_ scalar: Unicode.Scalar) -> String {
        String(scalar).utf16.map { String(format: "\\u%04x", $0) }.joined()
    }
}

/// ISO-8601 instants as SleepTap writes them: UTC, whole seconds, `Z` suffix.
public enum ISO8601 {
    /// The UNIX seconds of the instants `string(_:)` writes in 20 characters, with a four-digit
    /// year: 1970-01-01T00:00:00Z up to the end of 9999.
    package static let fourDigitYears: Range<Double> = 0..<253_402_300_800

    /// `2025-03-07T11:30:00Z`. Fractions of a second are dropped (floored).
    ///
    /// The same text as Foundation's `.iso8601` format style (`ISO8601Tests` keeps them equal).
    /// For instants from 1970 to 9999 the calendar date is Foundation's UTC day (`UTCDays`, its
    /// answers kept, because the twin writes many instants of the same few days) and the time of
    /// day is the instant's distance from that day's start; every other instant is formatted by
    /// `.iso8601` itself.
    public static func string(_ date: Date) -> String {
        text(date, milliseconds: nil) ?? date.formatted(.iso8601)
    }

    /// `string(date)`'s text with `.mmm` before the `Z` when `milliseconds` (0 to 999) is given;
    /// nil for instants outside 1970 to 9999, which `UTCDays` does not cover.
    package static func text(_ date: Date, milliseconds: Int?) -> String? {
        let time = date.timeIntervalSince1970
        guard fourDigitYears.contains(time), let day = UTCDays.day(containing: date) else { return nil }
        let secondOfDay = Int((time - day.start.timeIntervalSince1970).rounded(.down))
        let count = milliseconds == nil ? 20 : 24
        return String(unsafeUninitializedCapacity: count) { out in
            func put(_ value: Int, _ at: Int, _ width: Int) {
                var value = value
                for index in stride(from: at + width - 1, through: at, by: -1) {
                    out[index] = UInt8(48 + value % 10)
                    value /= 10
                }
            }
            put(day.date.year, 0, 4)
            out[4] = UInt8(ascii: "-")
            put(day.date.month, 5, 2)
            out[7] = UInt8(ascii: "-")
            put(day.date.day, 8, 2)
            out[10] = UInt8(ascii: "T")
            put(secondOfDay / 3_600, 11, 2)
            out[13] = UInt8(ascii: ":")
            put(secondOfDay / 60 % 60, 14, 2)
            out[16] = UInt8(ascii: ":")
            put(secondOfDay % 60, 17, 2)
            if let milliseconds {
                out[19] = UInt8(ascii: ".")
                put(milliseconds, 20, 3)
            }
            out[count - 1] = UInt8(ascii: "Z")
            return count
        }
    }

    /// The instant `string(date)` names, read back by `date(_:)`: `date` floored to the whole
    /// second, from the same UTC day of Foundation's calendar (`UTCDays`). nil outside 1970-9999,
    /// where `string` writes what `date` may not read.
    public static func wholeSecond(_ date: Date) -> Date? {
        let time = date.timeIntervalSince1970
        guard fourDigitYears.contains(time), let day = UTCDays.day(containing: date),
            let start = UTCDays.start(of: day.date)
        else { return nil }
        let secondOfDay = Int((time - day.start.timeIntervalSince1970).rounded(.down))
        guard secondOfDay < 86_400 else { return nil }
        return Date(timeIntervalSince1970: start.timeIntervalSince1970 + Double(secondOfDay))
    }

    /// `2025-03-07T11:30:00.123Z`: the event lines' `time`, to the millisecond (floored).
    public static func millisecondString(_ date: Date) -> String {
        // Whole microseconds first, so a time stored as 0.1229999… s still reads .123.
        let microseconds = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let milliseconds = Int64((microseconds / 1_000).rounded(.down))
        let (seconds, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1_000)
        let whole = seconds - (fraction < 0 ? 1 : 0)
        let text = string(Date(timeIntervalSince1970: Double(whole)))
        let digits = String(fraction < 0 ? fraction + 1_000 : fraction)
        return text.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    /// Parses `yyyy-MM-ddTHH:mm:ss` followed by `Z` or `±hh:mm`, optionally with a fraction of a
    /// second (`.123`), strictly: every field in range (no `2026-02-30`, `24:00:00` or `:60`),
    /// upper-case `T` and `Z`.
    /// - Returns: nil when the text is not such an instant.
    public static func date(_ text: String) -> Date? {
        let b = Array(text.utf8)
        func digits(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= b.count else { return nil }
            var value = 0
            for byte in b[range] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard b.count >= 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
            let year = digits(0..<4),
            let hour = digits(11..<13), let minute = digits(14..<16), let second = digits(17..<19),
            hour < 24, minute < 60, second < 60,
            let date = LocalDate(parsing: String(decoding: b[0..<10], as: UTF8.self)), date.year == year
        else { return nil }
        var index = 19
        var fraction = 0.0
        if b[index] == UInt8(ascii: ".") {
            var scale = 0.1
            index += 1
            let start = index
            while index < b.count, (48...57).contains(b[index]) {
                fraction += Double(b[index] - 48) * scale
                scale /= 10
                index += 1
            }
            guard index > start, index - start <= 9 else { return nil }
        }
        var offset = 0
        if index == b.count - 1, b[index] == UInt8(ascii: "Z") {
            offset = 0
        } else if index == b.count - 6, b[index] == UInt8(ascii: "+") || b[index] == UInt8(ascii: "-"),
            b[index + 3] == UInt8(ascii: ":"), let hh = digits((index + 1)..<(index + 3)),
            let mm = digits((index + 4)..<(index + 6)), hh < 24, mm < 60
        {
            offset = (hh * 3_600 + mm * 60) * (b[index] == UInt8(ascii: "+") ? 1 : -1)
        } else {
            return nil
        }
        // The calendar date's first instant is Foundation's (UTCDays); the time of day and the
        // offset are read from their fixed places.
        guard let start = UTCDays.start(of: date) else { return nil }
        let seconds = hour * 3_600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: start.timeIntervalSince1970 + Double(seconds) + fraction)
    }
}

/// At most `limit` characters of untrusted text, for an event's field that echoes an input
/// (`input.rejected`'s `input`): its characters as given, which the event's JSON escapes
/// (`Event.quote`), so a reader of the event gets the typed text back.
package func echoed(_ text: String, to limit: Int = 120) -> String {
    text.count <= limit ? text : String(text.prefix(limit - 3)) + "..."
}

/// At most `limit` characters of untrusted text, for events and messages (a 50 MB stdin line or
/// schedule key must not become a 50 MB event). Control characters are shown as `\u{…}`.
package func clipped(_ text: String, to limit: Int = 120) -> String {
    echoed(text, to: limit).unicodeScalars.map {
        $0.value < 0x20 || $0.value == 0x7f ? "\\u{\(String($0.value, radix: 16))}" : String($0)
    }
    .joined()
}

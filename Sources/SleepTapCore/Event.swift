public import Foundation

/// A value in an observable event's fields.
public enum EventValue: Equatable, Sendable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    /// An instant, rendered ISO-8601 UTC (`2025-03-07T11:30:00Z`).
    case date(Date)
    case null
}

/// One observable event, written by the executables as one JSON object per line:
/// `{"event": name, "time": <virtual ISO-8601 UTC>, ...fields}` (docs/protocol.md, "Events").
public struct Event: Equatable, Sendable {
    /// Dotted name, e.g. `batch.sent`, `handler.entered` (seed 000's names where it has one).
    public var name: String
    /// Fields in the order they are written.
    public var fields: [(key: String, value: EventValue)]

    public init(_ name: String, _ fields: [(String, EventValue)] = []) {
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

    /// The JSON Lines form, without the trailing newline: `event` first, then `time`, then fields.
    /// - Parameter time: the (virtual) instant of the event.
    public func jsonLine(time: Date) -> String {
        var out = "{\"event\":\(Self.quote(name)),\"time\":\(Self.quote(ISO8601.string(time)))"
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
        case .null: return "null"
        }
    }

    /// JSON string literal with RFC 8259 escaping.
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
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// ISO-8601 instants as SleepTap writes them: UTC, whole seconds, `Z` suffix.
public enum ISO8601 {
    /// `2025-03-07T11:30:00Z`. Fractions of a second are dropped (floored).
    public static func string(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    /// Parses `yyyy-MM-ddTHH:mm:ssZ` (also with fractional seconds or a numeric offset).
    /// - Returns: nil when the text is not such an instant.
    public static func date(_ text: String) -> Date? {
        try? Date(text, strategy: .iso8601)
    }
}

/// At most `limit` characters of untrusted text, for events and messages (a 50 MB stdin line or
/// schedule key must not become a 50 MB event). Control characters are shown as `\u{…}`.
public func clipped(_ text: String, to limit: Int = 120) -> String {
    let short = text.count <= limit ? text : String(text.prefix(limit - 3)) + "..."
    return short.unicodeScalars.map {
        $0.value < 0x20 || $0.value == 0x7f ? "\\u{\(String($0.value, radix: 16))}" : String($0)
    }
    .joined()
}

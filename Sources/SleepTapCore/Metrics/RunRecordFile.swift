// SPDX-License-Identifier: Apache-2.0
public import Foundation

/// The run-record file, `metrics/bg_runs/<device>-<YYYY-MM-DD>.json`: one JSON array (RFC 8259)
/// of `RunRecord` objects, one per line, keys sorted, every key written (null where there is no
/// value), instants as `2026-03-07T11:30:00.000Z`. The same records give the same bytes.
///
/// Reading is strict and fast (a scanner made for this shape, no `JSONSerialization` tree): the
/// text must be valid JSON, the top level an array, every element an object with known keys,
/// each once, of the right type, and the record's rules (`RunRecord.problem`) kept. The first
/// problem is thrown, naming the record's index and the field.
public enum RunRecordFile {
    /// Why a file is not a run-record file.
    public struct Problem: Error, Equatable, Sendable, CustomStringConvertible {
        /// The index of the record at fault, nil when the problem is not in one record.
        public var index: Int?
        /// The field at fault, nil when none.
        public var field: String?
        /// What is wrong.
        public var reason: String

        /// - Parameters:
        ///   - index: the record's 0-based index, nil when not in one record.
        ///   - field: the field at fault, nil when none.
        ///   - reason: what is wrong.
        public init(index: Int?, field: String?, reason: String) {
            self.index = index
            self.field = field
            self.reason = reason
        }

        /// `record 3, field bucket = "x": expected active, ...`, `record 0, field device: missing`,
        /// or the reason alone.
        public var description: String {
            let separator = reason.hasPrefix("= ") ? " " : ": "
            switch (index, field) {
            case (let index?, let field?): return "record \(index), field \(field)\(separator)\(reason)"
            case (let index?, nil): return "record \(index): \(reason)"
            case (nil, let field?): return "field \(field)\(separator)\(reason)"
            case (nil, nil): return reason
            }
        }
    }

    /// The directory under a metrics root that holds the files: `metrics/bg_runs`.
    public static let directory = "metrics/bg_runs"

    /// `<device>-<YYYY-MM-DD>.json` for `device` and the UTC day of `instant`.
    public static func fileName(device: String, day instant: Date) -> String {
        "\(device)-\(utcDay(instant)).json"
    }

    /// The UTC calendar day of `instant`, `YYYY-MM-DD`.
    public static func utcDay(_ instant: Date) -> String {
        String(instantString(instant).prefix(10))
    }

    // MARK: writing

    /// The file's bytes for `records`, in the order given: `[`, one record per line (keys sorted,
    /// no spaces), `]`, a final newline. Deterministic.
    public static func encode(_ records: [RunRecord]) -> Data {
        var out = "[\n"
        for (index, record) in records.enumerated() {
            out += line(record)
            out += index == records.count - 1 ? "\n" : ",\n"
        }
        out += "]\n"
        return Data(out.utf8)
    }

    /// One record as a JSON object on one line, keys sorted.
    public static func line(_ r: RunRecord) -> String {
        func text(_ s: String?) -> String { s.map { quote($0) } ?? "null" }
        func flag(_ b: Bool?) -> String { b.map { $0 ? "true" : "false" } ?? "null" }
        var out = "{\"at\":\"\(instantString(r.at))\""
        out += ",\"attempt\":" + (r.attempt.map { String($0) } ?? "null")
        out += ",\"bucket\":" + text(r.bucket?.name)
        out += ",\"device\":" + quote(r.device)
        out += ",\"earliestBeginDate\":" + (r.earliestBeginDate.map { "\"\(instantString($0))\"" } ?? "null")
        out += ",\"expired\":" + flag(r.expired)
        out += ",\"kind\":\"\(r.kind.rawValue)\""
        out += ",\"lowPower\":" + flag(r.lowPower)
        out += ",\"platform\":\"\(r.platform.rawValue)\""
        out += ",\"reason\":" + text(r.reason)
        out += ",\"stalenessHours\":" + (r.stalenessHours.map { "\($0)" } ?? "null")
        out += ",\"success\":" + flag(r.success) + "}"
        return out
    }

    /// `2026-03-07T11:30:00.450Z`: UTC, to the millisecond (rounded to the nearest).
    public static func instantString(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1_000).rounded())
        let (seconds, fraction) = floorDivision(milliseconds, 1_000)
        let (days, secondOfDay) = floorDivision(seconds, 86_400)
        let (year, month, day) = civil(days: days)
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let ms = fraction < 10 ? "00\(fraction)" : fraction < 100 ? "0\(fraction)" : "\(fraction)"
        let yyyy = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(yyyy)-\(two(month))-\(two(day))T\(two(secondOfDay / 3_600)):\(two(secondOfDay % 3_600 / 60)):"
            + "\(two(secondOfDay % 60)).\(ms)Z"
    }

    private static func floorDivision(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let (q, r) = a.quotientAndRemainder(dividingBy: b)
        return r < 0 ? (q - 1, r + b) : (q, r)
    }

    /// The proleptic Gregorian civil date of a count of days since 1970-01-01 (Howard Hinnant's
    /// civil_from_days, the inverse of `LocalDate.daysSinceEpoch`). Pure arithmetic on a UTC day
    /// count: no local days are stepped.
    private static func civil(days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    private static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    // MARK: reading

    /// Parses `YYYY-MM-DDTHH:MM:SS` with an optional fraction (1 to 9 digits) and `Z`, strictly
    /// (the day must exist, hours < 24, minutes and seconds < 60).
    /// - Returns: nil when the text is not such an instant.
    public static func parseInstant(_ b: ArraySlice<UInt8>) -> Date? {
        var days = DayCache()
        return parseInstant(b, days: &days)
    }

    /// Days already checked, so that a file of many records checks each day once.
    struct DayCache {
        var key = -1
        var days = 0
        var valid = false
    }

    static func parseInstant(_ b: ArraySlice<UInt8>, days cache: inout DayCache) -> Date? {
        let s = b.startIndex
        guard b.count >= 20, b[s + 4] == 0x2D, b[s + 7] == 0x2D, b[s + 10] == 0x54, b[s + 13] == 0x3A,
            b[s + 16] == 0x3A, b[b.endIndex - 1] == 0x5A
        else { return nil }
        func number(_ from: Int, _ count: Int) -> Int? {
            var value = 0
            for i in (s + from)..<(s + from + count) {
                let d = b[i] &- 0x30
                guard d < 10 else { return nil }
                value = value * 10 + Int(d)
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
            let minute = number(14, 2), let second = number(17, 2), hour < 24, minute < 60, second < 60
        else { return nil }
        var fraction = 0.0
        let rest = b.count - 20
        if rest > 0 {
            guard b[s + 19] == 0x2E, (1...9).contains(rest - 1), let digits = number(20, rest - 1) else { return nil }
            var scale = 1.0
            for _ in 0..<(rest - 1) { scale *= 10 }
            fraction = Double(digits) / scale
        }
        let key = year * 10_000 + month * 100 + day
        if key != cache.key {
            cache.key = key
            let text = String(decoding: b[s..<(s + 10)], as: UTF8.self)
            if let date = LocalDate(parsing: text) {
                cache.valid = true
                cache.days = date.daysSinceEpoch
            } else {
                cache.valid = false
            }
        }
        guard cache.valid else { return nil }
        // A UTC calendar date to an instant: POSIX days are 86,400 s (no local day is stepped).
        let seconds = cache.days * 86_400 + hour * 3_600 + minute * 60 + second
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// Reads a whole file: every record, in order.
    /// - Throws: `Problem`, the first one found.
    public static func decode(_ data: Data) throws(Problem) -> [RunRecord] {
        var records: [RunRecord] = []
        try decode(data) { records.append($0) }
        return records
    }

    /// Reads a whole file and hands each record to `body` in order, without keeping them. The
    /// file is checked to its end, so a caller that must not use part of a bad file collects
    /// first (as `decode(_:)` does).
    /// - Throws: `Problem`, the first one found.
    public static func decode(_ data: Data, _ body: (RunRecord) -> Void) throws(Problem) {
        try decode(bytes: [UInt8](data), body)
    }

    /// `decode(_:)` of a file's bytes.
    /// - Throws: `Problem`, the first one found.
    public static func decode(bytes: [UInt8]) throws(Problem) -> [RunRecord] {
        var records: [RunRecord] = []
        try decode(bytes: bytes) { records.append($0) }
        return records
    }

    /// `decode(_:_:)` of a file's bytes.
    /// - Throws: `Problem`, the first one found.
    public static func decode(bytes: [UInt8], _ body: (RunRecord) -> Void) throws(Problem) {
        var scanner = RecordScanner(bytes: bytes)
        do throws(Problem) {
            try scanner.records(body)
        } catch {
            if let syntax = JSONDiagnosis.syntaxError(in: Data(bytes)) {
                throw Problem(index: nil, field: nil, reason: "not valid JSON: \(syntax)")
            }
            throw error
        }
    }
}

/// The scanner for one run-record file: `[ {flat object}, ... ]`.
private struct RecordScanner {
    let bytes: [UInt8]
    var index = 0
    var days = RunRecordFile.DayCache()
    var record = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    enum Value {
        case string(ArraySlice<UInt8>, escaped: Bool)
        case number(ArraySlice<UInt8>)
        case bool(Bool)
        case null

        var kindName: String {
            switch self {
            case .string: "a string"
            case .number: "a number"
            case .bool: "true or false"
            case .null: "null"
            }
        }
    }

    func problem(_ field: String?, _ reason: String) -> RunRecordFile.Problem {
        RunRecordFile.Problem(index: record, field: field, reason: reason)
    }

    func structure(_ reason: String) -> RunRecordFile.Problem {
        RunRecordFile.Problem(index: nil, field: nil, reason: reason)
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            let b = bytes[index]
            guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { return }
            index += 1
        }
    }

    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func records(_ body: (RunRecord) -> Void) throws(RunRecordFile.Problem) {
        skipWhitespace()
        guard current == 0x5B else {
            throw structure("the top level must be a JSON array of run records")
        }
        index += 1
        skipWhitespace()
        if current == 0x5D {
            index += 1
        } else {
            while true {
                skipWhitespace()
                guard current == 0x7B else {
                    throw problem(nil, "must be an object")
                }
                body(try object())
                record += 1
                skipWhitespace()
                if current == 0x2C {
                    index += 1
                    continue
                }
                guard current == 0x5D else { throw structure("expected ',' or ']' after record \(record - 1)") }
                index += 1
                break
            }
        }
        skipWhitespace()
        guard index == bytes.count else { throw structure("text after the end of the array") }
    }

    /// Slot order: RunRecord.keys.
    static let keyBytes: [[UInt8]] = RunRecord.keys.map { Array($0.utf8) }

    mutating func object() throws(RunRecordFile.Problem) -> RunRecord {
        index += 1  // {
        var slots = [Value?](repeating: nil, count: RunRecord.keys.count)
        skipWhitespace()
        if current == 0x7D {
            index += 1
        } else {
            while true {
                skipWhitespace()
                guard current == 0x22 else { throw problem(nil, "expected a key") }
                let (keySlice, escaped) = try string()
                let key = escaped ? Array(Self.unescape(keySlice).utf8)[...] : keySlice
                guard let slot = Self.keyBytes.firstIndex(where: { $0.elementsEqual(key) }) else {
                    let name = clipped(String(decoding: key, as: UTF8.self), to: 60)
                    throw problem(name, "unknown key (expected \(RunRecord.keys.joined(separator: ", ")))")
                }
                guard slots[slot] == nil else {
                    throw problem(RunRecord.keys[slot], "appears twice; a key must appear once in an object")
                }
                skipWhitespace()
                guard current == 0x3A else { throw problem(RunRecord.keys[slot], "expected ':'") }
                index += 1
                skipWhitespace()
                slots[slot] = try value(field: RunRecord.keys[slot])
                skipWhitespace()
                if current == 0x2C {
                    index += 1
                    continue
                }
                guard current == 0x7D else { throw problem(nil, "expected ',' or '}'") }
                index += 1
                break
            }
        }
        return try build(slots)
    }

    mutating func string() throws(RunRecordFile.Problem) -> (ArraySlice<UInt8>, Bool) {
        index += 1  // "
        let start = index
        var escaped = false
        while index < bytes.count {
            let b = bytes[index]
            if b == 0x22 {
                index += 1
                return (bytes[start..<(index - 1)], escaped)
            }
            if b == 0x5C {
                escaped = true
                index += 2
                continue
            }
            guard b >= 0x20 else { throw structure("a control character in a string") }
            index += 1
        }
        throw structure("a string without its closing quote")
    }

    mutating func value(field: String) throws(RunRecordFile.Problem) -> Value {
        guard let b = current else { throw structure("the end of the text where a value was expected") }
        switch b {
        case 0x22:
            let (slice, escaped) = try string()
            return .string(slice, escaped: escaped)
        case 0x74 where bytes[index...].starts(with: [0x74, 0x72, 0x75, 0x65]):
            index += 4
            return .bool(true)
        case 0x66 where bytes[index...].starts(with: [0x66, 0x61, 0x6C, 0x73, 0x65]):
            index += 5
            return .bool(false)
        case 0x6E where bytes[index...].starts(with: [0x6E, 0x75, 0x6C, 0x6C]):
            index += 4
            return .null
        case 0x2D, 0x30...0x39:
            let start = index
            while index < bytes.count,
                [0x2B, 0x2D, 0x2E, 0x45, 0x65].contains(bytes[index]) || (0x30...0x39).contains(bytes[index])
            {
                index += 1
            }
            return .number(bytes[start..<index])
        case 0x7B: throw problem(field, "found an object; expected a string, number, true, false or null")
        case 0x5B: throw problem(field, "found an array; expected a string, number, true, false or null")
        default: throw structure("not a JSON value")
        }
    }

    static func unescape(_ slice: ArraySlice<UInt8>) -> String {
        // Rare (no writer of this format escapes): let Foundation read the quoted string.
        let quoted = [0x22] + Array(slice) + [0x22]
        let parsed = try? JSONSerialization.jsonObject(with: Data(quoted), options: [.fragmentsAllowed])
        return parsed as? String ?? String(decoding: slice, as: UTF8.self)
    }

    static func text(_ slice: ArraySlice<UInt8>, escaped: Bool) -> String? {
        if escaped { return unescape(slice) }
        return String(validating: slice, as: UTF8.self)
    }

    func shown(_ value: Value) -> String {
        switch value {
        case .string(let s, let escaped): "\"" + clipped(Self.text(s, escaped: escaped) ?? "?", to: 60) + "\""
        case .number(let n): String(decoding: n, as: UTF8.self)
        case .bool(let b): b ? "true" : "false"
        case .null: "null"
        }
    }

    mutating func build(_ slots: [Value?]) throws(RunRecordFile.Problem) -> RunRecord {
        // slots: at 0, attempt 1, bucket 2, device 3, earliestBeginDate 4, expired 5, kind 6,
        // lowPower 7, platform 8, reason 9, stalenessHours 10, success 11.
        func required(_ slot: Int) throws(RunRecordFile.Problem) -> Value {
            guard let value = slots[slot] else { throw problem(RunRecord.keys[slot], "missing") }
            if case .null = value { throw problem(RunRecord.keys[slot], "is null; required") }
            return value
        }
        func wrong(_ slot: Int, _ value: Value, _ expected: String) -> RunRecordFile.Problem {
            problem(RunRecord.keys[slot], "= \(shown(value)): expected \(expected)")
        }
        func string(_ slot: Int, _ value: Value) throws(RunRecordFile.Problem) -> String {
            guard case .string(let s, let escaped) = value else { throw wrong(slot, value, "a string") }
            guard let text = Self.text(s, escaped: escaped) else { throw wrong(slot, value, "UTF-8 text") }
            return text
        }
        func optionalString(_ slot: Int) throws(RunRecordFile.Problem) -> String? {
            guard let value = slots[slot] else { return nil }
            if case .null = value { return nil }
            return try string(slot, value)
        }
        func optionalBool(_ slot: Int) throws(RunRecordFile.Problem) -> Bool? {
            guard let value = slots[slot] else { return nil }
            switch value {
            case .null: return nil
            case .bool(let b): return b
            default: throw wrong(slot, value, "true, false or null")
            }
        }
        func instant(_ slot: Int, _ value: Value) throws(RunRecordFile.Problem) -> Date {
            guard case .string(let s, false) = value, let date = RunRecordFile.parseInstant(s, days: &days) else {
                throw wrong(slot, value, "an ISO-8601 UTC instant such as \"2026-03-07T11:30:00Z\"")
            }
            return date
        }
        func number(_ slot: Int) throws(RunRecordFile.Problem) -> Double? {
            guard let value = slots[slot] else { return nil }
            switch value {
            case .null: return nil
            case .number(let n):
                guard Self.isJSONNumber(n), let double = Double(String(decoding: n, as: UTF8.self)), double.isFinite
                else { throw wrong(slot, value, "a number") }
                return double
            default: throw wrong(slot, value, "a number or null")
            }
        }

        let platformValue = try required(8)
        guard let platform = Platform(rawValue: try string(8, platformValue)) else {
            throw wrong(8, platformValue, "ios or android")
        }
        let kindValue = try required(6)
        guard let kind = RunRecord.Kind(rawValue: try string(6, kindValue)) else {
            throw wrong(6, kindValue, "submitted, submit_failed, background, dropped or foreground")
        }
        let device = try string(3, try required(3))
        let at = try instant(0, try required(0))
        var earliest: Date?
        if let value = slots[4] {
            if case .null = value {} else { earliest = try instant(4, value) }
        }
        let lowPowerValue = try required(7)
        guard case .bool(let lowPower) = lowPowerValue else { throw wrong(7, lowPowerValue, "true or false") }
        var bucket: StandbyBucket?
        if let name = try optionalString(2) {
            guard let value = StandbyBucket(name: name) else {
                throw wrong(2, slots[2]!, "active, working_set, frequent, rare, restricted or null")
            }
            bucket = value
        }
        var attempt: Int?
        if let value = try number(1) {
            guard value == value.rounded(), value >= 0, value < 1e9 else {
                throw wrong(1, slots[1]!, "a whole number ≥ 0 or null")
            }
            attempt = Int(value)
        }
        let staleness = try number(10)
        let record = RunRecord(
            device: device, platform: platform, kind: kind, at: at, earliestBeginDate: earliest,
            success: try optionalBool(11), expired: try optionalBool(5), lowPower: lowPower, bucket: bucket,
            attempt: attempt, stalenessHours: staleness, reason: try optionalString(9))
        if let (field, reason) = record.problem { throw problem(field, reason) }
        return record
    }

    /// RFC 8259 §6: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    static func isJSONNumber(_ n: ArraySlice<UInt8>) -> Bool {
        var i = n.startIndex
        func digits() -> Int {
            let start = i
            while i < n.endIndex, n[i] >= 0x30, n[i] <= 0x39 { i += 1 }
            return i - start
        }
        if i < n.endIndex, n[i] == 0x2D { i += 1 }
        guard i < n.endIndex else { return false }
        if n[i] == 0x30 {
            i += 1
        } else {
            guard digits() > 0 else { return false }
        }
        if i < n.endIndex, n[i] == 0x2E {
            i += 1
            guard digits() > 0 else { return false }
        }
        if i < n.endIndex, n[i] == 0x45 || n[i] == 0x65 {
            i += 1
            if i < n.endIndex, n[i] == 0x2B || n[i] == 0x2D { i += 1 }
            guard digits() > 0 else { return false }
        }
        return i == n.endIndex
    }
}

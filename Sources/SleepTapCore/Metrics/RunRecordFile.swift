// SPDX-License-Identifier: Apache-2.0
package import Foundation
import SleepTapOS

/// The run-record file, `metrics/bg_runs/<device>-<YYYY-MM-DD>.json`: one JSON array (RFC 8259)
/// of `RunRecord` objects, one per line, keys sorted, every key written (null where there is no
/// value), instants as `2026-03-07T11:30:00.000Z`. The same records give the same bytes.
///
/// Written by Foundation's `JSONEncoder`; read from the strict scan's values when every record is
/// plain, else by `JSONDecoder` (docs/metrics.md, "How the values are read"). Reading is strict: the text
/// must be strict JSON with no key twice in one object (`JSONDiagnosis`, which Foundation does
/// not check), the top level an array, every element an object with known keys of the right
/// type, and the record's rules (`RunRecord.problem`) kept. The first problem is thrown, naming
/// the record's index and the field.
package enum RunRecordFile {
    /// Why a file is not a run-record file.
    package struct Problem: Error, Equatable, Sendable, CustomStringConvertible {
        /// The index of the record at fault, nil when the problem is not in one record.
        package var index: Int?
        /// The field at fault, nil when none.
        package var field: String?
        /// What is wrong.
        package var reason: String

        /// - Parameters:
        ///   - index: the record's 0-based index, nil when not in one record.
        ///   - field: the field at fault, nil when none.
        ///   - reason: what is wrong.
        package init(index: Int?, field: String?, reason: String) {
            self.index = index
            self.field = field
            self.reason = reason
        }

        /// `record 3, field bucket = "x": expected active, ...`, `record 0, field device: missing`,
        /// or the reason alone.
        package var description: String {
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
    package static let directory = "metrics/bg_runs"

    /// `<device>-<YYYY-MM-DD>.json` for `device` and the UTC day of `instant`.
    package static func fileName(device: String, day instant: Date) -> String {
        "\(device)-\(utcDay(instant)).json"
    }

    /// The UTC calendar day of `instant`, `YYYY-MM-DD`.
    package static func utcDay(_ instant: Date) -> String {
        String(instantString(instant).prefix(10))
    }

    // MARK: writing

    /// The file's bytes for `records`, in the order given: `[`, one record per line (each
    /// written by `JSONEncoder`, keys sorted, no spaces), `]`, a final newline. Deterministic.
    package static func encode(_ records: [RunRecord]) -> Data {
        var out = Data("[\n".utf8)
        for (index, record) in records.enumerated() {
            out.append(Data(line(record).utf8))
            out.append(contentsOf: Array((index == records.count - 1 ? "\n" : ",\n").utf8))
        }
        out.append(contentsOf: Array("]\n".utf8))
        return out
    }

    /// One record as a JSON object on one line, keys sorted, every key (null where none):
    /// `JSONEncoder` with `RunRecord`'s `Encodable`.
    package static func line(_ record: RunRecord) -> String {
        // The record holds strings, numbers, booleans and nulls only: encoding cannot fail
        // (a non-finite stalenessHours breaks `RunRecord.problem` and is never written).
        String(decoding: (try? encoder.encode(record)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// Configured once; `encode` may be called from any thread (it copies its options).
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Configured once; `decode` may be called from any thread.
    private static let decoder = JSONDecoder()

    /// `2026-03-07T11:30:00.450Z`: UTC, to the millisecond (rounded to the nearest). The date
    /// and the time of day are `ISO8601.string`'s (Foundation's UTC calendar).
    package static func instantString(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1_000).rounded())
        var (seconds, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1_000)
        if fraction < 0 {
            seconds -= 1
            fraction += 1_000
        }
        let whole = Date(timeIntervalSince1970: Double(seconds))
        if let text = ISO8601.text(whole, milliseconds: Int(fraction)) { return text }
        let ms = fraction < 10 ? "00\(fraction)" : fraction < 100 ? "0\(fraction)" : "\(fraction)"
        return ISO8601.string(whole).dropLast() + "." + ms + "Z"
    }

    // MARK: reading

    /// Parses `YYYY-MM-DDTHH:MM:SS` with an optional fraction (1 to 9 digits, those past the
    /// millisecond dropped) and `Z`, strictly (the day must exist, hours < 24, minutes and
    /// seconds < 60).
    /// - Returns: nil when the text is not such an instant.
    package static func parseInstant(_ b: ArraySlice<UInt8>) -> Date? {
        var days = DayCache()
        return b.withUnsafeBufferPointer { parseInstant($0, days: &days) }
    }

    /// `parseInstant(_:)` of a string's UTF-8, without copying it.
    static func parseInstant(_ text: String, days: inout DayCache) -> Date? {
        var text = text
        return text.withUTF8 { parseInstant($0, days: &days) }
    }

    /// The last UTC day read and its first instant (Foundation's, `UTCDays`), so that a file of
    /// many records of one day asks once (and a day is parsed from its ten bytes only then).
    struct DayCache {
        var key = -1
        var start: Double?
    }

    static func parseInstant(_ b: UnsafeBufferPointer<UInt8>, days cache: inout DayCache) -> Date? {
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
        // The time of day from its fixed places; the calendar date's first instant from Foundation.
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
            let minute = number(14, 2), let second = number(17, 2), hour < 24, minute < 60, second < 60
        else { return nil }
        var fraction = 0.0
        let rest = b.count - 20
        if rest > 0 {
            guard b[s + 19] == 0x2E, (1...9).contains(rest - 1), number(20, rest - 1) != nil,
                let digits = number(20, min(3, rest - 1))
            else { return nil }
            // Digits past the millisecond (the records' precision) are dropped, not rounded: an
            // instant stays on its own UTC day (23:59:59.9995 is 23:59:59.999, not the next day).
            var scale = 1.0
            for _ in 0..<min(3, rest - 1) { scale *= 10 }
            fraction = Double(digits) / scale
        }
        let key = (year * 100 + month) * 100 + day
        if key != cache.key {
            cache.key = key
            let text = String(decoding: b[s..<(s + 10)], as: UTF8.self)
            cache.start = LocalDate(parsing: text).flatMap(UTCDays.start(of:))?.timeIntervalSince1970
        }
        guard let start = cache.start else { return nil }
        return Date(timeIntervalSince1970: start + Double(hour * 3_600 + minute * 60 + second) + fraction)
    }

    /// Reads a whole file: every record, in order.
    /// - Throws: `Problem`, the first one found.
    package static func decode(_ data: Data) throws(Problem) -> [RunRecord] {
        var records: [RunRecord] = []
        try decode(data) { records.append($0) }
        return records
    }

    /// `decode(_:)` of a file's bytes.
    /// - Throws: `Problem`, the first one found.
    package static func decode(bytes: [UInt8]) throws(Problem) -> [RunRecord] {
        try decode(Data(bytes))
    }

    /// `decode(_:_:)` of a file's bytes.
    /// - Throws: `Problem`, the first one found.
    package static func decode(bytes: [UInt8], _ body: (RunRecord) -> Void) throws(Problem) {
        try decode(Data(bytes), body)
    }

    /// Reads a whole file and hands each record to `body` in order. The file is checked to its
    /// end first, so `body` never sees part of a bad file.
    /// - Throws: `Problem`, the first one found.
    package static func decode(_ data: Data, _ body: (RunRecord) -> Void) throws(Problem) {
        try decode(data, readingScannedValues: true, body)
    }

    /// `decode(_:_:)`; with `readingScannedValues` false every file goes through `JSONDecoder`
    /// (for tests that compare the two readers).
    /// - Throws: `Problem`, the first one found.
    static func decode(
        _ data: Data, readingScannedValues: Bool, _ body: (RunRecord) -> Void
    ) throws(Problem) {
        // The strict scan (RFC 8259 syntax, keys given twice, which Foundation does not check)
        // also finds the first key that is not a record's, so the decoder need not list keys.
        let scan = JSONDiagnosis.scanRecords(data, elementKeys: RunRecord.keys, keepingValues: true)
        let (found, unknown) = (scan.problem, scan.unknownKey)
        switch found {
        case .syntax(let error):
            throw Problem(index: nil, field: nil, reason: "not valid JSON: \(error)")
        case .duplicateKey(let path, let key, _, _):
            // The path of a key in a record is `[N].key`.
            let index = path.hasPrefix("[") ? Int(path.dropFirst().prefix { $0 != "]" }) : nil
            throw Problem(index: index, field: key, reason: "appears twice; a key must appear once in an object")
        case .notAnObject, nil:
            break
        }
        // Problems are reported in record order; in one record an unknown key comes first.
        let unknownAt = unknown?.index ?? Int.max
        func unknownKey() -> Problem {
            Problem(index: unknown?.index, field: unknown?.key, reason: Row.unknownKeyReason)
        }
        let rows: [Row]
        if readingScannedValues, let plain = plainRows(data, scan) {
            rows = plain
        } else {
            do {
                rows = try decoder.decode([Row].self, from: data)
            } catch {
                let problem = problem(error, in: data)
                if let index = problem.index, index >= unknownAt { throw unknownKey() }
                throw problem
            }
        }
        var records: [RunRecord] = []
        records.reserveCapacity(rows.count)
        var days = DayCache()
        for (index, row) in rows.enumerated() {
            if index == unknownAt { throw unknownKey() }
            records.append(try row.record(index: index, days: &days))
        }
        for record in records { body(record) }
    }

    /// The rows of a file whose records are all plain, from the values the strict scan found:
    /// every element an object, every required key present, every value of its field's JSON
    /// type, every string ASCII without escapes. Nil for any other file, which `JSONDecoder`
    /// then reads (and whose errors it names). The rows are the ones `JSONDecoder` gives for the
    /// same text (a number is read by `Double(_:)`, which rounds as Foundation's reader does);
    /// docs/metrics.md, "How the values are read".
    static func plainRows(_ data: Data, _ scan: JSONDiagnosis.RecordScan) -> [Row]? {
        guard scan.isArray, scan.elementCount == scan.objectElements else { return nil }
        return data.withUnsafeBytes { raw -> [Row]? in
            let bytes = raw.bindMemory(to: UInt8.self)
            var rows: [Row] = []
            rows.reserveCapacity(scan.elementCount)
            var next = 0
            let members = scan.members
            for element in 0..<scan.elementCount {
                var row = PlainRow()
                while next < members.count, members[next].element == element {
                    guard row.set(members[next], bytes) else { return nil }
                    next += 1
                }
                guard let done = row.row else { return nil }
                rows.append(done)
            }
            return rows
        }
    }

    /// A `Row` being filled from the scanned values of one element, key by key.
    private struct PlainRow {
        /// A record's field, named as its key.
        enum Field: String {
            case appVersion, at, attempt, bucket, device, earliestBeginDate, expired, kind, lowPower, platform,
                reason, stalenessHours, stopReason, success
        }

        /// The field of each of `RunRecord.keys`, by the key's index (the scan's `ElementMember.key`).
        static let fields: [Field] = RunRecord.keys.map { Field(rawValue: $0)! }

        var appVersion: String?
        var at: String?
        var attempt: Double?
        var bucket: String?
        var device: String?
        var earliestBeginDate: String?
        var expired: Bool?
        var kind: String?
        var lowPower: Bool?
        var platform: String?
        var reason: String?
        var stalenessHours: Double?
        var stopReason: Double?
        var success: Bool?

        /// The row, nil when a required key is missing.
        var row: Row? {
            guard let at, let device, let kind, let lowPower, let platform else { return nil }
            return Row(
                appVersion: appVersion, at: at, attempt: attempt, bucket: bucket, device: device,
                earliestBeginDate: earliestBeginDate, expired: expired, kind: kind, lowPower: lowPower,
                platform: platform, reason: reason, stalenessHours: stalenessHours, stopReason: stopReason,
                success: success)
        }

        /// Takes `member`'s value; false when it is not of the plain shape of its field.
        mutating func set(_ member: JSONDiagnosis.ElementMember, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            let text = UnsafeBufferPointer(rebasing: bytes[member.range])
            let first = text[0]
            let isNull = first == UInt8(ascii: "n")
            func string() -> String?? {
                if isNull { return .some(nil) }
                guard member.plainString else { return nil }
                return .some(
                    String(decoding: UnsafeBufferPointer(rebasing: text.dropFirst().dropLast()), as: UTF8.self))
            }
            func bool() -> Bool?? {
                if isNull { return .some(nil) }
                if first == UInt8(ascii: "t") { return .some(true) }
                if first == UInt8(ascii: "f") { return .some(false) }
                return nil
            }
            func number() -> Double?? {
                if isNull { return .some(nil) }
                guard first == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first),
                    let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite
                else { return nil }
                // An underflow to zero: left to Foundation's reader to decide.
                if value == 0, text.contains(where: { (UInt8(ascii: "1")...UInt8(ascii: "9")).contains($0) }) {
                    return nil
                }
                return .some(value)
            }
            switch Self.fields[member.key] {
            case .appVersion:
                guard let value = string() else { return false }
                appVersion = value
            case .at:
                guard let value = string(), let value else { return false }
                at = value
            case .attempt:
                guard let value = number() else { return false }
                attempt = value
            case .bucket:
                guard let value = string() else { return false }
                bucket = value
            case .device:
                guard let value = string(), let value else { return false }
                device = value
            case .earliestBeginDate:
                guard let value = string() else { return false }
                earliestBeginDate = value
            case .expired:
                guard let value = bool() else { return false }
                expired = value
            case .kind:
                guard let value = string(), let value else { return false }
                kind = value
            case .lowPower:
                guard let value = bool(), let value else { return false }
                lowPower = value
            case .platform:
                guard let value = string(), let value else { return false }
                platform = value
            case .reason:
                guard let value = string() else { return false }
                reason = value
            case .stalenessHours:
                guard let value = number() else { return false }
                stalenessHours = value
            case .stopReason:
                guard let value = number() else { return false }
                stopReason = value
            case .success:
                guard let value = bool() else { return false }
                success = value
            }
            return true
        }
    }

    /// A `JSONDecoder` failure as a `Problem` naming the record and the field (the value shown
    /// is looked up with `JSONSerialization`, on this error path only).
    private static func problem(_ error: any Error, in data: Data) -> Problem {
        let context: DecodingError.Context?
        var field: String?
        switch error {
        case DecodingError.keyNotFound(let key, let found):
            context = found
            field = key.stringValue
        case DecodingError.valueNotFound(_, let found), DecodingError.typeMismatch(_, let found),
            DecodingError.dataCorrupted(let found):
            context = found
        default:
            context = nil
        }
        guard let context else { return Problem(index: nil, field: nil, reason: "\(error)") }
        let path = context.codingPath
        guard let first = path.first, let index = first.intValue else {
            if case DecodingError.dataCorrupted = error {
                return Problem(index: nil, field: nil, reason: "not readable: \(context.debugDescription)")
            }
            return Problem(index: nil, field: nil, reason: "the top level must be a JSON array of run records")
        }
        if case DecodingError.keyNotFound = error { return Problem(index: index, field: field, reason: "missing") }
        guard path.count >= 2 else { return Problem(index: index, field: nil, reason: "must be an object") }
        let name = path[1].stringValue
        let tree = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        let value = ((tree as? [Any]).flatMap { index < $0.count ? $0[index] : nil } as? [String: Any])?[name]
        if case DecodingError.dataCorrupted = error {
            return Problem(index: index, field: name, reason: context.debugDescription)
        }
        switch value {
        case is NSNull: return Problem(index: index, field: name, reason: "is null; required")
        case is [String: Any]:
            return Problem(index: index, field: name, reason: "found an object; expected \(Row.expected(name))")
        case is [Any]:
            return Problem(index: index, field: name, reason: "found an array; expected \(Row.expected(name))")
        default:
            return Problem(index: index, field: name, reason: "= \(shown(value)): expected \(Row.expected(name))")
        }
    }

    /// A JSON value as it reads in a message: `"text"` (clipped), a number, `true`, `false`.
    static func shown(_ value: Any?) -> String {
        switch value {
        case let text as String: return "\"" + clipped(text, to: 60) + "\""
        case let number as NSNumber:
            if case .bool(let value) = JSONNumber(number) { return value ? "true" : "false" }
            return number.description
        default: return "?"
        }
    }

    /// One record as the file holds it, read by `JSONDecoder` with the synthesized `Decodable`
    /// (types checked; an absent optional key reads as null), before its values are checked and
    /// turned into a `RunRecord` (`record(index:days:)`). Unknown keys are found by the strict
    /// scan (`JSONDiagnosis.scan(_:elementKeys:)`).
    struct Row: Decodable {
        var appVersion: String?
        var at: String
        var attempt: Double?
        var bucket: String?
        var device: String
        var earliestBeginDate: String?
        var expired: Bool?
        var kind: String
        var lowPower: Bool
        var platform: String
        var reason: String?
        var stalenessHours: Double?
        var stopReason: Double?
        var success: Bool?

        static let unknownKeyReason = "unknown key (expected \(RunRecord.keys.joined(separator: ", ")))"

        static let instantWords = "an ISO-8601 UTC instant such as \"2026-03-07T11:30:00Z\""

        /// What a field's value must be, in words.
        static func expected(_ field: String) -> String {
            switch field {
            case "at", "earliestBeginDate": instantWords
            case "attempt", "stalenessHours", "stopReason": "a number or null"
            case "lowPower": "true or false"
            case "expired", "success": "true, false or null"
            case "appVersion", "bucket", "reason": "a string or null"
            default: "a string"
            }
        }

        /// The record, its values checked: names, instants, ranges and `RunRecord.problem`.
        func record(index: Int, days: inout DayCache) throws(Problem) -> RunRecord {
            func wrong(_ field: String, _ value: String, _ expected: String) -> Problem {
                Problem(index: index, field: field, reason: "= \"\(clipped(value, to: 60))\": expected \(expected)")
            }
            guard let platform = Platform(rawValue: platform) else {
                throw wrong("platform", platform, "ios or android")
            }
            guard let kind = RunRecord.Kind(rawValue: kind) else {
                throw wrong("kind", kind, "submitted, submit_failed, background, dropped, foreground or push")
            }
            guard let at = RunRecordFile.parseInstant(at, days: &days) else {
                throw wrong("at", at, Self.instantWords)
            }
            var earliest: Date?
            if let text = earliestBeginDate {
                guard let date = RunRecordFile.parseInstant(text, days: &days) else {
                    throw wrong("earliestBeginDate", text, Self.instantWords)
                }
                earliest = date
            }
            var standby: StandbyBucket?
            if let bucket {
                guard let value = StandbyBucket(name: bucket) else {
                    throw wrong("bucket", bucket, "active, working_set, frequent, rare, restricted or null")
                }
                standby = value
            }
            var attemptCount: Int?
            if let attempt {
                guard attempt == attempt.rounded(), attempt >= 0, attempt < 1e9 else {
                    throw Problem(
                        index: index, field: "attempt", reason: "= \(attempt): expected a whole number ≥ 0 or null")
                }
                attemptCount = Int(attempt)
            }
            var stopCode: Int?
            if let stopReason {
                guard let code = Int(exactly: stopReason), RunRecord.stopReasonRange.contains(code) else {
                    throw Problem(
                        index: index, field: "stopReason",
                        reason: "= \(stopReason): expected a STOP_REASON_* code from 0 to 15 or null")
                }
                stopCode = code
            }
            let record = RunRecord(
                device: device, platform: platform, kind: kind, at: at, earliestBeginDate: earliest,
                success: success, expired: expired, lowPower: lowPower, bucket: standby, attempt: attemptCount,
                stalenessHours: stalenessHours, reason: reason, appVersion: appVersion, stopReason: stopCode)
            if let (field, reason) = record.problem { throw Problem(index: index, field: field, reason: reason) }
            return record
        }
    }
}

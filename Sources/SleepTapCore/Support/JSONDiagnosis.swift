// SPDX-License-Identifier: Apache-2.0

package import Foundation

/// Why a JSON file cannot be used, in words that name the place: the line and column of a syntax
/// error (RFC 8259 grammar), or the field and value of a type or range error in valid JSON.
///
/// Foundation's own messages give neither: on Linux `JSONSerialization` reports "The data is not
/// in the correct format" without an offset, and `JSONDecoder` reports a number that does not fit
/// its field (a negative `UInt64`) as "The given data was not valid JSON" with no coding path.
package enum JSONDiagnosis {
    /// A syntax error at a place in the text.
    package struct SyntaxError: Error, Equatable, Sendable, CustomStringConvertible {
        /// 1-based line (lines end at LF).
        package var line: Int
        /// 1-based column, in characters (Unicode scalars) from the start of the line.
        package var column: Int
        /// 0-based byte offset.
        package var offset: Int
        /// What is wrong there.
        package var reason: String

        /// `line 3, column 14: expected ',' or '}' after a member, found 'x'`.
        package var description: String { "line \(line), column \(column): \(reason)" }
    }

    /// The first syntax error in `data` as JSON (RFC 8259: one value, any type, whitespace around
    /// it), or nil when it is valid JSON.
    /// - Complexity: O(n) in the size of `data`.
    package static func syntaxError(in data: Data) -> SyntaxError? {
        data.withUnsafeBytes { raw in
            var scanner = Scanner(bytes: raw.bindMemory(to: UInt8.self))
            do throws(SyntaxError) {
                try scanner.document()
                return nil
            } catch {
                return error
            }
        }
    }

    /// Why a text is not one JSON object this package accepts.
    package enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        /// Not JSON by RFC 8259's grammar (a trailing comma, a leading zero, a missing quote, …).
        case syntax(SyntaxError)
        /// Valid JSON in which one object names a key twice: RFC 8259 §4 says the names within
        /// an object SHOULD be unique and that receivers then differ (Foundation's
        /// `JSONSerialization`, `JSONDecoder` and Python's `json` keep the last value), so the
        /// text has no one meaning. `path` is the key's place (`wake.sunday`,
        /// `entries[0].wake`), `key` the name itself.
        case duplicateKey(path: String, key: String, line: Int, column: Int)
        /// Valid JSON whose top level is not an object; `found` says what it is (`a string`).
        case notAnObject(found: String)

        /// `not valid JSON: line 1, column 40: …`, `key wake.sunday appears twice (line 1,
        /// column 37); a key must appear once in an object`, or `the top level must be a JSON
        /// object, found a string`.
        package var description: String {
            switch self {
            case .syntax(let error): "not valid JSON: \(error)"
            case .duplicateKey(let path, _, let line, let column):
                "key \(path) appears twice (line \(line), column \(column)); a key must appear once in an object"
            case .notAnObject(let found): "the top level must be a JSON object, found \(found)"
            }
        }
    }

    /// The first reason `data` is not strict JSON: a syntax error (RFC 8259), else the first key
    /// that appears twice in one object; nil when neither. Foundation on Linux accepts some
    /// texts the grammar forbids (a trailing comma in an object or array) and silently keeps only one of
    /// two equal keys, so every JSON input of this package is checked here first. Two keys are
    /// equal when they are after unescaping (`"a"` and `"\u0061"`) and by Swift's `String`
    /// equality (canonical equivalence), as the keys of the dictionary Foundation builds.
    /// - Complexity: O(n) in the size of `data`.
    package static func problem(in data: Data) -> Problem? {
        scan(data)
    }

    /// `problem(in:)`, and the first key of an element of a top-level array that is not one of
    /// `elementKeys` (the element's 0-based index and the key's text), for a reader of an array
    /// of records with known keys. Keys are compared as `problem(in:)` compares them (after
    /// unescaping, by `String` equality), so a key is unknown exactly when `JSONDecoder` would not
    /// find it under any of `elementKeys`. Objects at other depths are not checked.
    /// - Complexity: O(n) in the size of `data` (times the number of `elementKeys` per member).
    static func scan(_ data: Data, elementKeys: [String]) -> (problem: Problem?, unknownKey: (index: Int, key: String)?)
    {
        let found = scanRecords(data, elementKeys: elementKeys, keepingValues: false)
        return (found.problem, found.unknownKey)
    }

    /// Where one member of an element of a top-level array lies in the text: the element's
    /// index, the key's index in `elementKeys`, the byte range of the value's text, and whether
    /// that value is a plain string (ASCII without escapes, quotes included in `range`).
    struct ElementMember {
        var element: Int
        var key: Int
        var range: Range<Int>
        var plainString: Bool
    }

    /// What `scanRecords(_:elementKeys:keepingValues:)` found.
    struct RecordScan {
        /// `problem(in:)`.
        var problem: Problem?
        /// The first key of an element that is not one of the element keys.
        var unknownKey: (index: Int, key: String)?
        /// Whether the top level is an array.
        var isArray = false
        /// How many elements the top-level array has (0 when the top level is not an array).
        var elementCount = 0
        /// How many of them are objects.
        var objectElements = 0
        /// The known members of the element objects, in the order of the text; empty unless asked.
        var members: [ElementMember] = []
    }

    /// `scan(_:elementKeys:)`, and, with `keepingValues`, where the value of each known member
    /// of each element object lies (`RecordScan.members`), so that a reader of plain records
    /// can take their values without parsing the text a second time.
    /// - Complexity: O(n) in the size of `data` (times the number of `elementKeys` per member).
    static func scanRecords(_ data: Data, elementKeys: [String], keepingValues: Bool) -> RecordScan {
        precondition(elementKeys.count <= 64, "at most 64 element keys")
        return data.withUnsafeBytes { raw in
            var scanner = Scanner(bytes: raw.bindMemory(to: UInt8.self))
            scanner.findsDuplicateKeys = true
            scanner.elementKeys = elementKeys.map { Array($0.utf8) }
            scanner.keepsMembers = keepingValues
            do throws(SyntaxError) {
                try scanner.document()
            } catch {
                return RecordScan(problem: .syntax(error))
            }
            var found = RecordScan(
                unknownKey: scanner.firstUnknown, isArray: scanner.topIsArray, elementCount: scanner.elementCount,
                objectElements: scanner.objectElements, members: scanner.members)
            if let duplicate = scanner.firstDuplicate {
                let place = scanner.error(at: duplicate.offset, "")
                found.problem = .duplicateKey(
                    path: render(steps: duplicate.path), key: duplicate.key, line: place.line, column: place.column)
            }
            return found
        }
    }

    /// `problem(in:)`'s scan: a syntax error, else the first key given twice in one object.
    private static func scan(_ data: Data) -> Problem? {
        data.withUnsafeBytes { raw in
            var scanner = Scanner(bytes: raw.bindMemory(to: UInt8.self))
            scanner.findsDuplicateKeys = true
            do throws(SyntaxError) {
                try scanner.document()
            } catch {
                return .syntax(error)
            }
            guard let duplicate = scanner.firstDuplicate else { return nil }
            let place = scanner.error(at: duplicate.offset, "")
            return .duplicateKey(
                path: render(steps: duplicate.path), key: duplicate.key, line: place.line, column: place.column)
        }
    }

    /// Parses `data` as one JSON object, strictly: RFC 8259 syntax, no key twice in one object
    /// (`problem(in:)`), an object at the top level.
    /// - Returns: the object, as `JSONSerialization` builds it.
    /// - Throws: `Problem` saying what is wrong and where.
    /// - Complexity: O(n) in the size of `data`.
    package static func object(from data: Data) throws(Problem) -> [String: Any] {
        if let problem = problem(in: data) { throw problem }
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            // The grammar holds, so only a limit of Foundation's parser is left (e.g. a number
            // beyond the range of a Double).
            throw .syntax(
                SyntaxError(line: 1, column: 1, offset: 0, reason: "not readable: \(error.localizedDescription)"))
        }
        switch root {
        case let object as [String: Any]: return object
        case is [Any]: throw .notAnObject(found: "an array")
        case is String: throw .notAnObject(found: "a string")
        case is NSNull: throw .notAnObject(found: "null")
        case let number as NSNumber:
            throw .notAnObject(found: JSONNumber(number).isBool ? "true or false" : "a number")
        default: throw .notAnObject(found: "a value of another kind")
        }
    }

    /// Foundation's words for a raw value no case has ("Cannot initialize Kind from invalid String
    /// value quantum") as a user's: "not one of the values of Kind"; other words as they are.
    static func plainWords(_ debugDescription: String) -> String {
        let prefix = "Cannot initialize "
        guard debugDescription.hasPrefix(prefix), let from = debugDescription.range(of: " from invalid ") else {
            return debugDescription
        }
        let type = debugDescription[
            debugDescription.index(debugDescription.startIndex, offsetBy: prefix.count)..<from.lowerBound]
        return "not one of the values of \(type)"
    }

    /// A decoding failure of `data` in words: `not valid JSON: line L, column C: …` for a syntax
    /// error, else `field PATH = VALUE: …` naming the field that has the wrong type or value.
    /// - Parameters:
    ///   - error: what `JSONDecoder` threw decoding `type` from `data`.
    ///   - type: the type that was decoded.
    ///   - data: the text.
    ///   - decoder: the decoder that failed, to re-run when the field has to be found.
    package static func describe<T: Decodable>(
        _ error: any Error, decoding type: T.Type, from data: Data, with decoder: JSONDecoder
    ) -> String {
        if let syntax = syntaxError(in: data) { return "not valid JSON: \(syntax)" }
        guard let tree = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
            return "not valid JSON"
        }
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "missing field \(render(path: context.codingPath + [key]))"
        case DecodingError.valueNotFound(let expected, let context):
            return "field \(render(path: context.codingPath)) is null: expected \(words(for: expected))"
        case DecodingError.typeMismatch(let expected, let context):
            let value = lookUp(context.codingPath, in: tree).map(render(value:)) ?? "?"
            return "field \(render(path: context.codingPath)) = \(value): expected \(words(for: expected))"
        case DecodingError.dataCorrupted(let context) where !context.codingPath.isEmpty:
            let value = lookUp(context.codingPath, in: tree).map(render(value:)) ?? "?"
            return "field \(render(path: context.codingPath)) = \(value): \(plainWords(context.debugDescription))"
        default:
            // Valid JSON the decoder calls corrupt without a path: a number that its field cannot
            // hold. Find it: the first suspicious number whose replacement by 0 cures the failure.
            let suspects = numbers(in: tree, at: []).filter { number in
                number.value < 0 || number.value != number.value.rounded(.towardZero)
                    || abs(number.value) >= 9_223_372_036_854_775_808
            }
            func decodes(replacing paths: [[PathStep]]) -> Bool {
                var changed = tree
                for path in paths { changed = replace(path, in: changed, with: 0) }
                guard let text = try? JSONSerialization.data(withJSONObject: changed, options: [.fragmentsAllowed])
                else { return false }
                return (try? decoder.decode(T.self, from: text)) != nil
            }
            let culprit =
                suspects.first { decodes(replacing: [$0.path]) }
                ?? (decodes(replacing: suspects.map(\.path)) ? suspects.first : nil)
            guard let culprit else { return "valid JSON, but not a valid value: \(describeUnlocated(error))" }
            let why =
                culprit.value < 0
                ? "must not be negative"
                : culprit.value != culprit.value.rounded(.towardZero) ? "must be a whole number" : "is too large"
            return "field \(render(steps: culprit.path)) = \(culprit.text): \(why)"
        }
    }

    // MARK: - the syntax scanner

    /// An RFC 8259 scanner over the bytes of one text (valid only inside the `withUnsafeBytes`
    /// that made it).
    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        /// Whether to look for keys given twice in one object (`firstDuplicate`).
        var findsDuplicateKeys = false
        /// Where the scan is: keys (the byte range of their literal) and indexes from the top
        /// level down; a key's text is made only for a duplicate's path.
        var path: [ScanStep] = []
        /// Whether the last string scanned was plain: ASCII without escapes (its bytes are its
        /// text, so two plain keys are equal exactly when their bytes are).
        var lastStringPlain = false
        /// The plain keys of the objects being scanned, innermost last (each object compares
        /// its keys with its own, from the count it started at), kept for the whole scan.
        var plainKeys: [Range<Int>] = []
        /// The first key found a second time in one object: its path, name and byte offset.
        var firstDuplicate: (path: [PathStep], key: String, offset: Int)?
        /// The keys an element of a top-level array may have (UTF-8, at most 64); empty: not
        /// checked.
        var elementKeys: [[UInt8]] = []
        /// Whether the top-level value is an array.
        var topIsArray = false
        /// The index of the top-level array's element being scanned.
        var element = 0
        /// The first key of such an element that is not in `elementKeys`: the element's index
        /// and the key's text.
        var firstUnknown: (index: Int, key: String)?
        /// Whether to keep where each known member of an element object lies (`members`).
        var keepsMembers = false
        /// The known members of the element objects, in the order of the text (`keepsMembers`).
        var members: [ElementMember] = []
        /// How many elements the top-level array has.
        var elementCount = 0
        /// How many of them are objects whose keys were checked.
        var objectElements = 0

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        /// One JSON text: a value with whitespace around it, no byte-order mark.
        mutating func document() throws(SyntaxError) {
            skipWhitespace()
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
                throw error(at: 0, "a byte-order mark; save the file as UTF-8 without one")
            }
            // UTF-16 (with its byte-order mark FF FE or FE FF, or without: printable ASCII with
            // NUL bytes between) and UTF-32 are not UTF-8, whatever the first bad byte is. NULs
            // among control bytes are no text at all, and are said as what they are below.
            let head = Array(bytes.prefix(4))
            let text: (UInt8) -> Bool = { (0x20...0x7E).contains($0) || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
            if head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0xFE, 0xFF])
                || (head.count >= 2 && head.contains(0) && head.contains { $0 != 0 }
                    && head.allSatisfy { $0 == 0 || text($0) })
            {
                throw error(at: 0, "not UTF-8 (it looks like UTF-16 or UTF-32); save the file as UTF-8")
            }
            topIsArray = index < bytes.count && bytes[index] == UInt8(ascii: "[")
            try value(depth: 0)
            skipWhitespace()
            guard index == bytes.count else {
                throw error(at: index, "text after the end of the JSON value: \(found)")
            }
        }

        /// The character at `index` for messages, or `the end of the text`.
        var found: String {
            guard index < bytes.count else { return "the end of the text" }
            let tail = bytes[index...].prefix(4)
            let character = String(decoding: tail, as: UTF8.self).unicodeScalars.first ?? "\u{FFFD}"
            if character.value < 0x20 || character == "\u{FFFD}" {
                return "U+" + String(character.value, radix: 16, uppercase: true).leftPadded(to: 4)
            }
            return "'\(character)'"
        }

        func error(at offset: Int, _ reason: String) -> SyntaxError {
            let before = bytes[..<min(offset, bytes.count)]
            let lineStart = before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
            let line = before.reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
            // Count characters, not bytes: skip UTF-8 continuation bytes (10xxxxxx).
            let column = 1 + bytes[lineStart..<min(offset, bytes.count)].filter { $0 & 0xC0 != 0x80 }.count
            return SyntaxError(line: line, column: column, offset: offset, reason: reason)
        }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) throws(SyntaxError) {
            guard depth < 512 else { throw error(at: index, "nested more than 512 levels deep") }
            guard index < bytes.count else { throw error(at: index, "expected a value, found the end of the text") }
            switch bytes[index] {
            case UInt8(ascii: "{"): try object(depth: depth)
            case UInt8(ascii: "["): try array(depth: depth)
            case UInt8(ascii: "\""): try string()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"): try literal("")
            default: throw error(at: index, "expected a value, found \(found)")
            }
        }

        mutating func object(depth: Int) throws(SyntaxError) {
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return
            }
            // Plain keys are compared by their bytes (a few per object); from the first key that
            // is not plain on, every key's text goes in `names`. In an element of a top-level
            // array whose keys are known, a known key is one bit of `seen`.
            let firstKey = plainKeys.count
            defer { plainKeys.removeSubrange(firstKey...) }
            var names: Set<String>?
            let checksKeys = depth == 1 && topIsArray && !elementKeys.isEmpty
            var seen: UInt64 = 0
            var guess = 0
            if checksKeys { objectElements += 1 }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                    throw error(at: index, "expected a member name in double quotes, found \(found)")
                }
                let nameStart = index
                try string()
                let literal = nameStart..<index
                let known = checksKeys ? elementKey(literal, guess: guess) : nil
                if let known { guess = known + 1 }
                if checksKeys, known == nil, firstUnknown == nil {
                    firstUnknown = (element, key(bytes[literal]))
                }
                if findsDuplicateKeys {
                    var repeated = false
                    if names == nil, lastStringPlain, plainKeys.count - firstKey < 16 {
                        if let known {
                            // Plain and known: equal only to the same known key.
                            repeated = seen & (1 << known) != 0
                            seen |= 1 << known
                        } else {
                            repeated = plainKeys[firstKey...].contains { sameBytes($0, literal) }
                        }
                        plainKeys.append(literal)
                    } else {
                        if names == nil { names = Set(plainKeys[firstKey...].map { key(bytes[$0]) }) }
                        repeated = names?.insert(key(bytes[literal])).inserted == false
                    }
                    if repeated, firstDuplicate == nil {
                        let name = key(bytes[literal])
                        firstDuplicate = (steps(path) + [.key(name)], name, nameStart)
                    }
                    path.append(.key(literal))
                }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                    throw error(at: index, "expected ':' after the member name, found \(found)")
                }
                index += 1
                skipWhitespace()
                let valueStart = index
                try value(depth: depth + 1)
                if keepsMembers, let known {
                    members.append(
                        ElementMember(
                            element: element, key: known, range: valueStart..<index,
                            plainString: bytes[valueStart] == UInt8(ascii: "\"") && lastStringPlain))
                }
                if findsDuplicateKeys { path.removeLast() }
                skipWhitespace()
                guard index < bytes.count else {
                    throw error(at: index, "expected ',' or '}' after a member, found the end of the text")
                }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard bytes[index] == UInt8(ascii: "}") else {
                    throw error(at: index, "expected ',' or '}' after a member, found \(found)")
                }
                index += 1
                return
            }
        }

        /// The index in `elementKeys` of the key literal at `literal` (quotes included), just
        /// scanned, nil when it is none of them: by its bytes when plain, else by its text. The
        /// key at `guess` is tried first (the key after the last one, for keys written in order).
        func elementKey(_ literal: Range<Int>, guess: Int) -> Int? {
            let count = literal.count - 2
            if lastStringPlain {
                let start = bytes.baseAddress! + literal.lowerBound + 1
                func matches(_ known: [UInt8]) -> Bool {
                    known.count == count && known.withUnsafeBufferPointer { memcmp($0.baseAddress!, start, count) == 0 }
                }
                if guess < elementKeys.count, matches(elementKeys[guess]) { return guess }
                return elementKeys.firstIndex(where: matches)
            }
            let text = key(bytes[literal])
            return elementKeys.firstIndex { String(decoding: $0, as: UTF8.self) == text }
        }

        /// Whether two ranges of the text hold the same bytes.
        func sameBytes(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
            a.count == b.count
                && memcmp(bytes.baseAddress! + a.lowerBound, bytes.baseAddress! + b.lowerBound, a.count) == 0
        }

        mutating func array(depth: Int) throws(SyntaxError) {
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return
            }
            var element = 0
            while true {
                skipWhitespace()
                if findsDuplicateKeys { path.append(.index(element)) }
                if depth == 0 {
                    self.element = element
                    elementCount = element + 1
                }
                try value(depth: depth + 1)
                if findsDuplicateKeys { path.removeLast() }
                element += 1
                skipWhitespace()
                guard index < bytes.count else {
                    throw error(at: index, "expected ',' or ']' after an element, found the end of the text")
                }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard bytes[index] == UInt8(ascii: "]") else {
                    throw error(at: index, "expected ',' or ']' after an element, found \(found)")
                }
                index += 1
                return
            }
        }

        mutating func string() throws(SyntaxError) {
            let start = index
            var plain = true
            index += 1
            while index < bytes.count {
                // Most bytes are printable ASCII, neither a quote nor a backslash: skipped in a
                // loop on locals.
                let end = bytes.count
                if let base = bytes.baseAddress {
                    var next = index
                    while next < end {
                        let byte = base[next]
                        guard byte &- 0x20 < 0x60, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") else { break }
                        next += 1
                    }
                    index = next
                }
                guard index < end else { break }
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    // ASCII is valid UTF-8; only a string with other bytes needs checking.
                    guard plain || String(validating: bytes[start..<index], as: UTF8.self) != nil else {
                        throw error(at: start, "the string is not valid UTF-8")
                    }
                    lastStringPlain = plain
                    return
                case UInt8(ascii: "\\"):
                    plain = false
                    index += 1
                    guard index < bytes.count else { break }
                    switch bytes[index] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                        UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        index += 1
                    case UInt8(ascii: "u"):
                        guard let unit = hex4(at: index + 1) else {
                            throw error(at: index - 1, "expected four hex digits after \\u")
                        }
                        // A UTF-16 surrogate only as a high one followed by a low one: a lone
                        // one is no character (RFC 8259 §8.2; I-JSON, RFC 7493 §2.1, refuses it).
                        switch unit {
                        case 0xD800...0xDBFF:
                            guard index + 6 < bytes.count, bytes[index + 5] == UInt8(ascii: "\\"),
                                bytes[index + 6] == UInt8(ascii: "u"), let low = hex4(at: index + 7),
                                (0xDC00...0xDFFF).contains(low)
                            else {
                                throw error(
                                    at: index - 1,
                                    "\\u\(String(unit, radix: 16, uppercase: true)) is a lone UTF-16 surrogate "
                                        + "(a high one must be followed by a \\uDC00-\\uDFFF low one)")
                            }
                            index += 11
                        case 0xDC00...0xDFFF:
                            throw error(
                                at: index - 1,
                                "\\u\(String(unit, radix: 16, uppercase: true)) is a lone UTF-16 surrogate "
                                    + "(a low one must follow a \\uD800-\\uDBFF high one)")
                        default:
                            index += 5
                        }
                    default:
                        throw error(at: index - 1, "invalid escape \\\(found.trimmingCharacters(in: ["'"]))")
                    }
                case 0..<0x20:
                    throw error(at: index, "a control character (\(found)) in a string; write it escaped")
                case 0x80...:
                    plain = false
                    index += 1
                default:
                    index += 1
                }
            }
            throw error(at: start, "the string starting here is not closed")
        }

        /// The value of the four hex digits at `offset`, nil when there are not four.
        func hex4(at offset: Int) -> Int? {
            guard offset + 4 <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[offset..<(offset + 4)] {
                guard let digit = Character(UnicodeScalar(byte)).hexDigitValue else { return nil }
                value = value * 16 + digit
            }
            return value
        }

        /// A scan path as `PathStep`s, the keys' texts made.
        func steps(_ path: [ScanStep]) -> [PathStep] {
            path.map { step in
                switch step {
                case .key(let literal): .key(key(bytes[literal]))
                case .index(let index): .index(index)
                }
            }
        }

        /// The text of a scanned string literal (quotes included), its escapes decoded.
        func key(_ literal: Slice<UnsafeBufferPointer<UInt8>>) -> String {
            let inner = literal.dropFirst().dropLast()
            guard inner.contains(UInt8(ascii: "\\")) else { return String(decoding: inner, as: UTF8.self) }
            let decoded = try? JSONSerialization.jsonObject(with: Data(literal), options: [.fragmentsAllowed])
            return decoded as? String ?? String(decoding: inner, as: UTF8.self)
        }

        mutating func number() throws(SyntaxError) {
            let start = index
            func digits() -> Int {
                let from = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                    index += 1
                }
                return index - from
            }
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else {
                throw error(at: index, "expected a digit, found \(found)")
            }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
                if index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                    throw error(at: start, "a number must not start with 0 (leading zeros are not JSON)")
                }
            } else {
                _ = digits()
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw error(at: index, "expected a digit after '.', found \(found)") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard digits() > 0 else { throw error(at: index, "expected a digit in the exponent, found \(found)") }
            }
            // Valid grammar, but beyond what a double holds (1e999): say so here, with the place,
            // rather than leave Foundation's parser to fail with no position.
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            if let value = Double(text), !value.isFinite {
                throw error(
                    at: start, "the number \(text.prefix(40)) is out of range (a double holds at most about 1.8e308)")
            }
            // And below what it holds (1e-400 reads as 0): a nonzero digit before the exponent.
            if Double(text) == 0,
                text.prefix(while: { $0 != "e" && $0 != "E" }).contains(where: { ("1"..."9").contains($0) })
            {
                throw error(
                    at: start,
                    "the number \(text.prefix(40)) is out of range (a double holds no nonzero value below about 4.9e-324)"
                )
            }
        }

        /// `true`, `false` or `null` at `index`; `""` for a word that is none of them (an error).
        mutating func literal(_ word: StaticString) throws(SyntaxError) {
            let count = word.utf8CodeUnitCount
            var matches = count > 0 && bytes.count - index >= count
            if matches {
                let expected = UnsafeBufferPointer(start: word.utf8Start, count: count)
                matches = bytes[index..<(index + count)].elementsEqual(expected)
            }
            guard matches else {
                var end = index
                while end < bytes.count, (0x61...0x7A).contains(bytes[end]) || (0x41...0x5A).contains(bytes[end]) {
                    end += 1
                }
                let text = String(decoding: bytes[index..<max(end, index + 1)].prefix(20), as: UTF8.self)
                throw error(
                    at: index,
                    "expected a value, found '\(text)' (strings need double quotes; true, false and null are lowercase)"
                )
            }
            index += count
        }
    }

    // MARK: - fields and values

    /// One step of a path into a JSON tree.
    private enum PathStep {
        case key(String)
        case index(Int)
    }

    /// A step of the scanner's path: a key as the byte range of its literal, or an index.
    private enum ScanStep {
        case key(Range<Int>)
        case index(Int)
    }

    private static func steps(_ path: [any CodingKey]) -> [PathStep] {
        path.map { key in key.intValue.map { .index($0) } ?? .key(key.stringValue) }
    }

    private static func render(path: [any CodingKey]) -> String { render(steps: steps(path)) }

    /// `outbox.entries[2].wake`.
    private static func render(steps: [PathStep]) -> String {
        var text = ""
        for step in steps {
            switch step {
            case .key(let key): text += text.isEmpty ? key : "." + key
            case .index(let index): text += "[\(index)]"
            }
        }
        return text.isEmpty ? "(the top level)" : text
    }

    private static func lookUp(_ path: [any CodingKey], in tree: Any) -> Any? {
        var node: Any? = tree
        for step in steps(path) {
            switch step {
            case .key(let key): node = (node as? [String: Any])?[key]
            case .index(let index):
                guard let array = node as? [Any], array.indices.contains(index) else { return nil }
                node = array[index]
            }
        }
        return node
    }

    /// The value as JSON text, at most 60 characters.
    private static func render(value: Any) -> String {
        let text =
            (try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys]))
            .map { String(decoding: $0, as: UTF8.self) } ?? String(describing: value)
        return text.count <= 60 ? text : String(text.prefix(57)) + "..."
    }

    /// Every number in the tree with its path, in document order of sorted keys.
    private static func numbers(in node: Any, at path: [PathStep]) -> [(path: [PathStep], value: Double, text: String)]
    {
        switch node {
        case let object as [String: Any]:
            return object.keys.sorted().flatMap { numbers(in: object[$0] as Any, at: path + [.key($0)]) }
        case let array as [Any]:
            return array.enumerated().flatMap { numbers(in: $0.element, at: path + [.index($0.offset)]) }
        case is String, is Bool, is NSNull:
            return []
        case let number as NSNumber:
            return [(path, number.doubleValue, render(value: number))]
        default:
            return []
        }
    }

    private static func replace(_ path: [PathStep], in node: Any, with value: Any) -> Any {
        guard let first = path.first else { return value }
        let rest = Array(path.dropFirst())
        switch (first, node) {
        case (.key(let key), var object as [String: Any]):
            object[key] = replace(rest, in: object[key] as Any, with: value)
            return object
        case (.index(let index), var array as [Any]) where array.indices.contains(index):
            array[index] = replace(rest, in: array[index], with: value)
            return array
        default:
            return node
        }
    }

    private static func words(for type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is UInt64.Type, is UInt.Type, is UInt32.Type, is UInt16.Type, is UInt8.Type: "a whole number ≥ 0"
        case is Int.Type, is Int64.Type, is Int32.Type, is Int16.Type, is Int8.Type: "a whole number"
        case is Double.Type, is Float.Type: "a number"
        case is Date.Type: "a date"
        default:
            String(describing: type).hasPrefix("Array")
                ? "a list"
                : String(describing: type).hasPrefix("Dictionary") ? "an object" : "a value of type \(type)"
        }
    }

    private static func describeUnlocated(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error { return context.debugDescription }
        return String(describing: error)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// A JSON number or boolean as `JSONSerialization` gives it (an `NSNumber` either way), told
/// apart once: the one reading of Foundation's `objCType` marks ("c" a boolean, "d" or "f" a
/// number written with a fraction or an exponent, "Q" an integer above `Int64.max`), so that no
/// strict reader takes `true` for 1 or `7.0` for 7 (RFC 8259 section 6 leaves the kinds to the
/// reader).
package enum JSONNumber: Equatable, Sendable {
    /// `true` or `false`.
    case bool(Bool)
    /// An integer written without fraction or exponent, in `Int64`'s range.
    case integer(Int64)
    /// An integer written without fraction or exponent, above `Int64.max`.
    case unsignedInteger(UInt64)
    /// A number written with a fraction or an exponent (`7.0`, `1e3`), or beyond `UInt64`.
    case fraction(Double)

    /// - Parameter number: a value `JSONSerialization` decoded.
    package init(_ number: NSNumber) {
        switch UInt8(bitPattern: number.objCType.pointee) {
        case UInt8(ascii: "c"): self = .bool(number.boolValue)
        case UInt8(ascii: "d"), UInt8(ascii: "f"): self = .fraction(number.doubleValue)
        case UInt8(ascii: "Q"): self = .unsignedInteger(number.uint64Value)
        default: self = .integer(number.int64Value)
        }
    }

    /// Whether it is `true` or `false`.
    package var isBool: Bool {
        if case .bool = self { return true }
        return false
    }

    /// Whether it is an integer written without fraction or exponent.
    package var isInteger: Bool {
        switch self {
        case .integer, .unsignedInteger: true
        case .bool, .fraction: false
        }
    }
}

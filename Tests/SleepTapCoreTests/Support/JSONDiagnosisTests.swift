// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

@Suite("JSON file diagnosis")
struct JSONDiagnosisTests {
    @Test(
        "A syntax error is placed by line and column (characters, not bytes) with what was found",
        arguments: [
            ("{\"a\": 1,\n  \"b\": tru}", 2, 8, "expected a value, found 'tru'"),
            ("{\"a\": 1 \"b\": 2}", 1, 9, "expected ',' or '}' after a member, found '\"'"),
            ("", 1, 1, "expected a value, found the end of the text"),
            ("{\"a\": \"é\" x}", 1, 11, "expected ',' or '}' after a member, found 'x'"),
            ("{\n\"wake\": {\"monday\": \"07:00\",}\n}", 2, 28, "expected a member name in double quotes, found '}'"),
            ("[1, 2", 1, 6, "expected ',' or ']' after an element, found the end of the text"),
            ("{\"a\": 01}", 1, 7, "must not start with 0"),
            ("{\"a\": \"x\ny\"}", 1, 9, "a control character (U+000A) in a string"),
            ("{\"a\": \"x}", 1, 7, "not closed"),
            ("{} {}", 1, 4, "text after the end of the JSON value"),
            ("{\"a\": True}", 1, 7, "true, false and null are lowercase"),
            ("{\"a\": 1,\n \"sleepTargetMinutes\": 1e999}", 2, 24, "the number 1e999 is out of range"),
            ("[-2E+400]", 1, 2, "the number -2E+400 is out of range"),
            ("{\"stalenessHours\": 1e-400}", 1, 20, "the number 1e-400 is out of range (a double holds no nonzero"),
            ("[0.000e-999, -1.5e-999]", 1, 14, "the number -1.5e-999 is out of range"),
            ("{\"group\": \"\\ud800\"}", 1, 12, "\\uD800 is a lone UTF-16 surrogate (a high one"),
            ("{\"a\": \"x\\uD800\\u0041\"}", 1, 9, "\\uD800 is a lone UTF-16 surrogate"),
            ("[\"\\udc00\"]", 1, 3, "\\uDC00 is a lone UTF-16 surrogate (a low one"),
        ])
    func syntax(text: String, line: Int, column: Int, reason: String) throws {
        let error = try #require(JSONDiagnosis.syntaxError(in: Data(text.utf8)))
        #expect(error.line == line && error.column == column, "\(error)")
        #expect(error.reason.contains(reason), "\(error)")
        #expect(error.description.hasPrefix("line \(line), column \(column): "))
    }

    @Test(
        "Valid JSON has no syntax error",
        arguments: [
            "{}", "[]", " {\"a\": [1, -0.5e+3, true, false, null, \"\\u00e9\\n\"]}\n", "0", "\"x\"",
            "[0e-999, 0.0, -0.0e5, 4.9e-324]", "[\"\\ud83d\\ude00 \\uD83D\\uDE00\"]",
        ])
    func valid(text: String) {
        #expect(JSONDiagnosis.syntaxError(in: Data(text.utf8)) == nil)
        #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) != nil)
    }

    @Test(
        "The scan names the first key of a top-level array's element that is not a known key, as JSONDecoder reads keys",
        arguments: [
            (#"[{"a":1,"b":2},{"b":1,"c":{"z":1},"a":2}]"#, "1 c"),
            (#"[{"a":1},{"\u0061":1,"b\u0063":2}]"#, "1 bc"),
            (#"[{"b":1,"a":{"x":1}},[{"y":1}],{"a":[{"z":1}]}]"#, "none"),
            (#"{"x":{"y":1}}"#, "none"),
            (#"[{"a":1},{"é":1}]"#, "1 é"),
            (#"[]"#, "none"),
        ])
    func unknownElementKeys(text: String, expected: String) {
        let (problem, unknown) = JSONDiagnosis.scan(Data(text.utf8), elementKeys: ["a", "b"])
        #expect(problem == nil)
        #expect(unknown.map { "\($0.index) \($0.key)" } ?? "none" == expected)
    }

    @Test("With element keys, a key given twice is still found, escaped or not, known or not")
    func duplicatesWithElementKeys() {
        for text in [#"[{"a":1,"b":2,"a":3}]"#, #"[{"a":1,"\u0061":3}]"#, #"[{"x":1,"b":2,"x":3}]"#] {
            let (problem, _) = JSONDiagnosis.scan(Data(text.utf8), elementKeys: ["a", "b"])
            guard case .duplicateKey(let path, _, _, _) = problem else {
                Issue.record("\(text): \(String(describing: problem))")
                continue
            }
            #expect(path == "[0].a" || path == "[0].x", "\(text): \(path)")
            #expect(problem == JSONDiagnosis.problem(in: Data(text.utf8)), "\(text)")
        }
    }

    /// A phone state as the phone writes it, with one field's text replaced.
    static func phoneState(replacing old: String, with new: String) throws -> Data {
        let batch = WakeBatch(
            seq: 4, generatedAt: try #require(ISO8601.date("2025-03-06T17:00:00Z")), timeZone: "UTC",
            entries: [
                WakeEntry(
                    wake: try #require(ISO8601.date("2025-03-07T07:00:00Z")), localDate: "2025-03-07",
                    localTime: "07:00", timeZone: "UTC")
            ])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let text = String(
            decoding: try encoder.encode(PhoneSyncState(lastSeq: 4, outbox: batch, acked: true)), as: UTF8.self)
        #expect(text.contains(old), "the fixture must contain \(old)")
        return Data(text.replacingOccurrences(of: old, with: new).utf8)
    }

    @Test(
        "Valid JSON with a wrong type or value names the field and the value, never 'not valid JSON'",
        arguments: [
            ("\"lastSeq\" : 4", "\"lastSeq\" : -1", "field lastSeq = -1: must not be negative"),
            ("\"lastSeq\" : 4", "\"lastSeq\" : 1.5", "field lastSeq = 1.5: must be a whole number"),
            ("\"seq\" : 4", "\"seq\" : -2", "field outbox.seq = -2: must not be negative"),
            ("\"lastSeq\" : 4", "\"lastSeq\" : \"x\"", "field lastSeq = \"x\": expected a whole number ≥ 0"),
            ("\"acked\" : true,", "", "missing field acked"),
            ("\"acked\" : true", "\"acked\" : 1", "field acked = 1: expected true or false"),
        ])
    func typeAndRange(old: String, new: String, message: String) throws {
        let data = try Self.phoneState(replacing: old, with: new)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let error = try #require(throws: (any Error).self) { try decoder.decode(PhoneSyncState.self, from: data) }
        let text = JSONDiagnosis.describe(error, decoding: PhoneSyncState.self, from: data, with: decoder)
        #expect(text == message)
    }

    @Test("A raw value no case has is said in a user's words, not Foundation's \"Cannot initialize\"")
    func unknownRawValue() throws {
        struct Holder: Decodable { var platform: Platform }
        let data = Data(#"{"platform": "tv"}"#.utf8)
        let decoder = JSONDecoder()
        let error = try #require(throws: (any Error).self) { try decoder.decode(Holder.self, from: data) }
        let text = JSONDiagnosis.describe(error, decoding: Holder.self, from: data, with: decoder)
        #expect(text == "field platform = \"tv\": not one of the values of Platform", "\(text)")
        #expect(JSONDiagnosis.plainWords("must not be negative") == "must not be negative")
    }

    @Test("A broken schedule file reports the line and column of the syntax error")
    func scheduleSyntax() throws {
        let text = "{\"schemaVersion\": 1,\n \"wake\": {\"monday\": 07:00}}"
        let error = try #require(throws: ScheduleError.self) { try ScheduleFile.decode(Data(text.utf8)) }
        #expect(
            error.reason
                == "not valid JSON: line 2, column 21: a number must not start with 0 (leading zeros are not JSON)")
    }
}

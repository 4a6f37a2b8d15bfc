// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import SleepTapCore

/// Every JSON input is strict JSON (RFC 8259) with no key twice in one object: the schedule
/// file, wire frames and state files. Foundation alone keeps the last of two equal keys and
/// takes a trailing comma.
@Suite("Strict JSON: duplicate keys, trailing commas, the top level")
struct StrictJSONTests {
    static let week =
        "\"monday\":\"07:00\",\"tuesday\":\"07:00\",\"wednesday\":\"07:00\",\"thursday\":\"07:00\","
        + "\"friday\":\"07:00\",\"saturday\":\"07:00\""

    static func scheduleReason(_ text: String) throws -> String {
        do {
            _ = try ScheduleFile.decode(Data(text.utf8))
        } catch {
            return error.description
        }
        Issue.record("accepted: \(text)")
        return ""
    }

    @Test(
        "A schedule file naming a key twice is refused, naming the key and its place",
        arguments: [
            (
                "{\"schemaVersion\":1,\"wake\":{\(week),\"sunday\":\"08:00\",\"sunday\":\"09:00\"}}",
                "key wake.sunday appears twice (line 1, column 155)"
            ),
            (
                "{\"schemaVersion\":1,\"schemaVersion\":1,\"wake\":{\(week),\"sunday\":\"08:00\"}}",
                "key schemaVersion appears twice (line 1, column 20)"
            ),
            (
                "{\"schemaVersion\":1,\"wake\":{\(week),\"sunday\":\"08:00\"},\"wake\":{\(week),\"sunday\":\"09:00\"}}",
                "key wake appears twice"
            ),
            (
                "{\"schemaVersion\":1,\"wake\":{\(week),\"sunday\":\"08:00\"},"
                    + "\"overrides\":{\"2026-12-25\":\"off\",\"2026-12-25\":\"09:00\"}}",
                "key overrides.2026-12-25 appears twice"
            ),
            // Equal after unescaping: \u0073 is "s".
            (
                "{\"schemaVersion\":1,\"wake\":{\(week),\"sunday\":\"08:00\",\"\\u0073unday\":\"09:00\"}}",
                "key wake.sunday appears twice"
            ),
        ])
    func scheduleDuplicateKey(text: String, expected: String) throws {
        let reason = try Self.scheduleReason(text)
        #expect(reason.hasPrefix(expected), "\(reason)")
        #expect(reason.hasSuffix("a key must appear once in an object"), "\(reason)")
    }

    @Test("A schedule file with a trailing comma is not valid JSON, with line and column")
    func scheduleTrailingComma() throws {
        let text = "{\"schemaVersion\":1,\"wake\":{\(Self.week),\"sunday\":\"08:00\",}}"
        #expect(
            try Self.scheduleReason(text)
                == "not valid JSON: line 1, column 155: expected a member name in double quotes, found '}'")
        let array = "{\"schemaVersion\":1,\"wake\":{\(Self.week),\"sunday\":\"08:00\"},\"x\":[1,]}"
        #expect(try Self.scheduleReason(array).hasPrefix("not valid JSON: line 1, column "))
    }

    @Test(
        "A schedule file of valid JSON that is not an object says what the top level is",
        arguments: [
            ("\"hello\"", "a string"), ("[1]", "an array"), ("7", "a number"), ("true", "true or false"),
            ("null", "null"),
        ])
    func scheduleTopLevel(text: String, found: String) throws {
        #expect(try Self.scheduleReason(text) == "the top level must be a JSON object, found \(found)")
    }

    @Test("A schedule file over 1 MiB is refused before it is parsed")
    func scheduleTooLarge() throws {
        let text = "{\"schemaVersion\":1" + String(repeating: " ", count: ScheduleFile.maxBytes) + "}"
        #expect(try Self.scheduleReason(text).contains("a schedule file is at most 1048576 bytes"))
    }

    @Test(
        "A wire frame naming a key twice is refused with the key, at any depth",
        arguments: [
            ("{\"v\":1,\"v\":1,\"type\":\"HELLO\",\"lastSeq\":0}", "key \"v\" appears twice in one object"),
            ("{\"v\":1,\"type\":\"HELLO\",\"lastSeq\":0,\"type\":\"ACK\"}", "key \"type\" appears twice in one object"),
            (
                "{\"v\":1,\"type\":\"BATCH\",\"epoch\":\"00000000000000a1\",\"seq\":1,"
                    + "\"generatedAt\":\"2025-03-06T17:00:00Z\",\"timeZone\":\"UTC\",\"entries\":[{\"wake\":"
                    + "\"2025-03-07T11:30:00Z\",\"wake\":\"2025-03-08T11:30:00Z\",\"localDate\":\"2025-03-07\","
                    + "\"localTime\":\"11:30\",\"utcOffset\":0}]}",
                "key \"entries[0].wake\" appears twice in one object"
            ),
        ])
    func wireDuplicateKey(text: String, reason: String) {
        #expect(throws: ProtocolError(reason)) { try WireCodec.decode(Array(text.utf8)) }
    }

    @Test(
        "A wire frame with a trailing comma is not valid JSON; a bare string is not an object",
        arguments: [
            ("{\"v\":1,\"type\":\"PING\",}", "not valid JSON"),
            ("{\"v\":1,\"type\":\"HELLO\",\"lastSeq\":0,}", "not valid JSON"),
            ("\"hello\"", "not a JSON object"),
        ])
    func wireStrict(text: String, reason: String) {
        #expect(throws: ProtocolError(reason)) { try WireCodec.decode(Array(text.utf8)) }
    }

    @Test("The same key in two different objects is fine; a valid frame still decodes")
    func sameKeyInTwoObjects() throws {
        #expect(JSONDiagnosis.problem(in: Data("{\"a\":{\"a\":1},\"b\":[{\"a\":1},{\"a\":2}]}".utf8)) == nil)
        #expect(try WireCodec.decode(Array("{\"v\":1,\"type\":\"PING\"}".utf8)) == .ping)
    }

    @Test("A watch state with a seq but no batch is inconsistent")
    func watchStateSeqWithoutBatch() {
        #expect(
            WatchSyncState(lastAppliedSeq: 5, batch: nil).validationProblem
                == "lastAppliedSeq 5 with no batch (0 when none is stored)")
        #expect(WatchSyncState(lastAppliedSeq: 0, batch: nil).validationProblem == nil)
    }

    @Test("The zone named UTC keeps a UTC name (Foundation on Linux calls it GMT)")
    func utcName() throws {
        #expect(try #require(WakeCalendar.zone(named: "UTC")).identifier == "Etc/UTC")
        #expect(try #require(WakeCalendar.zone(named: "GMT")).identifier == "GMT")
        var node = WatchNodeTests.node()
        let changed = try WatchNodeTests.event(
            .timezoneChanged, in: node.command(line: "time-zone UTC", at: WatchNodeTests.at(1)))
        #expect(changed["to"] == .string("Etc/UTC"))
    }
}

/// Foundation gives JSON numbers and booleans alike as `NSNumber`; `JSONNumber` tells them apart.
@Suite("Strict JSON: numbers and booleans told apart")
struct JSONNumberTests {
    @Test("true, an integer, a fraction, an exponent, a negative and an integer above Int64.max")
    func kinds() throws {
        let text = "{\"b\":true,\"i\":7,\"f\":7.0,\"e\":1e3,\"n\":-3,\"u\":18446744073709551615,\"z\":false}"
        let object = try JSONDiagnosis.object(from: Data(text.utf8))
        func kind(_ key: String) throws -> JSONNumber { JSONNumber(try #require(object[key] as? NSNumber)) }
        #expect(try kind("b") == .bool(true) && kind("z") == .bool(false))
        #expect(try kind("i") == .integer(7) && kind("n") == .integer(-3))
        #expect(try kind("f") == .fraction(7) && kind("e") == .fraction(1_000))
        #expect(try kind("u") == .unsignedInteger(UInt64.max))
        #expect(try kind("i").isInteger && kind("u").isInteger && !kind("f").isInteger && !kind("b").isInteger)
        #expect(try kind("b").isBool && !kind("i").isBool)
    }
}

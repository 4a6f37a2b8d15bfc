// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

/// An unknown zone gets one wording wherever it comes in, on both sides, naming the value.
@Suite("Unknown zones: one wording")
struct ZoneWordingTests {
    @Test("The wording names the value and says why: not in the tz database, or not an IANA name")
    func wording() {
        #expect(
            WakeCalendar.unknownZoneReason("Mars/Base")
                == "unknown time zone \"Mars/Base\": not in the \(ZoneDatabase.current)")
        #expect(
            WakeCalendar.unknownZoneReason("EST")
                == "unknown time zone \"EST\": not an IANA name (Area/Location, UTC or GMT, e.g. Europe/Berlin)")
    }

    @Test(
        "A zone name is UTC, GMT or Area/Location[/More]: each part a letter, then letters, digits, _ + -; at most 64 bytes",
        arguments: [
            ("UTC", true), ("GMT", true), ("Europe/Berlin", true), ("America/Argentina/Buenos_Aires", true),
            ("Etc/GMT+5", true), ("Etc/GMT-14", true), ("America/Port-au-Prince", true), ("EST", false),
            ("GMT+5", false), ("+09:00", false), ("", false), ("/", false), ("Europe/", false), ("/Berlin", false),
            ("Europe//Berlin", false), ("1Europe/Berlin", false), ("Europe/_Berlin", false), ("Europe/Ber lin", false),
            ("Europe/Berlín", false), ("A/" + String(repeating: "b", count: 62), true),
            ("A/" + String(repeating: "b", count: 63), false),
        ])
    func zoneNames(name: String, valid: Bool) {
        #expect(WakeCalendar.isZoneName(name) == valid, "\(name)")
    }

    @Test(
        "Phone stdin, watch stdin, a BATCH on the wire, a schedule file and os.json give the same words for Mars/Base and EST",
        arguments: ["Mars/Base", "EST"])
    func sameOnBothSides(zone: String) throws {
        let words = WakeCalendar.unknownZoneReason(zone)
        #expect(throws: PhoneCommand.Rejection(input: "time-zone \(zone)", reason: words)) {
            try PhoneCommand.parse("time-zone \(zone)", platform: .ios)
        }
        #expect(WatchCommand(parsing: "time-zone \(zone)") == .invalid(input: "time-zone \(zone)", reason: words))
        do {
            _ = try ScheduleFile.decode(
                Data("{\"schemaVersion\":1,\"timeZone\":\"\(zone)\",\"wake\":{\"default\":\"07:00\"}}".utf8))
            Issue.record("schedule with \(zone) accepted")
        } catch {
            #expect(error.reason == words, "\(error)")
        }
        let os = SimulatedOS(IOSBackgroundScheduler(configuration: .init(permittedIdentifiers: ["x"]), seed: 1))
        var object = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(os)) as? [String: Any])
        object["timeZone"] = zone
        let stored = try JSONDecoder().decode(SimulatedOS.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(stored.validationProblem == "timeZone: \(words)")
        if !WakeCalendar.isZoneName(zone) {
            let batch =
                "{\"v\":1,\"type\":\"BATCH\",\"epoch\":\"00000000000000a1\",\"seq\":1,"
                + "\"generatedAt\":\"2025-03-06T17:00:00Z\",\"timeZone\":\"\(zone)\",\"entries\":[]}"
            #expect(throws: ProtocolError("timeZone: \(words)")) { try WireCodec.decode(Array(batch.utf8)) }
        }
    }
}

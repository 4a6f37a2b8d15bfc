// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import Testing

@Suite("The event catalogue")
struct EventCatalogTests {
    /// docs/protocol.md, found from this file.
    static let protocolDocument = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/protocol.md")

    /// The event names of the table in the "Events" section: every backticked name in its
    /// `event` column (`a`, `b` and `a` / `b` rows name several).
    static func documentedNames() throws -> [String] {
        let text = try String(contentsOf: protocolDocument, encoding: .utf8)
        let start = try #require(text.range(of: "\n## Events"), "no Events section in docs/protocol.md")
        let section = text[start.upperBound...]
        let body = section.range(of: "\n## ").map { section[..<$0.lowerBound] } ?? section
        var names: [String] = []
        for line in body.split(separator: "\n") where line.hasPrefix("|") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false)
            guard cells.count >= 4 else { continue }
            let column = cells[2]
            let ticked = column.split(separator: "`", omittingEmptySubsequences: false)
            // Odd pieces are inside backticks.
            names += ticked.enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
        }
        return names
    }

    @Test("Every event in docs/protocol.md's table is in the catalogue, and every catalogue name is in the table")
    func documentMatchesCatalogue() throws {
        let documented = try Self.documentedNames()
        try #require(!documented.isEmpty, "no event table found in docs/protocol.md")
        let catalogue = Set(EventName.allCases.map(\.rawValue))
        let unknown = Set(documented).subtracting(catalogue).sorted()
        let undocumented = catalogue.subtracting(documented).sorted()
        #expect(unknown.isEmpty, "in docs/protocol.md's table but not in EventName: \(unknown)")
        #expect(undocumented.isEmpty, "in EventName but not in docs/protocol.md's table: \(undocumented)")
    }

    @Test("An event line: event first, time to the millisecond second, source third; os.* events come from the OS")
    func lineLayout() throws {
        let time = try #require(ISO8601.date("2026-07-20T00:30:00.123Z"))
        let tap = Event(.bedWakeTime, [("remaining", .int(3))]).jsonLine(time: time, process: .watch)
        #expect(tap == #"{"event":"bed.wake_time","time":"2026-07-20T00:30:00.123Z","source":"watch","remaining":3}"#)
        let os = Event(.osLaunch).jsonLine(time: time, process: .phone)
        #expect(os == #"{"event":"os.launch","time":"2026-07-20T00:30:00.123Z","source":"os"}"#)
        let phone = Event(.batchSent).jsonLine(time: time, process: .phone)
        #expect(phone.hasPrefix(#"{"event":"batch.sent","time":"2026-07-20T00:30:00.123Z","source":"phone""#))
    }

    @Test("A field's text: controls, DEL, C1 and format characters escaped; a JSON reader gets the text back")
    func escapedText() throws {
        let text = "a\u{0}b\u{1b}[2J\u{7f}\u{85}\u{202e}gpj.exe\u{e0001}é日😀\"\\"
        let line = Event(.inputRejected, [("input", .string(text))]).jsonLine(
            time: Date(timeIntervalSince1970: 0), process: .phone)
        #expect(
            line.hasSuffix(
                #""input":"a\u0000b\u001b[2J\u007f\u0085\u202egpj.exe\udb40\udc01é日😀\"\\"}"#), "\(line)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["input"] as? String == text)
    }

    @Test("input.rejected echoes the line as typed: a NUL is U+0000 to a JSON reader, not the text \\u{0}")
    func rejectedLineAsTyped() throws {
        #expect(throws: PhoneCommand.Rejection.self) { try PhoneCommand.parse("ope\u{0}n", platform: .ios) }
        do {
            _ = try PhoneCommand.parse("ope\u{0}n", platform: .ios)
        } catch {
            #expect(error.input == "ope\u{0}n")
        }
        do {
            _ = try PhoneCommand.parse(String(repeating: "x", count: 500), platform: .ios)
        } catch {
            #expect(error.input == String(repeating: "x", count: 117) + "...")
        }
        guard case .invalid(let input, _) = WatchCommand(parsing: "wrist \u{0}") else {
            Issue.record("wrist with a NUL was not invalid")
            return
        }
        #expect(input == "wrist \u{0}")
    }

    @Test(
        "Milliseconds are written as three digits, floored, and read back",
        arguments: [
            ("2026-07-20T00:30:00Z", "2026-07-20T00:30:00.000Z"),
            ("2026-07-20T00:30:00.1Z", "2026-07-20T00:30:00.100Z"),
            ("2026-07-20T00:30:00.0999Z", "2026-07-20T00:30:00.099Z"),
            ("2026-07-20T00:30:59.9999Z", "2026-07-20T00:30:59.999Z"),
            ("1969-12-31T23:59:59.5Z", "1969-12-31T23:59:59.500Z"),
        ])
    func milliseconds(input: String, written: String) throws {
        let date = try #require(ISO8601.date(input))
        #expect(ISO8601.millisecondString(date) == written)
        let back = try #require(ISO8601.date(written))
        #expect(ISO8601.millisecondString(back) == written)
    }
}

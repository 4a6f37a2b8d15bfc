// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import SleepTapCore

/// Schedule files saved the wrong way get an error that says what is wrong with the file.
@Suite("Schedule files: encodings and numbers")
struct ScheduleFileInputTests {
    /// The reason `ScheduleFile.decode` gives for `data`, or nil when it decodes.
    static func reason(_ data: Data) -> String? {
        do {
            _ = try ScheduleFile.decode(data)
            return nil
        } catch {
            return error.description
        }
    }

    @Test("UTF-16, with or without its byte-order mark, is said to be not UTF-8 (not 'found U+FFFD')")
    func utf16() throws {
        let text = ScheduleFileTests.valid
        let withMark = try #require(text.data(using: .utf16LittleEndian))
        for data in [Data([0xFF, 0xFE]) + withMark, withMark, try #require(text.data(using: .utf16BigEndian))] {
            let reason = try #require(Self.reason(data))
            #expect(reason.contains("not UTF-8"), "\(reason)")
            #expect(!reason.contains("FFFD"), "\(reason)")
        }
        // NUL and control bytes are no text in any encoding: not called UTF-16.
        let binary = try #require(Self.reason(Data([0x00, 0x01, 0x02])))
        #expect(!binary.contains("UTF-16"), "\(binary)")
    }

    @Test("480.0 minutes: a whole number written with a fraction is named as such")
    func fractionWritten() throws {
        let text = ScheduleFileTests.valid.replacingOccurrences(
            of: "\"timeZone\"", with: "\"sleepTargetMinutes\": 480.0, \"timeZone\"")
        let reason = try #require(Self.reason(Data(text.utf8)))
        #expect(reason.contains("sleepTargetMinutes") && reason.contains("without a fraction"), "\(reason)")
        let whole = text.replacingOccurrences(of: "480.0", with: "480")
        #expect(Self.reason(Data(whole.utf8)) == nil)
    }
}

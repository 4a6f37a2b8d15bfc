// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapOS
import Testing

/// The package's closed sets are enums; their raw values are the spellings of the flags, the
/// events and the state files, so files written before stay readable.
@Suite("Closed sets keep their spellings")
struct SpellingTests {
    @Test("Platform, registration mode and run kind have the flag, event and state-file spellings")
    func rawValues() {
        #expect(Platform.allCases.map(\.rawValue) == ["ios", "android"])
        #expect(RegistrationMode.allCases.map(\.rawValue) == ["early", "late-silent", "late-crash"])
        #expect(
            RunKind.allCases.map(\.rawValue) == ["background", "foreground", "watch-request", "processing", "push"])
    }

    @Test("A run record's kind and a registration mode are JSON strings, both ways")
    func codableAsStrings() throws {
        let record = RefreshRun(
            at: Date(timeIntervalSince1970: 0), scheduledAt: nil, success: true, lowPower: false, bucket: nil,
            kind: .background, duration: 1)
        let json = try #require(String(data: JSONEncoder().encode(record), encoding: .utf8))
        #expect(json.contains(#""kind":"background""#))
        #expect(try JSONDecoder().decode(RefreshRun.self, from: Data(json.utf8)) == record)
        #expect(
            try JSONDecoder().decode([RegistrationMode].self, from: Data(#"["late-silent"]"#.utf8)) == [.lateSilent])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([RunKind].self, from: Data(#"["sideways"]"#.utf8))
        }
    }
}

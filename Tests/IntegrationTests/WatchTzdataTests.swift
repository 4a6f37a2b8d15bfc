// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import SleepTapTestFixtures
import Testing

/// `watch --tzdata`: the watch's own local-time planning (here a typed wake time) uses the
/// watch's database, which may be older than the phone's.
@Suite("watch --tzdata")
struct WatchTzdataTests {
    /// The wake-up a watch in Vancouver plans for 07:00 typed at 2026-12-01T12:00Z (before 07:00
    /// local on either rules: the same day).
    static func typedWake(_ source: String, version: String) throws -> String? {
        let scenario = try Scenario()
        defer { scenario.close() }
        let tzdata = try ZoneFixture.build(source, version: version)
        let watch = try scenario.watch([
            "--tzdata", tzdata, "--time-zone", "America/Vancouver", "--clock-start", "2026-12-01T12:00:00Z",
        ])
        #expect(try watch.expect(.watchStarted).event.string("tzdata") == version)
        watch.send(line: "bed")
        try watch.expect(.fallbackManualEntry)
        watch.send(line: "07:00")
        return try watch.expect(.manualWakeTime).event.string("wakeTime")
    }

    @Test("A typed 07:00 in Vancouver is 14:00Z on a 2026b-style database and 15:00Z on a 2025b-style one")
    func typedWakeTime() throws {
        #expect(try Self.typedWake(ZoneFixture.vancouverNew, version: "2026b") == "2026-12-01T14:00:00Z")
        #expect(try Self.typedWake(ZoneFixture.vancouverOld, version: "2025b") == "2026-12-01T15:00:00Z")
    }
}

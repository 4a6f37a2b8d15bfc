// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing

/// The watch's local-time plans (the simulated user's nightly bed tap) follow the zone the watch
/// lives in: the newest batch's, the `--time-zone` flag's, or the one typed on its stdin.
@Suite("The watch's zone: the nightly tap follows it", .serialized)
struct WatchZoneTests {
    /// The machine zone the watch runs in: UTC, whatever the test machine's is.
    static let machineUTC = ["TZ": "UTC"]
    /// The names Foundation gives that zone (it reports `TZ=UTC` as GMT).
    static let utcNames: Set<String?> = ["UTC", "GMT"]
    /// 2026-06-20T13:30:00Z: 22:30 in Tokyo (UTC+9) on 06-20.
    static let tokyoBedTime = "2026-06-20T13:30:00Z"

    /// Virtual 2026-06-20T10:00Z (19:00 in Tokyo, 06:00 in New York) half a wall second from now,
    /// one virtual hour per wall second; phone and watch share it.
    static func clock() -> [String] {
        let anchor = String(format: "%.3f", Date().addingTimeInterval(0.5).timeIntervalSince1970)
        return ["--clock-start", "2026-06-20T10:00:00Z", "--clock-speed", "3600", "--clock-anchor", anchor]
    }

    /// A watch with `--bed-at 22:30` in a UTC machine zone, plus `extra`.
    static func watch(_ scenario: Scenario, _ extra: [String]) throws -> ChildProcess {
        let watch = try scenario.spawn(
            "watch",
            ["--endpoint", scenario.endpoint, "--state-dir", "\(scenario.dir)/watch", "--bed-at", "22:30"] + extra,
            environment: machineUTC)
        let started = try watch.expect(.watchStarted).event
        if extra.contains("--time-zone") {
            #expect(started.string("timeZone") == "America/New_York")
        } else {
            #expect(utcNames.contains(started.string("timeZone")), "\(started)")
        }
        return watch
    }

    /// Fails with a reason when the machine was too slow: the event had to come before the 13:30Z tap.
    static func requireBeforeTokyoBedTime(_ event: ChildEvent, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let time = try #require(event.time, sourceLocation: sourceLocation)
        try #require(
            time < ISO8601.date(tokyoBedTime) ?? .distantPast,
            "\(event.name) came at \(time), after the tap it moves: the machine is too slow for this clock",
            sourceLocation: sourceLocation)
    }

    /// The first simulated tap: at 22:30 Tokyo on 06-20, showing 07:00 Tokyo on 06-21.
    static func expectTokyoTap(_ watch: ChildProcess, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let tap = try watch.expect(.bedWakeTime, sourceLocation: sourceLocation).event
        #expect(tap.time == ISO8601.date(tokyoBedTime), "\(tap)", sourceLocation: sourceLocation)
        #expect(tap.string("wakeTime") == "2026-06-20T22:00:00Z", "\(tap)", sourceLocation: sourceLocation)
        #expect(tap.string("localDate") == "2026-06-21", sourceLocation: sourceLocation)
        #expect(tap.string("localTime") == "07:00", sourceLocation: sourceLocation)
        #expect(tap.string("timeZone") == "Asia/Tokyo", sourceLocation: sourceLocation)
    }

    @Test(
        "Without --time-zone the tap is planned again in the batch's zone: Tokyo 22:30 is 13:30Z, showing 07:00 on the next local day"
    )
    func tapFollowsBatchZone() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let clock = Self.clock()
        let phone = try scenario.phone(["--time-zone", "Asia/Tokyo"] + clock)
        let watch = try Self.watch(scenario, clock)
        let applied = try watch.expect(.batchApplied) { $0.int("seq") == 1 }.event
        #expect(applied.string("timeZone") == "Asia/Tokyo")
        try Self.requireBeforeTokyoBedTime(applied)
        try Self.expectTokyoTap(watch)
        let changed = try watch.expect(.timezoneChanged).event
        #expect(Self.utcNames.contains(changed.string("from")), "\(changed)")
        #expect(changed.string("to") == "Asia/Tokyo")
        #expect(changed.string("timeZoneSource") == "batch")
        #expect(changed.string("nextBedTap") == Self.tokyoBedTime)
        #expect(phone.isRunning)
    }

    @Test("When the phone travels (New York to Tokyo) the next tap follows the new batch's zone")
    func tapFollowsPhoneTravel() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let clock = Self.clock()
        let phone = try scenario.phone(["--time-zone", "America/New_York"] + clock)
        let watch = try Self.watch(scenario, clock)
        let newYork = try watch.expect(.timezoneChanged) { $0.string("to") == "America/New_York" }
        #expect(newYork.event.string("nextBedTap") == "2026-06-21T02:30:00Z")  // 22:30 EDT
        try phone.expect(.ackReceived) { $0.int("seq") == 1 }
        phone.send(line: "time-zone Asia/Tokyo")
        let applied = try watch.expect(.batchApplied) { $0.int("seq") == 2 }.event
        #expect(applied.string("timeZone") == "Asia/Tokyo")
        try Self.requireBeforeTokyoBedTime(applied)
        let tokyo = try watch.expect(.timezoneChanged, from: newYork.index + 1).event
        #expect(tokyo.string("from") == "America/New_York")
        #expect(tokyo.string("to") == "Asia/Tokyo")
        #expect(tokyo.string("nextBedTap") == Self.tokyoBedTime)
        try Self.expectTokyoTap(watch)
    }

    @Test(
        "The watch's own time-zone command moves the tap and wins over --time-zone and the batch; an unknown zone is refused by name"
    )
    func watchTravels() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let clock = Self.clock()
        let phone = try scenario.phone(["--time-zone", "America/New_York"] + clock)
        let watch = try Self.watch(scenario, ["--time-zone", "America/New_York"] + clock)
        try watch.expect(.batchApplied) { $0.int("seq") == 1 }

        watch.send(line: "time-zone Mars/Olympus_Mons")
        let refused = try watch.expect(.inputRejected).event
        #expect(refused.string("input") == "time-zone Mars/Olympus_Mons")
        #expect(
            refused.string("reason")?.contains("unknown time zone \"Mars/Olympus_Mons\": not in the tz database")
                == true)

        watch.send(line: "time-zone Asia/Tokyo")
        let travelled = try watch.expect(.timezoneChanged).event
        try Self.requireBeforeTokyoBedTime(travelled)
        #expect(travelled.string("from") == "America/New_York")
        #expect(travelled.string("to") == "Asia/Tokyo")
        #expect(travelled.string("timeZoneSource") == "time-zone")
        #expect(travelled.string("nextBedTap") == Self.tokyoBedTime)
        // The refused zone changed nothing: the only zone change is the travel.
        #expect(watch.events.filter { $0.name == .timezoneChanged }.count == 1)

        // A new batch in New York does not move the travelling watch back. The zone change would
        // come in the same step as batch.applied, before the answer to the status probe.
        phone.send(line: "open")
        let second = try watch.expect(.batchApplied) { $0.int("seq") == 2 }
        #expect(second.event.string("timeZone") == "America/New_York")
        watch.send(line: "status")
        let probe = try watch.expect(.cacheStatus, from: second.index)
        #expect(!watch.events[second.index..<probe.index].contains { $0.name == .timezoneChanged })

        let tap = try watch.expect(.bedWakeTime).event
        #expect(tap.time == ISO8601.date(Self.tokyoBedTime))
        #expect(tap.string("wakeTime") == "2026-06-21T11:00:00Z")  // the batch's 07:00 EDT on 06-21
    }
}

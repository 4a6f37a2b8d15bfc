// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing

/// Issue 3 end to end: notices, schedule changes, travel.
@Suite("schedules, notices and travel over ipc", .serialized)
struct ScheduleTests {
    static func schedule(_ time: String, lead: Int = 30) -> String {
        let days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        let wake = days.map { "\"\($0)\": \"\(time)\"" }.joined(separator: ", ")
        return "{\"schemaVersion\": 1, \"bedtimeNoticeLeadMinutes\": \(lead), \"wake\": {\(wake)}}"
    }

    @Test(
        "A launch adds a bedtime notice per night; an edited schedule takes effect at the next open with a new seq; a bad edit is refused and the previous schedule kept"
    )
    func scheduleChanges() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let path = "\(scenario.dir)/schedule.json"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(Self.schedule("07:00").utf8)))
        let clock = ["--clock-start", "2026-06-01T12:00:00Z", "--clock-speed", "1"]
        let phone = try scenario.phone(
            ["--schedule", path, "--time-zone", "Europe/Berlin", "--device-seed", "5"] + clock)
        let first = try phone.expect(.batchGenerated) { $0.int("seq") == 1 }
        #expect(first.event.string("first") == "2026-06-02T05:00:00Z")
        let notices = phone.events.prefix(first.index).filter { $0.name == .notificationAdded }
        #expect(notices.count == 7)
        #expect(notices.first?.string("id") == "bedtime-2026-06-02")
        #expect(notices.first?.string("fireDate") == "2026-06-01T20:30:00Z")  // 22:30 CEST

        #expect(FileManager.default.createFile(atPath: path, contents: Data(Self.schedule("06:15", lead: 0).utf8)))
        phone.send(line: "open")
        let changed = try phone.expect(.scheduleChanged)
        let second = try phone.expect(.batchGenerated, from: changed.index) { $0.int("seq") == 2 }
        #expect(second.event.string("first") == "2026-06-02T04:15:00Z")
        let renewed = phone.events[changed.index..<second.index].filter { $0.name == .notificationAdded }
        #expect(renewed.first?.string("fireDate") == "2026-06-01T20:15:00Z")  // 06:15 - 8 h - 0

        #expect(
            FileManager.default.createFile(atPath: path, contents: Data("{\"schemaVersion\": 1, \"wake\": {}}".utf8)))
        phone.send(line: "open")
        let rejected = try phone.expect(.scheduleRejected).event
        #expect(rejected.string("reason")?.contains("wake.sunday = (missing)") == true, "\(rejected)")
        let third = try phone.expect(.batchGenerated) { $0.int("seq") == 3 }
        #expect(third.event.string("first") == "2026-06-02T04:15:00Z", "the previous schedule is kept")
        phone.send(line: "status")
        let status = try phone.expect(.phoneStatus)
        #expect(status.event.string("earliestBeginDate") == "2026-06-02T05:15:00Z")
        phone.send(line: "notifications")
        phone.send(line: "status")  // events are in order: the listing is complete before it
        let end = try phone.expect(.phoneStatus, from: status.index + 1)
        let bedtime = phone.events[status.index..<end.index].filter {
            $0.name == .notificationPending && $0.string("id")?.hasPrefix("bedtime-") == true
        }
        #expect(bedtime.count == 7)
    }

    @Test("Travel: the phone moves to Berlin, 07:00 stays 07:00, and the watch shows it in the batch's zone")
    func travel() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let clock = ["--clock-start", "2026-06-01T12:00:00Z", "--clock-speed", "1"]
        let phone = try scenario.phone(["--time-zone", "America/New_York"] + clock)
        let watch = try scenario.watch(clock)
        try watch.expect(.batchApplied) { $0.string("timeZone") == "America/New_York" }
        watch.send(line: "bed")
        let before = try watch.expect(.bedWakeTime).event
        #expect(before.string("localTime") == "07:00" && before.string("timeZone") == "America/New_York")
        #expect(before.string("wakeTime") == "2026-06-02T11:00:00Z")

        phone.send(line: "time-zone Europe/Berlin")
        try phone.expect(.timezoneChanged) { $0.string("to") == "Europe/Berlin" }
        let applied = try watch.expect(.batchApplied) { $0.int("seq") == 2 }
        #expect(applied.event.string("timeZone") == "Europe/Berlin")
        watch.send(line: "bed")
        let after = try watch.expect(.bedWakeTime, from: applied.index).event
        #expect(after.string("localTime") == "07:00" && after.string("timeZone") == "Europe/Berlin")
        #expect(after.string("wakeTime") == "2026-06-02T05:00:00Z")

        phone.send(line: "time-zone Atlantis/Capital")
        try phone.expect(.inputRejected) { $0.string("input") == "time-zone Atlantis/Capital" }
    }

    @Test(
        "Travel outlives the app: after time-zone Asia/Tokyo and quit, the next start is still in Tokyo (os.json) and sends Tokyo dates; a --time-zone given at a start wins and is kept"
    )
    func travelSurvivesRestart() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let schedule = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Examples/schedules/every-day-berlin.json").path
        let clock = ["--clock-start", "2026-06-01T12:00:00Z", "--clock-speed", "1"]
        func start(_ extra: [String] = []) throws -> ChildProcess {
            try scenario.phone(["--schedule", schedule] + clock + extra)
        }
        func quit(_ phone: ChildProcess) throws {
            phone.send(line: "quit")
            try #require(phone.waitForExit(timeout: Scenario.deadline), "the phone did not stop on quit")
            #expect(phone.exitStatus == 0, "\(phone.standardError)")
        }
        let first = try start()
        let berlin = try first.expect(.phoneStarted).event
        #expect(berlin.string("timeZone") == "Europe/Berlin" && berlin.string("timeZoneSource") == "schedule")
        try first.expect(.batchGenerated) { $0.string("timeZone") == "Europe/Berlin" }
        first.send(line: "time-zone Asia/Tokyo")
        let travelled = try first.expect(.batchGenerated) { $0.string("timeZone") == "Asia/Tokyo" }
        first.send(line: "status")
        let status = try first.expect(.phoneStatus, from: travelled.index).event
        #expect(status.string("timeZoneSource") == "time-zone")
        try quit(first)

        let second = try start()
        let started = try second.expect(.phoneStarted).event
        #expect(started.string("timeZone") == "Asia/Tokyo", "\(started)")
        #expect(started.string("timeZoneSource") == "os.json")
        let batch = try second.expect(.batchGenerated).event
        #expect(batch.string("timeZone") == "Asia/Tokyo", "the restarted phone sends Tokyo dates: \(batch)")
        #expect(batch.string("first") == "2026-06-01T22:00:00Z")  // 07:00 JST on 2 June
        try quit(second)

        // A flag given at a start overrides the stored zone, and becomes the device's.
        let third = try start(["--time-zone", "America/New_York"])
        let flagged = try third.expect(.phoneStarted).event
        #expect(flagged.string("timeZone") == "America/New_York" && flagged.string("timeZoneSource") == "--time-zone")
        try quit(third)
        let fourth = try start()
        let kept = try fourth.expect(.phoneStarted).event
        #expect(kept.string("timeZone") == "America/New_York" && kept.string("timeZoneSource") == "os.json")
    }

    @Test(
        "The OS trace of travel is written with it, at its instant, and stdout is in time order (36,000×): no planned launch shows up after low-power on"
    )
    func osTraceInTimeOrder() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone(["--clock-start", "2025-03-06T17:00:00Z", "--clock-speed", "36000"])
        try phone.expect(.weatherFetched)
        phone.send(line: "time-zone Asia/Tokyo")
        let travel = try phone.expect(.timezoneChanged)
        let generated = try phone.expect(.batchGenerated, from: travel.index)
        let submitted = phone.events[travel.index..<generated.index].filter { $0.name == .osRequestSubmitted }
        #expect(submitted.count == 1, "os.request.submitted comes with the travel refresh")
        #expect(submitted.first?.string("time") == travel.event.string("time"))
        phone.send(line: "low-power on")
        let lowPower = try phone.expect(.osLowPower, from: generated.index)
        phone.send(line: "quit")
        try phone.expect(.phoneStopping)
        #expect(!phone.events[lowPower.index...].contains { $0.name == .osRequestSubmitted })
        let times = phone.events.compactMap(\.time)
        #expect(times == times.sorted(), "\(phone.events.map { "\($0.rawName) \($0.string("time") ?? "")" })")
    }

    @Test("--horizon-days sets how many days of wake-ups a batch holds")
    func horizon() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone(["--horizon-days", "14", "--time-zone", "Europe/Berlin"])
        let batch = try phone.expect(.batchGenerated).event
        #expect(batch.int("count") == 14)
    }
}

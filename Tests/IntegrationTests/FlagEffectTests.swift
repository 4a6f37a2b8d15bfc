// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What each flag changes in the running process: every test here fails when its flag is parsed
/// and then ignored. FlagCoverageTests maps every flag of every `--help` to the test of its effect.
@Suite("flags take effect in the running executables")
struct FlagEffectTests {
    /// 10:00 in Berlin on Mon 2026-06-01, at virtual speed 1: the OS's own launches (the next
    /// morning at the earliest) stay out of the way, and the foreground run fetches weather.
    static let berlinMorning = ["--time-zone", "Europe/Berlin", "--clock-start", "2026-06-01T08:00:00Z"]

    /// A phone with its own endpoint and state dir, both named `name`, in the scenario's dir.
    static func phone(_ scenario: Scenario, _ extra: [String], name: String = "phone") throws -> ChildProcess {
        try scenario.spawn(
            "phone",
            ["--endpoint", "ipc://\(scenario.dir)/\(name).sock", "--state-dir", "\(scenario.dir)/\(name)"]
                + berlinMorning + extra)
    }

    static func number(_ event: ChildEvent, _ key: String) -> Double? {
        (event.fields[key] as? NSNumber)?.doubleValue
    }

    /// The events from `first` to `last` (indexes into `events`).
    static func slice(_ child: ChildProcess, _ first: Int, _ last: Int) -> [ChildEvent] {
        Array(child.events[first...last])
    }

    @Test("--budget: 1.3 s (0.3 s before the expiration warning) expires the job at the dates step, before weather")
    func budget() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try Self.phone(scenario, ["--budget", "1.3"])
        try phone.expect(.refreshForeground)
        phone.send(line: "simulate-launch")
        let entered = try phone.expect(.handlerEntered)
        #expect(Self.number(entered.event, "budget") == 1.3)
        let completed = try phone.expect(.handlerCompleted, from: entered.index)
        #expect(completed.event.fields["success"] as? Bool == false)
        let run = Self.slice(phone, entered.index, completed.index)
        let expired = try #require(run.first { $0.name == .handlerExpired }, "\(run.map(\.name))")
        #expect(expired.string("step") == "dates")
        #expect(
            !run.contains {
                $0.name.map { [.weatherFetched, .weatherSkipped, .weatherFailed, .batchGenerated].contains($0) } == true
            })
    }

    @Test("--low-power: no launch is planned at start; launches are planned again when it goes off")
    func lowPower() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try Self.phone(scenario, ["--low-power"])
        let submitted = try phone.expect(.osRequestSubmitted).event
        #expect(submitted.fields["plannedLaunch"] is NSNull, "\(submitted)")
        phone.send(line: "status")
        let status = try phone.expect(.phoneStatus).event
        #expect(status.fields["nextBackgroundLaunch"] is NSNull)
        #expect(status.object("os")?["lowPowerMode"] as? Bool == true)
        phone.send(line: "low-power off")
        let off = try phone.expect(.osLowPower) { $0.fields["on"] as? Bool == false }
        phone.send(line: "status")
        let after = try phone.expect(.phoneStatus, from: off.index).event
        #expect(after.string("nextBackgroundLaunch") != nil, "\(after)")
    }

    @Test("--os-seed: the same seed plans the same launch, another seed another")
    func osSeed() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phones = try [("a", "1"), ("b", "2"), ("c", "2")].map { name, seed in
            try Self.phone(scenario, ["--os-seed", seed], name: name)
        }
        let planned = try phones.map { phone in
            try #require(phone.expect(.osRequestSubmitted).event.string("plannedLaunch"))
        }
        #expect(planned[1] == planned[2], "\(planned)")
        #expect(planned[0] != planned[1], "\(planned)")
    }

    @Test("--step-costs: the run's charged duration is the sum of the given step costs")
    func stepCosts() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try Self.phone(scenario, ["--step-costs", "renew=1,notices=2,dates=3,sunlight=4"])
        try phone.expect(.refreshForeground)
        phone.send(line: "simulate-launch")
        let completed = try phone.expect(.handlerCompleted).event
        #expect(completed.fields["success"] as? Bool == true)
        // 1 + 2 + 3 + 4; the weather comes from the cache the foreground run filled.
        let elapsed = try #require(Self.number(completed, "duration"))
        #expect(abs(elapsed - 10) < 1e-9)
        phone.send(line: "history")
        let foreground = try phone.expect(.runRecord) { $0.string("kind") == "foreground" }.event
        // The same steps plus the offline fetch's 0.3 s.
        let duration = try #require(Self.number(foreground, "duration"))
        #expect(abs(duration - 10.3) < 1e-9)
    }

    /// A loopback TCP port that refuses connections: bound (so nobody else takes it) but not listening.
    /// - Returns: the port and the socket to close afterwards.
    static func refusingPort() throws -> (port: UInt16, socket: Int32) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0, "socket: \(String(cString: strerror(errno)))")
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard named else {
            close(fd)
            throw CocoaError(.fileWriteUnknown)
        }
        return (UInt16(bigEndian: address.sin_port), fd)
    }

    @Test("--weather: a local Open-Meteo URL is the server asked (here it refuses); offline fetches offline")
    func weather() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let (port, holder) = try Self.refusingPort()
        defer { close(holder) }
        let online = try Self.phone(scenario, ["--weather", "http://127.0.0.1:\(port)"], name: "online")
        let offline = try Self.phone(scenario, ["--weather", "offline"], name: "offline")
        let names: Set<EventName> = [.weatherFetched, .weatherFailed]
        let asked = try #require(online.waitFor(anyOf: names, timeout: Scenario.deadline)).event
        #expect(asked.name == .weatherFailed, "\(asked)")
        #expect(asked.string("reason")?.contains("127.0.0.1:\(port)") == true, "\(asked)")
        #expect(asked.fields["network"] as? Bool == true)
        let local = try #require(offline.waitFor(anyOf: names, timeout: Scenario.deadline)).event
        #expect(local.name == .weatherFetched && local.string("provider") == "offline", "\(local)")
    }

    @Test("--weather-cost: an offline fetch costs the given virtual seconds")
    func weatherCost() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try Self.phone(scenario, ["--weather-cost", "2.5"])
        let fetched = try phone.expect(.weatherFetched).event
        #expect(fetched.string("provider") == "offline")
        #expect(Self.number(fetched, "cost") == 2.5)
    }

    @Test("--location: the phone starts where it is told (moving to the same place moves 0 m)")
    func location() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try Self.phone(scenario, ["--location", "48.85,2.35"])
        try phone.expect(.refreshForeground)
        phone.send(line: "move 48.85,2.35")
        let moved = try phone.expect(.locationChanged).event
        #expect(Self.number(moved, "moved") == 0, "\(moved)")
    }

    @Test("--platform android with --bucket, --charging and --interval: WorkManager with those settings")
    func android() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try Self.phone(
            scenario, ["--platform", "android", "--bucket", "rare", "--charging", "--interval", "1800"])
        let started = try phone.expect(.phoneStarted).event
        #expect(started.string("platform") == "android")
        let enqueued = try phone.expect(.osWorkEnqueued).event
        #expect(Self.number(enqueued, "repeatInterval") == 1_800)
        phone.send(line: "status")
        let status = try phone.expect(.phoneStatus).event
        #expect(status.string("platform") == "android")
        #expect(status.object("os")?["bucket"] as? String == "rare")
        #expect(status.object("os")?["charging"] as? Bool == true)
    }

    @Test("--watch-id and --id: a phone and a watch that agree on a routing id other than the default exchange")
    func routingIds() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone(["--watch-id", "wrist-2"])
        let watch = try scenario.watch(["--id", "wrist-2"])
        #expect(try watch.expect(.watchStarted).event.string("id") == "wrist-2")
        try watch.expect(.batchApplied) { $0.int("seq") == 1 }
        try phone.expect(.ackReceived) { $0.int("seq") == 1 }
        #expect(!phone.events.contains { $0.name == .messageRejected })
    }

    @Test("--device-seed: the same seed rotates the same bedtime texts, another seed others")
    func deviceSeed() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phones = try [("a", "5"), ("b", "5"), ("c", "6")].map { name, seed in
            try Self.phone(scenario, ["--device-seed", seed], name: name)
        }
        let texts = try phones.map { phone in
            let batch = try phone.expect(.batchGenerated) { $0.int("seq") == 1 }
            return phone.events.prefix(batch.index).filter {
                $0.name == .notificationAdded && $0.string("id")?.hasPrefix("bedtime-") == true
            }.compactMap { $0.string("text") }
        }
        #expect(texts[0].count == 7)
        #expect(texts[0] == texts[1])
        #expect(texts[0] != texts[2], "\(texts)")
    }

    @Test("watch --warn-nights: 3 warns as soon as a 3-day batch is stored; status says so")
    func warnNights() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone(["--horizon-days", "3"])
        let watch = try scenario.watch(["--warn-nights", "3"])
        let applied = try watch.expect(.batchApplied) { $0.int("seq") == 1 }
        let low = try watch.expect(.coverageLow, from: applied.index).event
        #expect(low.int("nightsLeft") == 3 && low.string("coverageEnd") == applied.event.string("coverageEnd"))
        try phone.expect(.ackReceived)
        watch.send(line: "status")
        let status = try watch.expect(.cacheStatus).event
        #expect(
            status.int("nightsLeft") == 3 && (status.fields["coverageLow"] as? NSNumber)?.boolValue == true, "\(status)"
        )
    }

    @Test(
        "watch --complication-budget 1: the first batch reloads the complication, the next dates wait; stdin complication prints it"
    )
    func complicationBudget() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone(["--time-zone", "Europe/Berlin"])
        let watch = try scenario.watch(["--complication-budget", "1"])
        let applied = try watch.expect(.batchApplied) { $0.int("seq") == 1 }
        let reloaded = try watch.expect(.complicationReloaded, from: applied.index).event
        #expect(reloaded.int("reloads") == 1 && reloaded.int("budget") == 1, "\(reloaded)")
        let sent = try phone.expect(.batchSent) { $0.int("seq") == 1 }.event
        #expect(reloaded.string("nextAlarm") == sent.string("first"), "\(reloaded) \(sent)")
        try phone.expect(.ackReceived)
        // New dates (another zone): over the budget, the face keeps its timeline for a day.
        phone.send(line: "time-zone Asia/Tokyo")
        let second = try watch.expect(.batchApplied, from: applied.index) { $0.int("seq") == 2 }
        let exhausted = try watch.expect(.complicationBudgetExhausted, from: second.index).event
        #expect(exhausted.int("reloads") == 1 && exhausted.string("retryAt") != nil, "\(exhausted)")
        watch.send(line: "complication")
        let timeline = try watch.expect(.complicationTimeline).event
        #expect(
            timeline.int("entries") == 8 && (timeline.fields["waiting"] as? NSNumber)?.boolValue == true, "\(timeline)")
        let entries = try watch.expect(.complicationEntry, from: 0) { $0.string("text") == "no cached date" }
        #expect(entries.event.string("start") == applied.event.string("coverageEnd"))
    }

    @Test("watch --stop-alarm-after: the simulated user's alarm rings at the typed wake-up and stops 120 s later")
    func stopAlarmAfter() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        // 22:00Z a wall second from now, an hour per wall second: the tap at 22:30, the ring at 23:30.
        let anchor = String(format: "%.3f", Date().addingTimeInterval(1).timeIntervalSince1970)
        let watch = try scenario.watch([
            "--time-zone", "UTC", "--bed-at", "22:30", "--manual-wake", "23:30", "--stop-alarm-after", "120",
            "--clock-start", "2026-06-01T22:00:00Z", "--clock-speed", "3600", "--clock-anchor", anchor,
        ])
        let set = try watch.expect(.alarmSet)
        #expect(set.event.string("alarmTime") == "2026-06-01T23:30:00Z", "\(set.event)")
        let fired = try watch.expect(.alarmFired, from: set.index)
        #expect(fired.event.string("time") == "2026-06-01T23:30:00.000Z", "\(fired.event)")
        let stopped = try watch.expect(.alarmStopped, from: fired.index).event
        #expect(stopped.string("time") == "2026-06-01T23:32:00.000Z", "\(stopped)")
        #expect(stopped.string("by") == "simulated user" && (stopped.fields["rangFor"] as? NSNumber) == 120)
    }

    @Test("watch --snooze-minutes: stdin snooze silences the ringing alarm that long; stop ends it")
    func snoozeMinutes() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        // A virtual minute per wall second: the typed 23:00 rings about two wall seconds in.
        let anchor = String(format: "%.3f", Date().addingTimeInterval(1).timeIntervalSince1970)
        let watch = try scenario.watch([
            "--time-zone", "UTC", "--snooze-minutes", "2", "--clock-start", "2026-06-01T22:58:00Z",
            "--clock-speed", "60", "--clock-anchor", anchor,
        ])
        try watch.expect(.watchStarted)
        watch.send(line: "bed")
        try watch.expect(.fallbackManualEntry)
        watch.send(line: "23:00")
        try watch.expect(.alarmSet)
        let fired = try watch.expect(.alarmFired)
        #expect(fired.event.string("time") == "2026-06-01T23:00:00.000Z")
        watch.send(line: "snooze")
        let snoozed = try watch.expect(.alarmSnoozed, from: fired.index)
        let until = try #require(snoozed.event.string("until").flatMap(ISO8601.date))
        let snoozedAt = try #require(snoozed.event.time)
        #expect(abs(until.timeIntervalSince(snoozedAt) - 120) < 1, "\(snoozed.event)")
        let again = try watch.expect(.alarmFired, from: snoozed.index)
        #expect(again.event.int("snoozes") == 1)
        watch.send(line: "stop")
        let stopped = try watch.expect(.alarmStopped, from: again.index).event
        #expect(stopped.string("by") == "user" && stopped.int("snoozes") == 1, "\(stopped)")
    }

    @Test(
        "watch --active-seconds: after a bed tap the app stays active that long (cache.status appActive), wrist up keeps it active until wrist down"
    )
    func activeSeconds() throws {
        for (seconds, activeAfterTap) in [("3600", true), ("0", false)] {
            let scenario = try Scenario()
            defer { scenario.close() }
            let watch = try scenario.watch([
                "--time-zone", "UTC", "--request-dates", "--active-seconds", seconds,
            ])
            try watch.expect(.watchStarted)
            watch.send(line: "bed")
            let prompt = try watch.expect(.fallbackManualEntry)
            watch.send(line: "status")
            let status = try watch.expect(.cacheStatus, from: prompt.index)
            #expect(status.event.fields["appActive"] as? Bool == activeAfterTap, "--active-seconds \(seconds)")
            watch.send(line: "wrist up")
            watch.send(line: "status")
            let looking = try watch.expect(.cacheStatus, from: status.index + 1)
            #expect(looking.event.fields["appActive"] as? Bool == true)
            watch.send(line: "wrist down")
            watch.send(line: "status")
            let lowered = try watch.expect(.cacheStatus, from: looking.index + 1)
            #expect(lowered.event.fields["appActive"] as? Bool == false)
        }
    }

    @Test("watch --time-zone: a typed wake time is read in that zone")
    func watchTimeZone() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let watch = try scenario.watch(["--time-zone", "Pacific/Chatham"])
        try watch.expect(.watchStarted)
        watch.send(line: "bed")
        try watch.expect(.fallbackManualEntry)
        watch.send(line: "06:15")
        let manual = try watch.expect(.manualWakeTime).event
        #expect(manual.string("timeZone") == "Pacific/Chatham" && manual.string("localTime") == "06:15", "\(manual)")
    }

    @Test("sleeptap-soak: --steps and --verbose print exactly that many steps; --seed is the one used")
    func soak() throws {
        let result = try CapturedRun.run("sleeptap-soak", ["--steps", "2", "--seed", "5", "--verbose"], timeout: 60)
        #expect(result.status == 0, "\(result.standardError)")
        let steps = result.lines.map(\.text).filter { $0.hasPrefix("  step ") }
        #expect(steps.count == 2 && steps.first?.hasPrefix("  step 1: ") == true, "\(result.standardOutput)")
        #expect(result.lines.contains { $0.text.contains("seed 5") }, "\(result.standardOutput)")
    }
}

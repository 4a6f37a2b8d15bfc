// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing

/// Issue 4 over ipc: the phone on the simulated OS scheduler, in accelerated virtual time.
@Suite("background refresh over ipc", .serialized)
struct BackgroundTests {
    /// Shared clock flags: virtual Thu 2025-03-06 20:00 EST half a wall second from now, one
    /// virtual day per wall second. At spawn it is ~08:00 EST, after Thursday's 07:00 wake-up.
    static func clock() -> [String] {
        let anchor = String(format: "%.3f", Date().addingTimeInterval(0.5).timeIntervalSince1970)
        return ["--clock-start", "2025-03-07T01:00:00Z", "--clock-speed", "86400", "--clock-anchor", anchor]
    }

    @Test("Early registration: background runs keep the watch's dates ahead for 10 nights")
    func earlyKeepsDatesAhead() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let clock = Self.clock()
        let zone = ["--time-zone", "America/New_York"]
        let phone = try scenario.phone(zone + clock + ["--registration", "early"])
        let watch = try scenario.watch(zone + clock + ["--bed-at", "22:30", "--manual-wake", "07:00"])
        try watch.expect(.bedWakeTime) { $0.time == ISO8601.date("2025-03-16T02:30:00Z") }  // night 10
        #expect(!watch.events.contains { $0.name == .fallbackManualEntry })
        let entered = phone.events.filter { $0.name == .handlerEntered }
        #expect(entered.count >= 5, "\(entered.count) background runs")
        let applied = watch.events.filter { $0.name == .batchApplied }.compactMap { $0.int("seq") }
        #expect(applied.count >= 5 && applied == applied.sorted())
    }

    @Test("late-silent: submit succeeds, the handler is never entered, night 8 asks for the wake time")
    func lateSilentOverIPC() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let clock = Self.clock()
        let zone = ["--time-zone", "America/New_York"]
        let phone = try scenario.phone(zone + clock + ["--registration", "late-silent"])
        let watch = try scenario.watch(zone + clock + ["--bed-at", "22:30", "--manual-wake", "07:00"])
        try phone.expect(.renewSubmitted)
        let fallback = try watch.expect(.fallbackManualEntry).event
        #expect(fallback.time == ISO8601.date("2025-03-14T02:30:00Z"))
        #expect(watch.events.filter { $0.name == .bedWakeTime }.count == 7)
        try phone.expect(.osLaunchDropped)
        #expect(!phone.events.contains { $0.name == .handlerEntered })
        // Opening the app once refills the dates (as observed on iOS 26.6).
        phone.send(line: "open")
        try watch.expect(.batchApplied) { $0.int("seq") == 2 }
    }

    @Test("Phone controls: simulate-launch, simulate-expiration, conditions, status, history")
    func controls() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        // Virtual time barely moves (speed 1) so the OS's own launches stay out of the way.
        let phone = try scenario.phone(["--time-zone", "Europe/Berlin", "--clock-start", "2026-06-01T08:00:00Z"])
        try phone.expect(.refreshForeground)
        phone.send(line: "simulate-launch")
        let entered = try phone.expect(.handlerEntered)
        let completed = try phone.expect(.handlerCompleted, from: entered.index)
        #expect(completed.event.fields["success"] as? Bool == true)
        let run = phone.events[entered.index...completed.index].map(\.name)
        let renew = try #require(run.firstIndex(of: .renewSubmitted))
        let dates = try #require(run.firstIndex(of: .batchGenerated))
        let weather = try #require(run.firstIndex { [.weatherFetched, .weatherSkipped, .weatherFailed].contains($0) })
        #expect(renew < dates && dates < weather, "\(run)")

        phone.send(line: "simulate-expiration")
        let expired = try phone.expect(.handlerExpired, from: completed.index)
        #expect(expired.event.string("step") == "notices")
        let failed = try phone.expect(.handlerCompleted, from: expired.index)
        #expect(failed.event.fields["success"] as? Bool == false)

        phone.send(line: "low-power on")
        try phone.expect(.osLowPower)
        phone.send(line: "status")
        let status = try phone.expect(.phoneStatus).event
        #expect(status.string("platform") == "ios")
        #expect(status.fields["nextBackgroundLaunch"] is NSNull, "no launches in Low Power Mode")
        #expect(status.int("runs") == 3)  // the launch's foreground run and the two simulated ones

        phone.send(line: "history")
        let records = try phone.expect(.runRecord)
        #expect(records.event.string("kind") == "foreground")
        phone.send(line: "move 48.85,2.35")
        try phone.expect(.locationChanged) { ($0.fields["moved"] as? Double ?? 0) > 800_000 }
        phone.send(line: "bucket sometimes")
        try phone.expect(.inputRejected) { $0.string("input") == "bucket sometimes" }
    }

    @Test("late-crash: the app dies at launch with the launch-handler error; nothing is sent")
    func lateCrash() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone(["--registration", "late-crash"])
        let crash = try phone.expect(.appCrashed).event
        #expect(
            crash.string("message") == "All launch handlers must be registered before application finishes launching")
        phone.send(line: "status")
        let status = try phone.expect(.phoneStatus).event
        #expect(status.int("lastSeq") == 0)
        #expect(!phone.events.contains { $0.name == .batchGenerated })
    }

    @Test("Background App Refresh off: submit fails `unavailable`, loudly")
    func refreshOff() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone(["--refresh-off"])
        let failed = try phone.expect(.submitFailed).event
        #expect(failed.string("error") == "unavailable")
        #expect(failed.int("code") == 1)
    }
}

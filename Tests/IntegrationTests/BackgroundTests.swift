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
        try watch.expect("bed.wake_time") { $0.string("time") == "2025-03-16T02:30:00Z" }  // night 10
        #expect(!watch.events.contains { $0.name == "fallback.manual_entry" })
        let entered = phone.events.filter { $0.name == "handler.entered" }
        #expect(entered.count >= 5, "\(entered.count) background runs")
        let applied = watch.events.filter { $0.name == "batch.applied" }.compactMap { $0.int("seq") }
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
        try phone.expect("renew.submitted")
        let fallback = try watch.expect("fallback.manual_entry").event
        #expect(fallback.string("time") == "2025-03-14T02:30:00Z")
        #expect(watch.events.filter { $0.name == "bed.wake_time" }.count == 7)
        try phone.expect("os.launch.dropped")
        #expect(!phone.events.contains { $0.name == "handler.entered" })
        // Opening the app once refills the dates (as observed on iOS 26.6).
        phone.send(line: "open")
        try watch.expect("batch.applied") { $0.int("seq") == 2 }
    }

    @Test("Phone controls: simulate-launch, simulate-expiration, conditions, status, history")
    func controls() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        // Virtual time barely moves (speed 1) so the OS's own launches stay out of the way.
        let phone = try scenario.phone(["--time-zone", "Europe/Berlin", "--clock-start", "2026-06-01T08:00:00Z"])
        try phone.expect("refresh.foreground")
        phone.send(line: "simulate-launch")
        let entered = try phone.expect("handler.entered")
        let completed = try phone.expect("handler.completed", from: entered.index)
        #expect(completed.event.fields["success"] as? Bool == true)
        let run = phone.events[entered.index...completed.index].map(\.name)
        let renew = try #require(run.firstIndex(of: "renew.submitted"))
        let dates = try #require(run.firstIndex(of: "batch.generated"))
        let weather = try #require(run.firstIndex { $0.hasPrefix("weather.") })
        #expect(renew < dates && dates < weather, "\(run)")

        phone.send(line: "simulate-expiration")
        let expired = try phone.expect("handler.expired", from: completed.index)
        #expect(expired.event.string("step") == "notices")
        let failed = try phone.expect("handler.completed", from: expired.index)
        #expect(failed.event.fields["success"] as? Bool == false)

        phone.send(line: "low-power on")
        try phone.expect("os.low_power")
        phone.send(line: "status")
        let status = try phone.expect("phone.status").event
        #expect(status.string("platform") == "ios")
        #expect(status.fields["nextBackgroundLaunch"] is NSNull, "no launches in Low Power Mode")
        #expect(status.int("runs") == 3)  // the launch's foreground run and the two simulated ones

        phone.send(line: "history")
        let records = try phone.expect("run.record")
        #expect(records.event.string("kind") == "foreground")
        phone.send(line: "move 48.85,2.35")
        try phone.expect("location.changed") { ($0.fields["moved"] as? Double ?? 0) > 800_000 }
        phone.send(line: "bucket sometimes")
        try phone.expect("input.rejected") { $0.string("input") == "bucket sometimes" }
    }

    @Test("late-crash: the app dies at launch with the launch-handler error; nothing is sent")
    func lateCrash() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone(["--registration", "late-crash"])
        let crash = try phone.expect("app.crashed").event
        #expect(
            crash.string("message") == "All launch handlers must be registered before application finishes launching")
        phone.send(line: "status")
        let status = try phone.expect("phone.status").event
        #expect(status.int("lastSeq") == 0)
        #expect(!phone.events.contains { $0.name == "batch.generated" })
    }

    @Test("Background App Refresh off: submit fails `unavailable`, loudly")
    func refreshOff() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone(["--refresh-off"])
        let failed = try phone.expect("submit.failed").event
        #expect(failed.string("error") == "unavailable")
        #expect(failed.int("code") == 1)
    }
}

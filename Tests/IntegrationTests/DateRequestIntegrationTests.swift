// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import SleepTapProcess
import Testing

/// `watch --request-dates` over ipc with the real processes: the watch asks with a REQUEST when
/// its dates run low, and the phone's simulated OS wakes the app for it (docs/protocol.md,
/// "REQUEST"; docs/scheduler.md, "A message from the watch").
@Suite("REQUEST over ipc", .serialized)
struct DateRequestIntegrationTests {
    static let zone = ["--time-zone", "America/New_York"]
    static let user = ["--bed-at", "22:30", "--manual-wake", "07:00"]

    @Test(
        "late-silent with --request-dates: the handler is never entered, the watch asks on its low nights, and no night needs a manual entry"
    )
    func requestOverIPC() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let clock = BackgroundTests.clock()
        let phone = try scenario.phone(Self.zone + clock + ["--registration", "late-silent"])
        let watch = try scenario.watch(Self.zone + clock + Self.user + ["--request-dates"])
        // Night 10 (Sat Mar 15): without the REQUEST the dates ran out on night 8
        // (BackgroundTests.lateSilentOverIPC).
        try watch.expect(.bedWakeTime) { $0.time == ISO8601.date("2025-03-16T02:30:00Z") }
        #expect(!watch.events.contains { $0.name == .fallbackManualEntry })
        let sent = try watch.expect(.requestSent).event
        #expect(sent.int("id") == 1 && sent.int("nightsLeft") == 2)
        let received = try phone.expect(.requestReceived) { $0.int("id") == 1 }
        let message = try phone.expect(.osWatchMessage, from: received.index).event
        #expect(message.string("channel") == "WatchConnectivity" && message.fields["woken"] as? Bool == true)
        let served = try phone.expect(.requestServed, from: received.index).event
        #expect(served.fields["success"] as? Bool == true)
        let seq = try #require(served.int("seq"))
        try watch.expect(.batchApplied) { $0.int("seq") == seq }
        try phone.expect(.osLaunchDropped)
        #expect(!phone.events.contains { $0.name == .handlerEntered }, "the BGTask handler stays unreached")
    }

    @Test("A force-quit app is not woken: the phone refuses each REQUEST with an ERROR and night 8 still asks by hand")
    func forceQuitStillFallsBack() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let clock = BackgroundTests.clock()
        let phone = try scenario.phone(Self.zone + clock)
        try phone.expect(.batchGenerated) { $0.int("seq") == 1 }
        phone.send(line: "force-quit")
        try phone.expect(.osForceQuit)
        let watch = try scenario.watch(Self.zone + clock + Self.user + ["--request-dates"])
        let fallback = try watch.expect(.fallbackManualEntry).event
        #expect(fallback.time == ISO8601.date("2025-03-14T02:30:00Z"))
        let refused = try phone.expect(.requestRefused).event
        #expect(refused.string("reason")?.contains("did not wake the app") == true, "\(refused.line)")
        let told = try watch.expect(.peerError).event
        #expect(told.string("reason")?.hasPrefix("REQUEST 1 not served: the phone's OS did not wake the app") == true)
        #expect(!phone.events.contains { $0.name == .requestServed })
    }
}

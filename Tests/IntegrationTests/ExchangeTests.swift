// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Spawns the real `phone` and `watch` on ipc sockets in a temp dir.
@Suite("phone and watch over ipc", .serialized)
struct ExchangeTests {
    static let zoneFlags = ["--time-zone", "America/New_York"]

    @Test("The watch receives 7 dates and acks (phone first)")
    func phoneFirst() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone(Self.zoneFlags)
        try phone.expect(.phoneStarted)
        let watch = try scenario.watch()
        let applied = try watch.expect(.batchApplied).event
        #expect(applied.int("seq") == 1)
        #expect(applied.int("count") == 7)
        try watch.expect(.ackSent) { $0.int("seq") == 1 }
        try phone.expect(.ackReceived) { $0.int("seq") == 1 }
        let sent = try phone.expect(.batchSent).event
        #expect(sent.int("count") == 7)
        // The cache is on disk, and survives the watch.
        let stored = try Data(contentsOf: URL(fileURLWithPath: "\(scenario.dir)/watch/watch.json"))
        let state = try JSONDecoder.sleepTap.decode(WatchSyncState.self, from: stored)
        #expect(state.lastAppliedSeq == 1 && state.batch?.entries.count == 7)
    }

    @Test(
        "A second watch with the paired routing id: the phone writes peer.replaced naming the id, and secondWatch once the two take the id from each other (ROUTER_HANDOVER)"
    )
    func secondWatchTakesTheRoutingID() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone(Self.zoneFlags)
        _ = try scenario.watch()
        try phone.expect(.ackReceived) { $0.int("seq") == 1 }
        #expect(phone.events.filter { $0.name == .peerReplaced }.isEmpty)
        _ = try scenario.watch(stateDir: "watch2")
        let (first, index) = try phone.expect(.peerReplaced)
        #expect(first.string("id") == "watch")
        #expect(first.string("instance") != first.string("previousInstance"))
        // The first watch's connection was handed over; it reconnects and takes the id back.
        let (again, _) = try phone.expect(.peerReplaced, from: index + 1) { $0.fields["secondWatch"] as? Bool == true }
        #expect(again.string("reason")?.contains("its own --id") == true)
    }

    @Test(
        "Clock skew, phone side: a watch whose virtual clock is a year ahead makes the phone write clock.skew for its HELLO"
    )
    func helloClockSkew() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone(Self.zoneFlags)
        try phone.expect(.phoneStarted)
        let ahead = ISO8601.string(Date().addingTimeInterval(365 * 86_400))
        _ = try scenario.watch(["--clock-start", ahead, "--clock-speed", "1"])
        let (skew, _) = try phone.expect(.clockSkew) { $0.string("message") == "HELLO" }
        #expect(((skew.fields["skewHours"] as? NSNumber)?.doubleValue ?? 0) > 8_000, "\(skew.line)")
    }

    @Test("The same with the start order reversed (watch first)")
    func watchFirst() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let watch = try scenario.watch()
        try watch.expect(.watchStarted)
        let phone = try scenario.phone(Self.zoneFlags)
        try watch.expect(.batchApplied) { $0.int("seq") == 1 && $0.int("count") == 7 }
        try phone.expect(.ackReceived) { $0.int("seq") == 1 }
    }

    @Test("A restarted watch gets the newest batch through HELLO")
    func restartedWatchCatchesUp() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone(Self.zoneFlags)
        let watch = try scenario.watch()
        try phone.expect(.ackReceived) { $0.int("seq") == 1 }
        #expect(watch.stop() == 0)

        phone.send(line: "open")  // a new batch while the watch is away
        let (generated, _) = try phone.expect(.batchGenerated) { $0.int("seq") == 2 }
        #expect(generated.int("count") == 7)

        let again = try scenario.watch()
        try again.expect(.watchStarted) { $0.int("lastSeq") == 1 }
        try again.expect(.helloSent) { $0.int("lastSeq") == 1 }
        try again.expect(.batchApplied) { $0.int("seq") == 2 }
        try phone.expect(.ackReceived) { $0.int("seq") == 2 }

        // And a watch that is up to date is told so.
        #expect(again.stop() == 0)
        let third = try scenario.watch()
        try third.expect(.syncUpToDate) { $0.int("seq") == 2 }
        #expect(!third.events.contains { $0.name == .batchApplied })
    }

    @Test(
        "Phone stopped after its ack: the bed tap on the first night past the last cached date falls back, not one night earlier"
    )
    func fallbackOnEighthNight() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        // Virtual Thu 2025-03-06 15:00 EST half a wall second from now, 12 virtual hours per wall
        // second; both processes share the clock. At spawn it is ~09:00 EST, after the 07:00 wake-up.
        let anchor = String(format: "%.3f", Date().addingTimeInterval(0.5).timeIntervalSince1970)
        let clock = ["--clock-start", "2025-03-06T20:00:00Z", "--clock-speed", "43200", "--clock-anchor", anchor]
        let phone = try scenario.phone(Self.zoneFlags + clock)
        let watch = try scenario.watch(clock + Self.zoneFlags + ["--bed-at", "22:30", "--manual-wake", "06:45"])
        let applied = try watch.expect(.batchApplied).event
        #expect(applied.string("coverageEnd") == "2025-03-13T11:00:00Z")  // Thu Mar 13 07:00 EDT
        try phone.expect(.ackReceived)
        #expect(phone.stop() == 0)

        let fallback = try watch.expect(.fallbackManualEntry).event
        // Night 8: Thu Mar 13 22:30 EDT = 2025-03-14T02:30Z.
        #expect(fallback.time == ISO8601.date("2025-03-14T02:30:00Z"))
        #expect(fallback.string("tapLocalDate") == "2025-03-13" && fallback.string("tapLocalTime") == "22:30")
        let taps = watch.events.filter { $0.name == .bedWakeTime }
        #expect(
            taps.map(\.time)
                == [
                    "2025-03-07T03:30:00Z", "2025-03-08T03:30:00Z", "2025-03-09T03:30:00Z", "2025-03-10T02:30:00Z",
                    "2025-03-11T02:30:00Z", "2025-03-12T02:30:00Z", "2025-03-13T02:30:00Z",
                ].map(ISO8601.date))
        #expect(taps.map { $0.string("localTime") ?? "" } == Array(repeating: "07:00", count: 7))
        #expect(taps.last?.int("remaining") == 1, "the last cached wake-up is the one shown")
        #expect(taps.map { $0.string("tapLocalTime") ?? "" } == Array(repeating: "22:30", count: 7))
        let manual = try watch.expect(.manualWakeTime).event
        #expect(manual.string("wakeTime") == "2025-03-14T10:45:00Z")  // 06:45 EDT
    }

    @Test("The watch answers stdin: status, bed and a typed wake time")
    func stdinCommands() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let watch = try scenario.watch(Self.zoneFlags)
        try watch.expect(.watchStarted)
        watch.send(line: "status")
        let status = try watch.expect(.cacheStatus).event
        #expect(status.int("count") == 0)
        watch.send(line: "bed")
        try watch.expect(.fallbackManualEntry)
        watch.send(line: "25:00")
        try watch.expect(.inputRejected)
        watch.send(line: "06:15")
        let manual = try watch.expect(.manualWakeTime).event
        #expect(manual.string("localTime") == "06:15")
        watch.send(line: "dance")
        try watch.expect(.inputRejected) { $0.string("input") == "dance" }
        watch.send(line: "quit")
        #expect(watch.waitForExit(timeout: Scenario.deadline))
        #expect(watch.exitStatus == 0)
    }

    @Test(
        "Both stop cleanly within 1 s of SIGINT, SIGTERM and SIGHUP, saying so", arguments: [SIGINT, SIGTERM, SIGHUP])
    func stopOnSignal(_ signal: Int32) throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let phone = try scenario.phone()
        let watch = try scenario.watch()
        try phone.expect(.ackReceived)
        for child in [phone, watch] {
            let start = ContinuousClock.now
            #expect(child.stop(signal: signal, timeout: 5) == 0, "\(child.name) exit status")
            // The requirement: stopped within 1 s of the signal (state saved, sockets closed).
            #expect(ContinuousClock.now - start < .seconds(1), "\(child.name) took \(ContinuousClock.now - start)")
            child.waitForOutputEnd(timeout: 5)
            #expect(child.events.last?.name == (child === phone ? .phoneStopping : .watchStopping))
            #expect(child.events.last?.int("signal") == Int(signal))
        }
    }
}

extension JSONDecoder {
    /// Decodes SleepTap state files (ISO-8601 dates).
    static var sleepTap: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}

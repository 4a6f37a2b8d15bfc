// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapOS
import Testing

@testable import SleepTapEmbedded

/// The twin's two link modes (`Twin.LinkMode`): frames decoded by the receiving node, or the
/// message values the frames would decode to. Both must give the same run, event for event.
@Suite("The twin's link modes: frames and message values give the same run")
struct TwinLinkModeTests {
    /// A run in `mode`: its log as the processes would print it, its run records, the watch's
    /// stderr, the timers fired, the link's counts and what each side holds at the end.
    struct Outcome: Equatable {
        var watchState: WatchSyncState?
        var phoneState: PhoneSyncState?
        var lines: [String]
        var records: [RunRecord]
        var standardError: [String]
        var fired: [Twin.Timer: Int]
        var counts: [Int]
    }

    static func outcome(_ mode: Twin.LinkMode, _ build: (Twin.LinkMode) -> Twin, until end: Date) -> Outcome {
        var twin = build(mode)
        twin.run(until: end)
        return Outcome(
            watchState: twin.watchStore.held, phoneState: twin.phoneStore.held, lines: twin.log.map(\.jsonLine),
            records: twin.runRecords,
            standardError: twin.watchStandardError.map { "\($0.at.timeIntervalSince1970) \($0.line)" },
            fired: twin.fired,
            counts: [twin.toWatch.sent, twin.toWatch.dropped, twin.toPhone.sent, twin.toPhone.dropped])
    }

    static let start = ISO8601.date("2025-03-06T17:00:00Z")!
    static let day: TimeInterval = 86_400

    /// A twin like `TwinTests.twin`, on iOS or Android, in `zone`, with faults and steps.
    static func twin(
        _ mode: Twin.LinkMode, platform: Platform, zone name: String, faults: LinkFaults, seed: UInt64, speed: Double,
        requestDates: Bool
    ) -> Twin {
        let zone = TimeZone(identifier: name)!
        let os: SimulatedOS
        if platform == .android {
            os = SimulatedOS(AndroidWorkScheduler(configuration: .init(repeatInterval: 6 * 3_600)), seed: seed)
        } else {
            var ios = IOSBackgroundScheduler.Configuration(
                permittedIdentifiers: [PhoneAppConfiguration().taskIdentifier])
            ios.registrationMode = seed % 3 == 0 ? .lateSilent : .early
            os = SimulatedOS(IOSBackgroundScheduler(configuration: ios, seed: seed))
        }
        let phone = PhoneSetup(
            os: os, weather: OfflineWeatherProvider(seed: seed), schedule: .everyDayAtSeven,
            location: Coordinate(latitude: 40.71, longitude: -74.0)!, deviceSeed: seed &+ 1,
            node: PhoneNodeConfiguration(
                watchID: "watch", timeZone: zone, machineZone: zone, statePath: "phone.json",
                osStatePath: "os.json", endpoint: "twin", boundEndpoint: "twin", pid: 1, security: .none,
                osState: .new))
        let watch = WatchNode.Configuration(
            endpoint: "twin", statePath: "watch.json", systemZone: zone, bedAt: LocalTime(hour: 22, minute: 30),
            manualWake: LocalTime(hour: 6, minute: 30)!, requestDates: requestDates)
        var twin = Twin(
            start: start, speed: speed, phone: phone, watch: watch, faults: faults, seed: seed, linkMode: mode)
        twin.boot()
        // Steps at instants with fractions of a second: batches generated then carry them.
        let steps: [(Double, TwinStep)] = [
            (0.37, .phone("open")), (1.2, .restartWatch(keepState: true)), (2.51, .phone("time-zone Asia/Tokyo")),
            (2.51, .watch("time-zone Asia/Tokyo")), (3.3, .link(up: false)), (4.9, .link(up: true)),
            (5.25, .restartPhone(keepState: true)), (6.61, .phone("open")),
            (7.05, .failPhoneWrites([1, 2], errno: 28)),
            (7.06, .phone("open")), (8.4, .restartWatch(keepState: false)), (9.5, .phone("time-zone \(name)")),
            (9.5, .watch("time-zone \(name)")), (10.2, .phone("quit")), (11.7, .startPhone(keepState: true)),
            (13.123, .phone("low-power on")), (13.9, .phone("low-power off")),
        ]
        for (days, step) in steps { twin.schedule(step, at: start.addingTimeInterval(days * day + 0.25)) }
        return twin
    }

    @Test(
        "Seeded runs with faults, restarts, travel, failing writes and REQUESTs: the same log lines, run records, stderr and timers",
        arguments: 0..<8)
    func sameRun(round: Int) {
        let seed = UInt64(round) &* 7_919 &+ 3
        let zones = ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kolkata"]
        let faults =
            round % 2 == 0 ? LinkFaults.none : LinkFaults(drop: 0.25, duplicate: 0.1, delay: 0.3, maxDelay: 900.5)
        let build = { (mode: Twin.LinkMode) in
            Self.twin(
                mode, platform: round % 4 == 3 ? .android : .ios, zone: zones[round % zones.count], faults: faults,
                seed: seed, speed: round % 3 == 1 ? 3_333.3 : 3_600, requestDates: round % 2 == 1)
        }
        let end = Self.start.addingTimeInterval(16 * Self.day)
        let frames = Self.outcome(.frames, build, until: end)
        let messages = Self.outcome(.messages, build, until: end)
        #expect(!frames.lines.isEmpty && !frames.records.isEmpty)
        #expect(frames.lines.count == messages.lines.count)
        if let index = zip(frames.lines, messages.lines).enumerated().first(where: { $0.element.0 != $0.element.1 })?
            .offset
        {
            Issue.record("line \(index): frames \(frames.lines[index])\nmessages \(messages.lines[index])")
        }
        #expect(frames == messages)
    }
}

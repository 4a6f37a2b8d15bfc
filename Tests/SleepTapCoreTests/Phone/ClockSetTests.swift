// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

/// The user sets the phone's wall clock (docs/scheduler.md, "The user sets the clock"): stdin
/// `clock-set ±DURATION`.
@Suite("The user sets the phone's clock")
struct ClockSetTests {
    @Test("clock-set parses a signed duration in d, h, m, s")
    func parses() throws {
        for (text, seconds) in [
            ("-12h", -43_200.0), ("+90m", 5_400), ("+1h30m", 5_400), ("-1d2h3m4s", -93_784), ("+45s", 45),
            ("-0h1s", -1),
        ] {
            #expect(try PhoneCommand.parse("clock-set \(text)", platform: .ios) == .clockSet(seconds), "\(text)")
            #expect(try PhoneCommand.parse("clock-set \(text)", platform: .android) == .clockSet(seconds), "\(text)")
        }
    }

    @Test("clock-set refuses a bad duration with a reason naming the input")
    func refuses() throws {
        for text in ["12h", "-12", "-12x", "-h", "+1m2h", "+2h2h", "-400d", "+", "--1h", "-1.5h", "+9999999999s"] {
            do {
                _ = try PhoneCommand.parse("clock-set \(text)", platform: .ios)
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.reason.contains("\"\(text)\""), "\(text): \(error.reason)")
                #expect(error.reason.contains("expected clock-set ±DURATION"), "\(text): \(error.reason)")
            }
        }
        do {
            _ = try PhoneCommand.parse("clock-set", platform: .ios)
            Issue.record("accepted clock-set alone")
        } catch {
            #expect(error.reason.hasPrefix("expected clock-set ±DURATION"), "\(error.reason)")
        }
    }

    @Test("clock-set refuses a zero change (-0m, +0s), naming it, on both platforms")
    func refusesZero() throws {
        for text in ["-0m", "+0s", "-0h", "+0d0h0m0s", "-000m"] {
            for platform in [Platform.ios, .android] {
                do {
                    _ = try PhoneCommand.parse("clock-set \(text)", platform: platform)
                    Issue.record("accepted \(text)")
                } catch {
                    #expect(
                        error.reason
                            == "expected clock-set ±DURATION with a duration that is not zero (e.g. -12h, +90m); "
                            + "\"\(text)\" is a zero change: the clock would not move")
                }
            }
        }
    }

    @Test(
        "iOS: clock set back 12 h, then open: os.clock_set and os.time_changed; the batch is planned from the wall clock (generatedAt 12 h behind, a wake-up already past first); the request keeps its planned launch; kept in os.json"
    )
    func iosSetBack() throws {
        typealias M = PhoneMachineTests
        var node = PhoneNode(app: PhoneFixture.app(), configuration: PhoneFixture.configuration())
        let start = M.answered(&node, node.start(at: M.at(0)), at: M.at(0))
        let before = try #require(M.batches(start).last)
        // Thu 2025-03-06 12:00 EST: the first wake-up is Fri 07:00 EST.
        #expect(before.entries.first?.wake == ISO8601.date("2025-03-07T12:00:00Z"))
        let time = M.at(60)
        let planned = node.app.nextBackgroundLaunch(after: time.now)
        let set = M.typed(&node, "clock-set -12h", at: 60)
        #expect(M.names(set) == [.osClockSet, .osTimeChanged])
        let clockSet = try #require(M.events(.osClockSet, in: set).first)
        #expect(
            [clockSet["offset"], clockSet["wallClock"]] == [
                .double(-43_200), .date(time.now.addingTimeInterval(-43_200)),
            ])
        #expect(M.events(.osTimeChanged, in: set).first?["plannedLaunch"] == planned.map { .date($0) })
        #expect(node.app.scheduler.wallClockOffset == -43_200)
        guard case .object(let os)? = M.events(.phoneStatus, in: node.commandLine("status", at: time)).first?["os"]
        else {
            Issue.record("no os in phone.status")
            return
        }
        #expect([os["wallClockOffset"], os["notificationAuthorization"]] == [.double(-43_200), .string("authorized")])
        let after = try #require(M.batches(M.typed(&node, "open", at: 60)).last)
        // The wall clock reads Thu 00:01 EST: its next 07:00 is Thu's, already past in true time.
        #expect(
            after.generatedAt == Date(timeIntervalSince1970: (time.now.timeIntervalSince1970 - 43_200).rounded(.down)))
        #expect(after.entries.first?.wake == ISO8601.date("2025-03-06T12:00:00Z"))
        // Every later wake-up is the same instant as before: what the watch rings at does not move.
        #expect(Array(after.entries.dropFirst().map(\.wake).prefix(6)) == Array(before.entries.map(\.wake).prefix(6)))
        let stored = try JSONDecoder().decode(SimulatedOS.self, from: JSONEncoder().encode(node.app.scheduler))
        #expect(stored.wallClockOffset == -43_200)
    }

    @Test(
        "Android: clock-set -12h replans the enqueued work 12 h later (os.time_changed nextRunAt, os.work.rescheduled)")
    func androidSetBack() throws {
        var node = PhoneMachineTests.started(platform: .android)
        let time = PhoneMachineTests.at(10)
        let next = try #require(node.app.scheduler.nextLaunch(after: time.now))
        let later = next.addingTimeInterval(43_200)
        let actions = node.commandLine("clock-set -12h", at: time).filter { $0.event?.name != .osWhy }
        #expect(
            actions == [
                .persistOS(node.app.scheduler),
                PhoneMachineTests.event(
                    .osClockSet,
                    [
                        ("delta", .double(-43_200)), ("offset", .double(-43_200)),
                        ("wallClock", .date(time.now.addingTimeInterval(-43_200))),
                    ], at: time),
                PhoneMachineTests.event(
                    .osTimeChanged,
                    [
                        ("broadcast", .string("android.intent.action.TIME_SET")), ("delta", .double(-43_200)),
                        ("pendingIdentifier", .string("net.sleeptap.refresh")), ("nextRunAt", .date(later)),
                    ], at: time),
                PhoneMachineTests.event(.osWorkRescheduled, [("reason", .string("time changed"))], at: time),
                .arm(.osLaunch, .at(later)),
            ])
    }
}

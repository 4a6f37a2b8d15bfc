// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCommandLine
import SleepTapCore
import Testing

@testable import SleepTapRuntime

@Suite("Command-line parsing")
struct CommandLineTests {
    static let base = ["--endpoint", "ipc:///tmp/s.sock", "--state-dir", "/tmp/st"]

    @Test("Minimal phone and watch command lines parse with the documented defaults")
    func defaults() throws {
        guard case .run(let phone) = try CommandLineParser.parsePhone(Self.base) else {
            Issue.record("expected options")
            return
        }
        #expect(phone.endpoint == .ipc(path: "/tmp/s.sock") && phone.stateDirectory == "/tmp/st")
        #expect(phone.schedulePath == nil && phone.timeZone == nil && phone.watchId == "watch")
        #expect(phone.horizonDays == 7 && phone.clock == ClockOptions())
        guard case .run(let watch) = try CommandLineParser.parseWatch(Self.base) else {
            Issue.record("expected options")
            return
        }
        #expect(watch.id == "watch" && watch.bedAt == nil && watch.manualWake == nil)
        #expect(watch.warnNights == 2)
    }

    @Test("Every flag, in both --flag value and --flag=value forms")
    func allFlags() throws {
        // An anchor an hour ago (virtual now is then 150 days after the start, inside the range).
        let anchor = (Date().timeIntervalSince1970 - 3_600).rounded(.down) + 0.5
        let arguments =
            Self.base + [
                "--schedule", "s.json", "--time-zone=Europe/Berlin", "--watch-id", "w1", "--horizon-days", "10",
                "--clock-start", "2025-03-06T17:00:00Z", "--clock-speed=3600", "--clock-anchor", String(anchor),
            ]
        guard case .run(let phone) = try CommandLineParser.parsePhone(arguments) else {
            Issue.record("expected options")
            return
        }
        #expect(phone.schedulePath == "s.json" && phone.timeZone?.identifier == "Europe/Berlin")
        #expect(phone.watchId == "w1" && phone.horizonDays == 10)
        #expect(phone.clock.start == ISO8601.date("2025-03-06T17:00:00Z"))
        #expect(phone.clock.speed == 3600 && phone.clock.anchor == Date(timeIntervalSince1970: anchor))
        guard
            case .run(let watch) = try CommandLineParser.parseWatch(
                Self.base + ["--id", "w1", "--bed-at", "22:30", "--manual-wake", "06:45", "--warn-nights", "0"])
        else {
            Issue.record("expected options")
            return
        }
        #expect(watch.id == "w1" && watch.bedAt?.description == "22:30" && watch.manualWake?.description == "06:45")
        #expect(watch.warnNights == 0)
    }

    @Test("--request-dates: off by default, on as a switch, refused with --warn-nights 0 and with a value")
    func requestDates() throws {
        guard case .run(let off) = try CommandLineParser.parseWatch(Self.base),
            case .run(let on) = try CommandLineParser.parseWatch(Self.base + ["--request-dates"])
        else {
            Issue.record("expected options")
            return
        }
        #expect(!off.requestDates && on.requestDates)
        #expect(on.nodeConfiguration(statePath: "/s/watch.json", keysDirectory: nil).requestDates)
        #expect(
            throws: UsageError(
                "--request-dates needs --warn-nights 1 or more (it asks when the nights left fall to that many)")
        ) {
            try CommandLineParser.parseWatch(Self.base + ["--request-dates", "--warn-nights", "0"])
        }
        #expect(throws: UsageError.self) { try CommandLineParser.parseWatch(Self.base + ["--request-dates=yes"]) }
        #expect(throws: UsageError.self) {
            try CommandLineParser.parseWatch(Self.base + ["--request-dates", "--request-dates"])
        }
    }

    @Test("--stop-alarm-after takes plain non-negative seconds only: no exponent, no sign")
    func stopAlarmAfterPlain() throws {
        let bed = Self.base + ["--bed-at", "22:30"]
        for (text, seconds) in [("120", 120.0), ("0", 0), ("1.5", 1.5), (".5", 0.5)] {
            guard case .run(let watch) = try CommandLineParser.parseWatch(bed + ["--stop-alarm-after", text]) else {
                Issue.record("expected options for \(text)")
                continue
            }
            #expect(watch.userStopsAlarmAfter == seconds)
        }
        for text in ["1e3", "+5", "-5", "1.2.3", ".", "", "0x10", "inf", " 5"] {
            #expect(
                throws: UsageError(
                    "--stop-alarm-after \"\(text)\": expected seconds from 0.0 to 86400.0, written as digits with at "
                        + "most one dot (e.g. 90 or 1.5)")
            ) {
                try CommandLineParser.parseWatch(bed + ["--stop-alarm-after", text])
            }
        }
    }

    /// Command lines with `-h`/`--help` first, last, between a flag and its value, and after
    /// arguments that are wrong on their own (an unknown flag, a bad value, a stray word).
    static let helpPlacements: [[String]] = [
        ["-h"], ["--help"], ["--bogus-after", "-h"], ["--frob", "--help"], base + ["-h"], ["-h"] + base,
        ["--endpoint", "--help"], ["--endpoint", "http://x", "-h"], ["stray", "--state-dir", "", "--help"],
        base + ["--clock-speed", "0", "-h", "--frob"],
    ]

    @Test("--help wins wherever it stands, after bad arguments too", arguments: helpPlacements)
    func help(arguments: [String]) throws {
        let phone = try CommandLineParser.parsePhone(arguments)
        #expect(phone.isHelp, "phone \(arguments)")
        let watch = try CommandLineParser.parseWatch(arguments)
        #expect(watch.isHelp, "watch \(arguments)")
    }

    @Test(
        "--version wins wherever it stands; the first of --help and --version decides",
        arguments: [["--version"], ["--frob", "--version"], base + ["--version", "x"], ["--version", "-h"]])
    func version(arguments: [String]) throws {
        #expect(try CommandLineParser.parsePhone(arguments).isVersion, "phone \(arguments)")
        #expect(try CommandLineParser.parseWatch(arguments).isVersion, "watch \(arguments)")
        #expect(try CommandLineParser.parsePhone(["-h", "--version"]).isHelp)
    }

    @Test(
        "A relative ipc path is resolved against the working directory; absolute and @abstract paths are kept",
        arguments: [
            ("ipc://p.sock", "/home/u", "ipc:///home/u/p.sock"),
            ("ipc://./run/p.sock", "/home/u", "ipc:///home/u/run/p.sock"),
            ("ipc://../s/p.sock", "/home/u/w", "ipc:///home/u/w/../s/p.sock"),
            ("ipc://p.sock", "/", "ipc:///p.sock"),
            ("ipc:///tmp/s/p.sock", "/home/u", "ipc:///tmp/s/p.sock"),
            ("ipc://@sleeptap", "/home/u", "ipc://@sleeptap"),
            ("tcp://127.0.0.1:5555", "/home/u", "tcp://127.0.0.1:5555"),
        ])
    func relativeEndpoint(given: String, workingDirectory: String, resolved: String) throws {
        let arguments = ["--endpoint", given, "--state-dir", "/tmp/st", "--insecure"]
        let phone = try #require(
            try CommandLineParser.parsePhone(arguments, workingDirectory: workingDirectory).options)
        #expect(phone.endpoint.description == resolved)
        let watch = try #require(
            try CommandLineParser.parseWatch(arguments, workingDirectory: workingDirectory).options)
        #expect(watch.endpoint.description == resolved)
    }

    @Test("A relative ipc path that is too long once resolved is a usage error naming both forms")
    func relativeEndpointTooLong() {
        let directory = "/" + String(repeating: "d", count: 100)
        let arguments = ["--endpoint", "ipc://p.sock", "--state-dir", "d"]
        func named(_ error: any Error) -> Bool {
            let message = (error as? UsageError)?.message ?? ""
            return message.contains("\"ipc://p.sock\"") && message.contains("resolves to \(directory)/p.sock")
                && message.contains("108 bytes") && message.contains("at most 107")
        }
        #expect {
            _ = try CommandLineParser.parsePhone(arguments, workingDirectory: directory)
        } throws: { named($0) }
        #expect {
            _ = try CommandLineParser.parseWatch(arguments, workingDirectory: directory)
        } throws: { named($0) }
    }

    static let badPhone: [([String], String)] = [
        ([String](), "--endpoint is required"),
        (["--endpoint", "ipc:///tmp/a"], "--state-dir is required"),
        (["--endpoint"], "--endpoint needs a value"),
        (["--endpoint", "http://x", "--state-dir", "d"], "expected ipc://PATH"),
        (["--endpoint", "ipc://", "--state-dir", "d"], "nothing after ipc://"),
        (["--endpoint", "ipc:///" + String(repeating: "a", count: 107), "--state-dir", "d"], "at most 107"),
        (
            Self.base + ["--time-zone", "Mars/Base"],
            "--time-zone: unknown time zone \"Mars/Base\": not in the tz database"
        ),
        (Self.base + ["--clock-speed", "0"], "expected a number > 0"),
        (Self.base + ["--clock-speed", "nan"], "expected a number > 0"),
        (Self.base + ["--clock-start", "yesterday"], "expected an ISO-8601 instant"),
        (Self.base + ["--clock-anchor", "-5"], "expected UNIX seconds"),
        (Self.base + ["--clock-anchor", "1767225600"], "--clock-anchor needs --clock-start"),
        (Self.base + ["--clock-anchor", "1767225600", "--clock-speed", "2"], "--clock-anchor needs --clock-start"),
        (Self.base + ["--clock-start", "2200-01-01T00:00:00Z"], "expected an ISO-8601 instant from 1970 to 2199"),
        (
            Self.base + ["--clock-start", "2025-03-06T17:00:00Z", "--clock-anchor", "7258118400"],
            "expected UNIX seconds"
        ),
        (Self.base + ["--horizon-days", "0"], "expected a whole number from 1 to 64"),
        (Self.base + ["--horizon-days", "65"], "expected a whole number from 1 to 64"),
        (["--endpoint", "ipc:///tmp/s.sock", "--state-dir", ""], "--state-dir must not be empty"),
        (Self.base + ["--watch-id", String(repeating: "w", count: 256)], "1-255 bytes"),
        (Self.base + ["--frobnicate"], "unknown option --frobnicate"),
        (Self.base + ["stray"], "unknown option stray"),
        (Self.base + ["--insecure=false"], "--insecure takes no value (found \"false\")"),
        (Self.base + ["--low-power=no", "--refresh-off"], "--low-power takes no value (found \"no\")"),
        (Self.base + ["--os-seed", "0x10"], "--os-seed \"0x10\": expected a whole number from 0 to"),
        (Self.base + ["--device-seed", "-1"], "--device-seed \"-1\": expected a whole number from 0 to"),
    ]

    @Test("The clock's range ends with 2199 and includes its last second; an anchor with a start is taken")
    func clockRange() throws {
        guard
            case .run(let last) = try CommandLineParser.parsePhone(
                Self.base + ["--clock-start", "2199-12-31T23:59:59Z"]),
            case .run(let options) = try CommandLineParser.parsePhone(
                Self.base + ["--clock-start", "2150-01-01T00:00:00Z", "--clock-anchor", "1767225600"])
        else {
            Issue.record("parsed as a help request")
            return
        }
        #expect(last.clock.start == ISO8601.date("2199-12-31T23:59:59Z"))
        #expect(options.clock.start == ISO8601.date("2150-01-01T00:00:00Z"))
        #expect(options.clock.anchor == Date(timeIntervalSince1970: 1_767_225_600))
        // Flags that put virtual now outside the range are refused: the last second anchored a
        // year ago, or an anchor decades away at a high speed (either side).
        let now = Date(timeIntervalSince1970: 1_796_000_000)
        let refused: [(ClockOptions, String)] = [
            (
                ClockOptions(
                    start: ISO8601.date("2199-12-31T23:59:59Z"), anchor: Date(timeIntervalSince1970: 1_767_225_600)),
                "year 2200"
            ),
            (
                ClockOptions(
                    start: ISO8601.date("2025-03-06T20:00:00Z"), speed: 10_000_000,
                    anchor: Date(timeIntervalSince1970: 0)), "year 569"
            ),
            (
                ClockOptions(start: Date(timeIntervalSince1970: 0), speed: 1_000, anchor: now.addingTimeInterval(60)),
                "60 s ahead"
            ),
        ]
        for (clock, text) in refused {
            #expect {
                try clock.check(now: now)
            } throws: { error in
                let message = (error as? UsageError)?.message ?? ""
                return message.contains(text)
                    && message.contains("outside 1970-01-01T00:00:00Z to 2199-12-31T23:59:59Z")
            }
        }
        // At the edges, and how long until a fast clock runs out of its range.
        try ClockOptions(start: ISO8601.date("2199-12-31T23:59:59Z"), anchor: now).check(now: now)
        try ClockOptions(start: Date(timeIntervalSince1970: 0), anchor: now).check(now: now)
        let fast = ClockOptions(start: ISO8601.date("2199-12-31T23:00:00Z"), speed: 60, anchor: now)
        #expect(fast.secondsToRangeEnd(from: now) == 3_599.0 / 60)
        #expect(ClockOptions().secondsToRangeEnd(from: now) == nil)
        #expect(ClockOptions(start: ISO8601.date("2026-01-01T00:00:00Z")).secondsToRangeEnd(from: now) == nil)
        #expect {
            _ = try CommandLineParser.parseWatch([
                "--endpoint", "ipc:///tmp/a", "--state-dir", "d", "--clock-anchor", "5",
            ])
        } throws: { error in
            (error as? UsageError)?.message.contains("--clock-anchor needs --clock-start") == true
        }
    }

    @Test("Bad phone arguments name the flag and what is wrong", arguments: badPhone)
    func badPhoneArguments(arguments: [String], message: String) {
        #expect {
            _ = try CommandLineParser.parsePhone(arguments)
        } throws: { error in
            (error as? UsageError)?.message.contains(message) == true
        }
    }

    @Test(
        "Bad watch arguments name the flag and what is wrong",
        arguments: [
            (base + ["--bed-at", "10pm"], "--bed-at \"10pm\": expected a 24-hour time"),
            (base + ["--insecure=yes"], "--insecure takes no value (found \"yes\")"),
            (base + ["--manual-wake", "06:30"], "--manual-wake needs --bed-at"),
            (base + ["--bed-at", "22:30", "--manual-wake", "6:30"], "--manual-wake \"6:30\""),
            (base + ["--id", ""], "--id must not be empty"),
            (base + ["--warn-nights", "65"], "--warn-nights \"65\": expected a whole number from 0 to 64"),
            (base + ["--warn-nights", "-1"], "--warn-nights \"-1\": expected a whole number from 0 to 64"),
            (base + ["--schedule", "x.json"], "unknown option --schedule"),
        ])
    func badWatchArguments(arguments: [String], message: String) {
        #expect {
            _ = try CommandLineParser.parseWatch(arguments)
        } throws: { error in
            (error as? UsageError)?.message.contains(message) == true
        }
    }

    @Test("The virtual clock maps wall time and back: two clocks with the same flags agree")
    func virtualClock() {
        let options = ClockOptions(
            start: ISO8601.date("2025-03-06T17:00:00Z"), speed: 3600, anchor: Date(timeIntervalSince1970: 1000))
        let wall = Date(timeIntervalSince1970: 1010)
        let clock = VirtualClock(
            start: options.start!, speed: 3600, anchor: options.anchor!, wallNow: { wall }, monotonicNow: { 500 })
        #expect(clock.now == ISO8601.date("2025-03-07T03:00:00Z"))
        #expect(clock.wallDate(for: ISO8601.date("2025-03-07T03:00:00Z")!) == wall)
        #expect(ClockOptions().makeClock() is WallClock)
    }

    @Test("A wall clock stepped back does not move virtual time back: elapsed time is on CLOCK_MONOTONIC")
    func steppedWallClock() {
        final class Clocks: @unchecked Sendable {
            var wall = Date(timeIntervalSince1970: 1_000)
            var monotonic = 50.0
        }
        let clocks = Clocks()
        let clock = VirtualClock(
            start: ISO8601.date("2026-12-01T12:00:00Z")!, speed: 172_800, anchor: Date(timeIntervalSince1970: 1_000),
            wallNow: { clocks.wall }, monotonicNow: { clocks.monotonic })
        clocks.monotonic += 1
        clocks.wall = clocks.wall.addingTimeInterval(1)
        let before = clock.now
        #expect(before == ISO8601.date("2026-12-03T12:00:00Z"))
        // An NTP step of 0.2 s back: 9.6 virtual hours on the wall clock, none on the monotonic one.
        clocks.wall = clocks.wall.addingTimeInterval(-0.2)
        #expect(clock.now == before)
        clocks.monotonic += 0.5
        #expect(clock.now == before.addingTimeInterval(86_400))
        // A wall timer for an instant 1 virtual day ahead waits 0.5 s from the wall clock's reading.
        #expect(clock.wallDate(for: clock.now.addingTimeInterval(86_400)) == clocks.wall.addingTimeInterval(0.5))
    }

    @Test(
        "Settings of the other platform, and --keys with --insecure, are usage errors",
        arguments: [
            (["--bucket", "rare"], "Android settings"), (["--charging"], "Android settings"),
            (["--interval", "900"], "Android settings"),
            (["--platform", "android", "--registration", "late-silent"], "WorkManager has no registration step"),
            (["--keys", "k", "--insecure"], "exclude each other"),
        ])
    func platformMismatch(extra: [String], message: String) {
        #expect {
            _ = try CommandLineParser.parsePhone(Self.base + extra)
        } throws: { error in
            (error as? UsageError)?.message.contains(message) == true
        }
    }

    @Test("--horizon-days reaches the app configuration")
    func horizonDays() throws {
        guard case .run(let options) = try CommandLineParser.parsePhone(Self.base + ["--horizon-days", "14"]) else {
            Issue.record("expected options")
            return
        }
        #expect(options.os.appConfiguration(horizonDays: options.horizonDays).horizonDays == 14)
    }
}

extension Parsed {
    var isHelp: Bool {
        if case .help = self { true } else { false }
    }
    var isVersion: Bool {
        if case .version = self { true } else { false }
    }
    var options: Options? {
        if case .run(let options) = self { options } else { nil }
    }
}

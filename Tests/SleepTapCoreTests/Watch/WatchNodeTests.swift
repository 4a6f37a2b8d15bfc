// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import SleepTapCore

/// The watch node's decisions, driven by hand: every input with its `NodeTime`, every action
/// checked. No sockets, no clock, no files.
@Suite("Watch node")
struct WatchNodeTests {
    static let utc = TimeZone(identifier: "UTC")!
    static let tokyo = TimeZone(identifier: "Asia/Tokyo")!
    static let endpoint = "ipc:///run/sleeptap/phone.sock"
    /// 2026-06-20T10:00Z: 19:00 in Tokyo.
    static let t0 = ISO8601.date("2026-06-20T10:00:00Z")!

    static func node(
        keys: String? = nil, flagZone: TimeZone? = nil, bedAt: String? = nil, manualWake: String? = nil,
        warnNights: Int = WatchNode.Configuration.defaultWarnNights, state: WatchSyncState? = nil
    ) -> WatchNode {
        WatchNode(
            configuration: WatchNode.Configuration(
                endpoint: endpoint, statePath: "/state/watch.json", keysDirectory: keys, flagZone: flagZone,
                systemZone: utc, bedAt: bedAt.flatMap(LocalTime.init(parsing:)),
                manualWake: manualWake.flatMap(LocalTime.init(parsing:)), warnNights: warnNights),
            state: state)
    }

    /// `wall` seconds after the start, `now` virtual (t0 unless given).
    static func at(_ wall: TimeInterval, _ now: Date = t0) -> NodeTime { NodeTime(now: now, wall: wall) }

    static func events(_ actions: [WatchAction]) -> [Event] {
        actions.compactMap { if case .emit(let event, _) = $0 { event } else { nil } }
    }

    static func names(_ actions: [WatchAction]) -> [EventName] { events(actions).map(\.name) }

    static func sends(_ actions: [WatchAction]) -> [WireMessage] {
        actions.compactMap { if case .send(let message) = $0 { message } else { nil } }
    }

    static func diagnoses(_ actions: [WatchAction]) -> [String] {
        actions.compactMap { if case .diagnose(let line) = $0 { line } else { nil } }
    }

    static func event(_ name: EventName, in actions: [WatchAction]) throws -> Event {
        try #require(events(actions).first { $0.name == name }, "no \(name) in \(names(actions))")
    }

    /// A Tokyo batch of seven 07:00 wake-ups after `t0` (the first is 2026-06-20T22:00Z).
    static func tokyoBatch(seq: UInt64 = 1) -> WakeBatch {
        WakeBatch(
            seq: seq, generatedAt: t0, timeZone: tokyo.identifier,
            entries: BatchPlanner.entries(for: .everyDayAtSeven, in: tokyo, after: t0))
    }

    static func frame(_ message: WireMessage) -> [[UInt8]] { [WireCodec.encode(message)] }

    /// Runs the node's actions as a driver whose sends all succeed and whose writes end as
    /// `persist` says; returns them together with everything the results produced.
    static func drive(
        _ node: inout WatchNode, _ actions: [WatchAction], persist: PersistResult = .succeeded, at time: NodeTime
    ) -> [WatchAction] {
        var all: [WatchAction] = []
        for action in actions {
            all.append(action)
            switch action {
            case .send(let message):
                all += drive(&node, node.sent(message, .sent, at: time), persist: persist, at: time)
            case .persist: all += drive(&node, node.persisted(persist, at: time), persist: persist, at: time)
            default: break
            }
        }
        return all
    }

    // MARK: Liveness

    @Test("A valid message brings the phone online; 3 s of silence takes it offline, once; a PING counts")
    func liveness() throws {
        var node = Self.node()
        _ = node.start(processID: 1, at: Self.at(0))
        let first = node.received(WatchInbound(frames: Self.frame(.ping)), at: Self.at(0.5))
        #expect(Self.names(first) == [.peerOnline])
        #expect(Self.names(node.received(WatchInbound(frames: Self.frame(.ping)), at: Self.at(0.9))).isEmpty)
        #expect(Self.names(node.timerFired(.heartbeat, at: Self.at(1))).isEmpty)
        #expect(Self.names(node.timerFired(.heartbeat, at: Self.at(2))).isEmpty)
        #expect(Self.names(node.timerFired(.heartbeat, at: Self.at(3))).isEmpty)
        let silent = node.timerFired(.heartbeat, at: Self.at(4))
        let offline = try Self.event(.peerOffline, in: silent)
        #expect(offline["silentFor"] == .double(3) && offline["endpoint"] == .string(Self.endpoint))
        #expect(Self.names(node.timerFired(.heartbeat, at: Self.at(5))).isEmpty)
        #expect(Self.names(node.received(WatchInbound(frames: Self.frame(.ping)), at: Self.at(5.5))) == [.peerOnline])
    }

    @Test("A pause of the watch itself (a long gap between checks) is not the phone's silence")
    func ownPauseIsNotSilence() {
        var node = Self.node()
        _ = node.received(WatchInbound(frames: Self.frame(.ping)), at: Self.at(0))
        #expect(Self.names(node.timerFired(.heartbeat, at: Self.at(1))).isEmpty)
        // SIGSTOP for 20 s: the next check comes late and starts a fresh timeout.
        #expect(Self.names(node.timerFired(.heartbeat, at: Self.at(21))).isEmpty)
        for wall in 22...24 { #expect(Self.names(node.timerFired(.heartbeat, at: Self.at(Double(wall)))).isEmpty) }
        #expect(Self.names(node.timerFired(.heartbeat, at: Self.at(25))) == [.peerOffline])
    }

    @Test("The heartbeat PINGs only while the link is up, re-arms itself, and a PING's result says nothing")
    func heartbeatPing() {
        var node = Self.node()
        let down = node.timerFired(.heartbeat, at: Self.at(1))
        #expect(Self.sends(down).isEmpty)
        #expect(down.contains(.arm(.heartbeat, .after(LinkLiveness.interval))))
        _ = node.link(.handshakeSucceeded, at: Self.at(1.5))
        #expect(Self.sends(node.timerFired(.heartbeat, at: Self.at(2))) == [.ping])
        #expect(node.sent(.ping, .failed(reason: "no peer"), at: Self.at(2)).isEmpty)
        #expect(node.sendFailures == 0)
    }

    // MARK: Relink back-off

    @Test("Relink: 2 s after a drop, doubling to 30 s, reset by a handshake")
    func relinkBackOff() {
        var node = Self.node()
        _ = node.start(processID: 1, at: Self.at(0))
        _ = node.link(.handshakeSucceeded, at: Self.at(0.1))
        let dropped = node.link(.disconnected, at: Self.at(1))
        #expect(Self.names(dropped) == [.linkDown])
        #expect(dropped.contains(.arm(.relink, .after(2))))
        // A second drop while the relink is armed does not push it back.
        #expect(
            !node.link(.disconnected, at: Self.at(1.5)).contains {
                if case .arm(.relink, _) = $0 { true } else { false }
            })
        var delays: [TimeInterval] = []
        for wall in 0..<7 {
            let actions = node.timerFired(.relink, at: Self.at(Double(3 + wall)))
            #expect(actions.first == .reconnect)
            for case .arm(.relink, .after(let delay)) in actions { delays.append(delay) }
        }
        #expect(delays == [4, 8, 16, 30, 30, 30, 30])
        let up = node.link(.handshakeSucceeded, at: Self.at(20))
        #expect(up.contains(.cancel(.relink)) && up.contains(.cancel(.handshake)))
        #expect(!node.armed.contains(.relink))
        #expect(node.link(.disconnected, at: Self.at(21)).contains(.arm(.relink, .after(2))))
    }

    @Test("A reconnect's result is reported: link.reconnect, or link.reconnect_failed with the reason")
    func reconnectResult() throws {
        var node = Self.node()
        #expect(Self.names(node.reconnected(.succeeded, at: Self.at(1))) == [.linkReconnect])
        let failed = try Self.event(
            .linkReconnectFailed, in: node.reconnected(.failed(reason: "EINVAL"), at: Self.at(2)))
        #expect(failed["reason"] == .string("EINVAL"))
    }

    @Test("A drop of a link that never came up is not link.down")
    func noLinkDownBeforeUp() {
        var node = Self.node()
        #expect(Self.names(node.link(.disconnected, at: Self.at(1))).isEmpty)
    }

    // MARK: Handshake diagnosis

    @Test("No connection at all: the phone is not reachable, with the failed attempts; no blame on keys")
    func handshakeNotReachable() throws {
        var node = Self.node(keys: "/keys")
        let started = node.start(processID: 1, at: Self.at(0))
        #expect(started.contains(.arm(.handshake, .after(5))))
        for wall in 1...3 { _ = node.link(.connectRetried, at: Self.at(Double(wall))) }
        let timeout = node.timerFired(.handshake, at: Self.at(5))
        let reason = try Self.event(.linkHandshakeTimeout, in: timeout)["reason"]
        let expected =
            "the phone is not reachable at \(Self.endpoint): no connection could be made (3 attempts failed); is the phone running there?"
        #expect(reason == .string(expected))
        #expect(Self.diagnoses(timeout) == [expected])
        #expect(timeout.contains(.arm(.handshake, .after(30))))
        // The counts start again with the next deadline.
        let again = node.timerFired(.handshake, at: Self.at(35))
        #expect(Self.diagnoses(again).first?.contains("(0 attempts failed)") == true)
    }

    @Test("A connection without a handshake: with CURVE, check phone.key; without, does the phone need CURVE")
    func handshakeConnectedButRefused() throws {
        var curve = Self.node(keys: "/keys")
        _ = curve.start(processID: 1, at: Self.at(0))
        _ = curve.link(.connectRetried, at: Self.at(0.1))
        _ = curve.link(.connected, at: Self.at(0.2))
        let curveReason = try Self.event(.linkHandshakeTimeout, in: curve.timerFired(.handshake, at: Self.at(5)))
        #expect(
            curveReason["reason"]
                == .string(
                    "connected to \(Self.endpoint), but no CURVE handshake with the phone followed: check that "
                        + "/keys/phone.key is the phone's certificate and this watch is paired with it"))
        var plain = Self.node()
        _ = plain.start(processID: 1, at: Self.at(0))
        _ = plain.link(.connected, at: Self.at(0.2))
        let plainReason = try Self.event(.linkHandshakeTimeout, in: plain.timerFired(.handshake, at: Self.at(5)))
        #expect(
            plainReason["reason"]
                == .string(
                    "connected to \(Self.endpoint), but no handshake with the phone followed: "
                        + "is a SleepTap phone listening there, and does it require CURVE (--keys DIR)?"))
    }

    @Test("A drop re-arms the 5 s handshake deadline only when none is armed; a handshake cancels it")
    func handshakeDeadlineAfterDrop() {
        var node = Self.node()
        _ = node.start(processID: 1, at: Self.at(0))
        #expect(node.link(.handshakeSucceeded, at: Self.at(0.1)).contains(.cancel(.handshake)))
        #expect(node.link(.disconnected, at: Self.at(1)).contains(.arm(.handshake, .after(5))))
        #expect(!node.link(.disconnected, at: Self.at(2)).contains(.arm(.handshake, .after(5))))
    }

    @Test("Failed handshakes: refused key, missing CURVE or wrong key in words; repeats held back for 30 s")
    func handshakeFailed() throws {
        var refused = Self.node(keys: "/keys")
        let first = refused.link(
            .handshakeFailed(code: 400, authentication: true, description: "authentication failed"), at: Self.at(1))
        let reason = "the phone refused this watch (status 400): its key is not paired with the phone"
        #expect(try Self.event(.linkHandshakeFailed, in: first)["reason"] == .string(reason))
        #expect(Self.diagnoses(first) == ["\(Self.endpoint): \(reason)"])
        // libzmq retries every second: the repeats within the window say nothing, not even on stderr.
        for wall in 2...29 {
            #expect(
                refused.link(
                    .handshakeFailed(code: 400, authentication: true, description: "authentication failed"),
                    at: Self.at(Double(wall))
                ).isEmpty)
        }
        let summary = try Self.event(.linkHandshakeFailed, in: refused.timerFired(.heartbeat, at: Self.at(31)))
        #expect(summary["suppressed"] == .int(27))

        var plain = Self.node()
        let mismatch = plain.link(
            .handshakeFailed(code: 0x1100_0002, authentication: false, description: "mechanism mismatch"),
            at: Self.at(1))
        #expect(
            try Self.event(.linkHandshakeFailed, in: mismatch)["reason"]
                == .string("the handshake failed: mechanism mismatch; the phone may require CURVE; pass --keys DIR"))
        var wrongKey = Self.node(keys: "/keys")
        let wrong = wrongKey.link(
            .handshakeFailed(code: 0x1100_0002, authentication: false, description: "bad"), at: Self.at(1))
        #expect(
            try Self.event(.linkHandshakeFailed, in: wrong)["reason"]
                == .string("the handshake failed: bad; check that phone.key is the phone's current public certificate"))
    }

    @Test("After the phone refused this watch's key (400), the handshake deadline does not also blame phone.key")
    func refusedKeyIsNotPhoneKey() throws {
        var node = Self.node(keys: "/keys")
        _ = node.start(processID: 1, at: Self.at(0))
        _ = node.link(.connected, at: Self.at(0.2))
        _ = node.link(
            .handshakeFailed(code: 400, authentication: true, description: "authentication failed"), at: Self.at(0.3))
        let timeout = try Self.event(.linkHandshakeTimeout, in: node.timerFired(.handshake, at: Self.at(5)))
        guard case .string(let reason)? = timeout["reason"] else {
            Issue.record("no reason in \(timeout)")
            return
        }
        #expect(!reason.contains("phone.key"), "\(reason)")
        #expect(reason.contains("refused this watch's key") && reason.contains("/keys/watch.key"), "\(reason)")
    }

    @Test(
        "Clock skew: a BATCH generated hours after the watch's now, or more than 8 days before it, is warned of (clock.skew), and applied as usual"
    )
    func clockSkew() throws {
        var node = Self.node()
        _ = node.start(processID: 1, at: Self.at(0))
        _ = node.link(.handshakeSucceeded, at: Self.at(0.1))
        // The watch runs a day behind the phone (--clock-anchor A and A + 86400, issue's case).
        let behind = Self.t0.addingTimeInterval(-86_400)
        let actions = Self.drive(
            &node, node.received(WatchInbound(frames: Self.frame(.batch(Self.tokyoBatch()))), at: Self.at(1, behind)),
            at: Self.at(1))
        let skew = try Self.event(.clockSkew, in: actions)
        #expect(skew["skewHours"] == .double(24) && skew["message"] == .string("BATCH"))
        #expect(Self.names(actions).contains(.batchApplied))
        // Within an hour ahead, or a resend from a week ago: no warning.
        #expect(ClockSkew.check(generatedAt: Self.t0, now: Self.t0.addingTimeInterval(-3_000)) == nil)
        #expect(ClockSkew.check(generatedAt: Self.t0, now: Self.t0.addingTimeInterval(7 * 86_400)) == nil)
        #expect(
            ClockSkew.check(generatedAt: Self.t0, now: Self.t0.addingTimeInterval(9 * 86_400))?["skewHours"]
                == .double(-216))
    }

    // MARK: Frame errors

    @Test("Two frames: rejected, counted and answered with ERROR; the state is untouched")
    func multiFrame() throws {
        var node = Self.node()
        let actions = node.received(WatchInbound(frames: [Array("{}".utf8), Array("{}".utf8)]), at: Self.at(1))
        #expect(try Self.event(.messageRejected, in: actions)["reason"] == .string("expected 1 frame, got 2"))
        #expect(Self.sends(actions) == [.error(reason: "expected 1 frame, got 2")])
        #expect(node.rejectedMessages == 1)
        #expect(node.core.state == WatchSyncState())
        #expect(!node.liveness.online)
    }

    @Test("Not JSON: rejected and answered; a bad frame that claims to be an ERROR is never answered")
    func badJSONAndErrorNeverAnswered() throws {
        var node = Self.node()
        let garbage = node.received(WatchInbound(frames: [Array("not json".utf8)]), at: Self.at(1))
        #expect(Self.names(garbage) == [.messageRejected])
        #expect(Self.sends(garbage).count == 1)
        if case .error(let reason) = try #require(Self.sends(garbage).first) {
            #expect(try Self.event(.messageRejected, in: garbage)["reason"] == .string(reason))
        } else {
            Issue.record("not an ERROR: \(Self.sends(garbage))")
        }
        let badError = node.received(WatchInbound(frames: [Array(#"{"v":1,"type":"ERROR"}"#.utf8)]), at: Self.at(2))
        #expect(Self.sends(badError).isEmpty)
        #expect(node.rejectedMessages == 2)
        // A valid ERROR from the phone is reported (peer.error), never answered either.
        let peerError = node.received(WatchInbound(frames: Self.frame(.error(reason: "who are you"))), at: Self.at(3))
        #expect(Self.sends(peerError).isEmpty)
        #expect(try Self.event(.peerError, in: peerError)["reason"] == .string("who are you"))
    }

    @Test("Rejections are held back after the first (a flood of garbage is one line a window), all counted")
    func rejectionFloodHeldBack() {
        var node = Self.node()
        var lines = 0
        for index in 0..<100 {
            lines +=
                Self.names(
                    node.received(WatchInbound(frames: [Array("x\(index)".utf8)]), at: Self.at(Double(index) * 0.01))
                )
                .count
        }
        #expect(lines == 1)
        #expect(node.rejectedMessages == 100)
    }

    @Test("A watch-to-phone message from the phone is refused and answered with ERROR")
    func wrongDirection() throws {
        var node = Self.node()
        let actions = node.received(WatchInbound(frames: Self.frame(.hello(nil))), at: Self.at(1))
        #expect(Self.names(actions) == [.peerOnline, .messageReceived, .messageRejected])
        #expect(Self.sends(actions) == [.error(reason: "HELLO is a watch-to-phone message")])
    }

    // MARK: Stdin commands

    @Test(
        "The stdin language parses into commands",
        arguments: [
            ("", WatchCommand.empty), ("  ", .empty), ("bed", .bed), (" bed\t", .bed), ("status", .status),
            ("quit", .quit), ("time-zone Asia/Tokyo", .timeZone(TimeZone(identifier: "Asia/Tokyo")!)),
            ("time-zone  Asia/Tokyo", .timeZone(TimeZone(identifier: "Asia/Tokyo")!)),
            ("07:30", .wakeTime(LocalTime(parsing: "07:30")!)),
            (
                "time-zone",
                .invalid(
                    input: "time-zone", reason: "expected time-zone TZ with one IANA zone, e.g. time-zone Asia/Tokyo")
            ),
            (
                "time-zone Mars/Olympus",
                .invalid(
                    input: "time-zone Mars/Olympus",
                    reason: WakeCalendar.unknownZoneReason("Mars/Olympus"))
            ),
            (
                "time-zone A B",
                .invalid(
                    input: "time-zone A B",
                    reason: "expected time-zone TZ with one IANA zone, e.g. time-zone Asia/Tokyo")
            ),
            ("7:30", .invalid(input: "7:30", reason: WatchCommand.wakeTimeReason)),
            ("25:00", .invalid(input: "25:00", reason: WatchCommand.wakeTimeReason)),
            ("beds", .unrecognized("beds")), ("BED", .unrecognized("BED")),
            ("status 1", .invalid(input: "status 1", reason: "status takes no argument")),
            ("bed now", .invalid(input: "bed now", reason: "bed takes no argument")),
            ("\tstatus", .status), ("07:00 x", .invalid(input: "07:00 x", reason: WatchCommand.wakeTimeReason)),
            (
                "time-zone",
                .invalid(
                    input: "time-zone", reason: "expected time-zone TZ with one IANA zone, e.g. time-zone Asia/Tokyo")
            ),
        ])
    func parse(line: String, command: WatchCommand) {
        #expect(WatchCommand(parsing: line) == command)
    }

    @Test("bed without a batch falls back to manual entry; a typed HH:MM then answers it in the zone in force")
    func bedAndManualWake() throws {
        var node = Self.node(flagZone: Self.tokyo)
        #expect(Self.names(node.command(line: "bed", at: Self.at(1))) == [.fallbackManualEntry])
        let manual = try Self.event(.manualWakeTime, in: node.command(line: "07:00", at: Self.at(2)))
        #expect(manual["wakeTime"] == .date(ISO8601.date("2026-06-20T22:00:00Z")!))
        #expect(manual["timeZone"] == .string("Asia/Tokyo"))
    }

    @Test(
        "HH:MM with no prompt open, and any other line, are rejected with the reason, prompt open or not; a blank line says nothing"
    )
    func rejectedLines() throws {
        var node = Self.node()
        #expect(node.command(line: "", at: Self.at(1)).isEmpty)
        let noPrompt = try Self.event(.inputRejected, in: node.command(line: "07:00", at: Self.at(1)))
        #expect(noPrompt["reason"] == .string("no manual-entry prompt is open; tap bed first"))
        let unknown = try Self.event(.inputRejected, in: node.command(line: "dance", at: Self.at(1)))
        #expect(unknown["input"] == .string("dance"))
        #expect(unknown["reason"] == .string(WatchCommand.unknownCommandReason))
        #expect(WatchCommand.unknownCommandReason.contains("stop, snooze"))
        let badZone = try Self.event(.inputRejected, in: node.command(line: "time-zone Mars/Olympus", at: Self.at(1)))
        #expect(
            badZone["reason"] == .string(WakeCalendar.unknownZoneReason("Mars/Olympus")))
        // With a prompt open, a bad time is refused as a time, and any other line gets the
        // command's own answer; the prompt stays open.
        _ = node.command(line: "bed", at: Self.at(2))
        #expect(node.core.awaitingManualEntry)
        let notATime = try Self.event(.inputRejected, in: node.command(line: "25:00", at: Self.at(3)))
        #expect(notATime["reason"] == .string("expected a wake time HH:MM (00:00-23:59)"))
        let upper = try Self.event(.inputRejected, in: node.command(line: "BED", at: Self.at(3)))
        #expect(upper["reason"] == .string(WatchCommand.unknownCommandReason))
        let extra = try Self.event(.inputRejected, in: node.command(line: "status 1", at: Self.at(3)))
        #expect(extra["reason"] == .string("status takes no argument"))
        #expect(Self.names(node.command(line: "status", at: Self.at(3))) == [.cacheStatus])
        #expect(node.core.awaitingManualEntry)
        let manual = try Self.event(.manualWakeTime, in: node.command(line: "07:00", at: Self.at(4)))
        #expect(manual["localTime"] == .string("07:00"))
    }

    @Test("status carries the cache and the counts of rejected messages and failed sends")
    func status() throws {
        var node = Self.node()
        _ = node.received(WatchInbound(frames: [Array("junk".utf8)]), at: Self.at(1))
        _ = node.sent(.hello(nil), .failed(reason: "no peer"), at: Self.at(1))
        let status = try Self.event(.cacheStatus, in: node.command(line: "status", at: Self.at(2)))
        #expect(status["rejectedMessages"] == .int(1) && status["sendFailures"] == .int(1))
        #expect(status["seq"] == .int(0) && status["count"] == .int(0))
    }

    @Test("status names the zone the watch lives in and where it came from, beside the batch's zone")
    func statusZone() throws {
        var node = Self.node(flagZone: TimeZone(identifier: "Asia/Tokyo"))
        var status = try Self.event(.cacheStatus, in: node.command(line: "status", at: Self.at(1)))
        #expect(status["tapTimeZone"] == .string("Asia/Tokyo") && status["tapTimeZoneSource"] == .string("--time-zone"))
        #expect(status["timeZone"] == .null, "no batch yet")
        _ = node.command(line: "time-zone Europe/Berlin", at: Self.at(2))
        status = try Self.event(.cacheStatus, in: node.command(line: "status", at: Self.at(3)))
        #expect(
            status["tapTimeZone"] == .string("Europe/Berlin") && status["tapTimeZoneSource"] == .string("time-zone"))
    }

    @Test("quit and each stop cause: watch.stopping, then stop")
    func stopping() throws {
        var node = Self.node()
        let quit = node.command(line: "quit", at: Self.at(1))
        #expect(quit.last == .stop)
        #expect(try Self.event(.watchStopping, in: quit)["reason"] == .string("quit"))
        let signal = node.stop(.signal(15), at: Self.at(2))
        #expect(signal.last == .stop)
        #expect(try Self.event(.watchStopping, in: signal)["signal"] == .int(15))
        let eof = node.stop(.endOfTerminalInput, at: Self.at(2))
        #expect(try Self.event(.watchStopping, in: eof)["reason"] == .string("end of input"))
        let closed = node.stop(.outputClosed, at: Self.at(2))
        #expect(try Self.event(.watchStopping, in: closed)["reason"] == .string("output closed"))
    }

    @Test(
        "watch.stopping is the last line: held-back rejected messages are said before it, nothing at the end",
        arguments: [StopCause.signal(2), .endOfTerminalInput, .outputClosed, nil])
    func stoppingIsLast(cause: StopCause?) throws {
        var node = Self.node()
        for wall in 0..<5 { _ = node.received(WatchInbound(frames: [Array("junk".utf8)]), at: Self.at(Double(wall))) }
        let stop = cause.map { node.stop($0, at: Self.at(6)) } ?? node.command(line: "quit", at: Self.at(6))
        #expect(Self.names(stop).last == .watchStopping, "\(Self.names(stop))")
        #expect(stop.last == .stop)
        #expect(try Self.event(.messageRejected, in: stop)["suppressed"] == .int(3))
        #expect(node.finish(at: Self.at(7)).isEmpty, "the end after a stop says nothing more")
    }

    @Test("At the end, what is held back is said with its count")
    func finishSaysHeldBack() throws {
        var node = Self.node()
        for wall in 0..<5 { _ = node.received(WatchInbound(frames: [Array("junk".utf8)]), at: Self.at(Double(wall))) }
        let summary = try Self.event(.messageRejected, in: node.finish(at: Self.at(6)))
        #expect(summary["suppressed"] == .int(3))
    }

    // MARK: Zones and the nightly tap

    @Test("A Tokyo batch moves the watch: the bed tap is planned again at 22:30 Tokyo and returns the next morning")
    func batchZoneReplansBed() throws {
        var node = Self.node(bedAt: "22:30")
        let started = node.start(processID: 7, at: Self.at(0))
        #expect(try Self.event(.watchStarted, in: started)["timeZoneSource"] == .string("system"))
        #expect(started.contains(.arm(.bed, .at(ISO8601.date("2026-06-20T22:30:00Z")!))))
        let received = node.received(WatchInbound(frames: Self.frame(.batch(Self.tokyoBatch()))), at: Self.at(1))
        let applied = Self.drive(&node, received, at: Self.at(1))
        let tokyoBed = ISO8601.date("2026-06-20T13:30:00Z")!
        #expect(applied.contains(.arm(.bed, .at(tokyoBed))))
        let changed = try Self.event(.timezoneChanged, in: applied)
        #expect(changed["from"] == .string(Self.utc.identifier) && changed["to"] == .string("Asia/Tokyo"))
        #expect(changed["timeZoneSource"] == .string("batch") && changed["nextBedTap"] == .date(tokyoBed))
        let tap = node.timerFired(.bed, at: Self.at(2, tokyoBed.addingTimeInterval(0.4)))
        let wake = try Self.event(.bedWakeTime, in: tap)
        #expect(wake["wakeTime"] == .date(ISO8601.date("2026-06-20T22:00:00Z")!))
        #expect(tap.contains { if case .emit(_, let at) = $0 { at == tokyoBed } else { false } })
        #expect(tap.contains(.arm(.bed, .at(tokyoBed.addingTimeInterval(86_400)))))
    }

    @Test("time-zone TZ wins over the batch's zone and re-plans the tap, announced even to the same zone")
    func travelReplansBed() throws {
        var node = Self.node(bedAt: "22:30")
        _ = node.start(processID: 7, at: Self.at(0))
        let travelled = node.command(line: "time-zone America/New_York", at: Self.at(1))
        let newYorkBed = ISO8601.date("2026-06-21T02:30:00Z")!
        #expect(travelled.contains(.arm(.bed, .at(newYorkBed))))
        let changed = try Self.event(.timezoneChanged, in: travelled)
        #expect(changed["timeZoneSource"] == .string("time-zone") && changed["to"] == .string("America/New_York"))
        // A batch in Tokyo no longer moves a watch whose user travelled.
        let received = node.received(WatchInbound(frames: Self.frame(.batch(Self.tokyoBatch()))), at: Self.at(2))
        #expect(!Self.names(Self.drive(&node, received, at: Self.at(2))).contains(.timezoneChanged))
        #expect(Self.names(node.command(line: "time-zone America/New_York", at: Self.at(3))) == [.timezoneChanged])
    }

    @Test("--time-zone wins over the batch's zone")
    func flagZoneWins() {
        var node = Self.node(flagZone: Self.utc, bedAt: "22:30")
        _ = node.start(processID: 7, at: Self.at(0))
        let received = node.received(WatchInbound(frames: Self.frame(.batch(Self.tokyoBatch()))), at: Self.at(1))
        let applied = Self.drive(&node, received, at: Self.at(1))
        #expect(!Self.names(applied).contains(.timezoneChanged))
        #expect(node.nextBed == ISO8601.date("2026-06-20T22:30:00Z"))
    }

    @Test("The nightly tap with no dates asks for the wake time and the simulated user answers --manual-wake")
    func nightlyTapManualWake() throws {
        var node = Self.node(flagZone: Self.tokyo, bedAt: "22:30", manualWake: "06:45")
        _ = node.start(processID: 7, at: Self.at(0))
        let bed = try #require(node.nextBed)
        #expect(bed == ISO8601.date("2026-06-20T13:30:00Z"))
        let tap = node.timerFired(.bed, at: Self.at(1, bed.addingTimeInterval(2)))
        #expect(Self.names(tap) == [.fallbackManualEntry, .manualWakeTime, .alarmSet])
        #expect(try Self.event(.manualWakeTime, in: tap)["wakeTime"] == .date(ISO8601.date("2026-06-20T21:45:00Z")!))
        // Both at the tap's planned instant, not when the timer woke.
        #expect(tap.allSatisfy { if case .emit(_, let at) = $0 { at == bed } else { true } })
        #expect(!node.core.awaitingManualEntry)
        // The next night planned; then the alarm set is written to the state file.
        #expect(tap.dropLast().last == .arm(.bed, .at(bed.addingTimeInterval(86_400))))
        #expect(tap.last == .persist(WatchSyncState(alarms: [ISO8601.date("2026-06-20T21:45:00Z")!])))
    }

    /// Found by the date-exhaustion soak as processes (seed 2026, timeline 0): the driver read a
    /// BATCH that came after the tap's instant before it handled the late bed timer; the tap,
    /// stamped at its instant, gave a wake-up from dates the watch did not hold then.
    @Test("A bed tap already due when a later BATCH is read is taken first, at its instant, with the dates held then")
    func dueBedTapBeforeLateBatch() throws {
        var node = Self.node(flagZone: Self.tokyo, bedAt: "22:30", manualWake: "06:45")
        _ = node.start(processID: 7, at: Self.at(0))
        let bed = try #require(node.nextBed)
        // Not yet due: the batch alone.
        let early = node.received(
            WatchInbound(frames: Self.frame(.batch(Self.tokyoBatch()))), at: Self.at(1, bed.addingTimeInterval(-60)))
        #expect(!Self.names(early).contains(.fallbackManualEntry) && !Self.names(early).contains(.bedWakeTime))
        // A fresh watch, and the batch read five virtual minutes after the tap's instant.
        node = Self.node(flagZone: Self.tokyo, bedAt: "22:30", manualWake: "06:45")
        _ = node.start(processID: 7, at: Self.at(0))
        let late = bed.addingTimeInterval(300)
        let received = node.received(WatchInbound(frames: Self.frame(.batch(Self.tokyoBatch()))), at: Self.at(1, late))
        let actions = Self.drive(&node, received, at: Self.at(1, late))
        let names = Self.names(actions)
        #expect(Array(names.prefix(2)) == [.fallbackManualEntry, .manualWakeTime], "\(names)")
        #expect(names.contains(.batchApplied))
        let stamps = actions.compactMap { if case .emit(let event, let at) = $0 { (event.name, at) } else { nil } }
        #expect(stamps.prefix(2).allSatisfy { $0.1 == bed }, "the tap at its own instant")
        #expect(stamps.first { $0.0 == .batchApplied }?.1 == late)
        #expect(stamps.map(\.1) == stamps.map(\.1).sorted(), "the events in time order")
        #expect(actions.contains(.arm(.bed, .at(bed.addingTimeInterval(86_400)))))
        #expect(node.nextBed == bed.addingTimeInterval(86_400))
        // The next night's tap reads the new dates.
        let next = node.timerFired(.bed, at: Self.at(2, bed.addingTimeInterval(86_400)))
        // The night before's alarm rang at its wake-up, before this tap.
        #expect(Self.names(next) == [.alarmFired, .bedWakeTime, .alarmSet])
        // The same through the twin's typed link (a decoded message).
        node = Self.node(flagZone: Self.tokyo, bedAt: "22:30", manualWake: "06:45")
        _ = node.start(processID: 7, at: Self.at(0))
        let typed = node.received(message: .batch(Self.tokyoBatch()), at: Self.at(1, late))
        #expect(Array(Self.names(typed).prefix(2)) == [.fallbackManualEntry, .manualWakeTime])
    }

    @Test("A bed tap already due is taken before a late stdin line and a link event, in the zone it was planned in")
    func dueBedTapBeforeCommandAndLink() throws {
        var node = Self.node(flagZone: Self.tokyo, bedAt: "22:30", manualWake: "06:45")
        _ = node.start(processID: 7, at: Self.at(0))
        let bed = try #require(node.nextBed)
        let travelled = node.command(line: "time-zone America/New_York", at: Self.at(1, bed.addingTimeInterval(60)))
        #expect(
            Array(Self.names(travelled).prefix(4)) == [
                .fallbackManualEntry, .manualWakeTime, .alarmSet, .timezoneChanged,
            ])
        let tap = try Self.event(.fallbackManualEntry, in: travelled)
        #expect(tap["tapTimeZone"] == .string("Asia/Tokyo"), "\(tap)")
        let newYorkBed = try #require(node.nextBed)
        #expect(newYorkBed == ISO8601.date("2026-06-21T02:30:00Z"))
        // Two nights late (the watch was stopped): both taps, each at its instant, then the link.
        let up = node.link(.handshakeSucceeded, at: Self.at(2, newYorkBed.addingTimeInterval(86_400 + 1)))
        let stamps = up.compactMap { if case .emit(let event, let at) = $0 { (event.name, at) } else { nil } }
        #expect(
            stamps.filter { $0.0 == .fallbackManualEntry }.map(\.1) == [
                newYorkBed, newYorkBed.addingTimeInterval(86_400),
            ])
        #expect(stamps.last?.0 == .linkUp || Self.names(up).contains(.linkUp))
        #expect(node.nextBed == newYorkBed.addingTimeInterval(2 * 86_400))
    }

    // MARK: Early warning

    /// A Tokyo batch of seven 07:00 wake-ups after `instant` (22:00Z each).
    static func tokyoBatch(seq: UInt64, after instant: Date) -> WakeBatch {
        WakeBatch(
            seq: seq, generatedAt: instant, timeZone: tokyo.identifier,
            entries: BatchPlanner.entries(for: .everyDayAtSeven, in: tokyo, after: instant))
    }

    /// A stdin bed tap at `iso`: its events' names and the `coverage.low` among them, if any.
    static func tap(_ node: inout WatchNode, _ iso: String) throws -> (names: [EventName], low: Event?) {
        let actions = node.command(.bed, at: at(1, try #require(ISO8601.date(iso))))
        // The alarms set by earlier taps ring in between (WatchAlarmTests): not this test's subject.
        let names = names(actions).filter { ![.alarmSet, .alarmFired, .alarmStopped].contains($0) }
        return (names, events(actions).first { $0.name == .coverageLow })
    }

    @Test("coverage.low once when the nights left reach --warn-nights, again only after a batch raised them above it")
    func coverageLowOncePerCrossing() throws {
        var node = Self.node(flagZone: Self.tokyo)
        let applied = Self.drive(
            &node, node.received(WatchInbound(frames: Self.frame(.batch(Self.tokyoBatch()))), at: Self.at(1)),
            at: Self.at(1))
        #expect(!Self.names(applied).contains(.coverageLow))
        // Wake-ups 2026-06-20T22:00Z ... 06-26T22:00Z. At 06-24T13:00Z three are ahead.
        #expect(try Self.tap(&node, "2026-06-24T13:00:00Z").low == nil)
        let crossing = try Self.tap(&node, "2026-06-25T13:00:00Z")
        #expect(crossing.names == [.bedWakeTime, .coverageLow])
        let low = try #require(crossing.low)
        #expect(low["nightsLeft"] == .int(2))
        #expect(low["coverageEnd"] == .date(ISO8601.date("2026-06-26T22:00:00Z")!))
        // Still low, one night left, then none: no second warning for the same spell.
        #expect(try Self.tap(&node, "2026-06-26T13:00:00Z").names == [.bedWakeTime])
        #expect(try Self.tap(&node, "2026-06-27T13:00:00Z").names == [.fallbackManualEntry])
        // A fresh batch raises the nights left to 7: the next fall to 2 warns again.
        let refill = Self.tokyoBatch(seq: 2, after: ISO8601.date("2026-06-27T14:00:00Z")!)
        let refilled = Self.drive(
            &node,
            node.received(
                WatchInbound(frames: Self.frame(.batch(refill))), at: Self.at(2, ISO8601.date("2026-06-27T14:00:00Z")!)),
            at: Self.at(2))
        #expect(!Self.names(refilled).contains(.coverageLow))
        #expect(try Self.tap(&node, "2026-07-01T13:00:00Z").low == nil)
        let again = try #require(try Self.tap(&node, "2026-07-02T13:00:00Z").low)
        #expect(again["nightsLeft"] == .int(2))
    }

    @Test("--warn-nights sets the threshold: 3 warns at three nights left, 0 never warns")
    func warnNightsThreshold() throws {
        var three = Self.node(
            flagZone: Self.tokyo, warnNights: 3, state: WatchSyncState(lastAppliedSeq: 1, batch: Self.tokyoBatch()))
        #expect(try Self.tap(&three, "2026-06-23T13:00:00Z").low == nil)
        let low = try #require(try Self.tap(&three, "2026-06-24T13:00:00Z").low)
        #expect(low["nightsLeft"] == .int(3))
        var never = Self.node(
            flagZone: Self.tokyo, warnNights: 0, state: WatchSyncState(lastAppliedSeq: 1, batch: Self.tokyoBatch()))
        for day in 21...28 {
            #expect(try Self.tap(&never, "2026-06-\(day)T13:00:00Z").low == nil)
        }
        let status = try Self.event(
            .cacheStatus, in: never.command(.status, at: Self.at(2, ISO8601.date("2026-06-28T13:00:00Z")!)))
        #expect(status["nightsLeft"] == .int(0) && status["coverageLow"] == .bool(false))
    }

    @Test("A batch that arrives with the nights left already at the threshold warns once it is on disk, not before")
    func coverageLowAtBatch() throws {
        let late = ISO8601.date("2026-06-25T13:00:00Z")!
        var node = Self.node(flagZone: Self.tokyo)
        let failed = Self.drive(
            &node, node.received(WatchInbound(frames: Self.frame(.batch(Self.tokyoBatch()))), at: Self.at(1, late)),
            persist: .failed(errno: 28, reason: "No space left on device"), at: Self.at(1, late))
        #expect(!Self.names(failed).contains(.coverageLow))
        let stored = Self.drive(
            &node, node.received(WatchInbound(frames: Self.frame(.batch(Self.tokyoBatch()))), at: Self.at(2, late)),
            at: Self.at(2, late))
        #expect(Array(Self.names(stored).filter { $0 != .complicationReloaded }.suffix(2)) == [.ackSent, .coverageLow])
        #expect(try Self.event(.coverageLow, in: stored)["nightsLeft"] == .int(2))
        let status = try Self.event(.cacheStatus, in: node.command(.status, at: Self.at(3, late)))
        #expect(
            status["nightsLeft"] == .int(2) && status["remaining"] == .int(2) && status["coverageLow"] == .bool(true))
    }

    @Test("A watch with no batch is not warned: no coverage to run low, its tap says why")
    func noBatchNoWarning() throws {
        var node = Self.node(flagZone: Self.tokyo)
        #expect(try Self.tap(&node, "2026-06-20T13:00:00Z").names == [.fallbackManualEntry])
        let status = try Self.event(.cacheStatus, in: node.command(.status, at: Self.at(2)))
        #expect(status["nightsLeft"] == .int(0) && status["coverageLow"] == .bool(false))
    }

    // MARK: Durable before acknowledged

    @Test("A batch is acknowledged only after its write succeeded: the ACK waits for the persist result")
    func ackAfterPersist() throws {
        var node = Self.node()
        let batch = Self.tokyoBatch()
        let received = node.received(WatchInbound(frames: Self.frame(.batch(batch))), at: Self.at(1))
        guard case .persist(let state) = try #require(received.last) else {
            Issue.record("the batch is not written first: \(received)")
            return
        }
        #expect(state.batch == batch)
        #expect(Self.sends(received).isEmpty)
        let after = node.persisted(.succeeded, at: Self.at(1))
        #expect(Self.names(after).first == .batchApplied)
        #expect(Self.sends(after) == [.ack(batch.ref, coverageEnd: batch.coverageEnd)])
    }

    @Test("A failed write: persist.failed with the reason, no ACK, the state and the zone as before")
    func persistFailure() throws {
        var node = Self.node(bedAt: "22:30")
        _ = node.start(processID: 7, at: Self.at(0))
        let received = node.received(WatchInbound(frames: Self.frame(.batch(Self.tokyoBatch()))), at: Self.at(1))
        let after = Self.drive(
            &node, received, persist: .failed(errno: 28, reason: "No space left on device"), at: Self.at(1))
        let failed = try Self.event(.persistFailed, in: after)
        #expect(failed["path"] == .string("/state/watch.json"))
        #expect(failed["reason"] == .string("No space left on device"))
        #expect(!Self.sends(after).contains { if case .ack = $0 { true } else { false } })
        #expect(!Self.names(after).contains(.batchApplied))
        #expect(node.core.state == WatchSyncState())
        #expect(node.plannedZone.identifier == Self.utc.identifier)
        #expect(node.nextBed == ISO8601.date("2026-06-20T22:30:00Z"))
        // A late result without a write pending changes nothing.
        #expect(node.persisted(.succeeded, at: Self.at(2)).isEmpty)
        // The phone resends; this time the write succeeds and the ACK goes out.
        let again = node.received(WatchInbound(frames: Self.frame(.batch(Self.tokyoBatch()))), at: Self.at(3))
        #expect(
            Self.sends(Self.drive(&node, again, at: Self.at(3))).contains { if case .ack = $0 { true } else { false } })
    }

    // MARK: Sends

    @Test("Failed sends are counted and reported once a window; a success ends the stream with its count")
    func sendFailures() throws {
        var node = Self.node()
        let first = node.sent(.hello(nil), .failed(reason: "Resource temporarily unavailable"), at: Self.at(1))
        let failed = try Self.event(.sendFailed, in: first)
        #expect(failed["type"] == .string("HELLO") && failed["reason"] == .string("Resource temporarily unavailable"))
        #expect(node.sent(.hello(nil), .failed(reason: "Resource temporarily unavailable"), at: Self.at(2)).isEmpty)
        #expect(node.sent(.hello(nil), .failed(reason: "Resource temporarily unavailable"), at: Self.at(3)).isEmpty)
        #expect(node.sendFailures == 3)
        let ok = node.sent(.hello(nil), .sent, at: Self.at(4))
        #expect(Self.names(ok) == [.sendFailed, .helloSent])
        #expect(Self.events(ok).first?["suppressed"] == .int(1))
    }

    @Test("The link comes up: link.up, HELLO with what is held, and a HELLO retry")
    func helloOnHandshake() {
        var node = Self.node()
        let up = node.link(.handshakeSucceeded, at: Self.at(1))
        #expect(Self.names(up) == [.linkUp])
        #expect(Self.sends(up) == [.hello(nil)])
        #expect(up.contains(.arm(.helloRetry, .after(2))))
        #expect(Self.sends(node.timerFired(.helloRetry, at: Self.at(3))) == [.hello(nil)])
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

/// A server push through the phone node (docs/scheduler.md, "A server push"): stdin `push`,
/// `push.received` and the job, `push.refused`, and on Android `push.deferred` until Doze's
/// maintenance window.
@Suite("Phone node: a server push")
struct PhonePushTests {
    @Test("stdin push: push [normal|high], normal unless given; other words are refused with the usage")
    func parse() throws {
        #expect(try PhoneCommand.parse("push", platform: .ios) == .push(.normal))
        #expect(try PhoneCommand.parse("push high", platform: .android) == .push(.high))
        #expect(try PhoneCommand.parse("push normal", platform: .ios) == .push(.normal))
        #expect(
            throws: PhoneCommand.Rejection(input: "push urgent", reason: "expected push [normal|high]; not \"urgent\"")
        ) {
            try PhoneCommand.parse("push urgent", platform: .ios)
        }
        #expect(throws: PhoneCommand.Rejection.self) { try PhoneCommand.parse("push high now", platform: .ios) }
    }

    @Test(
        "iOS, late-silent registration: a push still runs the job (the app delegate gets it, not the late launch handler), publishes a batch, logs a push run and writes a push run record"
    )
    func lateSilentIOS() throws {
        typealias M = PhoneMachineTests
        var node = M.started(registration: .lateSilent)
        let batch = try #require(node.app.state.outbox)
        _ = M.answered(&node, node.messageReceived(.ack(batch.ref, coverageEnd: nil), at: M.at(1)), at: M.at(1))
        let push = M.typed(&node, "push high", at: 86_400)
        let received = try #require(M.events(.pushReceived, in: push).first)
        #expect([received["priority"], received["budget"]] == [.string("high"), .double(30)])
        #expect(M.events(.handlerEntered, in: push) == [])
        #expect(M.batches(push).count == 1)
        #expect(node.app.state.refreshLog.history.last?.kind == .push)
        #expect(M.events(.osPush, in: push).first?["woken"] == .bool(true))
        // The push's run is background work the user did not ask for: staleness starts again.
        #expect(node.app.state.refreshLog.stalenessHours(at: M.at(86_400).now) == 0)
        // Its run record is a push, answering no request, so the weekly report counts the run.
        let record = try #require(M.records(push).last)
        #expect(record.kind == .push && record.success == true && record.expired == false)
        #expect(record.earliestBeginDate == nil && record.stalenessHours == 0 && record.problem == nil)
    }

    @Test("iOS: after a force-quit the push is refused, push.refused says why, and no job runs")
    func refusedAfterForceQuit() {
        var node = PhoneMachineTests.started()
        _ = node.commandLine("force-quit", at: PhoneMachineTests.at(10))
        let runs = node.app.state.refreshLog.history.count
        let time = PhoneMachineTests.at(20)
        let reason = "the user force-quit the app; the system does not launch it for a push until the user opens it"
        #expect(
            node.commandLine("push", at: time) == [
                .persistOS(node.app.scheduler),
                PhoneMachineTests.event(
                    .osPush,
                    [
                        ("priority", .string("normal")), ("woken", .bool(false)), ("deliverAt", .null),
                        ("budget", .null), ("reason", .string(reason)),
                    ], at: time),
                PhoneMachineTests.event(
                    .pushRefused, [("priority", .string("normal")), ("reason", .string(reason))], at: time),
                .cancel(.osLaunch),
            ])
        #expect(node.app.state.refreshLog.history.count == runs)
    }

    @Test(
        "Android in Doze: a normal-priority push waits for the maintenance window (push.deferred, the osAlarm timer), then runs; a high-priority one runs at once"
    )
    func androidDoze() throws {
        typealias M = PhoneMachineTests
        var node = M.started(platform: .android)
        let idle = M.typed(&node, "idle force", at: 0)
        let normal = M.typed(&node, "push normal", at: 60)
        let deferred = try #require(M.events(.pushDeferred, in: normal).first)
        guard case .date(let until) = deferred["until"] else { throw CancellationError() }
        #expect(until > M.at(60).now)
        #expect(M.events(.pushReceived, in: normal) == [])
        #expect(M.timers(idle).last == .arm(.osAlarm, .at(until)), "the maintenance window's alarm, armed by Doze")
        #expect(
            M.events(.pushReceived, in: M.typed(&node, "push high", at: 60)).map { $0["priority"] } == [.string("high")]
        )
        let window = M.answered(&node, node.timerFired(.osAlarm, at: M.at(until)), at: M.at(until))
        #expect(M.events(.pushReceived, in: window).map { $0["priority"] } == [.string("normal")])
        #expect(node.app.state.refreshLog.history.last?.kind == .push)
    }
}

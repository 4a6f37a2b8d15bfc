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
        var bench = PhoneHarness(app: PhoneHarness.app(registration: .lateSilent))
        bench.start()
        bench.receive(.ack(try #require(bench.sentBatches.last).ref, coverageEnd: nil))
        bench.advance(86_400)
        bench.clearEvents()
        let batches = bench.sentBatches.count
        bench.type("push high")
        let received = try #require(bench.events(.pushReceived).first)
        #expect(received["priority"] == .string("high") && received["budget"] == .double(30))
        #expect(bench.events(.handlerEntered).isEmpty)
        #expect(bench.sentBatches.count == batches + 1)
        #expect(bench.node.app.state.refreshLog.history.last?.kind == .push)
        #expect(bench.events(.osPush).first?["woken"] == .bool(true))
        // The push's run is background work the user did not ask for: staleness starts again.
        #expect(bench.node.app.state.refreshLog.stalenessHours(at: bench.now) == 0)
        // Its run record is a push, answering no request, so the weekly report counts the run.
        let record = try #require(bench.records.last)
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
        var bench = PhoneHarness(app: PhoneHarness.app(platform: .android))
        bench.start()
        bench.type("idle force")
        bench.clearEvents()
        bench.advance(60)
        bench.type("push normal")
        let deferred = try #require(bench.events(.pushDeferred).first)
        guard case .date(let until) = deferred["until"] else { throw CancellationError() }
        #expect(until > bench.now)
        #expect(bench.events(.pushReceived).isEmpty)
        #expect(bench.armed[.osAlarm] == .at(until))
        bench.type("push high")
        #expect(bench.events(.pushReceived).map { $0["priority"] } == [.string("high")])
        bench.clearEvents()
        bench.now = until
        bench.fire(.osAlarm)
        #expect(bench.events(.pushReceived).map { $0["priority"] } == [.string("normal")])
        #expect(bench.node.app.state.refreshLog.history.last?.kind == .push)
    }
}

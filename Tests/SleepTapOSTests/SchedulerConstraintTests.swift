// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOSTestFixtures
import Testing

@testable import SleepTapOS

/// WorkManager constraints, the device conditions they wait for, TestDriver's controls and
/// `cmd jobscheduler stop` (docs/scheduler.md, "Constraints and test controls").
@Suite("Scheduler constraints")
struct SchedulerConstraintTests {
    typealias F = SchedulerFixture
    let id = F.refreshID
    let t0 = F.start

    func codes(_ answer: WhyAnswer) -> [PendingReasonCode] { answer.reasons.map(\.code) }

    func enqueued(_ constraints: [WorkConstraint], delay: TimeInterval = 0) throws -> AndroidWorkScheduler {
        var s = F.android()
        s.setConstraints(constraints)
        try s.submit(identifier: id, earliestBeginDate: t0.addingTimeInterval(delay), at: t0)
        return s
    }

    func stops(_ s: inout AndroidWorkScheduler) -> [OSEvent] {
        s.drainTrace().map(\.event).filter { $0.name == .osWorkStopped }
    }

    @Test("charging and network: the work waits while either is unmet, why names each, and it runs once both hold")
    func chargingAndNetwork() throws {
        var s = try enqueued([.network, .charging])
        #expect(s.nextLaunch(after: t0) == nil)
        let r1 = s.takeLaunch(at: t0)
        #expect(r1 == nil)
        #expect(codes(s.why(at: t0)) == [.constraintCharging])
        #expect(s.why(at: t0).reason("requiresCharging")?.until == nil)
        s.setNetwork(false, at: t0)
        #expect(codes(s.why(at: t0)) == [.constraintConnectivity, .constraintCharging])
        s.setCharging(true, at: t0)
        #expect(codes(s.why(at: t0)) == [.constraintConnectivity])
        #expect(s.nextLaunch(after: t0) == nil)
        s.setNetwork(true, at: t0)
        #expect(codes(s.why(at: t0)) == [.ready])
        #expect(s.nextLaunch(after: t0) == t0)
        let r2 = s.takeLaunch(at: t0)
        #expect(r2 != nil)
    }

    @Test("battery-not-low and storage-not-low wait for battery-low off and storage-low off")
    func batteryAndStorage() throws {
        var s = try enqueued([.batteryNotLow, .storageNotLow])
        #expect(codes(s.why(at: t0)) == [.ready])
        s.setBatteryLow(true, at: t0)
        s.setStorageLow(true, at: t0)
        #expect(codes(s.why(at: t0)) == [.constraintBatteryNotLow, .constraintStorageNotLow])
        #expect(s.nextLaunch(after: t0) == nil)
        s.setBatteryLow(false, at: t0)
        #expect(codes(s.why(at: t0)) == [.constraintStorageNotLow])
        s.setStorageLow(false, at: t0)
        #expect(s.nextLaunch(after: t0) == t0)
    }

    @Test("device idle: screen off and still for the inactive timeout (on a charger too); a motion starts it again")
    func deviceIdle() throws {
        var s = try enqueued([.deviceIdle])
        s.setCharging(true, at: t0)
        #expect(codes(s.why(at: t0)) == [.constraintDeviceIdle])
        #expect(s.nextLaunch(after: t0) == nil)
        s.setScreen(false, at: t0)
        let idle = t0.addingTimeInterval(DozeSettings().inactiveTimeout)
        #expect(s.why(at: t0).reason("requiresDeviceIdle")?.until == idle)
        #expect(s.nextLaunch(after: t0) == idle)
        let moved = t0.addingTimeInterval(600)
        s.motion(at: moved)
        #expect(s.nextLaunch(after: moved) == moved.addingTimeInterval(DozeSettings().inactiveTimeout))
        let r3 = s.takeLaunch(at: idle)
        #expect(r3 == nil)
        // `idle force` counts as idle at once.
        s.forceIdle(at: idle)
        #expect(s.deviceIdle(at: idle))
    }

    @Test("a running worker is stopped with STOP_REASON_CONSTRAINT_CHARGING when the charger is pulled")
    func stoppedWhenLost() throws {
        var s = try enqueued([.charging])
        s.setCharging(true, at: t0)
        let launch = s.takeLaunch(at: t0)
        let run = try #require(launch)
        _ = s.drainTrace()
        s.setCharging(false, at: t0.addingTimeInterval(5))
        let stopped = stops(&s)
        #expect(stopped.count == 1)
        #expect(stopped.first?.fields.first { $0.0 == "stopReason" }?.1 == .int(6))
        #expect(s.stopReason(of: run) == WorkStopReason.constraintCharging.rawValue)
    }

    @Test("constraints and device conditions are kept in os.json")
    func persisted() throws {
        var s = try enqueued([.network, .storageNotLow])
        s.setNetwork(false, at: t0)
        s.setStorageLow(true, at: t0)
        let os = SimulatedOS(s)
        let decoded = try JSONDecoder().decode(SimulatedOS.self, from: JSONEncoder().encode(os))
        #expect(decoded.constraints == [.network, .storageNotLow])
        #expect(codes(decoded.why(at: t0)) == [.constraintConnectivity, .constraintStorageNotLow])
    }

    @Test("--constraints lists: names in any order, none, and a bad item named")
    func parseList() throws {
        #expect(try WorkConstraint.parseList("charging,network").get() == [.network, .charging])
        #expect(try WorkConstraint.parseList("none").get() == [])
        #expect(throws: WorkConstraintError(value: "wifi")) { try WorkConstraint.parseList("network,wifi").get() }
        #expect(throws: WorkConstraintError(value: "")) { try WorkConstraint.parseList("network,").get() }
        #expect(throws: WorkConstraintError(value: "network", isDuplicate: true)) {
            try WorkConstraint.parseList("network,charging,network").get()
        }
    }

    // MARK: TestDriver

    @Test("initial-delay-met makes the first run due now; period-delay-met is refused until a run ended")
    func initialDelayMet() throws {
        var s = try enqueued([], delay: 3 * 3600)
        #expect(s.nextLaunch(after: t0) == t0.addingTimeInterval(3 * 3600))
        let r4 = s.testDriver(.periodDelayMet, at: t0)
        #expect(!r4)
        let r5 = s.testDriver(.initialDelayMet, at: t0)
        #expect(r5)
        #expect(s.nextLaunch(after: t0) == t0)
        let launch = s.takeLaunch(at: t0)
        let run = try #require(launch)
        s.complete(run, outcome: .success, duration: 10, at: t0.addingTimeInterval(10))
        let end = t0.addingTimeInterval(10)
        #expect(s.nextLaunch(after: end) == end.addingTimeInterval(900))
        let r6 = s.testDriver(.initialDelayMet, at: end)
        #expect(!r6)
        let r7 = s.testDriver(.periodDelayMet, at: end)
        #expect(r7)
        #expect(s.nextLaunch(after: end) == end)
        let events = s.drainTrace().map(\.event).filter { $0.name == .osTestDriver }
        #expect(
            events.map { $0.fields.first { $0.0 == "applied" }?.1 } == [
                .bool(false), .bool(true), .bool(false), .bool(true),
            ])
    }

    @Test("constraints-met lifts every constraint until a reboot")
    func constraintsMet() throws {
        var s = try enqueued([.charging, .network])
        s.setNetwork(false, at: t0)
        #expect(s.nextLaunch(after: t0) == nil)
        s.testDriver(.constraintsMet, at: t0)
        #expect(codes(s.why(at: t0)) == [.ready])
        #expect(s.nextLaunch(after: t0) == t0)
        s.reboot(at: t0)
        #expect(codes(s.why(at: t0)) == [.constraintConnectivity, .constraintCharging])
    }

    // MARK: stop REASON

    @Test("stop REASON stops the running worker with that WorkInfo stop reason; the attempt counts")
    func stopRunning() throws {
        var s = try enqueued([])
        let launch = s.takeLaunch(at: t0)
        let run = try #require(launch)
        _ = s.drainTrace()
        let stoppedNow = s.stopWork(reason: .user, at: t0.addingTimeInterval(3))
        #expect(stoppedNow)
        let stopped = stops(&s)
        #expect(stopped.first?.fields.first { $0.0 == "stopReasonName" }?.1 == .string("STOP_REASON_USER"))
        #expect(stopped.first?.fields.first { $0.0 == "reason" }?.1 == .string("stop"))
        #expect(s.stopReason(of: run) == 13)
        #expect(s.runAttemptCount(of: id) == 1)
    }

    @Test("stop REASON with no run in flight stops the next run as it starts (budget 0)")
    func stopArmed() throws {
        var s = try enqueued([])
        let r8 = s.stopWork(reason: .systemProcessing, at: t0)
        #expect(!r8)
        let launch = s.takeLaunch(at: t0)
        let run = try #require(launch)
        #expect(run.budget == 0)
        _ = s.drainTrace()
        s.complete(run, outcome: .success, duration: 2, at: t0.addingTimeInterval(2))
        #expect(stops(&s).first?.fields.first { $0.0 == "stopReason" }?.1 == .int(14))
        #expect(s.stopReason(of: run) == 14)
        // Only one run: the next one has its quota budget again.
        let due = try #require(s.nextLaunch(after: t0.addingTimeInterval(2)))
        let r9 = s.takeLaunch(at: due)
        #expect(r9?.budget != 0)
    }

    @Test("WorkStopReason parses names, short names and codes; refuses others")
    func stopReasonParsing() {
        #expect(WorkStopReason(parsing: "STOP_REASON_USER") == .user)
        #expect(WorkStopReason(parsing: "user") == .user)
        #expect(WorkStopReason(parsing: "constraint-charging") == .constraintCharging)
        #expect(WorkStopReason(parsing: "10") == .quota)
        #expect(WorkStopReason(parsing: "16") == nil)
        #expect(WorkStopReason(parsing: "STOP_REASON_NAP") == nil)
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOSTestFixtures
import Testing

@testable import SleepTapOS

/// `BGProcessingTaskRequest` on the simulated iOS scheduler (docs/scheduler.md, "Processing tasks").
@Suite("Scheduler processing tasks (iOS)")
struct SchedulerProcessingTests {
    typealias F = SchedulerFixture
    static let processingID = "net.example.sleeptap.processing"
    let pid = Self.processingID
    let t0 = F.start  // 2025-10-09T08:53:20Z
    /// The screen goes off an hour after t0; the device is idle 600 s later, at
    /// 1_760_004_200, and the launch falls on the next minute of UNIX time: 1_760_004_240.
    let screenOff = F.start.addingTimeInterval(3_600)
    let idleLaunch = Date(timeIntervalSince1970: 1_760_004_240)

    /// An app that registered both handlers in the launch phase (or, `lateSilent`, after it).
    func launched(_ mode: RegistrationMode = .early) throws -> IOSBackgroundScheduler {
        var s = F.ios(mode: mode, permitted: [F.refreshID, pid])
        s.appLaunched(at: t0, byUser: true)
        if mode != .early { s.finishLaunching(at: t0) }
        #expect(try s.register(identifier: F.refreshID, at: t0))
        #expect(try s.register(identifier: pid, at: t0))
        s.finishLaunching(at: t0)
        return s
    }

    func onCharger() -> ProcessingRequest { ProcessingRequest(identifier: pid, requiresExternalPower: true) }

    @Test("Not run while the device is in use (the screen on), even charging, for a whole day")
    func notWhileInUse() throws {
        var s = try launched()
        s.setCharging(true, at: t0)
        try s.submitProcessing(onCharger(), at: t0)
        #expect(s.nextLaunch(after: t0) == nil)
        #expect(s.takeLaunch(at: t0.addingTimeInterval(F.day)) == nil)
        #expect(s.whyProcessing(at: t0)?.reason("deviceIdle")?.code == .constraintDeviceIdle)
    }

    @Test("Runs once the device is idle (600 s after the screen went off) and charging: at 1_760_004_240, budget 300 s")
    func runsWhenIdleAndCharging() throws {
        var s = try launched()
        s.setCharging(true, at: t0)
        try s.submitProcessing(onCharger(), at: t0)
        s.setScreen(false, at: screenOff)
        #expect(s.idleAt == screenOff.addingTimeInterval(600))
        #expect(s.nextLaunch(after: screenOff) == idleLaunch)
        #expect(s.takeLaunch(at: idleLaunch.addingTimeInterval(-1)) == nil)
        let taken = s.takeLaunch(at: idleLaunch)
        let launch = try #require(taken)
        #expect(launch.identifier == pid && launch.handlerRegistered && launch.budget == 300)
        #expect(s.pendingProcessing == nil && s.runningProcessing == launch)
        s.complete(launch, outcome: .success, duration: 12, at: idleLaunch.addingTimeInterval(12))
        let trace = s.drainTrace()
        let osLaunch = try #require(trace.first { $0.event.name == .osLaunch })
        #expect(osLaunch.at == idleLaunch && osLaunch.event["kind"] == .string("processing"))
        let completed = try #require(trace.first { $0.event.name == .osTaskCompleted })
        #expect(completed.at == idleLaunch.addingTimeInterval(12) && completed.event["success"] == .bool(true))
        #expect(s.runningProcessing == nil)
    }

    @Test("Expired when the user picks the device up mid-run; killed 1 s later if it does not complete")
    func expiredWhenPickedUp() throws {
        var s = try launched()
        s.setCharging(true, at: t0)
        try s.submitProcessing(onCharger(), at: t0)
        s.setScreen(false, at: screenOff)
        let firstTaken = s.takeLaunch(at: idleLaunch)
        let first = try #require(firstTaken)
        let pickUp = idleLaunch.addingTimeInterval(20)
        s.setScreen(true, at: pickUp)
        // The app's expiration handler ends the task within its second: completed, unsuccessful.
        s.complete(first, outcome: .failure, duration: 20.5, at: pickUp.addingTimeInterval(0.5))
        let trace = s.drainTrace()
        let expired = try #require(trace.first { $0.event.name == .osTaskExpired })
        #expect(expired.at == pickUp && expired.event["reason"] == .string("the user started using the device"))
        let completed = try #require(trace.first { $0.event.name == .osTaskCompleted })
        #expect(completed.event["success"] == .bool(false))
        #expect(!trace.contains { $0.event.name == .osAppKilled })

        // Again, and the app ignores the expiration handler: killed at pickUp + 1 s.
        try s.submitProcessing(onCharger(), at: pickUp.addingTimeInterval(1))
        let offAgain = pickUp.addingTimeInterval(3_600)
        s.setScreen(false, at: offAgain)
        let at = try #require(s.nextLaunch(after: offAgain))
        // offAgain + 600 s = 1_760_008_460, rounded up to the minute of UNIX time.
        #expect(at == Date(timeIntervalSince1970: 1_760_008_500))
        let secondTaken = s.takeLaunch(at: at)
        let second = try #require(secondTaken)
        let pickUp2 = at.addingTimeInterval(5)
        s.setScreen(true, at: pickUp2)
        s.setNetwork(true, at: pickUp2.addingTimeInterval(10))
        let killedTaken = s.drainTrace().first { $0.event.name == .osAppKilled }
        let killed = try #require(killedTaken)
        #expect(killed.at == pickUp2.addingTimeInterval(1))
        #expect(killed.event["identifier"] == .string(pid))
        #expect(s.runningProcessing == nil)
        s.complete(second, outcome: .success, duration: 15, at: pickUp2.addingTimeInterval(10))
        #expect(s.drainTrace().map(\.event.name) == [.osCompleteIgnored])
    }

    @Test("requiresExternalPower: not run on battery, however long idle; runs when plugged in")
    func notWithoutPower() throws {
        var s = try launched()
        try s.submitProcessing(onCharger(), at: t0)
        s.setScreen(false, at: screenOff)
        #expect(s.nextLaunch(after: screenOff) == nil)
        #expect(s.takeLaunch(at: t0.addingTimeInterval(F.day)) == nil)
        #expect(s.whyProcessing(at: t0.addingTimeInterval(F.day))?.code == .constraintCharging)
        // Idle since 1_760_004_240: plugged in later, the launch is due at once.
        let plugged = t0.addingTimeInterval(F.day)
        s.setCharging(true, at: plugged)
        #expect(s.nextLaunch(after: plugged) == plugged)
        #expect(s.takeLaunch(at: plugged)?.identifier == pid)
        // A request that does not require power runs on battery.
        var battery = try launched()
        try battery.submitProcessing(ProcessingRequest(identifier: pid), at: t0)
        battery.setScreen(false, at: screenOff)
        #expect(battery.nextLaunch(after: screenOff) == idleLaunch)
    }

    @Test("requiresNetworkConnectivity: not run without a network; runs when it comes back")
    func notWithoutNetwork() throws {
        var s = try launched()
        s.setNetwork(false, at: t0)
        try s.submitProcessing(ProcessingRequest(identifier: pid, requiresNetworkConnectivity: true), at: t0)
        s.setScreen(false, at: screenOff)
        #expect(s.nextLaunch(after: screenOff) == nil)
        #expect(s.whyProcessing(at: idleLaunch)?.code == .constraintConnectivity)
        s.setNetwork(true, at: idleLaunch)
        #expect(s.nextLaunch(after: idleLaunch) == idleLaunch)
    }

    @Test("Late registration (late-silent): submit succeeds, the OS launches, the handler is never entered")
    func lateRegistrationNeverEntered() throws {
        var s = try launched(.lateSilent)
        s.setCharging(true, at: t0)
        try s.submitProcessing(onCharger(), at: t0)
        s.setScreen(false, at: screenOff)
        let launchTaken = s.takeLaunch(at: idleLaunch)
        let launch = try #require(launchTaken)
        #expect(!launch.handlerRegistered)
        #expect(s.runningProcessing == nil && s.pendingProcessing == nil)
        let names = F.names(s.drainTrace())
        #expect(names.contains(.osLaunchDropped) && !names.contains(.osTaskCompleted))
        let why = try #require(s.whyProcessing(at: idleLaunch))
        #expect(why.reasons.map(\.code) == [.handlerNotRegisteredInTime, .invalidJobID])
        #expect(why.reason("handler")?.launchedAt == idleLaunch)
        #expect(s.nextLaunch(after: idleLaunch) == nil)
    }

    @Test("Submitted beside the app-refresh request: both pending, neither replaces the other")
    func besideRefresh() throws {
        var s = try launched()
        try s.submit(identifier: F.refreshID, earliestBeginDate: t0.addingTimeInterval(3_600), at: t0)
        try s.submitProcessing(onCharger(), at: t0)
        #expect(s.pendingIdentifier == F.refreshID && s.pendingProcessing?.identifier == pid)
        #expect(s.nextLaunch(after: t0) != nil)  // the refresh's drawn opportunity
        // A second processing identifier is refused (this model holds one).
        var other = F.ios(permitted: [F.refreshID, pid, F.otherID])
        other.appLaunched(at: t0, byUser: true)
        _ = try other.register(identifier: pid, at: t0)
        _ = try other.register(identifier: F.otherID, at: t0)
        try other.submitProcessing(ProcessingRequest(identifier: pid), at: t0)
        #expect(throws: SchedulerFailure.self) {
            try other.submitProcessing(ProcessingRequest(identifier: F.otherID), at: t0)
        }
        // Not permitted, and no handler registered.
        var refused = try F.launchedIOS()
        #expect(throws: SchedulerFailure.self) { try refused.submitProcessing(onCharger(), at: t0) }
    }

    @Test("os.json: an older encoding (no device or processing keys) decodes in use, on battery, connected")
    func olderEncodingDecodes() throws {
        let fresh = try F.launchedIOS()
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let data = try encoder.encode(fresh)
        let text = try #require(String(data: data, encoding: .utf8))
        #expect(!text.contains("screenOffAt") && !text.contains("processing") && !text.contains("externalPower"))
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let decoded = try decoder.decode(IOSBackgroundScheduler.self, from: data)
        #expect(decoded.deviceInUse && !decoded.charging && decoded.networkAvailable)
        #expect(decoded.whyProcessing(at: t0) == nil)
        // A scheduler with a pending processing request comes back with its planned launch.
        var s = try launched()
        s.setCharging(true, at: t0)
        try s.submitProcessing(onCharger(), at: t0)
        s.setScreen(false, at: screenOff)
        let back = try decoder.decode(IOSBackgroundScheduler.self, from: encoder.encode(s))
        #expect(back.nextLaunch(after: screenOff) == idleLaunch && back.pendingProcessing == onCharger())
    }

    @Test("SimulatedOS: the screen input reaches iOS, and os.why is said for the processing request too")
    func simulatedOS() throws {
        var os = SimulatedOS(try launched())
        _ = os.drainTrace()
        try os.submitProcessing(onCharger(), at: t0)
        os.doze(.screen(false), at: screenOff)
        let trace = os.drainTrace()
        #expect(trace.contains { $0.event.name == .osScreen && $0.event["on"] == .bool(false) })
        let whys = trace.filter { $0.event.name == .osWhy }
        #expect(whys.contains { $0.event["identifier"] == .string(pid) })
        #expect(os.whyProcessing(at: screenOff)?.reason("requiresExternalPower") != nil)
    }
}

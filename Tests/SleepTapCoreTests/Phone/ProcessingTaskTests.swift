// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

/// `phone --processing-task on` through the phone machine, its actions checked (docs/scheduler.md, "Processing tasks"):
/// the nightly request, stdin `why` and `status`, the run.
@Suite("The phone's processing task (iOS)")
struct ProcessingTaskTests {
    typealias M = PhoneMachineTests

    static func app(processing: Bool, os: SimulatedOS? = nil) -> PhoneApp {
        var configuration = PhoneAppConfiguration()
        configuration.processingTask = processing
        let os =
            os
            ?? SimulatedOS(
                IOSBackgroundScheduler(
                    configuration: .init(permittedIdentifiers: [configuration.taskIdentifier]), seed: 1))
        return PhoneApp(
            state: PhoneSyncState(deviceSeed: 7), scheduler: os, weather: OfflineWeatherProvider(seed: 9),
            schedule: .everyDayAtSeven, zone: PhoneFixture.zone, location: PhoneFixture.berlin,
            configuration: configuration, randomSeed: 42)
    }

    /// A phone node on `app` started `seconds` after `t0`, answered; the start's actions.
    static func started(_ app: PhoneApp, at seconds: TimeInterval = 0) -> (PhoneNode, [PhoneAction]) {
        var node = PhoneNode(app: app, configuration: PhoneFixture.configuration())
        let actions = M.answered(&node, node.start(at: M.at(seconds)), at: M.at(seconds))
        return (node, actions)
    }

    static func text(_ event: Event, _ key: String) -> String? {
        if case .string(let text)? = event[key] { return text }
        return nil
    }

    @Test(
        "An app build without the processing task cancels the request an earlier build left pending (os.request.cancelled): no launch into no handler"
    )
    func offCancelsTheLeftRequest() throws {
        let (phone, _) = Self.started(Self.app(processing: true))
        let left = try #require(phone.app.scheduler.pendingProcessing)
        // The same device (its OS), a new app build without the option, launched by the user.
        var (next, start) = Self.started(Self.app(processing: false, os: phone.app.scheduler), at: 60)
        #expect(next.app.scheduler.pendingProcessing == nil)
        #expect(M.events(.osRequestCancelled, in: start).map { Self.text($0, "identifier") } == [left.identifier])
        // A later night on the charger launches nothing for it.
        var later = M.typed(&next, "charging on", at: 61) + M.typed(&next, "screen off", at: 62)
        later += M.typed(&next, "status", at: 62 + 3 * 3_600)
        #expect(!M.names(later).contains(.osLaunchDropped))
    }

    @Test(
        "why names the processing request's power, in use and earliestBeginDate (Thu 20:00 EST); on the charger with the screen off it runs the job at 20:00 EST"
    )
    func whyAndRun() throws {
        var (phone, _) = Self.started(Self.app(processing: true))
        let processingID = PhoneAppConfiguration().processingIdentifier
        let whys = phone.commandLine("why", at: M.at(60)).compactMap(\.event)
        #expect(whys.map(\.name) == [.osWhy, .osWhy])
        let processing = try #require(whys.last)
        #expect(Self.text(processing, "identifier") == processingID)
        #expect(
            Self.text(processing, "reasonCodes")
                == "PENDING_JOB_REASON_CONSTRAINT_CHARGING,PENDING_JOB_REASON_CONSTRAINT_DEVICE_IDLE,"
                + "PENDING_JOB_REASON_CONSTRAINT_MINIMUM_LATENCY")
        // The refresh request's earliestBeginDate (Fri 08:00 EST) - 12 h.
        let evening = try #require(ISO8601.date("2025-03-07T01:00:00Z"))
        #expect(phone.app.scheduler.whyProcessing(at: M.at(60).now)?.reason("earliestBeginDate")?.until == evening)
        _ = M.typed(&phone, "charging on", at: 60)
        #expect(M.names(M.typed(&phone, "screen off", at: 60)).contains(.osScreen))
        let status = try #require(M.events(.phoneStatus, in: phone.commandLine("status", at: M.at(60))).first)
        guard case .object(let object)? = status["processingWhy"] else {
            Issue.record("phone.status has no processingWhy")
            return
        }
        #expect(object["reason"] == .string("PENDING_JOB_REASON_CONSTRAINT_DEVICE_IDLE"))
        // The refresh's drawn launch may come first; the processing one is due at 20:00 EST.
        var records: [RunRecord] = []
        for _ in 0..<10 where phone.app.state.refreshLog.history.last?.kind != .processing {
            guard let due = phone.nextLaunch else { break }
            records += M.records(M.answered(&phone, phone.timerFired(.osLaunch, at: M.at(due)), at: M.at(due)))
        }
        let run = try #require(phone.app.state.refreshLog.history.last)
        #expect(run.kind == .processing && run.success && run.at.timeIntervalSince(evening) < 1)
        #expect(records.last?.kind == .background)
    }

    @Test("Off (the default): no processing handler, request or why")
    func off() {
        let (phone0, _) = Self.started(Self.app(processing: false))
        var phone = phone0
        #expect(phone.commandLine("why", at: M.at(60)).compactMap(\.event).map(\.name) == [.osWhy])
        #expect(phone.app.scheduler.whyProcessing(at: M.at(60).now) == nil)
    }
}

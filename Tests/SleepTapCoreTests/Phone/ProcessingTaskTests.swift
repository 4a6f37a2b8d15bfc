// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

/// `phone --processing-task on` through the phone node (docs/scheduler.md, "Processing tasks"):
/// the nightly request, stdin `why` and `status`, the run.
@Suite("The phone's processing task (iOS)")
struct ProcessingTaskTests {
    static func bench(processing: Bool) -> PhoneHarness {
        var configuration = PhoneAppConfiguration()
        configuration.processingTask = processing
        let os = SimulatedOS(
            IOSBackgroundScheduler(
                configuration: .init(permittedIdentifiers: [configuration.taskIdentifier]), seed: 1))
        let app = PhoneApp(
            state: PhoneSyncState(deviceSeed: 7), scheduler: os, weather: OfflineWeatherProvider(seed: 9),
            schedule: .everyDayAtSeven, zone: PhoneHarness.zone, location: PhoneHarness.berlin,
            configuration: configuration, randomSeed: 42)
        return PhoneHarness(app: app)
    }

    static func text(_ event: Event, _ key: String) -> String? {
        if case .string(let text)? = event[key] { return text }
        return nil
    }

    @Test(
        "An app build without the processing task cancels the request an earlier build left pending (os.request.cancelled): no launch into no handler"
    )
    func offCancelsTheLeftRequest() throws {
        var phone = Self.bench(processing: true)
        phone.start()
        let left = try #require(phone.node.app.scheduler.pendingProcessing)
        // The same device (its OS), a new app build without the option, launched by the user.
        var configuration = PhoneAppConfiguration()
        configuration.processingTask = false
        let app = PhoneApp(
            state: PhoneSyncState(deviceSeed: 7), scheduler: phone.node.app.scheduler,
            weather: OfflineWeatherProvider(seed: 9), schedule: .everyDayAtSeven, zone: PhoneHarness.zone,
            location: PhoneHarness.berlin, configuration: configuration, randomSeed: 42)
        var next = PhoneHarness(app: app)
        next.now = phone.now.addingTimeInterval(60)
        next.start()
        #expect(next.node.app.scheduler.pendingProcessing == nil)
        let cancelled = try #require(next.events(.osRequestCancelled).first)
        #expect(Self.text(cancelled, "identifier") == left.identifier)
        // A later night on the charger launches nothing for it.
        next.type("charging on")
        next.type("screen off")
        next.advance(3 * 3_600)
        next.type("status")
        #expect(!next.names().contains(.osLaunchDropped))
    }

    @Test(
        "why names the processing request's power, in use and earliestBeginDate (Thu 20:00 EST); on the charger with the screen off it runs the job at 20:00 EST"
    )
    func whyAndRun() throws {
        var phone = Self.bench(processing: true)
        let processingID = PhoneAppConfiguration().processingIdentifier
        phone.start()
        phone.advance(60)
        phone.clearEvents()
        phone.type("why")
        let whys = phone.events(.osWhy)
        #expect(whys.count == 2)
        let processing = try #require(whys.last)
        #expect(Self.text(processing, "identifier") == processingID)
        #expect(
            Self.text(processing, "reasonCodes")
                == "PENDING_JOB_REASON_CONSTRAINT_CHARGING,PENDING_JOB_REASON_CONSTRAINT_DEVICE_IDLE,"
                + "PENDING_JOB_REASON_CONSTRAINT_MINIMUM_LATENCY")
        // The refresh request's earliestBeginDate (Fri 08:00 EST) - 12 h.
        let evening = try #require(ISO8601.date("2025-03-07T01:00:00Z"))
        #expect(phone.node.app.scheduler.whyProcessing(at: phone.now)?.reason("earliestBeginDate")?.until == evening)
        phone.type("charging on")
        phone.type("screen off")
        #expect(phone.names().contains(.osScreen))
        phone.clearEvents()
        phone.type("status")
        let status = try #require(phone.events(.phoneStatus).first)
        guard case .object(let object)? = status["processingWhy"] else {
            Issue.record("phone.status has no processingWhy")
            return
        }
        #expect(
            object.fields.contains {
                $0.key == "reason" && $0.value == .string("PENDING_JOB_REASON_CONSTRAINT_DEVICE_IDLE")
            })
        // The refresh's drawn launch may come first; the processing one is due at 20:00 EST.
        var guardCount = 0
        while phone.node.app.state.refreshLog.history.last?.kind != .processing, guardCount < 10 {
            guard case .at(let due)? = phone.armed[.osLaunch] else { break }
            phone.now = due
            phone.fire(.osLaunch)
            guardCount += 1
        }
        let run = try #require(phone.node.app.state.refreshLog.history.last)
        #expect(run.kind == .processing && run.success && run.at.timeIntervalSince(evening) < 1)
        #expect(phone.records.last?.kind == .background)
    }

    @Test("Off (the default): no processing handler, request or why")
    func off() {
        var phone = Self.bench(processing: false)
        phone.start()
        phone.advance(60)
        phone.clearEvents()
        phone.type("why")
        #expect(phone.events(.osWhy).count == 1)
        #expect(phone.node.app.scheduler.whyProcessing(at: phone.now) == nil)
    }
}

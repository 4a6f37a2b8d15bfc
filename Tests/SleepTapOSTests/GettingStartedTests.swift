// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapOS
import Testing

/// The code of SleepTapOS's getting-started article (Sources/SleepTapOS/SleepTapOS.docc), run:
/// scripts/docs.sh fails when a code block of the article is not in this file verbatim.
@Suite("Getting started: the SleepTapOS article's code")
struct SleepTapOSGettingStartedTests {
    /// What three virtual days of an app's background refresh gave: every launch the OS granted,
    /// the OS's trace and its answer to "why hasn't it run?" at the end.
    struct Days {
        var launches: [BackgroundLaunch]
        var trace: [(at: Date, event: OSEvent)]
        var why: WhyAnswer
    }

    // An iOS device whose app refreshes in the background, one request a day, each run 5 virtual
    // seconds long. `registration` is how the app registers its launch handler: `.early` while
    // launching; `.lateSilent` after launch finished, as SwiftUI's `.backgroundTask` was seen to
    // do (the OS accepts it and never enters the handler).
    func threeDays(registration: RegistrationMode) throws -> Days {
        let taskID = "com.example.app.refresh"
        let start = Date(timeIntervalSince1970: 1_760_000_000)  // 2025-10-09T08:53:20Z
        var ios = IOSBackgroundScheduler.Configuration(permittedIdentifiers: [taskID])
        ios.registrationMode = registration
        var os = SimulatedOS(IOSBackgroundScheduler(configuration: ios, seed: 7))

        // The user opens the app. It registers its launch handler (in didFinishLaunching, or too
        // late), then submits a BGAppRefreshTaskRequest: no launch before earliestBeginDate, and
        // the OS picks the instant after it.
        os.appLaunched(at: start, byUser: true)
        if registration == .early { _ = try os.register(identifier: taskID, at: start) }
        os.finishLaunching(at: start)
        if registration != .early { _ = try os.register(identifier: taskID, at: start) }
        try os.submit(identifier: taskID, earliestBeginDate: start.addingTimeInterval(3_600), at: start)

        // Advance virtual time from one launch the OS grants to the next. The handler, when the
        // OS enters it, submits tomorrow's request and calls setTaskCompleted(success: true)
        // after 5 seconds.
        let end = start.addingTimeInterval(3 * 86_400)
        var now = start
        var launches: [BackgroundLaunch] = []
        while let due = os.nextLaunch(after: now), due < end {
            guard let launch = os.takeLaunch(at: due) else { break }
            launches.append(launch)
            now = due
            guard launch.handlerRegistered else { continue }
            try os.submit(identifier: taskID, earliestBeginDate: due.addingTimeInterval(86_400), at: due)
            now = due.addingTimeInterval(5)
            os.complete(launch, outcome: .success, duration: 5, at: now)
        }

        // Read what the OS did, in time order, and why nothing runs now.
        let trace = os.drainTrace()
        for entry in trace {
            print(entry.at.formatted(.iso8601), entry.event.name, entry.event.fields.map(\.key))
        }
        // 2025-10-09T08:53:20Z os.app.launched ["byUser"]
        // 2025-10-09T08:53:20Z os.register ["identifier", "inTime"]
        // 2025-10-09T08:53:20Z os.request.submitted ["identifier", "earliestBeginDate", "plannedLaunch"]
        // 2025-10-09T10:38:00Z os.opportunity.missed ["identifier", "reason"]
        // 2025-10-09T14:06:00Z os.launch ["identifier", "budget", "simulated", "earliestBeginDate", "plannedLaunch"]
        let why = os.why(at: now)
        print(why.code, why.summary)
        return Days(launches: launches, trace: trace, why: why)
    }

    @Test("Registered early, the handler runs once a day; registered late, the OS launches and the handler never runs")
    func earlyAndLate() throws {
        let early = try threeDays(registration: .early)
        #expect(early.launches.count == 3)
        #expect(early.launches.allSatisfy { $0.handlerRegistered })
        let names = early.trace.map(\.event.name)
        #expect(names.filter { $0 == .osLaunch }.count == 3)
        #expect(names.filter { $0 == .osTaskCompleted }.count == 3)
        #expect(!names.contains(.osLaunchDropped))
        // Each launch comes after the earliestBeginDate of the request it answers.
        for launch in early.launches {
            let earliest = try #require(launch.earliestBeginDate)
            #expect(launch.startedAt >= earliest)
        }

        let late = try threeDays(registration: .lateSilent)
        #expect(late.launches.count == 1, "the one request is spent by a launch that enters no handler")
        #expect(late.launches.allSatisfy { !$0.handlerRegistered })
        #expect(late.trace.map(\.event.name).contains(.osLaunchDropped))
        #expect(late.why.code == .handlerNotRegisteredInTime)
        let launchedAt = try #require(late.launches.first?.startedAt)
        #expect(late.why.summary.hasPrefix("launched at \(launchedAt.formatted(.iso8601)), handler not registered"))
    }
}

// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import SleepTapEmbedded
import SleepTapOS
import Testing

/// The code of SleepTapCore's getting-started article (Sources/SleepTapCore/SleepTapCore.docc),
/// run: scripts/docs.sh fails when a code block of the article is not in this file verbatim.
@Suite("Getting started: the SleepTapCore article's code")
struct GettingStartedTests {
    @Test("A week of wake-ups: weekdays at 06:30, one day off, across the spring-forward change")
    func planAWeek() throws {
        // The user's schedule: weekdays at 06:30 New York time, and no alarm on Wednesday 12 March.
        let zone = TimeZone(identifier: "America/New_York")!
        let sixThirty = LocalTime(hour: 6, minute: 30)!
        let schedule = WakeSchedule(
            wakeTimes: [
                .monday: sixThirty, .tuesday: sixThirty, .wednesday: sixThirty, .thursday: sixThirty,
                .friday: sixThirty,
            ],
            overrides: [LocalDate(parsing: "2025-03-12")!: .off],
            timeZoneIdentifier: zone.identifier)

        // Thursday 6 March 2025, 12:00 EST: plan the wake-ups of the next 7 local days.
        let now = ISO8601.date("2025-03-06T17:00:00Z")!
        let entries = BatchPlanner.entries(for: schedule, in: zone, after: now, horizonDays: 7)
        for entry in entries {
            print(entry.localDate, entry.localTime, ISO8601.string(entry.wake), entry.utcOffset)
        }
        // 2025-03-07 06:30 2025-03-07T11:30:00Z -18000   (EST)
        // 2025-03-10 06:30 2025-03-10T10:30:00Z -14400   (EDT from Sunday 9 March)
        // 2025-03-11 06:30 2025-03-11T10:30:00Z -14400
        // 2025-03-13 06:30 2025-03-13T10:30:00Z -14400

        // What the phone sends the watch: batch 1 of its epoch, with a digest of its content.
        let batch = WakeBatch(epoch: 1, seq: 1, generatedAt: now, timeZone: zone.identifier, entries: entries)
        print(batch.ref, batch.coverageEnd.map(ISO8601.string) ?? "no wake-up")

        // The wake-ups are the calendar's, checked against the zone's offsets, not a copy of them.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let expectedDates = (1...7).compactMap { offset -> String? in
            let day = calendar.date(byAdding: .day, value: offset, to: calendar.startOfDay(for: now))!
            let date = LocalDate(day, in: calendar)
            let weekday = Weekday(rawValue: calendar.component(.weekday, from: day))!
            return schedule.wakeTimes[weekday] != nil && date.description != "2025-03-12" ? date.description : nil
        }
        #expect(entries.map(\.localDate) == expectedDates)
        #expect(entries.map(\.localDate) == ["2025-03-07", "2025-03-10", "2025-03-11", "2025-03-13"])
        for entry in entries {
            #expect(entry.localTime == "06:30")
            #expect(entry.utcOffset == zone.secondsFromGMT(for: entry.wake))
            #expect(calendar.dateComponents([.hour, .minute], from: entry.wake) == DateComponents(hour: 6, minute: 30))
        }
        #expect(batch.ref == BatchRef(epoch: 1, seq: 1, digest: batch.digest))
        #expect(batch.coverageEnd == entries.last?.wake)
    }

    @Test("A month in the embedded twin: late registration leaves the watch without dates after a week; early does not")
    func twinForAMonth() throws {
        func monthOfNights(registration: RegistrationMode) -> Twin {
            let zone = TimeZone(identifier: "America/New_York")!
            let start = ISO8601.date("2025-03-06T17:00:00Z")!  // Thursday 12:00 EST

            // The phone: an iOS BGTaskScheduler that permits the app's one refresh task; the app
            // registers its launch handler early (didFinishLaunching) or too late.
            var ios = IOSBackgroundScheduler.Configuration(
                permittedIdentifiers: [PhoneAppConfiguration().taskIdentifier])
            ios.registrationMode = registration
            let phone = PhoneSetup(
                os: SimulatedOS(IOSBackgroundScheduler(configuration: ios, seed: 1)), schedule: .everyDayAtSeven,
                zone: zone, location: Coordinate(latitude: 40.71, longitude: -74.0)!, deviceSeed: 5)

            // The watch: the user taps "bed" at 22:30 every night and types 07:00 when asked.
            let watch = WatchNode.Configuration(
                endpoint: "twin", statePath: "watch.json", systemZone: zone,
                bedAt: LocalTime(hour: 22, minute: 30), manualWake: LocalTime(hour: 7, minute: 0))

            // Both nodes in one process, on virtual time, over a link that drops 1 message in 5.
            var twin = Twin(
                start: start, speed: 3_600, phone: phone, watch: watch, faults: LinkFaults(drop: 0.2), seed: 42)
            twin.boot()
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            twin.run(until: calendar.date(byAdding: .day, value: 30, to: start)!)
            return twin
        }

        let late = monthOfNights(registration: .lateSilent)
        let early = monthOfNights(registration: .early)
        for twin in [late, early] {
            let taps = twin.events(.bedWakeTime, from: .watch).count
            let fallbacks = twin.events(.fallbackManualEntry, from: .watch).count
            let entered = twin.events(.handlerEntered, from: .phone).count
            print("\(taps) nights with a cached wake-up, \(fallbacks) asked by hand, \(entered) background runs")
        }

        // Late registration: the OS launches the app, the handler is never entered, and after the
        // first batch's week every night falls back to manual entry.
        #expect(late.events(.handlerEntered, from: .phone).isEmpty)
        #expect(!late.events(.osLaunchDropped).isEmpty)
        let firstBatchEnd = try #require(
            late.events(.batchGenerated, from: .phone).first?.event.fields.first {
                $0.key == "last"
            }?.value)
        guard case .date(let coverageEnd) = firstBatchEnd else {
            Issue.record("batch.generated has no last instant: \(firstBatchEnd)")
            return
        }
        let lateCached = late.events(.bedWakeTime, from: .watch)
        let lateFallbacks = late.events(.fallbackManualEntry, from: .watch)
        #expect(!lateCached.isEmpty && !lateFallbacks.isEmpty)
        #expect(lateCached.allSatisfy { $0.at < coverageEnd })
        #expect(lateFallbacks.allSatisfy { $0.at > lateCached.last!.at })
        #expect(lateCached.count + lateFallbacks.count == 30, "one bed tap a night for 30 nights")

        // Early registration: the one refresh job runs, and no night is asked by hand.
        #expect(early.events(.handlerEntered, from: .phone).count >= 25)
        #expect(early.events(.fallbackManualEntry, from: .watch).isEmpty)
        #expect(early.events(.bedWakeTime, from: .watch).count >= 29)
    }
}

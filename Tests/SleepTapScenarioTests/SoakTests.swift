// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import SleepTapEmbedded
import SleepTapOS
import Testing

@testable import SleepTapScenario

/// The date-exhaustion soak's parts: the oracle, the timelines, the night checker, and the
/// timelines it found bugs with.
@Suite("date-exhaustion soak")
struct SoakTests {
    static func zone(_ name: String) -> TimeZone { WakeCalendar.zone(named: name)! }
    static func day(_ text: String) -> Date { ISO8601.date(text + "T00:00:00Z")! }

    @Test(
        "the oracle's wall time: a gap moves forward by the gap, a repeated time is the first",
        arguments: [
            // New York spring-forward: 02:30 does not exist; 03:30 EDT.
            ("America/New_York", "2026-03-08", "02:30", "2026-03-08T07:30:00Z"),
            // New York fall-back: 01:30 happens twice; the first is EDT.
            ("America/New_York", "2026-11-01", "01:30", "2026-11-01T05:30:00Z"),
            // Lord Howe moves 30 minutes: 02:15 becomes 02:45 (+11).
            ("Australia/Lord_Howe", "2026-10-04", "02:15", "2026-10-03T15:45:00Z"),
            // Santiago skips midnight: 00:30 becomes 01:30 (-03).
            ("America/Santiago", "2026-09-06", "00:30", "2026-09-06T04:30:00Z"),
            // An ordinary day in Kathmandu (+05:45).
            ("Asia/Kathmandu", "2026-07-01", "07:00", "2026-07-01T01:15:00Z"),
        ])
    func oracleInstant(zone: String, date: String, time: String, expected: String) {
        let instant = SoakOracle.instant(of: LocalTime(parsing: time)!, onDate: Self.day(date), in: Self.zone(zone))
        #expect(ISO8601.string(instant) == expected)
    }

    @Test("the oracle's batch: horizon local days from the next wake-up, days off and overrides left out")
    func oracleBatch() {
        var schedule = WakeSchedule.everyDayAtSeven
        schedule.wakeTimes[.sunday] = nil
        schedule.overrides[LocalDate(parsing: "2026-07-22")!] = .off
        schedule.overrides[LocalDate(parsing: "2026-07-23")!] = .time(LocalTime(hour: 9, minute: 15)!)
        var oracle = SoakOracle(schedule: schedule)
        // Mon 2026-07-20 08:00 in Tokyo: today's 07:00 is past, so Tue 21 .. Mon 27 (5 days).
        let wakes = oracle.batch(
            generatedAt: ISO8601.date("2026-07-19T23:00:00Z")!, in: Self.zone("Asia/Tokyo"), horizonDays: 7)
        #expect(wakes.map(\.localDate) == ["2026-07-21", "2026-07-23", "2026-07-24", "2026-07-25", "2026-07-27"])
        #expect(wakes.map(\.localTime) == ["07:00", "09:15", "07:00", "07:00", "07:00"])
        #expect(ISO8601.string(wakes[0].instant) == "2026-07-20T22:00:00Z")
    }

    @Test("a timeline is the same for the same seeds, is a valid scenario file, and loads back from disk")
    func timeline() throws {
        let first = try SoakTimeline.make(runSeed: 42, index: 3, nights: 20)
        let again = try SoakTimeline.make(runSeed: 42, index: 3, nights: 20)
        let other = try SoakTimeline.make(runSeed: 42, index: 4, nights: 20)
        #expect(first.json == again.json)
        #expect(first.json != other.json)
        #expect(first.scenario.end.timeIntervalSince(first.scenario.start) >= 19 * 86_400)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("soak-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("t.json").path
        try first.json.write(to: URL(fileURLWithPath: path))
        let loaded = try ScenarioFile.load(path)
        #expect(loaded.steps.map(\.text) == first.scenario.steps.map(\.text))
        #expect(loaded.phone == first.scenario.phone && loaded.watch == first.scenario.watch)
    }

    @Test("a few random timelines hold every night in the twin")
    func smallRun() throws {
        var nights = 0
        for index in 0..<4 {
            let timeline = try SoakTimeline.make(runSeed: 11, index: index, nights: 15)
            nights += try SoakCheck.twin(timeline.scenario).nights.count
        }
        #expect(nights >= 40)
    }

    @Test("a cached wake-up an hour late breaks invariant 2; the repro file with its expectation loads")
    func wrongWake() throws {
        let timeline = try SoakTimeline.make(runSeed: 11, index: 0, nights: 10)
        let violation = try #require(throws: SoakViolation.self) {
            try SoakCheck.twin(timeline.scenario, fault: .wrongWake)
        }
        #expect(violation.invariant == 2 && violation.night >= 1, "\(violation)")
        #expect(violation.expectation["event"] == "bed.wake_time" && violation.expectation["fields.wakeTime"] != nil)
        // The two instants an hour apart show two local times: "gave I (D T); ... is I' (D' T')".
        let times = violation.message.matches(of: /\d{4}-\d{2}-\d{2} (\d{2}:\d{2})\)/).map { String($0.output.1) }
        #expect(times.count == 2 && times[0] != times[1], "\(violation.message)")
        let data = timeline.adding(expectations: [SoakCheck.expectationObject(violation.expectation)])
        let repro = try ScenarioFile.decode(data, path: "repro.json")
        #expect(repro.expectations.count == 1 && repro.expectations[0].event == .bedWakeTime)
    }

    @Test(
        "a process run's repro file has its phone and watch steps at the instants the processes handled them, and says what does not replay"
    )
    func reproAsHandled() throws {
        // Seed 4242's timeline 2 (issue 19 item 6): Android, --bucket frequent --interval 900.
        let timeline = try SoakTimeline.make(runSeed: 4242, index: 2, nights: 60)
        #expect(timeline.scenario.phone.contains("900"), "\(timeline.scenario.phone)")
        let lines = timeline.scenario.steps.filter {
            if case .phone = $0.step { true } else if case .watch = $0.step { true } else { false }
        }
        #expect(!lines.isEmpty)
        // Each line handled 90.25 virtual seconds after its step, as a lagging process would.
        var handled: [(at: Date, step: TwinStep)] = [(timeline.scenario.start, .link(up: false))]
        for step in lines { handled.append((step.at.addingTimeInterval(90.25), step.step)) }
        let repro = try ScenarioFile.decode(timeline.asHandled(handled), path: "repro.json")
        #expect(repro.name.contains("as the processes handled it"), "\(repro.name)")
        #expect(repro.name.contains("does not replay"), "\(repro.name)")
        let moved = repro.steps.filter {
            if case .phone = $0.step { true } else if case .watch = $0.step { true } else { false }
        }
        let expected = lines.map { $0.at.addingTimeInterval(90.25) }.filter { $0 < repro.end }
        #expect(moved.map(\.at) == expected)
        let links = { (file: ScenarioFile) in
            file.steps.compactMap { if case .link(let up) = $0.step { ($0.at, up) } else { nil } }.map {
                "\($0.0) \($0.1)"
            }
        }
        #expect(links(repro) == links(timeline.scenario), "link steps keep their instants")
        #expect(repro.steps.map(\.at) == repro.steps.map(\.at).sorted())
    }

    @Test("a process run's falling behind is the largest count and lateness of its phone's clock.behind lines")
    func processBehindFromEvents() {
        let events = [
            Event(.clockBehind, [("count", .int(1)), ("maxLateSeconds", .double(900))]),
            Event(.batchGenerated, [("seq", .int(3))]),
            Event(.clockBehind, [("count", .int(4)), ("maxLateSeconds", .double(15_674.5))]),
        ]
        #expect(ProcessBehind(events: events) == ProcessBehind(count: 4, maxLateSeconds: 15_674.5))
        #expect(ProcessBehind(events: []) == ProcessBehind())
    }

    @Test("a manual entry on a covered night breaks invariant 1 (an early fallback)")
    func earlyFallback() throws {
        let timeline = try SoakTimeline.make(runSeed: 11, index: 0, nights: 10)
        let violation = try #require(throws: SoakViolation.self) {
            try SoakCheck.twin(timeline.scenario, fault: .earlyFallback)
        }
        #expect(violation.invariant == 1 && violation.message.contains("early fallback"), "\(violation)")
    }

    /// The watch's alarm ringing at `instant` (its first ring).
    static func ring(_ instant: Date) -> ScenarioRun.LogEntry {
        .init(
            at: instant, source: .watch,
            event: Event(.alarmFired, [("alarmTime", .date(instant)), ("snoozes", .int(0))]))
    }

    /// A hand-built night: the watch held a 2-night batch for days, then fell back, and never warned.
    @Test("a foreseeable fallback without a coverage.low 24 h ahead breaks invariant 4")
    func missingWarning() throws {
        let scenario = try ScenarioFile.decode(
            Data(
                """
                {"schemaVersion": 1, "name": "hand-built", "start": "2026-07-20T00:00:00Z",
                 "end": "2026-07-30T00:00:00Z", "timeZone": "UTC",
                 "schedule": {"schemaVersion": 1, "wake": {"monday": "07:00", "tuesday": "07:00",
                   "wednesday": "07:00", "thursday": "07:00", "friday": "07:00", "saturday": "07:00",
                   "sunday": "07:00"}},
                 "phone": ["--horizon-days", "2"], "watch": ["--bed-at", "23:00"]}
                """.utf8), path: "hand-built.json")
        func at(_ text: String) -> Date { ISO8601.date(text)! }
        let batch: [(String, EventValue)] = [("seq", .int(1)), ("epoch", .string("00000000000000aa"))]
        var log: [ScenarioRun.LogEntry] = [
            .init(
                at: at("2026-07-20T00:00:00Z"), source: .phone,
                event: Event(.batchGenerated, batch + [("timeZone", .string("UTC"))])),
            .init(at: at("2026-07-20T00:00:01Z"), source: .watch, event: Event(.batchApplied, batch)),
        ]
        let tap: [(String, EventValue)] = [("tapLocalDate", .string("2026-07-20")), ("tapLocalTime", .string("23:00"))]
        log.append(
            .init(
                at: at("2026-07-20T23:00:00Z"), source: .watch,
                event: Event(
                    .bedWakeTime,
                    [
                        ("wakeTime", .date(at("2026-07-21T07:00:00Z"))),
                        ("localDate", .string("2026-07-21")), ("localTime", .string("07:00")),
                    ] + tap)))
        log.append(Self.ring(at("2026-07-21T07:00:00Z")))
        log.append(
            .init(
                at: at("2026-07-21T23:00:00Z"), source: .watch,
                event: Event(.fallbackManualEntry, [("reason", .string("ran out"))] + tap)))
        let violation = try #require(throws: SoakViolation.self) { try SoakCheck.check(scenario, log: log) }
        #expect(violation.invariant == 4 && violation.night == 2, "\(violation)")
        // Invariant 5: without the ring at the answered wake-up, the alarm was missed; a ring an
        // hour late is a wrong alarm.
        var missed = log
        missed.remove(at: 3)
        let noRing = try #require(throws: SoakViolation.self) { try SoakCheck.check(scenario, log: missed) }
        #expect(noRing.invariant == 5 && noRing.message.contains("missed alarm"), "\(noRing)")
        var late = missed
        late.insert(Self.ring(at("2026-07-21T08:00:00Z")), at: 3)
        let wrong = try #require(throws: SoakViolation.self) { try SoakCheck.check(scenario, log: late) }
        #expect(wrong.invariant == 5, "\(wrong)")
        // With the warning when the batch came (2 nights left), the same night holds.
        log.insert(
            .init(
                at: at("2026-07-20T00:00:01Z"), source: .watch, event: Event(.coverageLow, [("nightsLeft", .int(2))])),
            at: 2)
        let tally = try SoakCheck.check(scenario, log: log)
        #expect(tally.fallbacks == 1 && tally.foreseeable == 1 && tally.warnings == 1)
    }

    @Test(
        "invariant 5 across watch restarts: a restart on its state file keeps the alarm (0 lost), a quit past the wake-up rings late at start, a fresh start loses it",
        arguments: [
            ("{\"at\": \"2026-01-02T01:00:00Z\", \"restart\": \"watch\"}", 1, 0),
            (
                "{\"at\": \"2026-01-02T01:00:00Z\", \"watch\": \"quit\"}, {\"at\": \"2026-01-02T08:00:00Z\", \"start\": \"watch\"}",
                1, 0
            ),
            ("{\"at\": \"2026-01-02T01:00:00Z\", \"restart\": \"watch\", \"fresh\": true}", 0, 1),
        ])
    func alarmsAcrossRestarts(steps: String, fired: Int, lost: Int) throws {
        let scenario = try ScenarioFile.decode(
            Data(
                """
                {"schemaVersion": 1, "name": "restarts", "start": "2026-01-01T00:00:00Z",
                 "end": "2026-01-03T00:00:00Z", "timeZone": "Europe/Berlin",
                 "schedule": {"schemaVersion": 1, "wake": {"monday": "07:00", "tuesday": "07:00",
                   "wednesday": "07:00", "thursday": "07:00", "friday": "07:00", "saturday": "07:00",
                   "sunday": "07:00"}},
                 "watch": ["--bed-at", "23:00"], "steps": [\(steps)]}
                """.utf8), path: "restarts.json")
        let tally = try SoakCheck.twin(scenario)
        #expect(tally.alarmsFired == fired && tally.alarmsLostWithRestart == lost, "\(tally)")
    }

    @Test(
        "invariant 2 on a process run: the phone's zone changes when its time-zone line was handled, not at the scenario's instant (seed 4242, timeline 2)"
    )
    func zoneAtHandledInstant() throws {
        let scenario = try ScenarioFile.decode(
            Data(
                """
                {"schemaVersion": 1, "name": "late travel", "start": "2026-01-01T00:00:00Z",
                 "end": "2026-01-03T00:00:00Z", "timeZone": "Europe/Berlin",
                 "schedule": {"schemaVersion": 1, "wake": {"monday": "07:00", "tuesday": "07:00",
                   "wednesday": "07:00", "thursday": "07:00", "friday": "07:00", "saturday": "07:00",
                   "sunday": "07:00"}},
                 "phone": ["--time-zone", "Pacific/Chatham"], "watch": ["--bed-at", "23:00"],
                 "steps": [{"at": "2026-01-01T09:20:00Z", "phone": "time-zone UTC"}]}
                """.utf8), path: "late-travel.json")
        // The phone, behind virtual time, ran a launch at 09:27:58 and handled the line at 09:46:44.
        let launch = try #require(ISO8601.date("2026-01-01T09:27:58Z"))
        let handledAt = try #require(ISO8601.date("2026-01-01T09:46:44.994Z"))
        let log: [ScenarioRun.LogEntry] = [
            .init(
                at: launch, source: .phone,
                event: Event(
                    .batchGenerated,
                    [
                        ("seq", .int(358)), ("epoch", .string("e1")), ("digest", .string("d1")),
                        ("timeZone", .string("Pacific/Chatham")),
                    ]))
        ]
        // At the scenario's instants the batch looks generated in the zone the phone had left.
        let planned = try #require(throws: SoakViolation.self) { try SoakCheck.check(scenario, log: log) }
        #expect(planned.invariant == 2 && planned.message.contains("Etc/UTC"), "\(planned)")
        // At the instants the processes handled their inputs, it is in the phone's zone then.
        let handled: [(at: Date, step: TwinStep)] = [(handledAt, .phone("time-zone UTC"))]
        #expect(try SoakCheck.check(scenario, log: log, handled: handled).batchesGenerated == 1)
        // A batch after the handled line in the old zone still breaks it.
        let after = log.map {
            ScenarioRun.LogEntry(at: handledAt.addingTimeInterval(60), source: $0.source, event: $0.event)
        }
        #expect(throws: SoakViolation.self) { try SoakCheck.check(scenario, log: after, handled: handled) }
    }

    /// Two nights in Berlin, wake-ups at 07:00, bed at 23:00: the scenario of the invariant-3 tests.
    static func twoNights(name: String) throws -> ScenarioFile {
        try ScenarioFile.decode(
            Data(
                """
                {"schemaVersion": 1, "name": "\(name)", "start": "2026-01-01T00:00:00Z",
                 "end": "2026-01-03T00:00:00Z", "timeZone": "Europe/Berlin",
                 "schedule": {"schemaVersion": 1, "wake": {"monday": "07:00", "tuesday": "07:00",
                   "wednesday": "07:00", "thursday": "07:00", "friday": "07:00", "saturday": "07:00",
                   "sunday": "07:00"}},
                 "watch": ["--bed-at", "23:00"]}
                """.utf8), path: "\(name).json")
    }

    /// The first night's bed tap (23:00 in Berlin) and its fields.
    static let tap = ISO8601.date("2026-01-01T22:00:00Z")!
    static let tapFields: [(String, EventValue)] = [
        ("tapLocalDate", .string("2026-01-01")), ("tapLocalTime", .string("23:00")),
    ]

    @Test(
        "invariant 3: a night that differs is a violation, unless the twin's batch reached the processes' watch after the tap, within the window"
    )
    func processComparison() throws {
        let scenario = try Self.twoNights(name: "raced night")
        let (tap, tapFields) = (Self.tap, Self.tapFields)
        func generated(_ epoch: String, digest: String, at instant: Date) -> ScenarioRun.LogEntry {
            .init(
                at: instant, source: .phone,
                event: Event(
                    .batchGenerated,
                    [
                        ("seq", .int(1)), ("epoch", .string(epoch)), ("digest", .string(digest)),
                        ("timeZone", .string("Europe/Berlin")),
                    ]))
        }
        func applied(_ epoch: String, at instant: Date) -> ScenarioRun.LogEntry {
            .init(
                at: instant, source: .watch, event: Event(.batchApplied, [("seq", .int(1)), ("epoch", .string(epoch))]))
        }
        let sent = tap.addingTimeInterval(-600)
        // The processes: the phone's batch reaches the watch five virtual minutes after the tap,
        // which asked by hand (no batch yet).
        func processLog(arrival: Date, digest: String = "bb") -> [ScenarioRun.LogEntry] {
            [
                generated("e1", digest: digest, at: sent),
                .init(at: tap, source: .watch, event: Event(.fallbackManualEntry, tapFields)),
                applied("e1", at: arrival),
            ]
        }
        // The twin on the processes' instants: the same dates applied at once, a cached night.
        let twinLog: [ScenarioRun.LogEntry] = [
            generated("e2", digest: "bb", at: sent), applied("e2", at: sent),
            .init(at: tap, source: .watch, event: Event(.bedWakeTime, tapFields)),
        ]
        let manual = ScenarioNight(
            localDate: "2026-01-01", tapTime: "23:00", outcome: .manualEntry, nightsLeft: 0, backgroundRuns: 0)
        let cached = ScenarioNight(
            localDate: "2026-01-01", tapTime: "23:00", outcome: .cachedWakeUp, nightsLeft: 7, backgroundRuns: 0)
        var run = ScenarioRun(
            scenario: scenario, mode: .processes, nights: [manual], checks: [],
            log: processLog(arrival: tap.addingTimeInterval(300)))
        run.twinNights = [cached]
        // Without the twin's log nothing explains the difference.
        let unexplained = try #require(throws: SoakViolation.self) { try SoakCheck.processes(run) }
        #expect(unexplained.invariant == 3 && unexplained.night == 1, "\(unexplained)")
        // The twin's batch reached the processes' watch 15 virtual minutes after the twin's: raced.
        run.twinLog = twinLog
        #expect(try SoakCheck.processes(run).raced == [0])
        // Later than the window after the twin's: a violation.
        let window = SoakCheck.raceWindow(speed: run.speed)
        run.log = processLog(arrival: sent.addingTimeInterval(window + 1))
        let late = try #require(throws: SoakViolation.self) { try SoakCheck.processes(run) }
        #expect(late.invariant == 3 && late.message.contains("more than"), "\(late)")
        // Unless the link was down meanwhile: the batch was on its way at the cut and came a
        // minute after the link's return; only the time the link was up counts.
        let down = ScenarioRun.LogEntry(at: sent.addingTimeInterval(60), source: .watch, event: Event(.linkDown))
        let up = ScenarioRun.LogEntry(
            at: sent.addingTimeInterval(window), source: .watch, event: Event(.linkUp))
        run.log = (processLog(arrival: sent.addingTimeInterval(window + 60)) + [down, up]).sorted { $0.at < $1.at }
        #expect(try SoakCheck.processes(run).raced == [0])
        // Other dates than the twin's: a violation.
        run.log = processLog(arrival: tap.addingTimeInterval(300), digest: "cc")
        #expect(throws: SoakViolation.self) { try SoakCheck.processes(run) }
        // Another tap time: a violation, whatever the batches.
        run.log = processLog(arrival: tap.addingTimeInterval(300))
        var otherTap = cached
        otherTap.tapTime = "23:01"
        run.twinNights = [otherTap]
        let taps = try #require(throws: SoakViolation.self) { try SoakCheck.processes(run) }
        #expect(taps.message.contains("the taps differ"), "\(taps)")
        // The same batch held on both sides with other outcomes: a violation.
        run.twinNights = [cached]
        run.log =
            [generated("e1", digest: "bb", at: sent), applied("e1", at: sent)] + [
                .init(at: tap, source: .watch, event: Event(.fallbackManualEntry, tapFields))
            ]
        #expect(throws: SoakViolation.self) { try SoakCheck.processes(run) }
    }

    @Test(
        "invariant 3: a batch the processes' phone never sent because the scenario cut the link right after it was made is raced; sent and not applied, or a cut later than the window, is a violation"
    )
    func lostAtCut() throws {
        let scenario = try Self.twoNights(name: "lost at a cut")
        let (tap, tapFields) = (Self.tap, Self.tapFields)
        let made = tap.addingTimeInterval(-6 * 3_600)
        let cut = made.addingTimeInterval(58)
        func entry(_ at: Date, _ source: EventSource, _ name: EventName, _ fields: [(String, EventValue)] = [])
            -> ScenarioRun.LogEntry
        {
            .init(at: at, source: source, event: Event(name, fields))
        }
        func generated(_ epoch: String, _ seq: Int, _ digest: String, _ at: Date) -> ScenarioRun.LogEntry {
            entry(
                at, .phone, .batchGenerated,
                [
                    ("seq", .int(Int64(seq))), ("epoch", .string(epoch)), ("digest", .string(digest)),
                    ("timeZone", .string("Europe/Berlin")),
                ])
        }
        func applied(_ epoch: String, _ seq: Int, _ at: Date) -> ScenarioRun.LogEntry {
            entry(at, .watch, .batchApplied, [("seq", .int(Int64(seq))), ("epoch", .string(epoch))])
        }
        // The twin: the phone's first batch delivered at once, then the cut.
        let twinLog = [
            generated("t", 2, "bb", made), applied("t", 2, made), entry(cut, .watch, .linkDown),
            entry(tap, .watch, .bedWakeTime, tapFields),
        ]
        // The processes: the batch was still being written at the cut; its send failed.
        func processLog(sent: Bool = false, failed: Bool = true) -> [ScenarioRun.LogEntry] {
            var log = [
                generated("p", 2, "bb", made), entry(cut.addingTimeInterval(200), .watch, .linkDown),
                entry(tap, .watch, .fallbackManualEntry, tapFields),
            ]
            if sent { log.append(entry(made.addingTimeInterval(30), .phone, .batchSent, [("digest", .string("bb"))])) }
            if failed {
                log.append(
                    entry(
                        cut.addingTimeInterval(300), .phone, .sendFailed, [("reason", .string("watch not connected"))]))
            }
            return log.sorted { $0.at < $1.at }
        }
        let twinNight = ScenarioNight(
            localDate: "2026-01-01", tapTime: "23:00", outcome: .cachedWakeUp, nightsLeft: 7, backgroundRuns: 0)
        let processNight = ScenarioNight(
            localDate: "2026-01-01", tapTime: "23:00", outcome: .manualEntry, nightsLeft: 0, backgroundRuns: 0)
        var run = ScenarioRun(
            scenario: scenario, mode: .processes, nights: [processNight], checks: [], log: processLog())
        run.twinNights = [twinNight]
        run.twinLog = twinLog
        #expect(try SoakCheck.processes(run).raced == [0])
        // Sent, and never applied: the watch lost it, a violation.
        run.log = processLog(sent: true, failed: false)
        #expect(throws: SoakViolation.self) { try SoakCheck.processes(run) }
        // Never sent, but no failed send either: nothing shows the cut took it.
        run.log = processLog(failed: false)
        #expect(throws: SoakViolation.self) { try SoakCheck.processes(run) }
        // A cut later than the window after the batch was made is not lag.
        let window = SoakCheck.raceWindow(speed: run.speed)
        run.log = processLog()
        run.twinLog = twinLog.map {
            $0.event.name == .linkDown ? entry(made.addingTimeInterval(window + 1), .watch, .linkDown) : $0
        }
        .sorted { $0.at < $1.at }
        #expect(throws: SoakViolation.self) { try SoakCheck.processes(run) }
    }

    @Test(
        "invariant 3: a tap on one side only is raced when a batch moved the twin's watch to its zone before it and the processes' watch after it, within the window"
    )
    func processComparisonZoneMove() throws {
        let scenario = try ScenarioFile.decode(
            Data(
                """
                {"schemaVersion": 1, "name": "zone move", "start": "2026-01-01T00:00:00Z",
                 "end": "2026-01-03T00:00:00Z", "timeZone": "Europe/Berlin",
                 "schedule": {"schemaVersion": 1, "timeZone": "Europe/Berlin", "wake": {"monday": "07:00",
                   "tuesday": "07:00", "wednesday": "07:00", "thursday": "07:00", "friday": "07:00",
                   "saturday": "07:00", "sunday": "07:00"}},
                 "watch": ["--bed-at", "23:00"]}
                """.utf8), path: "zone-move.json")
        let sent = ISO8601.date("2026-01-01T12:00:00Z")!
        let first = sent.addingTimeInterval(3600)
        let second = sent.addingTimeInterval(7200)
        func entry(_ at: Date, _ source: EventSource, _ name: EventName, _ fields: [(String, EventValue)] = [])
            -> ScenarioRun.LogEntry
        { .init(at: at, source: source, event: Event(name, fields)) }
        func arrival(_ epoch: String, at instant: Date) -> [ScenarioRun.LogEntry] {
            [
                entry(
                    sent, .phone, .batchGenerated,
                    [
                        ("seq", .int(1)), ("epoch", .string(epoch)), ("digest", .string("bb")),
                        ("timeZone", .string("Europe/Berlin")),
                    ]),
                entry(instant, .watch, .batchApplied, [("seq", .int(1)), ("epoch", .string(epoch))]),
                entry(instant, .watch, .timezoneChanged, [("timeZoneSource", .string("batch"))]),
            ]
        }
        func tap(_ at: Date, _ name: EventName) -> ScenarioRun.LogEntry {
            entry(at, .watch, name, [("tapLocalDate", .string("2026-01-01")), ("tapLocalTime", .string("x"))])
        }
        func night(_ time: String, _ outcome: ScenarioNight.Outcome) -> ScenarioNight {
            ScenarioNight(
                localDate: "2026-01-01", tapTime: time, outcome: outcome, nightsLeft: outcome == .manualEntry ? 0 : 1,
                backgroundRuns: 0)
        }
        // The twin moved at once and tapped twice in the new zone; the processes' watch got the
        // batch three virtual hours later and tapped once (by hand: no batch yet).
        var run = ScenarioRun(
            scenario: scenario, mode: .processes, nights: [night("14:00", .manualEntry)], checks: [],
            log: (arrival("e1", at: sent.addingTimeInterval(3 * 3600)) + [tap(second, .fallbackManualEntry)])
                .sorted { $0.at < $1.at })
        run.twinNights = [night("13:00", .cachedWakeUp), night("14:00", .cachedWakeUp)]
        run.twinLog = arrival("e2", at: sent) + [tap(first, .bedWakeTime), tap(second, .bedWakeTime)]
        #expect(try SoakCheck.processes(run).raced.count == 2)
        // Later than the window: the twin's first tap is unexplained.
        let window = SoakCheck.raceWindow(speed: run.speed)
        run.log = (arrival("e1", at: sent.addingTimeInterval(window + 1)) + [tap(second, .fallbackManualEntry)])
            .sorted { $0.at < $1.at }
        let late = try #require(throws: SoakViolation.self) { try SoakCheck.processes(run) }
        #expect(late.invariant == 3 && late.message.contains("in the twin only"), "\(late)")
        // No zone move by that batch: a tap on one side only is a violation.
        run.log = (arrival("e1", at: sent.addingTimeInterval(3 * 3600)) + [tap(second, .fallbackManualEntry)])
            .filter { $0.event.name != .timezoneChanged }.sorted { $0.at < $1.at }
        #expect(throws: SoakViolation.self) { try SoakCheck.processes(run) }
    }

    /// Found by the soak (seed 1, timeline 20 of 30 nights): an iOS app updated to register late
    /// and crash; the OS launched it again and again at one instant and the twin never returned.
    @Test("late-crash update with a pending request: the twin runs to the end, every night holds")
    func lateCrashUpdate() throws {
        let scenario = try ScenarioFile.decode(
            Data(
                """
                {"schemaVersion": 1, "name": "late-crash update", "start": "2026-03-12T21:00:00Z",
                 "end": "2026-03-24T21:00:00Z", "timeZone": "Europe/London",
                 "schedule": {"schemaVersion": 1, "overrides": {"2026-03-16": "off"},
                   "wake": {"friday": "09:10", "monday": "07:35", "saturday": "08:20", "sunday": "03:20",
                     "thursday": "03:15", "tuesday": "08:45", "wednesday": "09:00"}},
                 "phone": ["--platform", "ios", "--os-seed", "518174", "--device-seed", "551921",
                   "--registration", "early"],
                 "watch": ["--bed-at", "22:15", "--manual-wake", "07:15"],
                 "steps": [{"at": "2026-03-14T01:48:16Z", "phone": "registration late-crash"}]}
                """.utf8), path: "late-crash.json")
        let tally = try SoakCheck.twin(scenario)
        #expect(tally.nights.count == 12)
        #expect(tally.fallbacks >= 1, "the dates run out once the app cannot refresh")
    }

    /// Found by the soak (seed 1, timeline 56 of 30 nights): the twin fed a background run's
    /// forecast back before the rest of the run's actions, so the OS launch timer the phone had
    /// just re-armed was cancelled after it; the next input then ran the launch at its old instant
    /// (a batch dated before the travel that came first, in the new zone).
    @Test("Android run that fetches the weather, then travel: the log stays in time order, every batch in its zone")
    func weatherThenTravel() throws {
        let scenario = try ScenarioFile.decode(
            Data(
                """
                {"schemaVersion": 1, "name": "weather then travel", "start": "2027-08-12T13:00:00Z",
                 "end": "2027-09-06T19:00:00Z", "timeZone": "Asia/Kathmandu",
                 "schedule": {"schemaVersion": 1, "timeZone": "America/Santiago",
                   "overrides": {"2027-08-16": "10:20", "2027-08-29": "04:45"},
                   "wake": {"friday": "08:55", "monday": "07:35", "saturday": "08:30", "sunday": "off",
                     "thursday": "07:30", "tuesday": "08:55", "wednesday": "09:10"}},
                 "phone": ["--platform", "android", "--os-seed", "73143", "--device-seed", "86873",
                   "--bucket", "restricted", "--interval", "3600"],
                 "watch": ["--bed-at", "20:25", "--manual-wake", "08:05", "--warn-nights", "1"],
                 "steps": [{"at": "2027-08-14T01:10:50Z", "phone": "background-refresh off"},
                   {"at": "2027-08-17T05:20:47Z", "watch": "time-zone America/New_York"},
                   {"at": "2027-08-17T22:59:28Z", "phone": "open"}, {"at": "2027-08-20T09:43:38Z", "phone": "open"},
                   {"at": "2027-08-20T16:38:12Z", "phone": "background-refresh on"},
                   {"at": "2027-08-23T05:01:20Z", "phone": "low-power on"},
                   {"at": "2027-08-24T23:34:20Z", "phone": "charging on"},
                   {"at": "2027-08-26T20:08:20Z", "phone": "low-power off"},
                   {"at": "2027-08-29T11:33:00Z", "phone": "open"}, {"at": "2027-09-04T22:24:05Z", "link": "down"},
                   {"at": "2027-09-06T18:17:33Z", "phone": "time-zone Europe/Berlin"}]}
                """.utf8), path: "weather-then-travel.json")
        let log = try SoakCheck.twinLog(scenario)
        let backwards = zip(log, log.dropFirst()).first { $1.at < $0.at }
        #expect(
            backwards == nil,
            "\(backwards.map { "\($0.0.event.name) at \($0.0.at), then \($0.1.event.name) at \($0.1.at)" } ?? "")")
        _ = try SoakCheck.check(scenario, log: log)
    }
}

/// The README, docs/scenarios.md and the tool's help agree on how long the default soak takes.
@Suite("the default soak's duration, documented once")
struct SoakDurationDocsTests {
    @Test("README, docs/scenarios.md and sleeptap-soak exhaustion --help all say 30 to 60 s for the default run")
    func sameEstimate() throws {
        let root = ScenarioFileTests.root
        let phrase = "takes 30 to 60 s in a debug build on two cores"
        func flat(_ path: String) throws -> String {
            try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
                .split(whereSeparator: \.isWhitespace).joined(separator: " ")
        }
        // The help text's source (the tool's usage string), the README and the soak docs.
        for path in ["README.md", "docs/scenarios.md", "Sources/sleeptap-soak/ExhaustionOptions.swift"] {
            let text = try flat(path)
            #expect(text.contains(phrase) || text.contains("takes 30 to 60 s in a debug build"), "\(path)")
            #expect(!text.contains("exhaustion` (about a minute"), "\(path): the old estimate")
        }
    }
}

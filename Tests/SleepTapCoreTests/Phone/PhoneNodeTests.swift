// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

#if canImport(Glibc)
    import Glibc
#endif

/// The phone node's decisions, reached without a process: ZAP verdicts, frame checks, the stdin
/// language, zone precedence, schedule reloads, writes before sends, the weather as an input.
/// Single decisions compared as whole action lists are `PhoneMachineTests`'.
@Suite("Phone node")
struct PhoneNodeTests {
    // MARK: the OS trace

    @Test(
        "Android: with the notification permission revoked every bedtime notice added is also notification.hidden; granted, none; kept in os.json; refused on iOS"
    )
    func notificationPermission() throws {
        var android = PhoneHarness(app: PhoneHarness.app(platform: .android))
        android.start()
        android.advance(60)
        android.type("permission notifications revoke")
        #expect(android.names().contains(.osPermission))
        #expect(!android.node.app.scheduler.notificationsShown)
        let stored = try JSONDecoder().decode(
            SimulatedOS.self, from: JSONEncoder().encode(android.node.app.scheduler))
        #expect(!stored.notificationsShown)
        android.clearEvents()
        android.type("open")
        let added = android.names().filter { $0 == .notificationAdded }.count
        #expect(added > 0)
        #expect(android.names().filter { $0 == .notificationHidden }.count == added)
        android.type("permission notifications grant")
        android.clearEvents()
        android.type("open")
        #expect(android.names().contains(.notificationAdded))
        #expect(!android.names().contains(.notificationHidden))
        for (line, platform) in [
            ("permission notifications revoke", Platform.ios), ("permission exact-alarm maybe", .android),
            ("permission notifications maybe", .android), ("permission notifications", .android),
        ] {
            #expect(throws: PhoneCommand.Rejection.self, "\(line)") { try PhoneCommand.parse(line, platform: platform) }
        }
    }

    @Test(
        "Android constraints through the node: network off holds the refresh and os.why names it; initial-delay-met and an armed stop USER give a run stopped with 13"
    )
    func constraintsThroughNode() throws {
        var app = PhoneHarness.app(platform: .android)
        app.scheduler.setConstraints([.network])
        var android = PhoneHarness(app: app)
        android.start()
        android.advance(60)
        android.clearEvents()
        android.type("network off")
        #expect(android.names().contains(.osNetwork))
        android.type("why")
        let why = try #require(android.events.last { $0.name == .osWhy })
        let codes = why.fields.first { $0.0 == "reasonCodes" }?.1
        guard case .string(let text)? = codes else { throw CancellationError() }
        #expect(text.contains("PENDING_JOB_REASON_CONSTRAINT_CONNECTIVITY"))
        android.type("network on")
        android.type("stop USER")
        #expect(android.names().contains(.osTestDriver))
        android.clearEvents()
        android.type("initial-delay-met")
        #expect(android.node.nextLaunch == android.now)
        android.fire(.osLaunch)
        #expect(android.names().contains(.osWorkStopped), "\(android.names())")
        #expect(android.records.last?.stopReason == 13)
    }

    @Test(
        "One change gives one event: bucket rare is os.standby_bucket alone, low-power, background-refresh, charging and force-quit their own event without os.conditions.changed"
    )
    func oneChangeOneEvent() throws {
        var android = PhoneHarness(app: PhoneHarness.app(platform: .android))
        android.start()
        android.advance(60)
        let inputs: [(String, EventName)] = [
            ("bucket rare", .osStandbyBucket), ("low-power on", .osLowPower), ("charging on", .osCharging),
            ("background-refresh off", .osBackgroundRefresh), ("force-quit", .osForceQuit),
        ]
        for (line, name) in inputs {
            android.clearEvents()
            android.type(line)
            let conditions: Set<EventName> = [
                .osStandbyBucket, .osLowPower, .osCharging, .osBackgroundRefresh, .osForceQuit, .osConditionsChanged,
            ]
            #expect(android.names().filter(conditions.contains) == [name], "\(line): \(android.names())")
        }
        var ios = PhoneHarness()
        ios.start()
        ios.advance(60)
        for (line, name) in [("low-power on", EventName.osLowPower), ("background-refresh off", .osBackgroundRefresh)] {
            ios.clearEvents()
            ios.type(line)
            #expect(
                ios.names().filter { $0 == name || $0 == .osConditionsChanged } == [name], "\(line): \(ios.names())")
        }
    }

    @Test(
        "The OS trace is written in the step that caused it, at its instant, in time order: travel's os.request.* at the travel, none left for low-power on"
    )
    func traceInItsOwnStep() throws {
        var bench = PhoneHarness()
        bench.start()
        let names = bench.stamped.map(\.name)
        // The user's launch: the OS's launch and registration come before the job's weather step.
        let launched = try #require(names.firstIndex(of: .osAppLaunched))
        let fetched = try #require(names.firstIndex(of: .weatherFetched))
        #expect(launched < fetched, "\(names)")
        bench.advance(10 * 3_600)
        bench.clearEvents()
        bench.type("time-zone Asia/Tokyo")
        let travel = bench.stamped
        #expect(travel.contains { $0.name == .osRequestReplaced && $0.at == bench.now }, "\(travel)")
        #expect(travel.contains { $0.name == .osRequestSubmitted && $0.at == bench.now }, "\(travel)")
        bench.advance(3_600)
        bench.clearEvents()
        bench.type("low-power on")
        #expect(
            bench.names() == [.osLowPower, .osWhy], "no launch planned while Low Power is on")
        bench.advance(3_600)
        bench.type("open")
        let times = bench.stamped.map(\.at)
        #expect(times == times.sorted(), "stdout in time order: \(bench.stamped)")
    }

    @Test("A failed state write in a background run keeps the run's records: the submit and the failed run")
    func failedWriteKeepsRunRecords() throws {
        var bench = PhoneHarness()
        bench.start()
        let due = try #require(bench.node.nextLaunch)
        bench.advance(due.timeIntervalSince(bench.now))
        bench.failingWrites = [bench.writes + 1]
        let before = bench.records.count
        bench.fire(.osLaunch)
        #expect(bench.events(.persistFailed).count == 1)
        let kept = bench.records[before...]
        #expect(kept.contains { $0.kind == .submitted }, "\(kept)")
        #expect(kept.contains { $0.kind == .background && $0.success == false }, "\(kept)")
    }

    // MARK: ZAP

    @Test("phone.status: the simulated OS's fields are one nested object `os`, no dotted keys")
    func statusNestsTheOS() throws {
        var bench = PhoneHarness()
        bench.start()
        bench.type("low-power on")
        bench.type("status")
        let status = try #require(bench.events(.phoneStatus).last)
        #expect(!status.fields.contains { $0.key.contains(".") }, "\(status.fields.map(\.key))")
        guard case .object(let os) = try #require(status["os"]) else {
            Issue.record("os is not an object: \(String(describing: status["os"]))")
            return
        }
        #expect(os["lowPowerMode"] == .bool(true))
        #expect(os["platform"] == status["platform"])
        // The start-up run is a foreground refresh: the data is fresh (it ends a few virtual
        // seconds ahead, its steps' cost: 0, never negative), but no background run ever came.
        #expect(status["dataAgeHours"] == .double(0))
        #expect(status["stalenessHours"] == .null)
    }

    @Test("status rounds hours for people: dataAgeHours to two decimals, not 0.16319531679153443")
    func statusHoursRounded() throws {
        var bench = PhoneHarness()
        bench.start()
        bench.advance(588.25)
        bench.type("status")
        let status = try #require(bench.events(.phoneStatus).last)
        guard case .double(let age)? = status["dataAgeHours"] else {
            Issue.record("dataAgeHours: \(String(describing: status["dataAgeHours"]))")
            return
        }
        #expect(age == 0.16, "\(age)")
    }

    // MARK: the stdin language

    static let accepted: [(String, PhoneCommand)] = [
        ("open", .open), ("status", .status), ("why", .why), ("history", .history), ("notifications", .notifications),
        ("time-zone Asia/Tokyo", .timeZone(TimeZone(identifier: "Asia/Tokyo")!)),
        ("move 48.85,2.35", .move(Coordinate(latitude: 48.85, longitude: 2.35)!)),
        ("low-power on", .lowPower(true)), ("low-power off", .lowPower(false)),
        ("background-refresh off", .backgroundRefresh(false)), ("force-quit", .forceQuit),
        ("registration late-silent", .registration(.lateSilent)), ("reboot", .reboot),
        ("simulate-launch", .simulateLaunch), ("simulate-expiration", .simulateExpiration), ("quit", .quit),
        ("  status  ", .status), ("\tstatus", .status), ("low-power\ton", .lowPower(true)),
    ]

    @Test("Every command of the stdin language parses to its value")
    func commandsParse() throws {
        for (line, command) in Self.accepted {
            #expect(try PhoneCommand.parse(line, platform: .ios) == command, "\(line)")
        }
        #expect(try PhoneCommand.parse("charging on", platform: .android) == .charging(true))
        #expect(try PhoneCommand.parse("bucket rare", platform: .android) == .bucket(.rare))
        #expect(try PhoneCommand.parse("screen off", platform: .android) == .doze(.screen(false)))
        #expect(try PhoneCommand.parse("motion", platform: .android) == .doze(.motion))
        #expect(try PhoneCommand.parse("idle force", platform: .android) == .doze(.force))
        #expect(try PhoneCommand.parse("idle step", platform: .android) == .doze(.step))
        #expect(try PhoneCommand.parse("idle off", platform: .android) == .doze(.unforce))
        #expect(try PhoneCommand.parse("   ", platform: .ios) == nil)
    }

    static let rejected: [(line: String, platform: Platform, reason: String)] = [
        ("dance", .ios, PhoneCommand.unknownCommandReason),
        ("open now", .ios, "open takes no argument"),
        ("status extra", .ios, "status takes no argument"),
        ("time-zone", .ios, "expected time-zone TZ (an IANA zone, e.g. Europe/Berlin)"),
        ("move", .ios, "expected move LAT,LON (degrees, e.g. 52.52,13.405)"),
        ("low-power", .ios, "expected low-power on|off"),
        ("low-power on off", .ios, "expected low-power on|off"),
        ("bucket", .android, "expected bucket active|working_set|frequent|rare|restricted"),
        ("registration", .ios, "expected registration early|late-silent|late-crash"),
        ("STATUS", .ios, PhoneCommand.unknownCommandReason),
        ("time-zone Atlantis/Capital", .ios, WakeCalendar.unknownZoneReason("Atlantis/Capital")),
        ("time-zone EST", .ios, WakeCalendar.unknownZoneReason("EST")),
        ("move 91,0", .ios, "out of range: latitude 91.0 must be -90 to 90 and longitude 0.0 -180 to 180 (degrees)"),
        ("move 52.5;13.4", .ios, "expected LAT,LON in degrees, e.g. 52.52,13.405"),
        ("move 0x1p3,0", .ios, "expected LAT,LON in degrees, e.g. 52.52,13.405"),
        ("low-power maybe", .ios, "expected low-power on|off"),
        ("background-refresh 1", .ios, "expected background-refresh on|off"),
        ("motion", .ios, "motion is an Android setting; this phone runs --platform ios"),
        ("bucket rare", .ios, "bucket is an Android setting; this phone runs --platform ios"),
        ("idle force", .ios, "idle is an Android setting; this phone runs --platform ios"),
        ("screen sideways", .ios, "expected screen on|off"),
        ("idle sideways", .android, "expected idle force|step|off"),
        ("charging yes", .android, "expected charging on|off"),
        ("bucket sometimes", .android, "expected bucket active|working_set|frequent|rare|restricted"),
        (
            "registration early", .android,
            "registration is an iOS setting (BGTaskScheduler launch handlers); this phone runs --platform android"
        ),
        ("registration never", .ios, "expected registration early|late-silent|late-crash"),
    ]

    @Test("clock-set that would put the wall clock before 1970 or after 2199 is rejected; nothing changes")
    func clockSetRange() throws {
        var bench = PhoneHarness()
        bench.start()
        // A year at a time (the most one clock-set moves), back to 1970, then forward to 2199.
        for (step, bound) in [("-366d", "1970-01-01T00:00:00Z"), ("+366d", "2199-12-31T23:59:59Z")] {
            var rejection: String?
            for _ in 0..<300 {
                bench.clearEvents()
                let offset = bench.node.app.scheduler.wallClockOffset
                bench.type("clock-set " + step)
                if bench.names() == [.inputRejected] {
                    if case .string(let text)? = bench.events[0]["reason"] { rejection = text }
                    #expect(bench.node.app.scheduler.wallClockOffset == offset, "nothing changes")
                    break
                }
                #expect(bench.names().first == .osClockSet)
            }
            let wall = bench.node.app.scheduler.wallClock(at: bench.now)
            #expect(
                wall >= ISO8601.date("1970-01-01T00:00:00Z")! && wall <= ISO8601.date("2199-12-31T23:59:59Z")!,
                "\(wall)")
            #expect(
                rejection?.hasSuffix("outside 1970-01-01T00:00:00Z to 2199-12-31T23:59:59Z") == true,
                "\(String(describing: rejection)) (\(bound))")
        }
    }

    @Test(
        "Bad commands, wrong argument counts included, are rejected with the line as given and the command's own reason; nothing changes"
    )
    func commandsRejected() throws {
        for (line, platform, reason) in Self.rejected {
            #expect(throws: PhoneCommand.Rejection(input: line, reason: reason), "\(line)") {
                try PhoneCommand.parse(line, platform: platform)
            }
        }
        var bench = PhoneHarness()
        bench.start()
        let state = bench.node.app.state
        bench.clearEvents()
        bench.type("low-power maybe")
        #expect(bench.names() == [.inputRejected])
        #expect(bench.events[0]["input"] == .string("low-power maybe"))
        // The echo is the line as parsed (only leading and trailing blanks dropped).
        #expect(throws: PhoneCommand.Rejection(input: "\u{A0}status", reason: PhoneCommand.unknownCommandReason)) {
            try PhoneCommand.parse(" \u{A0}status\t", platform: .ios)
        }
        #expect(bench.node.app.state == state)
    }

    @Test("Commands reach the app: status counts, travel refreshes, move, settings, quit stops")
    func commandsRun() throws {
        var bench = PhoneHarness()
        bench.start()
        bench.clearEvents()
        bench.type("status")
        let status = try #require(bench.events(.phoneStatus).first)
        #expect(status["timeZone"] == .string("America/New_York"))
        #expect(status["lastSeq"] == .int(Int64(bench.node.app.state.lastSeq)))
        #expect(status["nextBackgroundLaunch"] == bench.node.nextLaunch.map { .date($0) })
        // The OS's why, in the status and on its own (`why`): the answer at the command's instant.
        let why = bench.node.app.scheduler.why(at: bench.now)
        #expect(status["why"] == .object(EventObject(why.fields)))
        bench.clearEvents()
        bench.type("why")
        #expect(bench.events(.osWhy) == [Event(why.event)])
        #expect(bench.events(.osWhy).first?["reason"] == .string(why.code.rawValue))
        bench.type("history")
        #expect(bench.events(.runRecord).count == bench.node.app.state.refreshLog.history.count)
        bench.type("notifications")
        #expect(!bench.events(.notificationPending).isEmpty)
        bench.type("move 48.85,2.35")
        #expect(bench.node.app.location == Coordinate(latitude: 48.85, longitude: 2.35))
        bench.type("low-power on")
        #expect(bench.names().contains(.osLowPower))
        bench.type("time-zone Asia/Tokyo")
        let changed = try #require(bench.events(.timezoneChanged).first)
        #expect(changed["from"] == .string("America/New_York"))
        #expect(changed["to"] == .string("Asia/Tokyo"))
        #expect(bench.events(.batchGenerated).last?["timeZone"] == .string("Asia/Tokyo"))
        #expect(!bench.stopped)
        bench.type("quit")
        #expect(bench.stopped)
        #expect(bench.events(.phoneStopping).last?["reason"] == .string("quit"))
    }

    // MARK: zones

    @Test("Zone precedence: travel, then --time-zone, then the schedule file's zone, then the machine's")
    func zonePrecedence() {
        let tokyo = TimeZone(identifier: "Asia/Tokyo")!
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        let machine = TimeZone(identifier: "America/Denver")!
        var inBerlin = WakeSchedule.everyDayAtSeven
        inBerlin.timeZoneIdentifier = berlin.identifier
        let plain = PhoneHarness(configuration: PhoneHarness.configuration(timeZone: nil, machineZone: machine))
        #expect(plain.node.currentZone == machine)
        let file = PhoneHarness(
            app: PhoneHarness.app(schedule: inBerlin),
            configuration: PhoneHarness.configuration(timeZone: nil, machineZone: machine))
        #expect(file.node.currentZone == berlin)
        var flag = PhoneHarness(
            app: PhoneHarness.app(schedule: inBerlin),
            configuration: PhoneHarness.configuration(timeZone: PhoneHarness.zone, machineZone: machine))
        #expect(flag.node.currentZone == PhoneHarness.zone)
        flag.start()
        flag.type("time-zone Asia/Tokyo")
        #expect(flag.node.currentZone == tokyo)
        #expect(flag.node.app.zone == tokyo)
    }

    // MARK: schedule reload

    @Test("open reads the schedule file again: a new one replaces the old and is used at once")
    func scheduleReloadGood() throws {
        // No --time-zone: the schedule file's zone applies.
        var bench = PhoneHarness(
            configuration: PhoneHarness.configuration(
                schedulePath: "/s/schedule.json", timeZone: nil, machineZone: PhoneHarness.zone))
        bench.start()
        #expect(bench.scheduleReads.isEmpty, "the start-up checks read it already")
        var later = WakeSchedule.everyDayAtSeven
        later.timeZoneIdentifier = "Asia/Tokyo"
        // The node itself, while the read is outstanding (a port answers at once).
        var node = bench.node
        let open = node.commandLine("open", at: bench.time)
        #expect(open.last == .loadSchedule(path: "/s/schedule.json"))
        #expect(!Self.emitted(open).contains(.batchGenerated), "the launch waits for the schedule")
        let launch = node.commandLine("simulate-launch", at: bench.time)
        #expect(!Self.emitted(launch).contains(.handlerEntered), "later commands wait in order")
        let answered = Self.emitted(node.scheduleLoaded(.success(later), at: bench.time))
        #expect(answered.first == .scheduleChanged)
        #expect(node.app.schedule == later)
        #expect(node.app.zone.identifier == "Asia/Tokyo", "the file's zone applies")
        #expect(node.timeZoneSource == "schedule")
        // The open's refresh runs first; the simulate-launch waits behind its write.
        #expect(answered.contains(.refreshForeground))
        #expect(!answered.contains(.handlerEntered))
        let written = Self.emitted(node.persisted(.succeeded, at: bench.time))
        let generated = try #require(written.firstIndex(of: .batchGenerated))
        let entered = try #require(written.firstIndex(of: .handlerEntered))
        #expect(generated < entered)
    }

    static func emitted(_ actions: [PhoneAction]) -> [EventName] {
        actions.compactMap { if case .emit(let event, _) = $0 { event.name } else { nil } }
    }

    @Test("open with a bad schedule file keeps the previous schedule and says why")
    func scheduleReloadBad() throws {
        var bench = PhoneHarness(configuration: PhoneHarness.configuration(schedulePath: "/s/schedule.json"))
        bench.start()
        let before = bench.node.app.schedule
        bench.scheduleFile = .failure(ScheduleLoadError("schedule file /s/schedule.json: line 3: bad"))
        bench.clearEvents()
        bench.type("open")
        let rejected = try #require(bench.events(.scheduleRejected).first)
        #expect(rejected["reason"] == .string("schedule file /s/schedule.json: line 3: bad"))
        #expect(rejected["kept"] == .string("previous"))
        #expect(bench.node.app.schedule == before)
        #expect(bench.names().contains(.batchGenerated), "the launch runs on the previous schedule")
    }

    // MARK: writes before sends

    @Test("A write holds back the rest of its step until the result comes")
    func writeHoldsTheStep() throws {
        var node = PhoneNode(app: PhoneHarness.app(), configuration: PhoneHarness.configuration())
        var time = NodeTime(now: PhoneHarness.start, wall: 0)
        var actions = node.start(at: time)
        // Answer writes (and the weather) one by one; before each answer, no send follows the write.
        var answered = 0
        while let index = actions.firstIndex(where: { if case .persist = $0 { true } else { false } }) {
            #expect(index == actions.count - 1 || actions[(index + 1)...].allSatisfy { !Self.isSend($0) })
            answered += 1
            time.wall += 0.001
            actions = Array(actions[(index + 1)...]) + node.persisted(.succeeded, at: time)
            for case .fetchWeather(let location, let at) in actions {
                let (result, cost) = OfflineWeatherProvider(seed: 1).forecast(for: location, now: at)
                actions += node.weatherArrived(WeatherOutcome(result: result, cost: cost), at: time)
            }
        }
        #expect(answered >= 2)
    }

    @Test("A job that needs no weather fetch writes once: everything it did is on disk before its batch goes out")
    func oneWritePerJobWithoutFetch() throws {
        var bench = PhoneHarness()
        bench.start()
        // An hour later the forecast cached at start is fresh: the weather step uses the cache.
        bench.advance(3_600)
        bench.clearEvents()
        let before = bench.writes
        bench.type("open")
        let names = bench.names()
        try #require(names.contains(.weatherSkipped), "\(names)")
        #expect(bench.writes == before + 1, "renew, notices, dates, sunlight and the run history: one write")
        #expect(bench.sentBeforeDurable.isEmpty)
        let disk = try #require(bench.disk)
        #expect(disk.outbox == bench.sentBatches.last, "the batch sent is the one on disk")
        #expect(disk.refreshLog.history.last?.at == bench.node.app.state.refreshLog.history.last?.at)
        let allOnDisk = disk == bench.node.app.state
        #expect(allOnDisk, "the sunlight notice and the run history are on disk too")
        // The job's order is kept: renew, notices, dates (generated, then sent), weather, sunlight.
        let order: [EventName] = [.renewSubmitted, .notificationAdded, .batchGenerated, .batchSent, .weatherSkipped]
        let positions = order.map { name in names.firstIndex(of: name) }
        #expect(positions.allSatisfy { $0 != nil } && positions == positions.sorted { ($0 ?? 0) < ($1 ?? 0) })
    }

    @Test("A failed single write of a job without a fetch sends nothing and reuses no seq")
    func oneWriteFails() throws {
        var bench = PhoneHarness()
        bench.start()
        bench.advance(3_600)
        let sentBefore = bench.sentBatches.count
        bench.failingWrites = [bench.writes + 1]
        bench.clearEvents()
        bench.type("open")
        #expect(bench.names().contains(.persistFailed))
        #expect(!bench.names().contains(.batchSent))
        #expect(bench.sentBatches.count == sentBefore)
        let memory = bench.node.app.state
        #expect(memory.outbox == bench.disk?.outbox, "the outbox returns to what is on disk")
        #expect(memory.refreshLog == bench.disk?.refreshLog, "and so does the run history")
        bench.failingWrites = []
        bench.advance(60)
        bench.type("open")
        let seqs = bench.sentBatches.map(\.seq)
        #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count)
        #expect(bench.disk?.outbox == bench.sentBatches.last)
    }

    static func isSend(_ action: PhoneAction) -> Bool {
        if case .send = action { true } else { false }
    }

    @Test(
        "A failed write at each write of a job: nothing goes out that is not on disk, and no seq is reused",
        arguments: ["open", "simulate-launch"])
    func persistFailureAtEachWrite(job: String) throws {
        var probe = PhoneHarness()
        probe.start()
        let before = probe.writes
        probe.advance(86_400)
        probe.type(job)
        let writesPerOpen = probe.writes - before
        // Renew, notices and dates in one write before the send; weather, sunlight and the run
        // history in one after the forecast.
        try #require(writesPerOpen >= 2)
        for failing in 1...writesPerOpen {
            var bench = PhoneHarness()
            bench.start()
            let issued = bench.sentBatches
            bench.failingWrites = [bench.writes + failing]
            bench.advance(86_400)
            bench.clearEvents()
            bench.type(job)
            let names = bench.names()
            let failedAt = try #require(names.firstIndex(of: .persistFailed), "write \(failing)")
            #expect(bench.events[failedAt]["reason"] == .string("No space left on device"))
            #expect(bench.sentBeforeDurable.isEmpty, "write \(failing): \(bench.sentBeforeDurable)")
            #expect(!names[failedAt...].contains(.batchSent), "write \(failing): nothing sent after it")
            #expect(bench.node.app.state.outbox == bench.disk?.outbox, "write \(failing): memory returns to the disk")
            // Space comes back a day later (other dates): the next batch has a seq never used
            // before, even by a batch that never left the phone, and it goes out.
            bench.failingWrites = []
            bench.advance(86_400)
            bench.type("open")
            // Every batch ever put in a write, failed or not, and every one sent: one seq, one set of dates.
            let all = issued + bench.sentBatches + bench.attempted.compactMap(\.outbox)
            let refs = Dictionary(grouping: all, by: { "\($0.epoch)/\($0.seq)" })
            #expect(refs.values.allSatisfy { Set($0.map(\.digest)).count == 1 }, "write \(failing): a seq reused")
            let generated = bench.events(.batchGenerated).compactMap { event -> Int64? in
                if case .int(let seq)? = event["seq"] { seq } else { nil }
            }
            #expect(generated == generated.sorted() && Set(generated).count == generated.count, "write \(failing)")
            #expect(bench.disk?.outbox == bench.sentBatches.last, "write \(failing): the newest is on disk and sent")
        }
    }

    // MARK: weather

    @Test("The weather arrives later: the job waits at its weather step, then finishes with the cost charged")
    func weatherAsInput() throws {
        var bench = PhoneHarness()
        bench.weather = nil
        bench.start()
        let request = try #require(bench.weatherRequests.first)
        #expect(request.location == PhoneHarness.berlin)
        #expect(bench.names().contains(.batchGenerated), "renew, notices and dates do not wait")
        #expect(!bench.names().contains { $0.rawValue.hasPrefix("weather.") })
        // A command that starts a job waits; a read-only one does not.
        bench.type("simulate-launch")
        bench.type("status")
        #expect(!bench.names().contains(.handlerEntered))
        #expect(bench.names().contains(.phoneStatus))
        // Messages from the watch are served meanwhile.
        let batch = try #require(bench.sentBatches.last)
        bench.receive(.ack(batch.ref, coverageEnd: nil))
        #expect(bench.names().contains(.ackReceived))
        bench.advance(5)
        let forecast = Forecast(fetchedAt: request.at, location: request.location, source: "test", hours: [])
        bench.answerWeather(WeatherOutcome(result: .success(forecast), cost: 1.5))
        let fetched = try #require(bench.events(.weatherFetched).first)
        #expect(fetched["cost"] == .double(1.5))
        #expect(bench.node.app.state.weather == forecast)
        let foreground = try #require(bench.node.app.state.refreshLog.history.last { $0.kind == .foreground })
        #expect(foreground.duration == 0.1 + 0.1 + 0.2 + 1.5 + 0.05)
        let fetchedAt = try #require(bench.names().firstIndex(of: .weatherFetched))
        let entered = try #require(bench.names().firstIndex(of: .handlerEntered), "the waiting command ran")
        #expect(fetchedAt < entered)
    }

    @Test(
        "Android: a network failure arriving as input makes the run retry; another failure fails it",
        arguments: [(WeatherError.network("offline"), "retry"), (WeatherError.http(status: 500, "server"), "failure")])
    func androidWeatherFailure(error: WeatherError, outcome: String) throws {
        var bench = PhoneHarness(app: PhoneHarness.app(platform: .android))
        bench.start()
        bench.weather = nil
        // 10:00 in New York the next day: inside the weather window, the cache 22 h old.
        bench.advance(22 * 3_600)
        bench.clearEvents()
        bench.type("simulate-launch")
        try #require(bench.weatherRequests.count == 2, "\(bench.names())")
        #expect(bench.events(.handlerCompleted).isEmpty, "the run waits for the weather")
        bench.answerWeather(WeatherOutcome(result: .failure(error), cost: 1))
        #expect(bench.events(.weatherFailed).first?["network"] == .bool(error.isNetwork))
        #expect(bench.events(.handlerCompleted).first?["outcome"] == .string(outcome))
    }

    @Test("A failed write before the weather step ends the job: no fetch goes out, the run does not hang")
    func persistFailureBeforeWeather() throws {
        var bench = PhoneHarness()
        bench.start()
        bench.weather = nil
        bench.advance(22 * 3_600)
        let requests = bench.weatherRequests.count
        bench.failingWrites = [bench.writes + 1]
        bench.type("simulate-launch")
        #expect(bench.names().contains(.persistFailed))
        #expect(bench.weatherRequests.count == requests, "the fetch was dropped with the rest of the step")
        #expect(!bench.node.app.awaitsWeather)
        bench.clearEvents()
        bench.type("simulate-launch")
        #expect(bench.names().contains(.handlerEntered), "the next job runs")
    }

    // MARK: timers

    @Test("The OS launch timer is armed at the OS's next launch, as a virtual instant; its firing runs the job")
    func osLaunchTimer() throws {
        var bench = PhoneHarness()
        bench.start()
        let next = try #require(bench.node.nextLaunch)
        #expect(bench.armed[.osLaunch] == .at(next))
        bench.now = next
        bench.clearEvents()
        bench.fire(.osLaunch)
        #expect(bench.names().contains(.handlerEntered))
        #expect(bench.osWrites > 0, "the OS's state is written")
    }

    @Test(
        "A launch already due whose timer comes after another input (a driver that woke late) keeps its instant",
        arguments: [Platform.ios, .android])
    func lateLaunchTimerKeepsItsInstant(platform: Platform) throws {
        var bench = PhoneHarness(app: PhoneHarness.app(platform: platform))
        bench.start()
        let due = try #require(bench.node.nextLaunch)
        bench.now = due.addingTimeInterval(1_800)
        bench.fire(.resend)
        #expect(bench.node.nextLaunch == due, "\(platform): the resend moved the launch")
        #expect(bench.armed[.osLaunch] == .at(due))
        bench.clearEvents()
        bench.fire(.osLaunch)
        #expect(bench.names().contains(.handlerEntered), "\(platform)")
        #expect(bench.node.nextLaunch.map { $0 > due } ?? true, "\(platform): the next launch comes after this one")
    }

    @Test(
        "An overdue Android launch handled after a later time-zone line runs on the new zone at the line's instant, never stamped before it (issue 19 item 6)"
    )
    func lateLaunchAfterTravelIsNotStampedBeforeIt() throws {
        let utc = try #require(TimeZone(identifier: "Etc/UTC"))
        var bench = PhoneHarness(
            app: PhoneHarness.app(platform: .android, zone: utc),
            configuration: PhoneHarness.configuration(timeZone: utc))
        bench.start()
        let due = try #require(bench.node.nextLaunch)
        // The driver fell 4 virtual hours behind and handled the line before the launch's timer.
        bench.now = due.addingTimeInterval(4 * 3_600)
        bench.clearEvents()
        bench.type("time-zone America/New_York")
        let travelled = try #require(bench.stamped.first { $0.name == .timezoneChanged }?.at)
        #expect(bench.node.nextLaunch == due, "the travel keeps the overdue launch's instant")
        bench.advance(60)
        bench.clearEvents()
        bench.fire(.osLaunch)
        #expect(bench.names().contains(.handlerEntered), "\(bench.names())")
        #expect(bench.stamped.allSatisfy { $0.at >= travelled }, "stamped before the line: \(bench.stamped)")
        let batch = try #require(bench.events(.batchGenerated).last)
        #expect(batch["timeZone"] == .string("America/New_York"))
        #expect(bench.stamped.first { $0.name == .batchGenerated }?.at == travelled, "at the line's instant")
        let behind = try #require(bench.events(.clockBehind).first)
        #expect(behind["plannedAt"] == .date(due))
        #expect(behind["lateSeconds"] == .double(4 * 3_600 + 60))
        #expect(behind["count"] == .int(1))
        #expect(bench.node.behind.count == 1)
        #expect(bench.node.nextLaunch.map { $0 >= travelled } ?? true, "the OS is asked again from the run's instant")
        bench.clearEvents()
        bench.type("status")
        guard case .object(let status)? = bench.events(.phoneStatus).first?["behind"] else {
            Issue.record("phone.status has no behind object")
            return
        }
        #expect(status["count"] == .int(1))
        #expect(status["maxLateSeconds"] == .double(4 * 3_600 + 60))
    }

    @Test(
        "A launch on time says nothing of falling behind; repeats are said when the count doubles, the rest before phone.stopping"
    )
    func clockBehindIsRateLimited() throws {
        var bench = PhoneHarness(app: PhoneHarness.app(platform: .android))
        bench.start()
        let onTime = try #require(bench.node.nextLaunch)
        bench.now = onTime
        bench.fire(.osLaunch)
        #expect(bench.events(.clockBehind).isEmpty)
        #expect(bench.node.behind.count == 0)
        var said: [EventValue?] = []
        for _ in 0..<3 {
            let due = try #require(bench.node.nextLaunch)
            bench.now = due.addingTimeInterval(1_000)
            bench.clearEvents()
            bench.fire(.osLaunch)
            // No input came between: the run is at its own instant, as the twin runs it.
            #expect(bench.stamped.first { $0.name == .handlerEntered }?.at == due)
            said += bench.events(.clockBehind).map { $0["count"] }
        }
        #expect(said == [.int(1), .int(2)], "the third is counted, not said")
        #expect(bench.node.behind.count == 3)
        bench.type("quit")
        #expect(bench.node.behind.count == 3)
        let last = try #require(bench.events(.clockBehind).last)
        #expect(last["count"] == .int(3))
        #expect(last["plannedAt"] == .null)
        #expect(bench.names().last == .phoneStopping)
    }

    @Test("Sends to an absent watch are counted; repeats are held back until it is there again")
    func sendFailures() {
        var bench = PhoneHarness()
        bench.watchConnected = false
        bench.start()
        for _ in 0..<5 { bench.fire(.resend) }
        #expect(bench.node.counters.sendFailures == 6)
        #expect(bench.events(.sendFailed).count == 1)
        bench.watchConnected = true
        bench.fire(.resend)
        let summary = bench.events(.sendFailed).last
        #expect(summary?["suppressed"] == .int(4), "the held-back repeats are said when the watch is back")
        #expect(bench.names().last == .batchSent)
    }

    @Test(
        "phone.stopping is the last line: held-back send failures and refused peers are said before it",
        arguments: [StopCause.signal(15), .endOfTerminalInput, .outputClosed, nil])
    func stoppingIsLast(cause: StopCause?) throws {
        var bench = PhoneHarness(configuration: PhoneHarness.configuration(pairedWatchKey: PhoneMachineTests.watchKey))
        bench.watchConnected = false
        bench.start()
        for _ in 0..<3 { bench.fire(.resend) }
        for _ in 0..<4 {
            bench.driver.zapRequest(PhoneMachineTests.zapRequest(mechanism: "NULL", key: nil))
        }
        bench.clearEvents()
        if let cause { bench.driver.stop(cause) } else { bench.type("quit") }
        #expect(bench.names().last == .phoneStopping, "\(bench.names())")
        #expect(bench.events(.sendFailed).first?["suppressed"] == .int(2))
        #expect(bench.events(.peerRefused).first?["suppressed"] == .int(2))
    }
}

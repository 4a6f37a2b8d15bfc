// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

#if canImport(Glibc)
    import Glibc
#endif

/// The phone machine's answers to the inputs after start: the stdin language, the OS's
/// settings, zones, schedule reloads, writes before sends, the weather as an input, the launch
/// timer and the stop. Each test gives a started `PhoneNode` (no driver) its inputs, answers its
/// writes and forecasts as the process does (`PhoneMachineTests.answered`), and checks what it
/// returned in one equality. The driver's own part (the order it performs them) is
/// `PhoneDriverTests`'.
@Suite("Phone node")
struct PhoneNodeTests {
    typealias M = PhoneMachineTests

    /// Thu 2025-03-06 12:00 in New York: `M.t0`.
    static func stamp(_ actions: [PhoneAction], _ name: EventName) -> [Date] {
        actions.compactMap { if case .emit(let event, let at) = $0, event.name == name { at } else { nil } }
    }

    /// Every instant an event of `actions` is stamped with, in order.
    static func stamps(_ actions: [PhoneAction]) -> [Date] {
        actions.compactMap { if case .emit(_, let at) = $0 { at } else { nil } }
    }

    static func node(
        app: PhoneApp = PhoneFixture.app(), configuration: PhoneNodeConfiguration = PhoneFixture.configuration()
    ) -> PhoneNode {
        PhoneNode(app: app, configuration: configuration)
    }

    /// `node` started at `t0`, its start-up answered (forecasts only when `weather`); the start's actions.
    @discardableResult
    static func start(_ node: inout PhoneNode, weather: Bool = true, watch: Bool = true) -> [PhoneAction] {
        M.answered(&node, node.start(at: M.at(0)), at: M.at(0), weather: weather, watch: watch)
    }

    // MARK: the OS's settings

    @Test(
        "Android: with the notification permission revoked every bedtime notice added is also notification.hidden; granted, none; kept in os.json; refused on iOS"
    )
    func notificationPermission() throws {
        var node = M.started(platform: .android)
        #expect(
            M.shape(M.typed(&node, "permission notifications revoke", at: 60)) == [
                "persistOS", "os.permission", "arm osLaunch",
            ])
        let stored = try JSONDecoder().decode(SimulatedOS.self, from: JSONEncoder().encode(node.app.scheduler))
        #expect(!stored.notificationsShown)
        let notices: Set<EventName> = [.notificationAdded, .notificationHidden]
        let revoked = M.names(M.typed(&node, "open", at: 120)).filter(notices.contains)
        #expect(
            revoked == Array(repeating: EventName.notificationAdded, count: 7)
                + Array(repeating: .notificationHidden, count: 7))
        _ = M.typed(&node, "permission notifications grant", at: 180)
        #expect(
            M.names(M.typed(&node, "open", at: 240)).filter(notices.contains)
                == Array(repeating: .notificationAdded, count: 7))
        for (line, platform) in [
            ("permission notifications revoke", Platform.ios), ("permission exact-alarm maybe", .android),
            ("permission notifications maybe", .android), ("permission notifications", .android),
        ] {
            #expect(throws: PhoneCommand.Rejection.self, "\(line)") { try PhoneCommand.parse(line, platform: platform) }
        }
    }

    @Test(
        "Android constraints: network off holds the refresh and os.why names it; initial-delay-met and an armed stop USER give a run stopped with 13"
    )
    func constraints() throws {
        var app = PhoneFixture.app(platform: .android)
        app.scheduler.setConstraints([.network])
        var node = Self.node(app: app)
        Self.start(&node)
        #expect(M.shape(M.typed(&node, "network off", at: 60)) == ["persistOS", "os.network", "cancel osLaunch"])
        let why = try #require(M.events(.osWhy, in: node.commandLine("why", at: M.at(61))).first)
        guard case .string(let codes)? = why["reasonCodes"] else { throw CancellationError() }
        #expect(codes.contains("PENDING_JOB_REASON_CONSTRAINT_CONNECTIVITY"), "\(codes)")
        _ = M.typed(&node, "network on", at: 62)
        #expect(M.names(M.typed(&node, "stop USER", at: 63)) == [.osTestDriver])
        _ = M.typed(&node, "initial-delay-met", at: 64)
        #expect(node.nextLaunch == M.at(64).now)
        let run = M.answered(&node, node.timerFired(.osLaunch, at: M.at(64)), at: M.at(64))
        #expect(M.names(run).contains(.osWorkStopped), "\(M.names(run))")
        #expect(M.records(run).last?.stopReason == 13)
    }

    @Test(
        "One change gives one event: each setting its own os.* event, no os.conditions.changed; the OS written first",
        arguments: [
            (Platform.android, "bucket rare", ["persistOS", "os.standby_bucket", "arm osLaunch"]),
            (.android, "low-power on", ["persistOS", "os.low_power", "cancel osLaunch"]),
            (.android, "charging on", ["persistOS", "os.charging", "arm osLaunch"]),
            (.android, "background-refresh off", ["persistOS", "os.background_refresh", "cancel osLaunch"]),
            (.android, "force-quit", ["persistOS", "os.force_quit", "cancel osLaunch"]),
            (.ios, "low-power on", ["persistOS", "os.low_power", "cancel osLaunch"]),
            (.ios, "background-refresh off", ["persistOS", "os.background_refresh", "cancel osLaunch"]),
        ])
    func oneChangeOneEvent(platform: Platform, line: String, shape: [String]) {
        var node = M.started(platform: platform)
        #expect(M.shape(M.typed(&node, line, at: 60)) == shape)
    }

    @Test(
        "The OS trace is written in the step that caused it, at its instant, in time order: travel's os.request.* at the travel, none left for low-power on"
    )
    func traceInItsOwnStep() throws {
        var node = Self.node()
        let names = M.names(Self.start(&node))
        // The user's launch: the OS's launch and registration come before the job's weather step.
        let launched = try #require(names.firstIndex(of: .osAppLaunched))
        let fetched = try #require(names.firstIndex(of: .weatherFetched))
        #expect(launched < fetched, "\(names)")
        let travel = M.typed(&node, "time-zone Asia/Tokyo", at: 36_000)
        let at = M.at(36_000).now
        #expect(Self.stamp(travel, .osRequestReplaced) + Self.stamp(travel, .osRequestSubmitted) == [at, at])
        #expect(M.names(M.typed(&node, "low-power on", at: 39_600)) == [.osLowPower], "no launch planned")
        let times = Self.stamps(M.typed(&node, "open", at: 43_200))
        #expect(times == times.sorted(), "in time order")
    }

    @Test("A failed state write in a background run keeps the run's records: the submit and the failed run")
    func failedWriteKeepsRunRecords() throws {
        var node = M.started()
        let due = try #require(node.nextLaunch)
        let run = M.answered(&node, node.timerFired(.osLaunch, at: M.at(due)), at: M.at(due), failing: 1)
        #expect(M.names(run).filter { $0 == .persistFailed }.count == 1)
        #expect(
            M.records(run).map { "\($0.kind.rawValue) \($0.success.map { "\($0)" } ?? "-")" } == [
                "submitted -", "background false",
            ])
    }

    @Test("phone.status: the simulated OS's fields are one nested object `os`, no dotted keys")
    func statusNestsTheOS() throws {
        var node = M.started()
        _ = M.typed(&node, "low-power on", at: 0)
        let status = try #require(M.events(.phoneStatus, in: node.commandLine("status", at: M.at(0))).first)
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
        var node = M.started()
        let status = try #require(M.events(.phoneStatus, in: node.commandLine("status", at: M.at(588.25))).first)
        #expect(status["dataAgeHours"] == .double(0.16))
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
        var node = M.started()
        var second = 0.0
        // A year at a time (the most one clock-set moves), back to 1970, then forward to 2199.
        for (step, bound) in [("-366d", "1970-01-01T00:00:00Z"), ("+366d", "2199-12-31T23:59:59Z")] {
            var rejection: String?
            for _ in 0..<300 {
                second += 1
                let offset = node.app.scheduler.wallClockOffset
                let actions = M.typed(&node, "clock-set " + step, at: second)
                if M.names(actions) == [.inputRejected] {
                    if case .string(let text)? = M.events(.inputRejected, in: actions).first?["reason"] {
                        rejection = text
                    }
                    #expect(node.app.scheduler.wallClockOffset == offset, "nothing changes")
                    break
                }
                #expect(M.names(actions).first == .osClockSet)
            }
            let wall = node.app.scheduler.wallClock(at: M.at(second).now)
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
        var node = M.started()
        let state = node.app.state
        let rejected = M.event(
            .inputRejected, [("input", .string("low-power maybe")), ("reason", .string("expected low-power on|off"))],
            at: M.at(1))
        #expect(node.commandLine("low-power maybe", at: M.at(1)) == [rejected])
        // The echo is the line as parsed (only leading and trailing blanks dropped).
        #expect(throws: PhoneCommand.Rejection(input: "\u{A0}status", reason: PhoneCommand.unknownCommandReason)) {
            try PhoneCommand.parse(" \u{A0}status\t", platform: .ios)
        }
        #expect(node.app.state == state)
    }

    @Test("status and why: the zone, the seq, the next launch, and the OS's why at the command's instant")
    func statusAndWhy() throws {
        var node = M.started()
        let time = M.at(30)
        let status = try #require(M.events(.phoneStatus, in: node.commandLine("status", at: time)).first)
        #expect(status["timeZone"] == .string("America/New_York"))
        #expect(status["lastSeq"] == .int(Int64(node.app.state.lastSeq)))
        #expect(status["nextBackgroundLaunch"] == node.nextLaunch.map { .date($0) })
        let why = node.app.scheduler.why(at: time.now)
        #expect(status["why"] == .object(EventObject(why.fields)))
        #expect(node.commandLine("why", at: time) == [.emit(Event(why.event), at: time.now)])
        #expect(Event(why.event)["reason"] == .string(why.code.rawValue))
    }

    @Test("history gives one run.record per run kept; notifications lists the pending ones; move moves the app")
    func historyNotificationsMove() throws {
        var node = M.started()
        #expect(
            M.names(node.commandLine("history", at: M.at(1)))
                == Array(repeating: .runRecord, count: node.app.state.refreshLog.history.count))
        #expect(!M.events(.notificationPending, in: node.commandLine("notifications", at: M.at(1))).isEmpty)
        _ = M.typed(&node, "move 48.85,2.35", at: 2)
        #expect(node.app.location == Coordinate(latitude: 48.85, longitude: 2.35))
    }

    @Test("time-zone: timezone.changed from and to, then a batch in the new zone; quit: phone.stopping and stop")
    func travelAndQuit() throws {
        var node = M.started()
        let travel = M.typed(&node, "time-zone Asia/Tokyo", at: 60)
        let changed = try #require(M.events(.timezoneChanged, in: travel).first)
        #expect([changed["from"], changed["to"]] == [.string("America/New_York"), .string("Asia/Tokyo")])
        #expect(M.events(.batchGenerated, in: travel).last?["timeZone"] == .string("Asia/Tokyo"))
        #expect(M.shape(node.commandLine("quit", at: M.at(61))) == ["phone.stopping", "stop"])
    }

    // MARK: zones

    @Test("Zone precedence: travel, then --time-zone, then the schedule file's zone, then the machine's")
    func zonePrecedence() {
        let tokyo = TimeZone(identifier: "Asia/Tokyo")!
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        let machine = TimeZone(identifier: "America/Denver")!
        var inBerlin = WakeSchedule.everyDayAtSeven
        inBerlin.timeZoneIdentifier = berlin.identifier
        let plain = Self.node(configuration: PhoneFixture.configuration(timeZone: nil, machineZone: machine))
        #expect(plain.currentZone == machine)
        let file = Self.node(
            app: PhoneFixture.app(schedule: inBerlin),
            configuration: PhoneFixture.configuration(timeZone: nil, machineZone: machine))
        #expect(file.currentZone == berlin)
        var flag = Self.node(
            app: PhoneFixture.app(schedule: inBerlin),
            configuration: PhoneFixture.configuration(timeZone: PhoneFixture.zone, machineZone: machine))
        #expect(flag.currentZone == PhoneFixture.zone)
        Self.start(&flag)
        _ = M.typed(&flag, "time-zone Asia/Tokyo", at: 60)
        #expect(flag.currentZone == tokyo)
        #expect(flag.app.zone == tokyo)
    }

    // MARK: schedule reload

    @Test("open reads the schedule file again: a new one replaces the old and is used at once")
    func scheduleReloadGood() throws {
        // No --time-zone: the schedule file's zone applies.
        var node = Self.node(
            configuration: PhoneFixture.configuration(
                schedulePath: "/s/schedule.json", timeZone: nil, machineZone: PhoneFixture.zone))
        let started = Self.start(&node)
        #expect(!started.contains(.loadSchedule(path: "/s/schedule.json")), "the start-up checks read it already")
        var later = WakeSchedule.everyDayAtSeven
        later.timeZoneIdentifier = "Asia/Tokyo"
        let time = M.at(60)
        let open = node.commandLine("open", at: time)
        #expect(open.last == .loadSchedule(path: "/s/schedule.json"))
        #expect(!M.names(open).contains(.batchGenerated), "the launch waits for the schedule")
        #expect(
            !M.names(node.commandLine("simulate-launch", at: time)).contains(.handlerEntered),
            "later commands wait in order")
        let answered = M.names(node.scheduleLoaded(.success(later), at: time))
        #expect(answered.first == .scheduleChanged)
        #expect(node.app.schedule == later)
        #expect(node.app.zone.identifier == "Asia/Tokyo", "the file's zone applies")
        #expect(node.timeZoneSource == "schedule")
        // The open's refresh runs first; the simulate-launch waits behind its write.
        #expect(answered.contains(.refreshForeground))
        #expect(!answered.contains(.handlerEntered))
        let written = M.names(node.persisted(.succeeded, at: time))
        let generated = try #require(written.firstIndex(of: .batchGenerated))
        let entered = try #require(written.firstIndex(of: .handlerEntered))
        #expect(generated < entered)
    }

    @Test("open with a bad schedule file keeps the previous schedule and says why")
    func scheduleReloadBad() throws {
        var node = Self.node(configuration: PhoneFixture.configuration(schedulePath: "/s/schedule.json"))
        Self.start(&node)
        let before = node.app.schedule
        let time = M.at(60)
        #expect(node.commandLine("open", at: time) == [.loadSchedule(path: "/s/schedule.json")])
        let error = ScheduleLoadError("schedule file /s/schedule.json: line 3: bad")
        let answered = M.answered(&node, node.scheduleLoaded(.failure(error), at: time), at: time)
        #expect(
            answered.first
                == M.event(
                    .scheduleRejected,
                    [
                        ("path", .string("/s/schedule.json")), ("reason", .string(error.description)),
                        ("kept", .string("previous")),
                    ],
                    at: time))
        #expect(node.app.schedule == before)
        #expect(M.names(answered).contains(.batchGenerated), "the launch runs on the previous schedule")
    }

    // MARK: writes before sends

    @Test("A write holds back the rest of its step until the result comes")
    func writeHoldsTheStep() throws {
        var node = PhoneNode(app: PhoneFixture.app(), configuration: PhoneFixture.configuration())
        var time = NodeTime(now: PhoneFixture.start, wall: 0)
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

    static func isSend(_ action: PhoneAction) -> Bool {
        if case .send = action { true } else { false }
    }

    /// The batches of `actions` sent while the last state write that succeeded did not hold
    /// them, given that write number `failing` failed: must be none.
    static func sentBeforeDurable(_ actions: [PhoneAction], failing: Int?, disk: PhoneSyncState?) -> [WakeBatch] {
        var disk = disk
        var writes = 0
        var early: [WakeBatch] = []
        for action in actions {
            switch action {
            case .persist(let state):
                writes += 1
                if writes != failing { disk = state }
            case .send(.batch(let batch)) where disk?.outbox != batch: early.append(batch)
            default: break
            }
        }
        return early
    }

    @Test("A job that needs no weather fetch writes once: everything it did is on disk before its batch goes out")
    func oneWritePerJobWithoutFetch() throws {
        var node = M.started()
        // An hour later the forecast cached at start is fresh: the weather step uses the cache.
        let open = M.typed(&node, "open", at: 3_600)
        #expect(
            M.names(open).filter { [.renewSubmitted, .batchGenerated, .batchSent, .weatherSkipped].contains($0) } == [
                .renewSubmitted, .batchGenerated, .batchSent, .weatherSkipped,
            ])
        // Renew, notices, dates, sunlight and the run history: one write, all of it on disk.
        #expect(M.persists(open) == [node.app.state])
        #expect(M.batches(open) == [node.app.state.outbox].compactMap { $0 })
        #expect(Self.sentBeforeDurable(open, failing: nil, disk: nil) == [])
    }

    @Test("A failed single write of a job without a fetch sends nothing and reuses no seq")
    func oneWriteFails() throws {
        var node = M.started()
        let disk = node.app.state
        let failed = M.typed(&node, "open", at: 3_600, failing: 1)
        #expect(M.names(failed).contains(.persistFailed))
        #expect(M.batches(failed) == [])
        #expect(node.app.state.outbox == disk.outbox, "the outbox returns to what is on disk")
        #expect(node.app.state.refreshLog == disk.refreshLog, "and so does the run history")
        let unsent = try #require(M.persists(failed).first?.outbox?.seq)
        let next = M.typed(&node, "open", at: 3_660)
        #expect(M.batches(next).map(\.seq) == [unsent + 1], "a seq never used, not even by the batch never sent")
        #expect(M.persists(next).last?.outbox == M.batches(next).last)
    }

    @Test(
        "A failed write at each write of a job: nothing goes out that is not on disk, and no seq is reused",
        arguments: ["open", "simulate-launch"])
    func persistFailureAtEachWrite(job: String) throws {
        var probe = M.started()
        let writesPerJob = M.persists(M.typed(&probe, job, at: 86_400)).count
        // Renew, notices and dates in one write before the send; weather, sunlight and the run
        // history in one after the forecast.
        try #require(writesPerJob >= 2)
        for failing in 1...writesPerJob {
            var node = M.started()
            let disk = node.app.state
            let actions = M.typed(&node, job, at: 86_400, failing: failing)
            let names = M.names(actions)
            let failedAt = try #require(names.firstIndex(of: .persistFailed), "write \(failing)")
            #expect(!names[failedAt...].contains(.batchSent), "write \(failing): nothing sent after it")
            #expect(Self.sentBeforeDurable(actions, failing: failing, disk: disk) == [], "write \(failing)")
            // Space comes back a day later (other dates): the next batch has a seq never used
            // before, even by a batch that never left the phone, and it goes out.
            let next = M.typed(&node, "open", at: 2 * 86_400)
            let all =
                [disk.outbox].compactMap { $0 } + M.batches(actions) + M.persists(actions + next).compactMap(\.outbox)
                + M.batches(next)
            let refs = Dictionary(grouping: all, by: { "\($0.epoch)/\($0.seq)" })
            #expect(refs.values.allSatisfy { Set($0.map(\.digest)).count == 1 }, "write \(failing): a seq reused")
            #expect(
                M.persists(next).last?.outbox == M.batches(next).last,
                "write \(failing): the newest is on disk and sent")
            #expect(!M.batches(next).isEmpty, "write \(failing)")
        }
    }

    // MARK: weather

    @Test("The weather arrives later: the job waits at its weather step, then finishes with the cost charged")
    func weatherAsInput() throws {
        var node = Self.node()
        let started = Self.start(&node, weather: false)
        guard
            case .fetchWeather(let location, let fetchAt)? = started.first(where: {
                if case .fetchWeather = $0 { true } else { false }
            })
        else {
            Issue.record("no fetch: \(M.shape(started))")
            return
        }
        #expect(location == PhoneFixture.berlin)
        #expect(M.names(started).contains(.batchGenerated), "renew, notices and dates do not wait")
        #expect(!M.names(started).contains { $0.rawValue.hasPrefix("weather.") })
        // A command that starts a job waits; a read-only one does not.
        #expect(M.typed(&node, "simulate-launch", at: 1, weather: false) == [])
        #expect(M.names(node.commandLine("status", at: M.at(1))) == [.phoneStatus])
        // Messages from the watch are served meanwhile.
        let batch = try #require(node.app.state.outbox)
        let ack = M.answered(&node, node.messageReceived(.ack(batch.ref, coverageEnd: nil), at: M.at(2)), at: M.at(2))
        #expect(M.names(ack).contains(.ackReceived))
        let forecast = Forecast(fetchedAt: fetchAt, location: location, source: "test", hours: [])
        let arrived = M.answered(
            &node, node.weatherArrived(WeatherOutcome(result: .success(forecast), cost: 1.5), at: M.at(5)), at: M.at(5))
        #expect(M.events(.weatherFetched, in: arrived).first?["cost"] == .double(1.5))
        #expect(node.app.state.weather == forecast)
        let foreground = try #require(node.app.state.refreshLog.history.last { $0.kind == .foreground })
        #expect(foreground.duration == 0.1 + 0.1 + 0.2 + 1.5 + 0.05)
        let names = M.names(arrived)
        let fetchedAt = try #require(names.firstIndex(of: .weatherFetched))
        let entered = try #require(names.firstIndex(of: .handlerEntered), "the waiting command ran")
        #expect(fetchedAt < entered)
    }

    @Test(
        "Android: a network failure arriving as input makes the run retry; another failure fails it",
        arguments: [(WeatherError.network("offline"), "retry"), (WeatherError.http(status: 500, "server"), "failure")])
    func androidWeatherFailure(error: WeatherError, outcome: String) throws {
        var node = M.started(platform: .android)
        // 10:00 in New York the next day: inside the weather window, the cache 22 h old.
        let time = M.at(22 * 3_600)
        let launch = M.typed(&node, "simulate-launch", at: 22 * 3_600, weather: false)
        #expect(M.shape(launch).filter { $0 == "fetchWeather" } == ["fetchWeather"])
        #expect(!M.names(launch).contains(.handlerCompleted), "the run waits for the weather")
        let answered = M.answered(
            &node, node.weatherArrived(WeatherOutcome(result: .failure(error), cost: 1), at: time), at: time)
        #expect(M.events(.weatherFailed, in: answered).first?["network"] == .bool(error.isNetwork))
        #expect(M.events(.handlerCompleted, in: answered).first?["outcome"] == .string(outcome))
    }

    @Test("A failed write before the weather step ends the job: no fetch goes out, the run does not hang")
    func persistFailureBeforeWeather() throws {
        var node = M.started()
        let launch = M.typed(&node, "simulate-launch", at: 22 * 3_600, failing: 1, weather: false)
        #expect(M.names(launch).contains(.persistFailed))
        #expect(!M.shape(launch).contains("fetchWeather"), "the fetch was dropped with the rest of the step")
        #expect(!node.app.awaitsWeather)
        #expect(
            M.names(M.typed(&node, "simulate-launch", at: 22 * 3_600 + 1)).contains(.handlerEntered),
            "the next job runs")
    }

    // MARK: timers

    @Test("The OS launch timer is armed at the OS's next launch, as a virtual instant; its firing runs the job")
    func osLaunchTimer() throws {
        var node = M.started()
        let next = try #require(node.nextLaunch)
        #expect(M.timers(node.timerFired(.resend, at: M.at(1))).last == .arm(.osLaunch, .at(next)))
        let run = M.answered(&node, node.timerFired(.osLaunch, at: M.at(next)), at: M.at(next))
        #expect(M.names(run).contains(.handlerEntered))
        #expect(!M.osWrites(run).isEmpty, "the OS's state is written")
    }

    @Test(
        "A launch already due whose timer comes after another input (a driver that woke late) keeps its instant",
        arguments: [Platform.ios, .android])
    func lateLaunchTimerKeepsItsInstant(platform: Platform) throws {
        var node = M.started(platform: platform)
        let due = try #require(node.nextLaunch)
        let late = M.at(due.addingTimeInterval(1_800))
        #expect(M.timers(node.timerFired(.resend, at: late)).last == .arm(.osLaunch, .at(due)), "\(platform)")
        #expect(node.nextLaunch == due, "\(platform): the resend moved the launch")
        let run = M.answered(&node, node.timerFired(.osLaunch, at: late), at: late)
        #expect(Self.stamp(run, .handlerEntered) == [due], "\(platform)")
        #expect(node.nextLaunch.map { $0 > due } ?? true, "\(platform): the next launch comes after this one")
    }

    @Test(
        "An overdue Android launch handled after a later time-zone line runs on the new zone at the line's instant, never stamped before it"
    )
    func lateLaunchAfterTravelIsNotStampedBeforeIt() throws {
        let utc = try #require(TimeZone(identifier: "Etc/UTC"))
        var node = Self.node(
            app: PhoneFixture.app(platform: .android, zone: utc),
            configuration: PhoneFixture.configuration(timeZone: utc))
        Self.start(&node)
        let due = try #require(node.nextLaunch)
        // The driver fell 4 virtual hours behind and handled the line before the launch's timer.
        let lineAt = M.at(due.addingTimeInterval(4 * 3_600))
        let travel = M.answered(&node, node.commandLine("time-zone America/New_York", at: lineAt), at: lineAt)
        #expect(Self.stamp(travel, .timezoneChanged) == [lineAt.now])
        #expect(node.nextLaunch == due, "the travel keeps the overdue launch's instant")
        let fired = M.at(lineAt.now.addingTimeInterval(60))
        let run = M.answered(&node, node.timerFired(.osLaunch, at: fired), at: fired)
        #expect(M.names(run).contains(.handlerEntered), "\(M.names(run))")
        #expect(Self.stamps(run).allSatisfy { $0 >= lineAt.now }, "stamped before the line")
        #expect(M.events(.batchGenerated, in: run).last?["timeZone"] == .string("America/New_York"))
        #expect(Self.stamp(run, .batchGenerated) == [lineAt.now], "at the line's instant")
        let behind = try #require(M.events(.clockBehind, in: run).first)
        #expect(
            [behind["plannedAt"], behind["lateSeconds"], behind["count"]] == [
                .date(due), .double(4 * 3_600 + 60), .int(1),
            ])
        #expect(node.nextLaunch.map { $0 >= lineAt.now } ?? true, "the OS is asked again from the run's instant")
        let status = try #require(M.events(.phoneStatus, in: node.commandLine("status", at: fired)).first)
        #expect(
            status["behind"]
                == .object(
                    EventObject([
                        ("count", .int(1)), ("maxLateSeconds", .double(4 * 3_600 + 60)),
                        ("thresholdSeconds", .double(600)),
                    ])))
    }

    @Test(
        "A launch on time says nothing of falling behind; repeats are said when the count doubles, the rest before phone.stopping"
    )
    func clockBehindIsRateLimited() throws {
        var node = M.started(platform: .android)
        let onTime = try #require(node.nextLaunch)
        #expect(
            M.events(
                .clockBehind, in: M.answered(&node, node.timerFired(.osLaunch, at: M.at(onTime)), at: M.at(onTime)))
                == [])
        var said: [EventValue?] = []
        for _ in 0..<3 {
            let due = try #require(node.nextLaunch)
            let late = M.at(due.addingTimeInterval(1_000))
            let run = M.answered(&node, node.timerFired(.osLaunch, at: late), at: late)
            // No input came between: the run is at its own instant, as the twin runs it.
            #expect(Self.stamp(run, .handlerEntered) == [due])
            said += M.events(.clockBehind, in: run).map { $0["count"] }
        }
        #expect(said == [.int(1), .int(2)], "the third is counted, not said")
        #expect(node.behind.count == 3)
        let quit = node.commandLine("quit", at: M.at(10 * 86_400))
        #expect(M.names(quit) == [.clockBehind, .phoneStopping])
        let last = try #require(M.events(.clockBehind, in: quit).first)
        #expect([last["count"], last["plannedAt"]] == [.int(3), .null])
    }

    @Test("Sends to an absent watch are counted; repeats are held back until it is there again")
    func sendFailures() throws {
        var node = Self.node()
        var all = Self.start(&node, watch: false)
        for second in 1...5 {
            all += M.answered(
                &node, node.timerFired(.resend, at: M.at(Double(second))), at: M.at(Double(second)), watch: false)
        }
        #expect(node.counters.sendFailures == 6)
        #expect(M.events(.sendFailed, in: all).count == 1)
        let back = M.answered(&node, node.timerFired(.resend, at: M.at(6)), at: M.at(6))
        #expect(
            M.events(.sendFailed, in: back).map { $0["suppressed"] } == [.int(4)],
            "the held-back repeats are said when the watch is back")
        #expect(M.names(back).last == .batchSent)
    }

    @Test(
        "phone.stopping is the last line: held-back send failures and refused peers are said before it",
        arguments: [StopCause.signal(15), .endOfTerminalInput, .outputClosed, nil])
    func stoppingIsLast(cause: StopCause?) throws {
        var node = Self.node(configuration: PhoneFixture.configuration(pairedWatchKey: M.watchKey))
        Self.start(&node, watch: false)
        for second in 1...3 {
            _ = M.answered(
                &node, node.timerFired(.resend, at: M.at(Double(second))), at: M.at(Double(second)), watch: false)
        }
        for _ in 0..<4 { _ = node.zapRequest(M.zapRequest(mechanism: "NULL", key: nil), at: M.at(4)) }
        let time = M.at(5)
        let stopped = cause.map { node.stop($0, at: time) } ?? node.commandLine("quit", at: time)
        #expect(M.names(stopped) == [.peerRefused, .sendFailed, .phoneStopping])
        #expect(M.events(.sendFailed, in: stopped).first?["suppressed"] == .int(2))
        #expect(M.events(.peerRefused, in: stopped).first?["suppressed"] == .int(2))
        #expect(M.shape(stopped).last == "stop")
    }
}

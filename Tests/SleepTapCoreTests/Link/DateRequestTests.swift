// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

/// REQUEST, the watch asking for dates (docs/protocol.md, "REQUEST"): the codec, the phone's
/// simulated OS and the phone machine (docs/scheduler.md, "A message from the watch"), and the
/// watch's policy.
@Suite("REQUEST: a watch that asks for dates")
struct DateRequestTests {
    static let coverageEnd = ISO8601.date("2025-03-13T10:30:00Z")!
    static func request(_ id: UInt64 = 1, nightsLeft: Int = 2) -> DateRequest {
        DateRequest(id: id, nightsLeft: nightsLeft, coverageEnd: coverageEnd)
    }

    // MARK: wire

    @Test("REQUEST survives encode then decode, coverageEnd null and the bounds included")
    func roundTrip() throws {
        for request in [
            Self.request(), DateRequest(id: WireCodec.maxSeq, nightsLeft: 0, coverageEnd: nil),
            DateRequest(id: 1, nightsLeft: WireCodec.maxEntries, coverageEnd: Self.coverageEnd),
        ] {
            #expect(try WireCodec.decode(WireCodec.encode(.request(request))) == .request(request))
        }
    }

    @Test("The documented REQUEST example decodes; coverageEnd may be absent")
    func documentedExample() throws {
        let text = #"{"v":1,"type":"REQUEST","id":1,"nightsLeft":2,"coverageEnd":"2025-03-13T10:30:00Z"}"#
        #expect(try WireCodec.decode(Array(text.utf8)) == .request(Self.request()))
        let bare = #"{"v":1,"type":"REQUEST","id":7,"nightsLeft":0}"#
        #expect(
            try WireCodec.decode(Array(bare.utf8)) == .request(DateRequest(id: 7, nightsLeft: 0, coverageEnd: nil)))
    }

    /// Bad REQUESTs and the reason each must be refused with.
    static let malformed: [(String, String)] = [
        (#"{"v":1,"type":"REQUEST","id":0,"nightsLeft":1}"#, "field id must be >= 1"),
        (#"{"v":1,"type":"REQUEST","nightsLeft":1}"#, "missing field id"),
        (#"{"v":1,"type":"REQUEST","id":"1","nightsLeft":1}"#, "field id must be a non-negative integer"),
        (#"{"v":1,"type":"REQUEST","id":1.0,"nightsLeft":1}"#, "field id must be a non-negative integer"),
        (#"{"v":1,"type":"REQUEST","id":-3,"nightsLeft":1}"#, "field id must be a non-negative integer"),
        (#"{"v":1,"type":"REQUEST","id":9007199254740992,"nightsLeft":1}"#, "field id exceeds 2^53-1"),
        (#"{"v":1,"type":"REQUEST","id":1}"#, "missing field nightsLeft"),
        (#"{"v":1,"type":"REQUEST","id":1,"nightsLeft":65}"#, "field nightsLeft must be at most 64"),
        (#"{"v":1,"type":"REQUEST","id":1,"nightsLeft":true}"#, "field nightsLeft must be a non-negative integer"),
        (
            #"{"v":1,"type":"REQUEST","id":1,"nightsLeft":1,"coverageEnd":"2025-02-30T00:00:00Z"}"#,
            "is not an ISO-8601 instant"
        ),
        (#"{"v":1,"type":"REQUEST","id":1,"nightsLeft":1,"coverageEnd":5}"#, "field coverageEnd must be a string"),
        (#"{"v":1,"type":"REQUEST","id":1,"id":2,"nightsLeft":1}"#, #"key "id" appears twice in one object"#),
    ]

    @Test("Malformed REQUESTs are refused with a reason naming the field", arguments: 0..<malformed.count)
    func malformedRefused(index: Int) {
        let (text, reason) = Self.malformed[index]
        do {
            let message = try WireCodec.decode(Array(text.utf8))
            Issue.record("\(text) decoded as \(message)")
        } catch {
            #expect(error.reason.contains(reason), "\(text): \(error.reason)")
        }
    }

    @Test("The phone refuses every malformed REQUEST with message.rejected and an ERROR, and nothing else happens")
    func phoneRejectsMalformed() throws {
        var node = M.started()
        let before = node.app.state
        for (second, (text, reason)) in Self.malformed.enumerated() {
            let time = M.at(Double(second + 1))
            let actions = M.answered(&node, node.messageReceived(M.frames(Array(text.utf8)), at: time), at: time)
            let sends = M.sends(actions)
            guard case .error(let said)? = sends.first, sends.count == 1 else {
                Issue.record("\(text): sent \(sends)")
                continue
            }
            #expect(said.contains(reason), "\(text): \(said)")
            // message.rejected and error.sent, each held back once repeated (rate-limited lines).
            #expect(Set(M.names(actions)).isSubset(of: [.peerOnline, .messageRejected, .errorSent]), "\(text)")
        }
        #expect(node.counters.rejectedMessages == Self.malformed.count)
        #expect(node.app.state == before)
    }

    @Test("A REQUEST sent to a watch is refused there: message.rejected and an ERROR, nothing stored")
    func watchRejectsRequest() throws {
        var node = WatchNodeTests.node()
        let actions = node.received(
            WatchInbound(frames: WatchNodeTests.frame(.request(Self.request()))), at: WatchNodeTests.at(1))
        let reason = "REQUEST is a watch-to-phone message"
        #expect(WatchNodeTests.sends(actions) == [.error(reason: reason)])
        #expect(try WatchNodeTests.event(.messageRejected, in: actions)["reason"] == .string(reason))
        #expect(!actions.contains { if case .persist = $0 { true } else { false } })
    }

    // MARK: the simulated OS

    @Test(
        "The OS's rule: iOS wakes within the app-refresh budget, Android with no limit; a force-quit app is not woken")
    func osRule() throws {
        let now = PhoneFixture.start
        var ios = PhoneFixture.app().scheduler
        ios.setRuntimeBudget(12)
        let woken = ios.watchMessage(at: now, appRunning: false)
        #expect(woken.woken && woken.budget == 12 && woken.expirationWarning == 1 && woken.reason == nil)
        ios.forceQuit(at: now)
        let held = ios.watchMessage(at: now, appRunning: false)
        #expect(!held.woken && held.reason?.contains("force-quit") == true)
        let traced = ios.drainTrace().map(\.event).filter { $0.name == .osWatchMessage }
        #expect(traced.map { $0["woken"] } == [.bool(true), .bool(false)])
        #expect(traced.allSatisfy { $0["channel"] == .string("WatchConnectivity") })
        #expect(traced.first?["budget"] == .double(12))

        var android = PhoneFixture.app(platform: .android).scheduler
        android.setStandbyBucket(.restricted, at: now)
        android.setLowPowerMode(true, at: now)
        let bound = android.watchMessage(at: now, appRunning: false)
        #expect(bound.woken && bound.budget == nil)
        android.forceQuit(at: now)
        #expect(!android.watchMessage(at: now, appRunning: false).woken)
        let androidTrace = android.drainTrace().map(\.event).filter { $0.name == .osWatchMessage }
        #expect(androidTrace.map { $0["channel"] } == [.string("MessageClient"), .string("MessageClient")])
        #expect(androidTrace.first?["budget"] == .null)
    }

    // MARK: the phone

    typealias M = PhoneMachineTests

    /// `request` from the watch `seconds` after `t0`, answered (`PhoneMachineTests.answered`).
    static func serve(
        _ node: inout PhoneNode, _ request: DateRequest = request(), at seconds: TimeInterval, weather: Bool = true
    ) -> [PhoneAction] {
        let time = M.at(seconds)
        return M.answered(&node, node.messageReceived(.request(request), at: time), at: time, weather: weather)
    }

    /// The ERROR sent last among `actions`, nil when none.
    static func lastError(_ actions: [PhoneAction]) -> String? {
        if case .error(let reason)? = M.sends(actions).last { reason } else { nil }
    }

    @Test(
        "iOS late-silent: the BGTask handler is never entered, yet a REQUEST wakes the app and its job answers with a new batch"
    )
    func lateSilentServed() throws {
        var node = M.started(registration: .lateSilent)
        // The OS's background launch: the handler is not entered (the bug).
        let due = try #require(node.nextLaunch)
        let launch = M.names(M.answered(&node, node.timerFired(.osLaunch, at: M.at(due)), at: M.at(due)))
        #expect(launch.contains(.osLaunchDropped) && !launch.contains(.handlerEntered))
        let before = try #require(node.app.state.outbox).seq
        let actions = Self.serve(&node, at: due.timeIntervalSince(M.t0) + 3_600)
        let names = M.names(actions)
        #expect(
            Array(names.filter { $0 != .peerOnline }.prefix(3)) == [
                .messageReceived, .requestReceived, .osWatchMessage,
            ])
        let message = try #require(M.events(.osWatchMessage, in: actions).first)
        #expect(
            [message["woken"], message["appRunning"], message["budget"]] == [.bool(true), .bool(true), .double(30)])
        #expect(!names.contains(.handlerEntered), "a watch message is not a BGTask launch")
        let batch = try #require(M.batches(actions).last)
        #expect(batch.seq == before + 1)
        let served = try #require(M.events(.requestServed, in: actions).first)
        #expect([served["id"], served["success"], served["seq"]] == [.int(1), .bool(true), .int(Int64(batch.seq))])
        #expect(PhoneNodeTests.sentBeforeDurable(actions, failing: nil, disk: nil) == [])
        let history = node.commandLine("history", at: M.at(due.addingTimeInterval(3_601)))
        #expect(M.events(.runRecord, in: history).last?["kind"] == .string("watch-request"))
    }

    @Test("An app that is not running is launched in the background for the REQUEST, registering as its code does")
    func coldWake() throws {
        var node = M.started()
        _ = M.typed(&node, "registration late-silent", at: 0)  // an app update: the process ends
        let served = Self.serve(&node, at: 600)
        #expect(M.events(.osWatchMessage, in: served).first?["appRunning"] == .bool(false))
        #expect(M.events(.osAppLaunched, in: served).first?["byUser"] == .bool(false))
        #expect(M.events(.handlerRegistered, in: served).first?["phase"] == .string("after launch"))
        #expect(M.events(.requestServed, in: served).first?["success"] == .bool(true))

        var crashing = M.started()
        _ = M.typed(&crashing, "registration late-crash", at: 0)
        let refused = Self.serve(&crashing, at: 600)
        #expect(M.names(refused).contains(.appCrashed))
        let crash = "the app crashed at launch: \(LaunchHandlerCrash.registeredAfterLaunch.message)"
        #expect(M.events(.requestRefused, in: refused).first?["reason"] == .string(crash))
        #expect(M.batches(refused) == [])
        #expect(Self.lastError(refused)?.hasPrefix("REQUEST 1 not served: the app crashed at launch") == true)
    }

    @Test("iOS: Low Power Mode and Background App Refresh off stop BGTask launches, not a REQUEST")
    func iosConditionsDoNotHoldItBack() throws {
        var node = M.started()
        _ = M.typed(&node, "low-power on", at: 0)
        _ = M.typed(&node, "background-refresh off", at: 0)
        #expect(node.nextLaunch == nil)
        #expect(M.events(.requestServed, in: Self.serve(&node, at: 1)).first?["success"] == .bool(true))
    }

    @Test(
        "A force-quit app (iOS) or force-stopped app (Android) is not woken: request.refused and an ERROR",
        arguments: [Platform.ios, .android])
    func forceQuitRefused(platform: Platform) throws {
        var node = M.started(platform: platform)
        _ = M.typed(&node, "force-quit", at: 0)
        let refused = Self.serve(&node, at: 1)
        #expect(M.events(.osWatchMessage, in: refused).first?["woken"] == .bool(false))
        #expect(M.events(.requestRefused, in: refused).count == 1)
        #expect(!M.names(refused).contains(.requestServed))
        #expect(M.batches(refused) == [])
        #expect(Self.lastError(refused)?.hasPrefix("REQUEST 1 not served: the phone's OS did not wake the app") == true)
        // The user opens the app: the next REQUEST (after the spacing of none served) is served.
        _ = M.typed(&node, "open", at: 1)
        #expect(M.events(.requestServed, in: Self.serve(&node, Self.request(2), at: 61)).first?["id"] == .int(2))
    }

    @Test("Android: in the restricted bucket with Battery Saver on, the listener service still runs the job, unlimited")
    func androidAnyBucket() throws {
        var node = M.started(platform: .android)
        _ = M.typed(&node, "bucket restricted", at: 0)
        _ = M.typed(&node, "low-power on", at: 0)
        let served = Self.serve(&node, at: 1)
        let message = try #require(M.events(.osWatchMessage, in: served).first)
        #expect([message["channel"], message["budget"]] == [.string("MessageClient"), .null])
        #expect(M.events(.requestServed, in: served).first?["success"] == .bool(true))
    }

    @Test("The phone serves at most one REQUEST per 15 minutes: one in between is refused (rate-limited line, ERROR)")
    func phoneSpacing() throws {
        var node = M.started()
        #expect(M.events(.requestServed, in: Self.serve(&node, Self.request(1), at: 0)).count == 1)
        let early = Self.serve(&node, Self.request(2), at: PhoneApp.requestSpacing - 60)
        #expect(M.events(.requestRefused, in: early).map { $0["id"] } == [.int(2)])
        #expect(M.batches(early) == [])
        let spaced = Self.serve(&node, Self.request(3), at: PhoneApp.requestSpacing)
        #expect(M.events(.requestServed, in: spaced).map { $0["id"] } == [.int(3)])
        #expect(M.batches(spaced).count == 1)
    }

    @Test("A flood of REQUESTs inside the spacing: one line, the repeats counted, no job run")
    func floodHeldBack() throws {
        var node = M.started()
        _ = Self.serve(&node, Self.request(1), at: 0)
        var flood: [PhoneAction] = []
        for id in 2...50 { flood += Self.serve(&node, Self.request(UInt64(id)), at: Double(id) / 100) }
        #expect(M.events(.requestRefused, in: flood).count == 1)
        #expect(M.events(.requestServed, in: flood) + M.events(.handlerRegistered, in: flood) == [])
    }

    @Test("A budget too small for the dates step: the run expires, request.served says so, and the watch gets an ERROR")
    func expiredBeforeDates() throws {
        var app = PhoneFixture.app()
        app.scheduler.setRuntimeBudget(1.25)  // 0.25 s before the 1 s warning: renew and notices fit, dates do not
        var node = PhoneNode(app: app, configuration: PhoneFixture.configuration())
        _ = M.answered(&node, node.start(at: M.at(0)), at: M.at(0))
        let served = Self.serve(&node, at: 1)
        #expect(M.events(.handlerExpired, in: served).first?["step"] == .string("dates"))
        let event = try #require(M.events(.requestServed, in: served).first)
        #expect([event["success"], event["seq"]] == [.bool(false), .null])
        #expect(M.batches(served) == [])
        #expect(Self.lastError(served) == "REQUEST 1 not served: the run ended before it published dates")
    }

    @Test("A REQUEST that arrives while a job waits for the weather waits too, then runs")
    func waitsForTheJob() throws {
        var node = PhoneNode(app: PhoneFixture.app(), configuration: PhoneFixture.configuration())
        let start = M.answered(&node, node.start(at: M.at(0)), at: M.at(0), weather: false)
        #expect(M.shape(start).filter { $0 == "fetchWeather" }.count == 1)
        let waiting = Self.serve(&node, at: 0, weather: false)
        #expect(M.names(waiting).contains(.requestReceived))
        #expect(!M.names(waiting).contains(.osWatchMessage), "the OS hands it over once the job ended")
        let (result, cost) = OfflineWeatherProvider(seed: 9).forecast(for: PhoneFixture.berlin, now: M.t0)
        let time = M.at(0)
        let ran = M.answered(&node, node.weatherArrived(WeatherOutcome(result: result, cost: cost), at: time), at: time)
        #expect(M.names(ran).contains(.osWatchMessage))
        #expect(M.events(.requestServed, in: ran).count == 1)
    }

    // MARK: the watch

    static func asker(
        linkUp: Bool = true, activeSeconds: TimeInterval = WatchNode.Configuration.defaultActiveSeconds
    ) -> WatchNode {
        var node = WatchNode(
            configuration: WatchNode.Configuration(
                endpoint: WatchNodeTests.endpoint, statePath: "/state/watch.json", flagZone: WatchNodeTests.tokyo,
                systemZone: WatchNodeTests.utc, requestDates: true, activeSeconds: activeSeconds),
            state: WatchSyncState(lastAppliedSeq: 1, batch: WatchNodeTests.tokyoBatch()))
        if linkUp { _ = node.link(.handshakeSucceeded, at: WatchNodeTests.at(0)) }
        return node
    }

    static func tap(_ node: inout WatchNode, _ iso: String, wall: TimeInterval = 1) throws -> [WatchAction] {
        let time = WatchNodeTests.at(wall, try #require(ISO8601.date(iso)))
        return WatchNodeTests.drive(&node, node.command(.bed, at: time), at: time)
    }

    static func requests(_ actions: [WatchAction]) -> [DateRequest] {
        WatchNodeTests.sends(actions).compactMap { if case .request(let r) = $0 { r } else { nil } }
    }

    @Test(
        "--request-dates: the tap that finds the nights left at --warn-nights sends REQUEST, each later low tap another"
    )
    func watchAsksWhenLow() throws {
        var node = Self.asker()
        // Wake-ups 2026-06-20T22:00Z ... 06-26T22:00Z.
        #expect(Self.requests(try Self.tap(&node, "2026-06-24T13:00:00Z")).isEmpty)
        let first = try Self.tap(&node, "2026-06-25T13:00:00Z")
        #expect(
            Self.requests(first)
                == [DateRequest(id: 1, nightsLeft: 2, coverageEnd: ISO8601.date("2026-06-26T22:00:00Z")!)])
        // The night before's alarm rings first, at its wake-up (WatchAlarmTests).
        #expect(WatchNodeTests.names(first) == [.alarmFired, .bedWakeTime, .alarmSet, .coverageLow, .requestSent])
        let sent = try WatchNodeTests.event(.requestSent, in: first)
        #expect(sent["id"] == .int(1) && sent["nightsLeft"] == .int(2))
        #expect(Self.requests(try Self.tap(&node, "2026-06-26T13:00:00Z")).map(\.id) == [2])
        let status = try WatchNodeTests.event(
            .cacheStatus, in: node.command(.status, at: WatchNodeTests.at(2, ISO8601.date("2026-06-26T14:00:00Z")!)))
        #expect(status["requestsSent"] == .int(2))
    }

    @Test("Without --request-dates the watch never sends a REQUEST")
    func offByDefault() throws {
        var node = WatchNodeTests.node(
            flagZone: WatchNodeTests.tokyo, state: WatchSyncState(lastAppliedSeq: 1, batch: WatchNodeTests.tokyoBatch())
        )
        _ = node.link(.handshakeSucceeded, at: WatchNodeTests.at(0))
        for day in 24...28 {
            #expect(Self.requests(try Self.tap(&node, "2026-06-\(day)T13:00:00Z")).isEmpty)
        }
    }

    @Test(
        "Link down: no REQUEST at the low tap; the link coming back up while the user looks asks at once, after its HELLO"
    )
    func linkDownThenUp() throws {
        var node = Self.asker(linkUp: false)
        #expect(Self.requests(try Self.tap(&node, "2026-06-25T13:00:00Z")).isEmpty)
        let look = WatchNodeTests.at(4, ISO8601.date("2026-06-25T14:59:00Z")!)
        #expect(
            node.command(.wrist(up: true), at: look)
                == [
                    .emit(
                        Event(
                            .wrist, [("up", .bool(true)), ("appActive", .bool(true)), ("requestHeld", .bool(false))]),
                        at: look.now)
                ], "out of reach: nothing to send")
        let up = WatchNodeTests.at(5, ISO8601.date("2026-06-25T15:00:00Z")!)
        let actions = node.link(.handshakeSucceeded, at: up)
        let sends = WatchNodeTests.sends(actions)
        #expect(sends.count == 2)
        guard case .hello = sends.first else {
            Issue.record("HELLO first: \(sends)")
            return
        }
        #expect(Self.requests(actions).map(\.nightsLeft) == [2])
        // Out of reach from then on: the last nights fall back to manual entry, nothing is sent.
        _ = node.link(.disconnected, at: WatchNodeTests.at(6, ISO8601.date("2026-06-25T16:00:00Z")!))
        let last = try Self.tap(&node, "2026-06-27T13:00:00Z")
        #expect(WatchNodeTests.names(last).contains(.fallbackManualEntry))
        #expect(Self.requests(last).isEmpty)
    }

    @Test(
        "Reachability: a REQUEST due while the watch app is not active is held (request.held, once) and goes out at the next touch or raised wrist"
    )
    func heldUntilActive() throws {
        var node = Self.asker()
        let first = try Self.tap(&node, "2026-06-25T13:00:00Z")
        #expect(Self.requests(first).map(\.id) == [1], "the tap makes the app active")
        let hour = ISO8601.date("2026-06-25T14:00:00Z")!
        // An hour on the app is long inactive (10 s after the tap): the retry waits.
        let held = node.timerFired(.request, at: WatchNodeTests.at(3, hour))
        #expect(
            held == [
                .emit(
                    Event(.requestHeld, [("nightsLeft", .int(2)), ("reason", .string("watch app not active"))]),
                    at: hour)
            ])
        #expect(node.requestHeld)
        // The link coming back up does not send it either, and says nothing again.
        _ = node.link(.disconnected, at: WatchNodeTests.at(4, hour.addingTimeInterval(60)))
        let relinked = node.link(.handshakeSucceeded, at: WatchNodeTests.at(5, hour.addingTimeInterval(120)))
        #expect(Self.requests(relinked).isEmpty)
        #expect(!WatchNodeTests.names(relinked).contains(.requestHeld))
        // The user raises the wrist: it goes out at once.
        let look = node.command(.wrist(up: true), at: WatchNodeTests.at(6, hour.addingTimeInterval(600)))
        #expect(Self.requests(look).map(\.id) == [2])
        #expect(!node.requestHeld)
        // Said first, once the REQUEST no longer waits.
        #expect(
            look.first
                == .emit(
                    Event(.wrist, [("up", .bool(true)), ("appActive", .bool(true)), ("requestHeld", .bool(false))]),
                    at: hour.addingTimeInterval(600)))
        let lowered = node.command(.wrist(up: false), at: WatchNodeTests.at(7, hour.addingTimeInterval(660)))
        #expect(!node.isActive(at: hour.addingTimeInterval(660)))
        #expect(
            lowered
                == [
                    .emit(
                        Event(
                            .wrist, [("up", .bool(false)), ("appActive", .bool(false)), ("requestHeld", .bool(false))]),
                        at: hour.addingTimeInterval(660))
                ])
    }

    @Test("Reachability: --active-seconds 0 still lets a tap's own check send; 10 s after it the app is not active")
    func activeSpell() throws {
        var node = Self.asker()
        _ = try Self.tap(&node, "2026-06-25T13:00:00Z")
        let tap = ISO8601.date("2026-06-25T13:00:00Z")!
        #expect(node.isActive(at: tap.addingTimeInterval(10)))
        #expect(!node.isActive(at: tap.addingTimeInterval(10.5)))
        var instant = Self.asker(activeSeconds: 0)
        #expect(Self.requests(try Self.tap(&instant, "2026-06-25T13:00:00Z")).map(\.id) == [1])
        #expect(!instant.isActive(at: tap.addingTimeInterval(0.5)))
        #expect(WatchCommand(parsing: "wrist up") == .wrist(up: true))
        #expect(
            WatchCommand(parsing: "wrist sideways")
                == .invalid(input: "wrist sideways", reason: "expected wrist up or wrist down"))
    }

    @Test("At most one REQUEST an hour, however often the checks come; a failed send does not count")
    func watchSpacing() throws {
        var node = Self.asker()
        #expect(Self.requests(try Self.tap(&node, "2026-06-25T13:00:00Z")).count == 1)
        #expect(Self.requests(try Self.tap(&node, "2026-06-25T13:30:00Z")).isEmpty)
        let reconnect = WatchNodeTests.at(9, ISO8601.date("2026-06-25T13:59:00Z")!)
        _ = node.link(.disconnected, at: reconnect)
        #expect(Self.requests(node.link(.handshakeSucceeded, at: reconnect)).isEmpty)
        // An hour after the first: the next check asks, but the send fails; the next check asks again.
        let time = WatchNodeTests.at(10, ISO8601.date("2026-06-25T14:00:00Z")!)
        let asked = node.command(.bed, at: time)
        let request = try #require(Self.requests(asked).first)
        #expect(request.id == 2)
        _ = node.sent(.request(request), .failed(reason: "EAGAIN"), at: time)
        #expect(Self.requests(try Self.tap(&node, "2026-06-25T14:01:00Z")).map(\.id) == [3])
    }

    @Test("No answer: the request timer asks again an hour later while low and in reach, and not once the dates came")
    func retryTimer() throws {
        var node = Self.asker()
        let first = try Self.tap(&node, "2026-06-25T13:00:00Z")
        let hour = ISO8601.date("2026-06-25T14:00:00Z")!
        #expect(first.contains(.arm(.request, .at(hour))))
        // The REQUEST or its answer was lost: an hour on, the user looking, it asks again and
        // re-arms.
        _ = node.command(.wrist(up: true), at: WatchNodeTests.at(3, hour.addingTimeInterval(-60)))
        let retry = node.timerFired(.request, at: WatchNodeTests.at(3, hour))
        #expect(Self.requests(retry).map(\.id) == [2])
        #expect(retry.contains(.arm(.request, .at(hour.addingTimeInterval(WatchNode.requestSpacing)))))
        // Out of reach: the timer sends nothing; the link coming up asks.
        _ = node.link(.disconnected, at: WatchNodeTests.at(4, hour))
        #expect(
            Self.requests(node.timerFired(.request, at: WatchNodeTests.at(5, hour.addingTimeInterval(3_600)))).isEmpty)
        // The dates came: the timer finds the nights left above the threshold and sends nothing.
        var answered = Self.asker()
        _ = try Self.tap(&answered, "2026-06-25T13:00:00Z")
        let later = ISO8601.date("2026-06-25T13:05:00Z")!
        _ = WatchNodeTests.drive(
            &answered,
            answered.received(
                WatchInbound(frames: WatchNodeTests.frame(.batch(WatchNodeTests.tokyoBatch(seq: 2, after: later)))),
                at: WatchNodeTests.at(2, later)),
            at: WatchNodeTests.at(2, later))
        #expect(Self.requests(answered.timerFired(.request, at: WatchNodeTests.at(3, hour))).isEmpty)
    }

    @Test("A batch that raises the nights left above --warn-nights stops the asking; the next low spell asks again")
    func answeredBatchStops() throws {
        var node = Self.asker()
        #expect(Self.requests(try Self.tap(&node, "2026-06-25T13:00:00Z")).count == 1)
        let later = ISO8601.date("2026-06-25T13:05:00Z")!
        let refill = WatchNodeTests.tokyoBatch(seq: 2, after: later)
        let applied = WatchNodeTests.drive(
            &node,
            node.received(WatchInbound(frames: WatchNodeTests.frame(.batch(refill))), at: WatchNodeTests.at(2, later)),
            at: WatchNodeTests.at(2, later))
        #expect(WatchNodeTests.names(applied).contains(.batchApplied))
        #expect(Self.requests(applied).isEmpty)
        for day in 26...29 {
            #expect(Self.requests(try Self.tap(&node, "2026-06-\(day)T13:00:00Z")).isEmpty, "day \(day)")
        }
        #expect(Self.requests(try Self.tap(&node, "2026-06-30T13:00:00Z")).map(\.nightsLeft) == [2])
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

#if canImport(Glibc)
    import Glibc
#endif

/// A state store that fails chosen writes with an errno, as a full or broken disk does
/// (ENOSPC, EIO). What it holds is what a restarted phone would read.
struct FlakyDisk {
    var errno: Int32
    /// 1-based numbers of the writes that fail.
    var failing: Set<Int>
    private(set) var writes = 0
    private(set) var held: PhoneSyncState?
    private(set) var failures: [String] = []

    init(errno: Int32, failing: Set<Int>) {
        self.errno = errno
        self.failing = failing
    }

    mutating func save(_ state: PhoneSyncState) -> Bool {
        writes += 1
        guard !failing.contains(writes) else {
            failures.append(String(cString: strerror(errno)))
            return false
        }
        held = state
        return true
    }
}

/// The phone's side of `FlakyPair`: the one `PhoneDriver` performs the node's actions on these,
/// with the writes going to a `FlakyDisk` and the sends to an in-memory queue for the watch.
struct FlakyPhonePorts: PhonePorts {
    var disk: FlakyDisk
    var time = NodeTime(now: Date(timeIntervalSince1970: 0), wall: 0)
    /// What the schedule file holds, read at every open.
    var scheduleFile = WakeSchedule.everyDayAtSeven
    let weather: any WeatherProvider
    /// Every batch the phone put on the wire, in order.
    var sent: [WakeBatch] = []
    var toWatch: [WireMessage] = []
    var events: [Event] = []

    func now() -> NodeTime { time }
    var isStopping: Bool { false }

    mutating func send(_ message: WireMessage) -> String? {
        if case .batch(let batch) = message { sent.append(batch) }
        toWatch.append(message)
        return nil
    }

    mutating func reply(to routingID: [UInt8], _ message: WireMessage) {}
    mutating func zapReply(_ frames: [[UInt8]]) {}

    mutating func save(_ state: PhoneSyncState) -> PersistResult {
        disk.save(state) ? .succeeded : .failed(errno: disk.errno, reason: disk.failures.last ?? "")
    }

    mutating func saveOS(_ os: SimulatedOS) -> PersistResult { .succeeded }
    mutating func arm(_ timer: PhoneTimer, _ deadline: TimerDeadline) {}
    mutating func cancel(_ timer: PhoneTimer) {}
    mutating func emit(_ event: Event, at instant: Date) { events.append(event) }

    mutating func fetchWeather(for location: Coordinate, at instant: Date) -> WeatherOutcome? {
        let (result, cost) = weather.forecast(for: location, now: instant)
        return WeatherOutcome(result: result, cost: cost)
    }

    mutating func record(_ record: RunRecord) {}

    mutating func loadSchedule(_ path: String) -> Result<WakeSchedule, ScheduleLoadError> { .success(scheduleFile) }
    mutating func stop() {}
}

/// The phone node and the watch core over an in-memory link, with the phone's writes going to a
/// `FlakyDisk` through `PhoneDriver`, the driver the phone process runs. The schedule file is
/// read at every open, as the phone process does; the first open is the app's first launch.
struct FlakyPair {
    var driver: PhoneDriver<FlakyPhonePorts>
    var app: PhoneApp { driver.node.app }
    var watch = WatchCore()
    var disk: FlakyDisk {
        get { driver.ports.disk }
        set { driver.ports.disk = newValue }
    }
    /// Every batch the phone put on the wire, in order.
    var sent: [WakeBatch] { driver.ports.sent }
    var phoneEvents: [Event] { driver.ports.events }
    private(set) var watchEvents: [Event] = []
    private var toPhone: [WireMessage] = []
    static let watchID = "watch-1"

    init(disk: FlakyDisk, zone: TimeZone = TimeZone(identifier: "Asia/Shanghai")!) {
        var configuration = IOSBackgroundScheduler.Configuration(
            permittedIdentifiers: [PhoneAppConfiguration().taskIdentifier])
        configuration.registrationMode = .early
        let weather = OfflineWeatherProvider(seed: 5)
        let setup = PhoneSetup(
            os: SimulatedOS(IOSBackgroundScheduler(configuration: configuration, seed: 3)), weather: weather,
            schedule: .everyDayAtSeven, location: Coordinate(latitude: 31.23, longitude: 121.47)!, deviceSeed: 11,
            node: PhoneNodeConfiguration(
                watchID: Self.watchID, schedulePath: "/flaky/schedule.json", timeZone: zone, machineZone: zone,
                statePath: "/flaky/phone.json", osStatePath: "/flaky/os.json", endpoint: "inproc://flaky",
                boundEndpoint: "inproc://flaky", pid: 1, security: .none, osState: .new))
        driver = PhoneDriver(
            node: setup.makeNode(state: nil, os: nil, randomSeed: 99),
            ports: FlakyPhonePorts(disk: disk, weather: weather))
    }

    /// A message from the watch, as the ROUTER delivers it.
    mutating func phoneReceives(_ message: WireMessage) {
        driver.messageReceived([Array(Self.watchID.utf8), WireCodec.encode(message)])
    }

    mutating func watchEffects(_ effects: [WatchEffect]) {
        for effect in effects {
            switch effect {
            case .send(let message): toPhone.append(message)
            case .emit(let event): watchEvents.append(event)
            default: break
            }
        }
    }

    /// Delivers every message in flight, both ways, until quiet.
    mutating func deliver() {
        while !driver.ports.toWatch.isEmpty || !toPhone.isEmpty {
            if !driver.ports.toWatch.isEmpty { watchEffects(watch.receive(driver.ports.toWatch.removeFirst())) }
            if !toPhone.isEmpty { phoneReceives(toPhone.removeFirst()) }
        }
    }

    /// The user opens the app with every day's wake-up at `time`.
    mutating func open(wakingAt wake: LocalTime, at now: Date) {
        driver.ports.scheduleFile = WakeSchedule(
            wakeTimes: Dictionary(uniqueKeysWithValues: Weekday.allCases.map { ($0, wake) }))
        driver.ports.time = NodeTime(now: now, wall: driver.ports.time.wall + 1)
        driver.commandLine("open")
        deliver()
    }
}

@Suite("Sync under failing writes, forged numbers and digests")
struct SyncFaultTests {
    static let start = ISO8601.date("2026-07-20T02:00:00Z")!

    /// Whether any (epoch, seq) went on the wire with two different contents.
    static func reissued(_ batches: [WakeBatch]) -> [String] {
        var seen: [String: UInt64] = [:]
        var twice: [String] = []
        for batch in batches {
            let key = "\(Hex64.string(batch.epoch))/\(batch.seq)"
            if let digest = seen[key], digest != batch.digest { twice.append(key) }
            seen[key] = batch.digest
        }
        return twice
    }

    @Test(
        "A failed write never makes the phone issue a seq twice, and the pair ends on the phone's newest dates",
        arguments: [(ENOSPC, 2), (ENOSPC, 3), (EIO, 2), (EIO, 4), (ENOSPC, 5)] as [(Int32, Int)])
    func failedWriteNeverReissues(errno: Int32, every: Int) throws {
        // Every `every`-th write fails: some of them are the job's later write, after the batch
        // was stored and sent in the same refresh (one open per wake time, 05:00 ... 10:00).
        var pair = FlakyPair(disk: FlakyDisk(errno: errno, failing: Set(stride(from: every, through: 200, by: every))))
        var now = Self.start
        for hour in 5...10 {
            pair.open(wakingAt: try #require(LocalTime(hour: hour, minute: 0)), at: now)
            now = now.addingTimeInterval(600)
        }
        #expect(!pair.disk.failures.isEmpty, "the disk never failed: the test proves nothing")
        #expect(Self.reissued(pair.sent).isEmpty, "issued twice with other dates: \(Self.reissued(pair.sent))")
        // Space comes back: one more open, and both sides agree on exactly the same batch.
        pair.disk.failing = []
        pair.open(wakingAt: try #require(LocalTime(hour: 10, minute: 0)), at: now)
        let outbox = try #require(pair.app.state.outbox)
        #expect(pair.app.state.acked)
        #expect(pair.watch.state.batch?.ref == outbox.ref)
        #expect(pair.watch.state.batch?.entries.allSatisfy { $0.localTime == "10:00" } == true)
        #expect(pair.disk.held == pair.app.state, "memory and disk differ once writes succeed")
        #expect(Self.reissued(pair.sent).isEmpty)
    }

    @Test("A rollback after a failed write never goes below what is on disk or on the wire")
    func rollbackKeepsWhatIsOnDisk() throws {
        // Write 1 (batch 1 of the first open) works, write 2 (the same job's later write) fails.
        var pair = FlakyPair(disk: FlakyDisk(errno: ENOSPC, failing: [2]))
        pair.open(wakingAt: try #require(LocalTime(hour: 5, minute: 0)), at: Self.start)
        let onDisk = try #require(pair.disk.held)
        #expect(onDisk.lastSeq == 1)
        #expect(pair.app.state.lastSeq >= onDisk.lastSeq)
        #expect(pair.app.state.outbox?.ref == onDisk.outbox?.ref)
        pair.open(wakingAt: try #require(LocalTime(hour: 6, minute: 0)), at: Self.start.addingTimeInterval(60))
        #expect(pair.sent.map(\.seq) == [1, 2])
    }

    @Test("An ACK names what the watch stored: a different digest is never recorded as acknowledged")
    func ackDigestMismatchResyncs() throws {
        var phone = PhoneCore(randomSeed: 5)
        let entries = BatchPlanner.entries(
            for: .everyDayAtSeven, in: TimeZone(identifier: "Asia/Tokyo")!, after: Self.start)
        let published = phone.publish(entries: entries, generatedAt: Self.start, timeZone: "Asia/Tokyo", at: Self.start)
        let batch = try #require(published.compactMap { if case .send(.batch(let b)) = $0 { b } else { nil } }.first)
        // The watch holds the same (epoch, seq) with other dates.
        var other = batch
        other.entries.removeLast()
        let mismatch = phone.receive(.ack(other.ref, coverageEnd: other.coverageEnd), at: Self.start)
        #expect(!phone.state.acked)
        #expect(mismatch.contains { $0.event?.name == .ackMismatch })
        let resent = try #require(mismatch.compactMap { if case .send(.batch(let b)) = $0 { b } else { nil } }.first)
        #expect(resent.epoch != batch.epoch && resent.entries == batch.entries)
        // A watch holding the conflicting batch applies the re-sent one and acknowledges it.
        var watch = WatchCore(state: WatchSyncState(lastAppliedSeq: other.seq, batch: other))
        let conflict = watch.receive(.batch(batch))
        #expect(conflict.contains { if case .emit(let e) = $0 { e.name == .batchConflict } else { false } })
        #expect(conflict.contains { if case .send(.ack(let ref, _)) = $0 { ref == other.ref } else { false } })
        let applied = watch.receive(.batch(resent))
        let ack = try #require(applied.compactMap { if case .send(let m) = $0 { m } else { nil } }.first)
        _ = phone.receive(ack, at: Self.start)
        #expect(phone.state.acked && watch.state.batch == resent)
        // A HELLO naming the same seq with other dates does not count as acknowledged either.
        var fresh = PhoneCore(randomSeed: 6)
        let sent = fresh.publish(entries: entries, generatedAt: Self.start, timeZone: "Asia/Tokyo", at: Self.start)
        let mine = try #require(sent.compactMap { if case .send(.batch(let b)) = $0 { b } else { nil } }.first)
        _ = fresh.receive(.hello(BatchRef(epoch: mine.epoch, seq: mine.seq, digest: mine.digest ^ 1)), at: Self.start)
        #expect(!fresh.state.acked)
    }

    @Test("A forged BATCH with seq 2^53-1 does not wedge the watch: the real phone's next batch is applied")
    func forgedHugeBatch() throws {
        var pair = FlakyPair(disk: FlakyDisk(errno: EIO, failing: []))
        pair.open(wakingAt: try #require(LocalTime(hour: 7, minute: 0)), at: Self.start)
        let real = try #require(pair.app.state.outbox)
        // Another process bound at the phone's endpoint, using the real epoch.
        var forged = real
        forged.seq = WireCodec.maxSeq
        forged.entries = []
        pair.watchEffects(pair.watch.receive(.batch(forged)))
        #expect(pair.watch.state.lastAppliedSeq == WireCodec.maxSeq)
        // The real phone: its next open is applied, with a seq it chose, not 2^53.
        pair.open(wakingAt: try #require(LocalTime(hour: 8, minute: 0)), at: Self.start.addingTimeInterval(3_600))
        let newest = try #require(pair.app.state.outbox)
        #expect(pair.watch.state.batch?.ref == newest.ref)
        #expect(pair.watch.state.batch?.entries.first?.localTime == "08:00")
        #expect(newest.seq < 10 && pair.app.state.acked)
    }

    @Test("A forged HELLO(2^53-2) does not move the phone's counter, and the real watch still syncs")
    func forgedHugeHello() throws {
        var pair = FlakyPair(disk: FlakyDisk(errno: EIO, failing: []))
        pair.open(wakingAt: try #require(LocalTime(hour: 7, minute: 0)), at: Self.start)
        let epoch = pair.app.state.epoch
        pair.phoneReceives(.hello(BatchRef(epoch: epoch, seq: WireCodec.maxSeq - 1, digest: 42)))
        #expect(pair.app.state.lastSeq < 10)
        #expect(pair.app.state.epoch != epoch, "the phone starts a new epoch rather than jumping")
        pair.deliver()
        pair.open(wakingAt: try #require(LocalTime(hour: 9, minute: 0)), at: Self.start.addingTimeInterval(7_200))
        #expect(pair.watch.state.batch?.ref == pair.app.state.outbox?.ref)
        #expect(pair.watch.state.batch?.entries.first?.localTime == "09:00")
        #expect(pair.app.state.acked && pair.app.state.lastSeq < 10)
    }
}

@Suite("The 64-pending limit says what it pushes out")
struct NotificationDroppedTests {
    @Test("When the cap pushes a bedtime notice out, notification.dropped names it")
    func droppedIsReported() throws {
        let t0 = ISO8601.date("2026-07-20T00:00:00Z")!
        // 60 other pending requests that fire sooner than the new bedtime notices.
        let others = (0..<60).map {
            NotificationRecord(id: "other.\($0)", fireDate: t0.addingTimeInterval(Double($0) * 60), text: "x")
        }
        var pending = PendingNotifications(records: others)
        let notices = (0..<7).map {
            NotificationRecord(
                id: "\(BedtimeNoticePlanner.idPrefix)\($0)", fireDate: t0.addingTimeInterval(86_400 * Double($0 + 1)),
                text: "bed")
        }
        let change = pending.update(prefix: BedtimeNoticePlanner.idPrefix, with: notices)
        #expect(pending.records.count == PendingNotifications.limit)
        #expect(change.added.map(\.id) == notices.prefix(4).map(\.id))
        #expect(change.dropped.map(\.id) == notices.suffix(3).map(\.id))
        let names = change.events(at: t0).compactMap(\.event?.name)
        #expect(
            names == Array(repeating: .notificationAdded, count: 4)
                + Array(repeating: .notificationDropped, count: 3))
        // Replacing the same notices again drops nothing new and adds nothing twice.
        let again = pending.update(prefix: BedtimeNoticePlanner.idPrefix, with: notices)
        #expect(again.dropped.map(\.id) == notices.suffix(3).map(\.id) && again.added.count == 4)
    }
}

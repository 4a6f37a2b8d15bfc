// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS

@testable import SleepTapCore

#if canImport(Glibc)
    import Glibc
#endif

/// What a `PhoneHarness` records: every port call of `PhoneDriver`, with a disk that fails chosen
/// writes, a watch that is there or not, timers kept by name, and the weather read from a
/// provider at once or left pending.
struct PhoneHarnessPorts: PhonePorts {
    /// The virtual now.
    var instant: Date = PhoneHarness.start
    var wall: TimeInterval = 100
    /// 1-based numbers of the state-file writes that fail (ENOSPC).
    var failingWrites: Set<Int> = []
    var writes = 0
    /// What the state file holds.
    var disk: PhoneSyncState?
    /// Every state the node asked to write, failed or not.
    var attempted: [PhoneSyncState] = []
    var watchConnected = true
    /// Answer each weather request at once from this provider; nil: keep it pending.
    var weather: (any WeatherProvider)? = OfflineWeatherProvider(seed: 9)
    /// Answer each schedule read with this; nil: the read fails.
    var scheduleFile: Result<WakeSchedule, ScheduleLoadError>?

    var events: [Event] = []
    /// Every event with the virtual instant it was stamped with, in the order written.
    var stamped: [(name: EventName, at: Date)] = []
    /// Messages that reached the watch, in order.
    var sent: [WireMessage] = []
    /// Batches sent while the state file did not hold them (must stay empty).
    var sentBeforeDurable: [WakeBatch] = []
    var replies: [(routingID: [UInt8], message: WireMessage)] = []
    var zapReplies: [[[UInt8]]] = []
    var armed: [PhoneTimer: TimerDeadline] = [:]
    var weatherRequests: [(location: Coordinate, at: Date)] = []
    /// The run records the node asked to keep, in order.
    var records: [RunRecord] = []
    var scheduleReads: [String] = []
    var osWrites = 0
    /// The OS state as last written (os.json).
    var osDisk: SimulatedOS?
    var stopped = false

    func now() -> NodeTime { NodeTime(now: instant, wall: wall) }
    var isStopping: Bool { stopped }

    mutating func send(_ message: WireMessage) -> String? {
        guard watchConnected else { return "watch not connected (EHOSTUNREACH)" }
        if case .batch(let batch) = message, disk?.outbox != batch {
            sentBeforeDurable.append(batch)
        }
        sent.append(message)
        return nil
    }

    mutating func reply(to routingID: [UInt8], _ message: WireMessage) { replies.append((routingID, message)) }
    mutating func zapReply(_ frames: [[UInt8]]) { zapReplies.append(frames) }

    mutating func save(_ state: PhoneSyncState) -> PersistResult {
        writes += 1
        attempted.append(state)
        if failingWrites.contains(writes) { return .failed(errno: ENOSPC, reason: "No space left on device") }
        disk = state
        return .succeeded
    }

    mutating func saveOS(_ os: SimulatedOS) -> PersistResult {
        osWrites += 1
        osDisk = os
        return .succeeded
    }

    mutating func arm(_ timer: PhoneTimer, _ deadline: TimerDeadline) { armed[timer] = deadline }
    mutating func cancel(_ timer: PhoneTimer) { armed[timer] = nil }

    mutating func emit(_ event: Event, at instant: Date) {
        events.append(event)
        stamped.append((event.name, instant))
    }

    mutating func fetchWeather(for location: Coordinate, at instant: Date) -> WeatherOutcome? {
        weatherRequests.append((location, instant))
        guard let weather else { return nil }
        let (result, cost) = weather.forecast(for: location, now: instant)
        return WeatherOutcome(result: result, cost: cost)
    }

    mutating func record(_ record: RunRecord) { records.append(record) }

    mutating func loadSchedule(_ path: String) -> Result<WakeSchedule, ScheduleLoadError> {
        scheduleReads.append(path)
        return scheduleFile ?? .failure(ScheduleLoadError("schedule file \(path): not in the bench"))
    }

    mutating func stop() { stopped = true }
}

/// A phone in memory, as the phone process runs it: the one `PhoneDriver` on `PhoneHarnessPorts`, with
/// a clock the test advances. Nothing here interprets an action: the driver does.
struct PhoneHarness {
    static let zone = TimeZone(identifier: "America/New_York")!
    static let berlin = Coordinate(latitude: 52.52, longitude: 13.405)!
    /// Thu 2025-03-06 12:00 EST: inside the weather window, no forecast cached yet.
    static let start = ISO8601.date("2025-03-06T17:00:00Z")!
    static let watchID = "watch-1"

    var driver: PhoneDriver<PhoneHarnessPorts>

    var node: PhoneNode { driver.node }
    var ports: PhoneHarnessPorts {
        get { driver.ports }
        set { driver.ports = newValue }
    }
    var now: Date {
        get { driver.ports.instant }
        set { driver.ports.instant = newValue }
    }
    var wall: TimeInterval {
        get { driver.ports.wall }
        set { driver.ports.wall = newValue }
    }
    var failingWrites: Set<Int> {
        get { driver.ports.failingWrites }
        set { driver.ports.failingWrites = newValue }
    }
    var watchConnected: Bool {
        get { driver.ports.watchConnected }
        set { driver.ports.watchConnected = newValue }
    }
    var weather: (any WeatherProvider)? {
        get { driver.ports.weather }
        set { driver.ports.weather = newValue }
    }
    var scheduleFile: Result<WakeSchedule, ScheduleLoadError>? {
        get { driver.ports.scheduleFile }
        set { driver.ports.scheduleFile = newValue }
    }
    var writes: Int { ports.writes }
    var disk: PhoneSyncState? { ports.disk }
    var attempted: [PhoneSyncState] { ports.attempted }
    var events: [Event] { ports.events }
    var stamped: [(name: EventName, at: Date)] { ports.stamped }
    var sent: [WireMessage] { ports.sent }
    var sentBeforeDurable: [WakeBatch] { ports.sentBeforeDurable }
    var replies: [(routingID: [UInt8], message: WireMessage)] { ports.replies }
    var zapReplies: [[[UInt8]]] { ports.zapReplies }
    var armed: [PhoneTimer: TimerDeadline] { ports.armed }
    var weatherRequests: [(location: Coordinate, at: Date)] { ports.weatherRequests }
    var records: [RunRecord] { ports.records }
    var scheduleReads: [String] { ports.scheduleReads }
    var osWrites: Int { ports.osWrites }
    var osDisk: SimulatedOS? { ports.osDisk }
    var stopped: Bool { ports.stopped }

    var time: NodeTime { ports.now() }

    static func app(
        platform: Platform = .ios, registration: RegistrationMode = .early, schedule: WakeSchedule = .everyDayAtSeven,
        zone: TimeZone = PhoneHarness.zone
    ) -> PhoneApp {
        let identifier = PhoneAppConfiguration().taskIdentifier
        let os: SimulatedOS
        if platform == .android {
            os = SimulatedOS(AndroidWorkScheduler(configuration: .init(repeatInterval: 3_600)), seed: 4)
        } else {
            var configuration = IOSBackgroundScheduler.Configuration(permittedIdentifiers: [identifier])
            configuration.registrationMode = registration
            os = SimulatedOS(IOSBackgroundScheduler(configuration: configuration, seed: 1))
        }
        return PhoneApp(
            state: PhoneSyncState(deviceSeed: 7), scheduler: os, weather: OfflineWeatherProvider(seed: 9),
            schedule: schedule, zone: zone, location: berlin, randomSeed: 42)
    }

    static func configuration(
        schedulePath: String? = nil, timeZone: TimeZone? = PhoneHarness.zone,
        machineZone: TimeZone = TimeZone(identifier: "UTC")!,
        pairedWatchKey: [UInt8]? = nil, settings: [PhoneCommand] = []
    ) -> PhoneNodeConfiguration {
        PhoneNodeConfiguration(
            watchID: watchID, pairedWatchKey: pairedWatchKey, schedulePath: schedulePath, timeZone: timeZone,
            machineZone: machineZone, statePath: "/state/phone.json", osStatePath: "/state/os.json",
            settings: settings, endpoint: "ipc:///run/p.sock", boundEndpoint: "ipc:///run/p.sock", pid: 1,
            security: .none, osState: .new)
    }

    init(app: PhoneApp = PhoneHarness.app(), configuration: PhoneNodeConfiguration = PhoneHarness.configuration()) {
        driver = PhoneDriver(node: PhoneNode(app: app, configuration: configuration), ports: PhoneHarnessPorts())
    }

    /// `start`, with every write succeeding unless told otherwise.
    mutating func start() { driver.start() }
    mutating func type(_ line: String) { driver.commandLine(line) }
    mutating func receive(_ frames: [[UInt8]]) { driver.messageReceived(frames) }
    mutating func receive(_ message: WireMessage) {
        receive([Array(Self.watchID.utf8), WireCodec.encode(message)])
    }
    mutating func fire(_ timer: PhoneTimer) { driver.timerFired(timer) }
    mutating func advance(_ seconds: TimeInterval) {
        now = now.addingTimeInterval(seconds)
        wall += seconds
    }
    mutating func clearEvents() {
        driver.ports.events = []
        driver.ports.stamped = []
    }

    /// Answers the oldest pending weather request.
    mutating func answerWeather(_ outcome: WeatherOutcome) { driver.weatherArrived(outcome) }

    /// Runs an action list the test got from the node itself (a ZAP request, say) through the driver.
    mutating func run(_ actions: [PhoneAction]) { driver.run(actions) }

    func names() -> [EventName] { events.map(\.name) }
    func events(_ name: EventName) -> [Event] { events.filter { $0.name == name } }
    var sentBatches: [WakeBatch] { sent.compactMap { if case .batch(let batch) = $0 { batch } else { nil } } }
}

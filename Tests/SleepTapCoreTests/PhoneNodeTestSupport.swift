// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS

@testable import SleepTapCore

#if canImport(Glibc)
    import Glibc
#endif

/// A driver for `PhoneNode` in memory, as the phone process runs it: writes go to a disk that
/// fails chosen writes, sends to a watch that is there or not, timers are recorded, and the
/// weather and schedule reads are answered when the test says so (or at once).
struct NodeBench {
    static let zone = TimeZone(identifier: "America/New_York")!
    static let berlin = Coordinate(latitude: 52.52, longitude: 13.405)!
    /// Thu 2025-03-06 12:00 EST: inside the weather window, no forecast cached yet.
    static let start = ISO8601.date("2025-03-06T17:00:00Z")!
    static let watchID = "watch-1"

    var node: PhoneNode
    var now: Date = NodeBench.start
    var wall: TimeInterval = 100
    /// 1-based numbers of the state-file writes that fail (ENOSPC).
    var failingWrites: Set<Int> = []
    private(set) var writes = 0
    /// What the state file holds.
    private(set) var disk: PhoneSyncState?
    /// Every state the node asked to write, failed or not.
    private(set) var attempted: [PhoneSyncState] = []
    var watchConnected = true
    /// Answer each weather request at once from this provider; nil: keep it pending.
    var weather: (any WeatherProvider)? = OfflineWeatherProvider(seed: 9)
    /// Answer each schedule read at once with this; nil: keep it pending.
    var scheduleFile: Result<WakeSchedule, ScheduleLoadError>?

    private(set) var events: [Event] = []
    /// Every event with the virtual instant it was stamped with, in the order written.
    private(set) var stamped: [(name: EventName, at: Date)] = []
    /// Messages that reached the watch, in order.
    private(set) var sent: [WireMessage] = []
    /// Batches sent while the state file did not hold them (must stay empty).
    private(set) var sentBeforeDurable: [WakeBatch] = []
    private(set) var replies: [(routingID: [UInt8], message: WireMessage)] = []
    private(set) var zapReplies: [[[UInt8]]] = []
    private(set) var armed: [PhoneTimer: TimerDeadline] = [:]
    private(set) var weatherRequests: [(location: Coordinate, at: Date)] = []
    /// The run records the node asked to keep, in order.
    private(set) var records: [RunRecord] = []
    private(set) var scheduleReads: [String] = []
    private(set) var osWrites = 0
    private(set) var stopped = false

    var time: NodeTime { NodeTime(now: now, wall: wall) }

    static func app(
        platform: Platform = .ios, registration: RegistrationMode = .early, schedule: WakeSchedule = .everyDayAtSeven,
        zone: TimeZone = NodeBench.zone
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
        schedulePath: String? = nil, timeZone: TimeZone? = NodeBench.zone,
        machineZone: TimeZone = TimeZone(identifier: "UTC")!,
        pairedWatchKey: [UInt8]? = nil, settings: [PhoneCommand] = []
    ) -> PhoneNodeConfiguration {
        PhoneNodeConfiguration(
            watchID: watchID, pairedWatchKey: pairedWatchKey, schedulePath: schedulePath, timeZone: timeZone,
            machineZone: machineZone, statePath: "/state/phone.json", osStatePath: "/state/os.json",
            settings: settings, endpoint: "ipc:///run/p.sock", boundEndpoint: "ipc:///run/p.sock", pid: 1,
            security: .none, osState: .new)
    }

    init(app: PhoneApp = NodeBench.app(), configuration: PhoneNodeConfiguration = NodeBench.configuration()) {
        node = PhoneNode(app: app, configuration: configuration)
    }

    /// `start`, with every write succeeding unless told otherwise.
    mutating func start() { run(node.start(at: time)) }
    mutating func type(_ line: String) { run(node.commandLine(line, at: time)) }
    mutating func receive(_ frames: [[UInt8]]) { run(node.messageReceived(frames, at: time)) }
    mutating func receive(_ message: WireMessage) {
        receive([Array(Self.watchID.utf8), WireCodec.encode(message)])
    }
    mutating func fire(_ timer: PhoneTimer) { run(node.timerFired(timer, at: time)) }
    mutating func advance(_ seconds: TimeInterval) {
        now = now.addingTimeInterval(seconds)
        wall += seconds
    }
    mutating func clearEvents() {
        events = []
        stamped = []
    }

    /// Answers the oldest pending weather request.
    mutating func answerWeather(_ outcome: WeatherOutcome) { run(node.weatherArrived(outcome, at: time)) }
    /// Answers the pending schedule read.
    mutating func answerSchedule(_ result: Result<WakeSchedule, ScheduleLoadError>) {
        run(node.scheduleLoaded(result, at: time))
    }

    func names() -> [EventName] { events.map(\.name) }
    func events(_ name: EventName) -> [Event] { events.filter { $0.name == name } }
    var sentBatches: [WakeBatch] { sent.compactMap { if case .batch(let batch) = $0 { batch } else { nil } } }

    mutating func run(_ actions: [PhoneAction]) {
        for action in actions {
            switch action {
            case .send(let message):
                guard watchConnected else {
                    run(node.sent(message, failure: "watch not connected (EHOSTUNREACH)", at: time))
                    continue
                }
                if case .batch(let batch) = message, disk?.outbox != batch {
                    sentBeforeDurable.append(batch)
                }
                sent.append(message)
                run(node.sent(message, failure: nil, at: time))
            case .reply(let routingID, let message):
                replies.append((routingID, message))
            case .zapReply(let frames):
                zapReplies.append(frames)
            case .persist(let state):
                writes += 1
                attempted.append(state)
                if failingWrites.contains(writes) {
                    run(node.persisted(.failed(errno: ENOSPC, reason: "No space left on device"), at: time))
                } else {
                    disk = state
                    run(node.persisted(.succeeded, at: time))
                }
            case .persistOS:
                osWrites += 1
            case .arm(let timer, let deadline):
                armed[timer] = deadline
            case .cancel(let timer):
                armed[timer] = nil
            case .emit(let event, let at):
                events.append(event)
                stamped.append((event.name, at))
            case .fetchWeather(let location, let at):
                weatherRequests.append((location, at))
                if let weather {
                    let (result, cost) = weather.forecast(for: location, now: at)
                    run(node.weatherArrived(WeatherOutcome(result: result, cost: cost), at: time))
                }
            case .record(let record):
                records.append(record)
            case .loadSchedule(let path):
                scheduleReads.append(path)
                if let scheduleFile { run(node.scheduleLoaded(scheduleFile, at: time)) }
            case .stop:
                stopped = true
            }
        }
    }
}

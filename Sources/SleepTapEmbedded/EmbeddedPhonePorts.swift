// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapOS

#if canImport(Glibc)
    import Glibc
#endif

/// The twin's phone ports: what `PhoneDriver` performs the phone node's actions on in the twin,
/// the embedded counterparts of the `phone` process's ROUTER, state files, poll-loop timers,
/// weather provider, run records and schedule file.
///
/// The link to the watch, the two stores and the run records are the phone's own; the timer heap
/// and the log are the twin's, shared with the watch, and lent to the ports for the length of one
/// phone input (`Twin` swaps them in and out). There are no strangers and no CURVE on the
/// in-memory link (replies and ZAP replies go nowhere), and no schedule file: a read gives the
/// configured schedule back, as a file that does not change.
struct EmbeddedPhonePorts: PhonePorts, Sendable {
    /// The twin's timer heap, lent for one input (an empty one otherwise).
    var scheduler: VirtualScheduler<Twin.Timer>
    /// The twin's log, lent for one input (empty otherwise).
    var log: [Twin.Entry] = []
    /// The link from the phone to the watch.
    var link: FaultyLink<WireMessage>
    /// The bytes of the wire frames this side put on the link (`Twin.measureLinkBytes()`).
    var meter = LinkByteMeter()
    /// The phone's state file (`phone.json`).
    var store = FlakyStore<PhoneSyncState>()
    /// The simulated OS's state file (`os.json`): the device's, it outlives the app.
    var osStore = FlakyStore<SimulatedOS>()
    /// The run records, in the order the phone made them.
    var runRecords: [RunRecord] = []
    /// Whether the phone process runs.
    var running = false
    /// Whether the watch holds a connection to this phone, set by the twin before each input.
    /// Without one, sends fail as on the ROUTER with ZMQ_ROUTER_MANDATORY (EHOSTUNREACH).
    var watchConnected = false
    /// Whether the node stopped the process in the input being handled: the twin ends it after
    /// the input (timers gone, what is in flight lost, the watch's link down).
    var stopAsked = false
    /// Where forecasts come from.
    let weather: any WeatherProvider
    /// What every schedule read gives.
    let schedule: WakeSchedule
    /// The virtual instant wall second 0 maps to.
    let start: Date
    /// Virtual seconds per wall second.
    let speed: Double

    /// Ports for a phone that does not run yet, sending on `link`.
    /// - Parameters:
    ///   - start: the twin's start (wall second 0).
    ///   - speed: virtual seconds per wall second.
    ///   - link: the link from the phone to the watch.
    ///   - weather: where forecasts come from.
    ///   - schedule: what every schedule read gives.
    init(
        start: Date, speed: Double, link: FaultyLink<WireMessage>, weather: any WeatherProvider, schedule: WakeSchedule
    ) {
        self.start = start
        self.speed = speed
        self.link = link
        self.weather = weather
        self.schedule = schedule
        scheduler = VirtualScheduler(start: start)
    }

    func now() -> NodeTime {
        let now = scheduler.now
        return NodeTime(now: now, wall: now.timeIntervalSince(start) / speed)
    }

    var isStopping: Bool { !running }

    mutating func send(_ message: WireMessage) -> String? {
        guard watchConnected, link.send(message, at: scheduler.now) else { return "watch not connected (EHOSTUNREACH)" }
        meter.count(message)
        return nil
    }

    func reply(to routingID: [UInt8], _ message: WireMessage) {}

    func zapReply(_ frames: [[UInt8]]) {}

    mutating func save(_ state: PhoneSyncState) -> PersistResult {
        store.write(state).map { .failed(errno: $0, reason: Errno($0).message) } ?? .succeeded
    }

    mutating func saveOS(_ os: SimulatedOS) -> PersistResult {
        osStore.write(os).map { .failed(errno: $0, reason: Errno($0).message) } ?? .succeeded
    }

    mutating func arm(_ timer: PhoneTimer, _ deadline: TimerDeadline) {
        switch deadline {
        case .after(let seconds): scheduler.arm(.phone(timer), at: scheduler.now.addingTimeInterval(seconds * speed))
        case .at(let instant): scheduler.arm(.phone(timer), at: instant)
        }
    }

    mutating func cancel(_ timer: PhoneTimer) { scheduler.cancel(.phone(timer)) }

    mutating func emit(_ event: Event, at instant: Date) {
        log.append(Twin.Entry(at: instant, source: event.name.source(in: .phone), event: event))
    }

    /// The provider answers at once: the forecast is an input that comes after every action of
    /// the list that asked (as the process's fetch off its socket thread does).
    func fetchWeather(for location: Coordinate, at instant: Date) -> WeatherOutcome? {
        let (result, cost) = weather.forecast(for: location, now: instant)
        return WeatherOutcome(result: result, cost: cost)
    }

    mutating func record(_ record: RunRecord) { runRecords.append(record) }

    func loadSchedule(_ path: String) -> Result<WakeSchedule, ScheduleLoadError> { .success(schedule) }

    mutating func stop() {
        running = false
        stopAsked = true
    }
}

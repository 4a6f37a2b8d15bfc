// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

/// Ports that record every call in order, with sends and forecasts that end as told: what
/// `PhoneDriver` does with the node's actions, without sockets, files or a clock.
struct RecordingPhonePorts: PhonePorts {
    /// One port call.
    enum Call: Equatable {
        case send(WireMessage)
        case save
        case saveOS
        case fetchWeather
        case emit(EventName)
        case stop
        case other
    }

    var calls: [Call] = []
    var time = NodeTime(now: PhoneFixture.start, wall: 100)
    var stopped = false
    /// Why each send fails; nil: it goes.
    var sendFailure: String?
    /// What each fetch gives at once; nil: the forecast comes later (`weatherArrived`).
    var forecast: WeatherOutcome? = WeatherOutcome(
        result: .success(
            Forecast(fetchedAt: PhoneFixture.start, location: PhoneFixture.berlin, source: "test", hours: [])),
        cost: 1)

    func now() -> NodeTime { time }
    var isStopping: Bool { stopped }

    mutating func send(_ message: WireMessage) -> String? {
        calls.append(.send(message))
        return sendFailure
    }

    mutating func reply(to routingID: [UInt8], _ message: WireMessage) { calls.append(.other) }
    mutating func zapReply(_ frames: [[UInt8]]) { calls.append(.other) }

    mutating func save(_ state: PhoneSyncState) -> PersistResult {
        calls.append(.save)
        return .succeeded
    }

    mutating func saveOS(_ os: SimulatedOS) -> PersistResult {
        calls.append(.saveOS)
        return .succeeded
    }

    mutating func arm(_ timer: PhoneTimer, _ deadline: TimerDeadline) { calls.append(.other) }
    mutating func cancel(_ timer: PhoneTimer) { calls.append(.other) }
    mutating func emit(_ event: Event, at instant: Date) { calls.append(.emit(event.name)) }

    mutating func fetchWeather(for location: Coordinate, at instant: Date) -> WeatherOutcome? {
        calls.append(.fetchWeather)
        return forecast
    }

    mutating func record(_ record: RunRecord) { calls.append(.other) }

    mutating func loadSchedule(_ path: String) -> Result<WakeSchedule, ScheduleLoadError> {
        calls.append(.other)
        return .success(.everyDayAtSeven)
    }

    mutating func stop() {
        calls.append(.stop)
        stopped = true
    }

    var emitted: [EventName] { calls.compactMap { if case .emit(let name) = $0 { name } else { nil } } }
}

/// `PhoneDriver`, the one interpreter of the phone node's actions (the process's and the
/// twin's): results fed back, a forecast at hand given after the list that asked for it, a
/// forecast that comes later taken as an input, nothing after a stop.
@Suite("Phone driver")
struct PhoneDriverTests {
    static func driver() -> PhoneDriver<RecordingPhonePorts> {
        PhoneDriver(
            node: PhoneNode(app: PhoneFixture.app(), configuration: PhoneFixture.configuration()),
            ports: RecordingPhonePorts())
    }

    @Test("A forecast at hand reaches the node only after every action of the list that asked for it")
    func forecastAfterTheList() throws {
        var driver = Self.driver()
        driver.start()
        let calls = driver.ports.calls
        let fetch = try #require(calls.firstIndex(of: .fetchWeather))
        let fetched = try #require(calls.firstIndex(of: .emit(.weatherFetched)))
        #expect(fetch < fetched)
        // The start's own list goes on after the fetch (the launch timer, a write); the
        // forecast's step comes after all of it.
        let write = try #require(calls[fetch...].firstIndex(of: .save))
        #expect(write < fetched, "\(calls)")
    }

    @Test("A forecast that comes later waits for weatherArrived, and the job finishes then")
    func forecastLater() {
        var driver = Self.driver()
        driver.ports.forecast = nil
        driver.start()
        #expect(driver.ports.calls.contains(.fetchWeather))
        #expect(!driver.ports.emitted.contains(.weatherFetched))
        let forecast = Forecast(fetchedAt: PhoneFixture.start, location: PhoneFixture.berlin, source: "test", hours: [])
        driver.weatherArrived(WeatherOutcome(result: .success(forecast), cost: 1.5))
        #expect(driver.ports.emitted.contains(.weatherFetched))
        #expect(driver.node.app.state.weather == forecast)
    }

    @Test("A failed send is fed back as send.failed")
    func failedSend() {
        var driver = Self.driver()
        driver.ports.sendFailure = "watch not connected (EHOSTUNREACH)"
        driver.start()
        #expect(driver.ports.calls.contains { if case .send = $0 { true } else { false } })
        #expect(driver.ports.emitted.contains(.sendFailed))
    }

    @Test("After the stop nothing is performed: phone.stopping is the last line")
    func nothingAfterStop() {
        var driver = Self.driver()
        driver.start()
        driver.commandLine("quit")
        #expect(driver.ports.calls.last == .stop)
        #expect(driver.ports.emitted.last == .phoneStopping)
        let count = driver.ports.calls.count
        driver.commandLine("open")
        driver.timerFired(.heartbeat)
        #expect(driver.ports.calls.count == count)
    }
}

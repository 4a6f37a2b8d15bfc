// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import SleepTapCore

/// Ports that record every call in order, with writes and sends that end as told: what
/// `WatchDriver` does with the node's actions, without sockets, files or a clock.
struct RecordingWatchPorts: WatchPorts {
    /// One port call.
    enum Call: Equatable {
        case send(WireMessage)
        case save
        case arm(WatchTimer, TimerDeadline)
        case cancel(WatchTimer)
        case emit(EventName)
        case diagnose(String)
        case reconnect
        case stop
    }

    var calls: [Call] = []
    var time = WatchNodeTests.at(0)
    var stopped = false
    /// What each write returns.
    var saveResult: PersistResult = .succeeded
    /// What each send returns.
    var sendResult: WatchNode.SendResult = .sent

    func now() -> NodeTime { time }
    var isStopping: Bool { stopped }

    mutating func send(_ message: WireMessage, at time: NodeTime) -> WatchNode.SendResult {
        calls.append(.send(message))
        return sendResult
    }

    mutating func save(_ state: WatchSyncState) -> PersistResult {
        calls.append(.save)
        return saveResult
    }

    mutating func arm(_ timer: WatchTimer, _ deadline: TimerDeadline) { calls.append(.arm(timer, deadline)) }
    mutating func cancel(_ timer: WatchTimer) { calls.append(.cancel(timer)) }
    mutating func emit(_ event: Event, at instant: Date) { calls.append(.emit(event.name)) }
    mutating func diagnose(_ line: String) { calls.append(.diagnose(line)) }

    mutating func reconnect() -> WatchNode.ReconnectResult {
        calls.append(.reconnect)
        return .succeeded
    }

    mutating func stop() {
        calls.append(.stop)
        stopped = true
    }

    var emitted: [EventName] { calls.compactMap { if case .emit(let name) = $0 { name } else { nil } } }
    var sent: [WireMessage] { calls.compactMap { if case .send(let message) = $0 { message } else { nil } } }
}

/// `WatchDriver`, the one interpreter of the watch node's actions (the process's and the
/// twin's): results fed back in order, durable before acknowledged, nothing after a stop, and
/// frames decoded at the edge.
@Suite("Watch driver")
struct WatchDriverTests {
    /// A driver whose node has started and whose link is up, its calls so far forgotten.
    static func linked() -> WatchDriver<RecordingWatchPorts> {
        var driver = WatchDriver(node: WatchNodeTests.node(), ports: RecordingWatchPorts())
        driver.start(processID: 7)
        driver.link(.connected)
        driver.link(.handshakeSucceeded)
        driver.ports.calls.removeAll()
        return driver
    }

    @Test("A batch is saved before its ACK goes out, and the ACK's result is reported")
    func savedBeforeAcknowledged() throws {
        var driver = Self.linked()
        driver.ports.time = WatchNodeTests.at(1)
        driver.received(frames: WatchNodeTests.frame(.batch(WatchNodeTests.tokyoBatch())))
        let calls = driver.ports.calls
        let save = try #require(calls.firstIndex(of: .save))
        let ack = try #require(calls.firstIndex { if case .send(.ack) = $0 { true } else { false } })
        #expect(save < ack)
        #expect(driver.ports.emitted.contains(.ackSent))
        #expect(driver.node.core.state.batch?.seq == 1)
    }

    @Test("A failed write is fed back: persist.failed, no ACK, the batch not kept")
    func failedWriteSendsNoAck() {
        var driver = Self.linked()
        driver.ports.saveResult = .failed(errno: 28, reason: "No space left on device")
        driver.received(message: .batch(WatchNodeTests.tokyoBatch()))
        #expect(driver.ports.calls.contains(.save))
        #expect(driver.ports.emitted.contains(.persistFailed))
        #expect(!driver.ports.sent.contains { if case .ack = $0 { true } else { false } })
        #expect(driver.node.core.state.batch == nil)
    }

    @Test("A failed send is fed back as send.failed and counted")
    func failedSendIsReported() {
        var driver = Self.linked()
        driver.ports.sendResult = .failed(reason: "no connection (EAGAIN)")
        driver.received(message: .batch(WatchNodeTests.tokyoBatch()))
        #expect(driver.ports.emitted.contains(.sendFailed))
        #expect(driver.node.sendFailures == 1)
    }

    @Test("After the stop nothing is performed: watch.stopping is the last line")
    func nothingAfterStop() {
        var driver = Self.linked()
        driver.command(line: "quit")
        #expect(driver.ports.calls.last == .stop)
        #expect(driver.ports.emitted.last == .watchStopping)
        let count = driver.ports.calls.count
        driver.received(message: .batch(WatchNodeTests.tokyoBatch()))
        driver.timerFired(.heartbeat)
        #expect(driver.ports.calls.count == count)
    }

    @Test("The relink timer asks the port to reconnect, and its result is reported")
    func reconnectIsReported() {
        var driver = Self.linked()
        driver.link(.disconnected)
        driver.ports.calls.removeAll()
        driver.timerFired(.relink)
        #expect(driver.ports.calls.first == .reconnect)
        #expect(driver.ports.emitted.contains(.linkReconnect))
    }

    @Test("Frames are decoded at the edge: a bad frame is refused, answered unless it claims to be an ERROR")
    func decodedAtTheEdge() {
        #expect(WatchInbound(frames: WatchNodeTests.frame(.ping)) == .message(.ping))
        #expect(WatchInbound(frames: [[], []]) == .refused(reason: "expected 1 frame, got 2", answer: true))
        guard case .refused(_, let answer) = WatchInbound(frames: [Array("not json".utf8)]) else {
            Issue.record("garbage was decoded")
            return
        }
        #expect(answer)
        guard case .refused(_, let claimsError) = WatchInbound(frames: [Array(#"{"v":1,"type":"ERROR"}"#.utf8)]) else {
            Issue.record("a bad ERROR was decoded")
            return
        }
        #expect(!claimsError)
        var driver = Self.linked()
        driver.received(frames: [Array("not json".utf8)])
        #expect(driver.ports.emitted == [.messageRejected, .errorSent])
        #expect(driver.ports.sent.count == 1)
        #expect(driver.node.rejectedMessages == 1)
    }
}

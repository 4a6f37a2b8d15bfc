// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import ZeroMQ

@Suite("Endpoints, options and lifecycle")
struct SocketTests {
    /// An ipc endpoint in `directory` whose path is exactly `length` bytes.
    private func ipcEndpoint(in directory: String, pathLength length: Int) -> String {
        let prefix = directory + "/"
        let name = String(repeating: "s", count: max(1, length - prefix.utf8.count))
        return "ipc://" + prefix + name
    }

    @Test("The ipc path limit is 107 bytes on Linux")
    func ipcLimit() {
        #expect(EndpointError.maximumIPCPathBytes == 107)
    }

    @Test("A 108-byte ipc path is refused up front, naming the path, its length and the limit")
    func ipcPathTooLong() throws {
        try withTemporaryDirectory { directory in
            let endpoint = ipcEndpoint(in: directory, pathLength: 108)
            let path = String(endpoint.dropFirst("ipc://".count))
            #expect(path.utf8.count == 108)
            try withContext { context in
                let socket = try makeSocket(context, .router)
                defer { socket.close() }
                for operation in [socket.bind, socket.connect] {
                    do {
                        try operation(endpoint)
                        Issue.record("expected EndpointError")
                    } catch let error as EndpointError {
                        #expect(error.endpoint == endpoint)
                        #expect(error.description.contains(path))
                        #expect(error.description.contains("108 bytes"))
                        #expect(error.description.contains("limit is 107 bytes"))
                        #expect(error.description.contains("sun_path"))
                    }
                }
            }
        }
    }

    @Test("A 107-byte ipc path passes the check and binds")
    func ipcPathAtLimit() throws {
        try withTemporaryDirectory { directory in
            let endpoint = ipcEndpoint(in: directory, pathLength: 107)
            try #require(endpoint.utf8.count - "ipc://".count == 107)
            try withContext { context in
                let router = try makeSocket(context, .router)
                defer { router.close() }
                try router.bind(endpoint)
                #expect(try router.lastEndpoint() == endpoint)

                let dealer = try makeSocket(context, .dealer)
                defer { dealer.close() }
                try dealer.connect(endpoint)
                try dealer.send(bytes("at the limit"))
                #expect(try receive(router).last == bytes("at the limit"))
            }
        }
    }

    @Test("An endpoint with a NUL byte is refused up front")
    func endpointWithNul() throws {
        try withContext { context in
            let socket = try makeSocket(context, .router)
            defer { socket.close() }
            #expect(throws: EndpointError.self) { try socket.bind("inproc://a\u{0}b") }
        }
    }

    @Test("A stale ipc file (left by a killed process) does not stop bind")
    func staleIPCFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/stale.sock"
            #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
            try withContext { context in
                let router = try makeSocket(context, .router)
                defer { router.close() }
                try router.bind("ipc://" + path)
                let dealer = try makeSocket(context, .dealer)
                defer { dealer.close() }
                try dealer.connect("ipc://" + path)
                try dealer.send(bytes("ping"))
                #expect(try receive(router).last == bytes("ping"))
            }
        }
    }

    @Test("A wildcard tcp bind reports its port through lastEndpoint")
    func wildcardLastEndpoint() throws {
        try withContext { context in
            let router = try makeSocket(context, .router)
            defer { router.close() }
            try router.bind("tcp://127.0.0.1:*")
            let endpoint = try router.lastEndpoint()
            #expect(endpoint.hasPrefix("tcp://127.0.0.1:"))
            #expect(endpoint != "tcp://127.0.0.1:*")
            try router.unbind(endpoint)
        }
    }

    @Test("unbind and disconnect of unknown endpoints throw noEntry")
    func unknownEndpoints() throws {
        try withContext { context in
            let socket = try makeSocket(context, .dealer)
            defer { socket.close() }
            #expect(throws: ZeroMQError.noEntry) { try socket.unbind("inproc://never-bound") }
            #expect(throws: ZeroMQError.noEntry) { try socket.disconnect("inproc://never") }
        }
    }

    @Test("Options read back what was set")
    func optionsReadBack() throws {
        try withContext { context in
            let socket = try makeSocket(context, .dealer)
            defer { socket.close() }
            #expect(try socket.linger == 0)

            try socket.setHeartbeat(interval: 200, timeout: 600, ttl: 1_500)
            let heartbeat = try socket.heartbeat
            #expect(heartbeat.interval == 200)
            #expect(heartbeat.timeout == 600)
            #expect(heartbeat.ttl == 1_500)

            try socket.setRoutingId(bytes("watch"))
            #expect(try socket.routingId == bytes("watch"))

            try socket.setMaxMessageSize(65_536)
            #expect(try socket.maxMessageSize == 65_536)

            try socket.setReconnectInterval(milliseconds: 10, max: 1_000)
            let reconnect = try socket.reconnectInterval
            #expect(reconnect.milliseconds == 10)
            #expect(reconnect.max == 1_000)

            try socket.setSendHighWaterMark(10)
            try socket.setReceiveHighWaterMark(20)
            #expect(try socket.sendHighWaterMark == 10)
            #expect(try socket.receiveHighWaterMark == 20)

            try socket.setSendTimeout(milliseconds: 30)
            try socket.setReceiveTimeout(milliseconds: 40)
            #expect(try socket.sendTimeout == 30)
            #expect(try socket.receiveTimeout == 40)

            try socket.setImmediate(true)
            #expect(try socket.immediate)
        }
    }

    @Test("Invalid option values are refused by libzmq with invalidArgument")
    func invalidOptions() throws {
        try withContext { context in
            let dealer = try makeSocket(context, .dealer)
            defer { dealer.close() }
            #expect(throws: ZeroMQError.invalidArgument) { try dealer.setRoutingId([]) }
            #expect(throws: ZeroMQError.invalidArgument) {
                try dealer.setRoutingId([UInt8](repeating: 1, count: 256))
            }
            #expect(throws: ZeroMQError.invalidArgument) { try dealer.setRouterMandatory(true) }
        }
    }

    @Test("A blocking receive with a timeout throws again when it runs out")
    func receiveTimeout() throws {
        try withContext { context in
            let dealer = try makeSocket(context, .dealer)
            defer { dealer.close() }
            try dealer.setReceiveTimeout(milliseconds: 20)
            #expect(throws: ZeroMQError.again) { try dealer.receive() }
        }
    }

    @Test("close is idempotent; a closed socket throws notSocket")
    func closedSocket() throws {
        try withContext { context in
            let socket = try makeSocket(context, .dealer)
            #expect(!socket.isClosed)
            socket.close()
            socket.close()
            #expect(socket.isClosed)
            #expect(throws: ZeroMQError.notSocket) { try socket.send(bytes("x")) }
            #expect(throws: ZeroMQError.notSocket) { try socket.receive(dontWait: true) }
            #expect(throws: ZeroMQError.notSocket) { try socket.setLinger(milliseconds: 0) }
            #expect(throws: ZeroMQError.notSocket) { try socket.connect("inproc://x") }
        }
    }

    @Test("withSocket closes the socket on return and on throw")
    func withSocketCloses() throws {
        struct Expected: Error {}
        try withContext { context in
            let kept = try context.withSocket(.dealer) { socket in
                try socket.setLinger(milliseconds: 0)
                return socket
            }
            #expect(kept.isClosed)
            var thrown: Socket?
            #expect(throws: Expected.self) {
                try context.withSocket(.dealer) { socket in
                    try socket.setLinger(milliseconds: 0)
                    thrown = socket
                    throw Expected()
                }
            }
            #expect(thrown?.isClosed == true)
        }
    }

    @Test("terminate is idempotent; no socket can be made afterwards")
    func terminateIsIdempotent() throws {
        let context = try Context()
        context.terminate()
        context.terminate()
        context.shutdown()
        #expect(context.isTerminated)
        #expect(throws: ZeroMQError.terminated) { try Socket(context: context, type: .dealer) }
    }

    @Test("shutdown makes a receive blocked in another thread throw terminated")
    func shutdownInterruptsBlockingReceive() throws {
        let context = try Context()
        defer { context.terminate() }
        let receiver = BlockedReceiver(context: context)
        try receiver.waitUntilBlocked()
        context.shutdown()
        let outcome = try #require(receiver.waitForOutcome(timeout: 5), "the receive did not return after shutdown")
        #expect(throws: ZeroMQError.terminated) { try outcome.get() }
        #expect(throws: ZeroMQError.terminated) { try Socket(context: context, type: .dealer) }
    }

    @Test("terminate makes a receive blocked in another thread throw terminated, and returns once it closed its socket")
    func terminateInterruptsBlockingReceive() throws {
        let context = try Context()
        let receiver = BlockedReceiver(context: context)
        try receiver.waitUntilBlocked()
        // zmq_ctx_term blocks until every socket is closed: run it on a thread of its own, so that a
        // receive that never returns fails this test instead of hanging it.
        let terminated = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            context.terminate()
            terminated.signal()
        }
        let outcome = try #require(receiver.waitForOutcome(timeout: 5), "the receive did not return after terminate")
        #expect(throws: ZeroMQError.terminated) { try outcome.get() }
        #expect(terminated.wait(timeout: .now() + 5) == .success, "terminate did not return")
    }
}

/// A thread that makes a DEALER (no peer, no timeout), blocks in `receive()` on it, records how the
/// receive ended, then closes the socket (its owner is that thread, as libzmq requires).
private final class BlockedReceiver: @unchecked Sendable {
    private let condition = NSCondition()
    private var threadId: Int32?
    private var outcome: Result<[[UInt8]], any Error>?

    init(context: Context) {
        Thread.detachNewThread { [self] in
            let socket: Socket
            do {
                socket = try makeSocket(context, .dealer)
            } catch {
                finish(.failure(error))
                return
            }
            condition.lock()
            threadId = Self.currentThreadId()
            condition.broadcast()
            condition.unlock()
            let result = Result { try socket.receive() }
            socket.close()
            finish(result)
        }
    }

    private func finish(_ result: Result<[[UInt8]], any Error>) {
        condition.lock()
        outcome = result
        condition.broadcast()
        condition.unlock()
    }

    /// Waits (at most 5 s) until the thread sleeps in the kernel (state `S` in
    /// /proc/self/task/TID/stat, proc(5)) after it announced the receive, and the receive has not
    /// returned: it is blocked in `zmq_msg_recv`.
    func waitUntilBlocked() throws {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            condition.lock()
            let id = threadId
            let ended = outcome
            condition.unlock()
            if let ended { throw ReceiveEndedEarly(outcome: "\(ended)") }
            if let id, Self.state(of: id) == "S" {
                condition.lock()
                defer { condition.unlock() }
                if let ended = outcome { throw ReceiveEndedEarly(outcome: "\(ended)") }
                return
            }
            usleep(1_000)  // polling a /proc file: there is no event for "now asleep"
        }
        throw TimedOut(what: "the receiving thread to block")
    }

    /// The receive's outcome, or nil if it has not returned within `timeout` seconds.
    func waitForOutcome(timeout: TimeInterval) -> Result<[[UInt8]], any Error>? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while outcome == nil {
            if !condition.wait(until: deadline) { break }
        }
        return outcome
    }

    /// This thread's kernel id, from the /proc/thread-self link ("PID/task/TID", proc(5)).
    private static func currentThreadId() -> Int32? {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))
            .flatMap { $0.split(separator: "/").last }.flatMap { Int32($0) }
    }

    /// The state letter of a thread of this process (R, S, D, ...).
    private static func state(of thread: Int32) -> Character? {
        guard let text = try? String(contentsOfFile: "/proc/self/task/\(thread)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        return text[text.index(after: close)...].first { $0 != " " }
    }
}

/// The receive returned before anything stopped it (it did not block).
private struct ReceiveEndedEarly: Error, CustomStringConvertible {
    let outcome: String
    var description: String { "the receive returned before shutdown: \(outcome)" }
}

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

    @Test("shutdown makes a blocking receive in progress throw terminated")
    func shutdownInterruptsBlockingReceive() throws {
        let context = try Context()
        defer { context.terminate() }
        let socket = try makeSocket(context, .dealer)
        defer { socket.close() }
        // No other thread: shutting down first makes the receive fail at once with ETERM.
        context.shutdown()
        #expect(throws: ZeroMQError.terminated) { try socket.receive() }
        #expect(throws: ZeroMQError.terminated) { try Socket(context: context, type: .dealer) }
    }
}

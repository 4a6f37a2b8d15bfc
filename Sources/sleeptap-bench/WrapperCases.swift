// SPDX-License-Identifier: Apache-2.0
import Foundation
import ZeroMQ

/// The transports the wrapper cases run over.
enum EchoTransport: String, CaseIterable, Sendable {
    case ipc
    case tcp
    case curve = "tcp+CURVE"

    /// The endpoint to bind (a tcp port is picked by the system).
    func endpoint(directory: String) -> String {
        switch self {
        case .ipc: "ipc://\(directory)/echo.sock"
        case .tcp, .curve: "tcp://127.0.0.1:*"
        }
    }

    /// The baseline's trailing argument for CURVE.
    var baselineFlags: [String] { self == .curve ? ["curve"] : [] }
}

/// Which receive path of the wrapper a Swift echo uses.
enum ReceivePath: String, Sendable {
    /// `withReceivedMessage`: the frames are lent, not copied; sends from borrowed bytes.
    case borrowed
    /// `receive()`, `send([[UInt8]])`: each frame copied into a new `[UInt8]`.
    case copying
}

/// The Swift side of the echo cases, through the ZeroMQ wrapper, shaped exactly like the C
/// baseline's `echo`: one context; the ROUTER echo server on its own thread replies to each
/// message with its frames; the DEALER client sends 1 KB and receives the reply; an empty
/// payload ends the server.
enum SwiftEcho {
    /// Warm-up messages before timing, as the baseline does.
    static let warmUp = 200

    /// Round trips, one at a time. - Returns: each round trip in nanoseconds.
    static func roundTrips(
        _ transport: EchoTransport, directory: String, count: Int, size: Int, path: ReceivePath
    ) throws -> [Double] {
        try run(transport, directory: directory, size: size, path: path) { client in
            var samples = [Double](repeating: 0, count: count)
            for index in 0..<count {
                let start = DispatchTime.now().uptimeNanoseconds
                try client.exchange()
                samples[index] = Double(DispatchTime.now().uptimeNanoseconds - start)
            }
            return samples
        }
    }

    /// Messages per throughput sample, as in the baseline.
    static let chunk = 5_000

    /// `count` messages with `window` in flight.
    /// - Returns: messages per second of each stretch of `chunk` messages received (and the rest).
    static func throughput(
        _ transport: EchoTransport, directory: String, count: Int, size: Int, window: Int, path: ReceivePath
    ) throws -> [Double] {
        try run(transport, directory: directory, size: size, path: path) { client in
            var rates: [Double] = []
            var chunkStart = DispatchTime.now().uptimeNanoseconds
            var sent = 0
            var received = 0
            while sent < window && sent < count {
                try client.send()
                sent += 1
            }
            while received < count {
                try client.receive()
                received += 1
                if sent < count {
                    try client.send()
                    sent += 1
                }
                if received % chunk == 0 || received == count {
                    let now = DispatchTime.now().uptimeNanoseconds
                    let messages = received % chunk == 0 ? chunk : received % chunk
                    let seconds = Double(now - chunkStart) / 1e9
                    rates.append(seconds > 0 ? Double(messages) / seconds : 0)
                    chunkStart = now
                }
            }
            return rates
        }
    }

    /// The client's socket and payload.
    struct Client {
        let socket: Socket
        let payload: [UInt8]
        let path: ReceivePath

        func send() throws {
            switch path {
            case .borrowed: try payload.withUnsafeBytes { try socket.send(bytes: $0) }
            case .copying: try socket.send(payload)
            }
        }

        func receive() throws {
            switch path {
            case .borrowed: try socket.withReceivedMessage { _ in }
            case .copying: _ = try socket.receive()
            }
        }

        func exchange() throws {
            try send()
            try receive()
        }
    }

    /// Starts the server thread, connects the client, warms up, runs `body`, ends the server.
    private static func run<Result>(
        _ transport: EchoTransport, directory: String, size: Int, path: ReceivePath,
        _ body: (Client) throws -> Result
    ) throws -> Result {
        let context = try Context()
        defer { context.terminate() }
        let keys =
            transport == .curve ? (server: try CurveKeyPair.generate(), client: try CurveKeyPair.generate()) : nil
        let server = EchoServer(
            context: context, endpoint: transport.endpoint(directory: directory), secretKey: keys?.server.secretKey,
            path: path)
        let bound = try server.start()
        let result: Result
        do {
            let dealer = try Socket(context: context, type: .dealer)
            defer { dealer.close() }
            try dealer.setLinger(milliseconds: 0)
            // A server that died would leave the client waiting forever: 10 s and the run fails.
            try dealer.setReceiveTimeout(milliseconds: 10_000)
            if let keys { try dealer.setCurveClient(keys: keys.client, serverPublicKey: keys.server.publicKey) }
            try dealer.connect(bound)
            let client = Client(socket: dealer, payload: [UInt8](repeating: UInt8(ascii: "x"), count: size), path: path)
            for _ in 0..<warmUp { try client.exchange() }
            result = try body(client)
            try dealer.send([UInt8]())  // the empty message ends the server
            try client.receive()
        } catch {
            server.abandon()
            throw error
        }
        try server.join()
        return result
    }
}

/// The echo server's thread: it creates, uses and closes its ROUTER (sockets belong to one thread).
final class EchoServer: @unchecked Sendable {
    private let context: Context
    private let endpoint: String
    private let secretKey: String?
    private let path: ReceivePath
    private let condition = NSCondition()
    private var bound: String?
    private var failure: (any Error)?
    private var finished = false

    init(context: Context, endpoint: String, secretKey: String?, path: ReceivePath) {
        self.context = context
        self.endpoint = endpoint
        self.secretKey = secretKey
        self.path = path
    }

    /// Starts the thread. - Returns: the endpoint it bound (a tcp port resolved).
    func start() throws -> String {
        Thread.detachNewThread { [self] in serve() }
        condition.lock()
        defer { condition.unlock() }
        while bound == nil && failure == nil && !finished { condition.wait() }
        if let failure { throw failure }
        guard let bound else { throw BenchFailure("the echo server stopped before binding") }
        return bound
    }

    /// Waits for the thread to end. - Throws: what stopped it early.
    func join() throws {
        condition.lock()
        defer { condition.unlock() }
        while !finished { condition.wait() }
        if let failure { throw failure }
    }

    /// The client failed: shut the context down so a blocked receive ends, and wait.
    func abandon() {
        context.shutdown()
        condition.lock()
        while !finished { condition.wait() }
        condition.unlock()
    }

    private func serve() {
        do {
            let router = try Socket(context: context, type: .router)
            defer { router.close() }
            try router.setLinger(milliseconds: 0)
            if let secretKey { try router.setCurveServer(secretKey: secretKey) }
            try router.bind(endpoint)
            let resolved = try router.lastEndpoint()
            condition.lock()
            bound = resolved
            condition.broadcast()
            condition.unlock()
            var done = false
            while !done {
                switch path {
                case .borrowed:
                    done = try router.withReceivedMessage { message in
                        try router.send(message)
                        return message[message.count - 1].isEmpty
                    }
                case .copying:
                    let frames = try router.receive()
                    try router.send(frames)
                    done = frames.last?.isEmpty ?? true
                }
            }
        } catch {
            condition.lock()
            failure = error
            condition.unlock()
        }
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }
}

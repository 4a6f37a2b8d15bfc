// SPDX-License-Identifier: Apache-2.0

internal import CZeroMQ

/// A libzmq socket type (`ZMQ_ROUTER`, `ZMQ_DEALER`, ...).
public struct SocketType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The C constant, e.g. `ZMQ_ROUTER`.
    public let rawValue: Int32

    /// Wraps a C socket type constant.
    ///
    /// - Parameter rawValue: A `ZMQ_*` socket type.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// `ZMQ_PAIR`: exclusive pair; does not reconnect.
    public static let pair = SocketType(rawValue: ZMQ_PAIR)
    /// `ZMQ_PUB`: publisher; drops at the high-water mark.
    public static let pub = SocketType(rawValue: ZMQ_PUB)
    /// `ZMQ_SUB`: subscriber.
    public static let sub = SocketType(rawValue: ZMQ_SUB)
    /// `ZMQ_REQ`: strict request-reply client.
    public static let req = SocketType(rawValue: ZMQ_REQ)
    /// `ZMQ_REP`: strict request-reply server.
    public static let rep = SocketType(rawValue: ZMQ_REP)
    /// `ZMQ_DEALER`: asynchronous, load-balancing; blocks at the high-water mark.
    public static let dealer = SocketType(rawValue: ZMQ_DEALER)
    /// `ZMQ_ROUTER`: routes by the peer's routing id, which is the first frame of each message.
    public static let router = SocketType(rawValue: ZMQ_ROUTER)
    /// `ZMQ_PULL`: pipeline receiver.
    public static let pull = SocketType(rawValue: ZMQ_PULL)
    /// `ZMQ_PUSH`: pipeline sender.
    public static let push = SocketType(rawValue: ZMQ_PUSH)
    /// `ZMQ_XPUB`: publisher that sees subscriptions.
    public static let xpub = SocketType(rawValue: ZMQ_XPUB)
    /// `ZMQ_XSUB`: subscriber that sends subscriptions as messages.
    public static let xsub = SocketType(rawValue: ZMQ_XSUB)

    /// The type's name, e.g. `ROUTER`.
    public var description: String {
        switch self {
        case .pair: "PAIR"
        case .pub: "PUB"
        case .sub: "SUB"
        case .req: "REQ"
        case .rep: "REP"
        case .dealer: "DEALER"
        case .router: "ROUTER"
        case .pull: "PULL"
        case .push: "PUSH"
        case .xpub: "XPUB"
        case .xsub: "XSUB"
        default: "socket type \(rawValue)"
        }
    }
}

/// A libzmq socket (`zmq_socket`), sending and receiving multipart messages of `[UInt8]` frames.
///
/// Thread safety: not thread-safe, and a lock does not make it so. One thread owns a socket from
/// creation to `close()`: create it on that thread and use it only there (a poll loop). The type is
/// deliberately not `Sendable`.
///
/// libzmq's defaults apply; set these on purpose: `ZMQ_LINGER` (-1 makes `Context.terminate()`
/// wait forever for unsent messages), `ZMQ_IMMEDIATE`, `ZMQ_ROUTER_MANDATORY`,
/// `ZMQ_ROUTER_HANDOVER`, heartbeats and `ZMQ_MAXMSGSIZE`.
///
/// Every operation on a closed socket throws `ZeroMQError.notSocket`.
public final class Socket {
    /// The socket's type.
    public let type: SocketType

    /// Kept alive while the socket is; `Context.terminate()` waits for `close()`.
    private let context: Context

    /// The `void *` from `zmq_socket`; `nil` once closed.
    private var handle: UnsafeMutableRawPointer?

    /// The messages `withReceivedMessage(dontWait:_:)` lends, reused across calls.
    internal let lendingStorage = MessageStorage()

    /// Creates a socket (`zmq_socket`) owned by the calling thread.
    ///
    /// - Parameters:
    ///   - context: The context; kept alive by the socket.
    ///   - type: The socket type.
    /// - Throws: `ZeroMQError.terminated` if the context was terminated or shut down,
    ///   `.tooManyOpenFiles` at the socket limit, `.invalidArgument` for an unknown type.
    public init(context: Context, type: SocketType) throws {
        self.context = context
        self.type = type
        self.handle = try context.makeSocketHandle(type)
    }

    /// Closes the socket if `close()` was not called; `zmq_close` does not block.
    deinit {
        close()
    }

    /// Whether `close()` has been called.
    public var isClosed: Bool {
        handle == nil
    }

    /// Closes the socket (`zmq_close`). Idempotent; never blocks.
    ///
    /// Unsent messages are kept for the `ZMQ_LINGER` period already set on the socket, during
    /// which `Context.terminate()` waits for them.
    public func close() {
        guard let handle else { return }
        self.handle = nil
        zmq_close(handle)
    }

    /// The open socket's handle.
    ///
    /// - Throws: `ZeroMQError.notSocket` after `close()`.
    internal func openHandle() throws(ZeroMQError) -> UnsafeMutableRawPointer {
        guard let handle else { throw ZeroMQError.notSocket }
        return handle
    }

    // MARK: Endpoints

    /// Accepts connections on an endpoint (`zmq_bind`).
    ///
    /// A stale ipc socket file (left by a killed process) is harmless: libzmq removes it first.
    ///
    /// - Parameter endpoint: `transport://address`, e.g. `ipc:///tmp/app/socket`,
    ///   `tcp://127.0.0.1:*`, `inproc://name`. Use `lastEndpoint()` to learn a wildcard's result.
    /// - Throws: `EndpointError` for an ipc path over `EndpointError.maximumIPCPathBytes` bytes
    ///   (checked before calling libzmq); `ZeroMQError` such as `.addressInUse`,
    ///   `.protocolNotSupported`, `.invalidArgument`.
    public func bind(_ endpoint: String) throws {
        try EndpointError.validate(endpoint)
        let handle = try openHandle()
        try valueOrZeroMQError { zmq_bind(handle, endpoint) }
    }

    /// Connects to an endpoint (`zmq_connect`); the connection itself is made in the background
    /// and retried every `ZMQ_RECONNECT_IVL`.
    ///
    /// - Parameter endpoint: `transport://address`, as for `bind(_:)`.
    /// - Throws: `EndpointError` for an ipc path over `EndpointError.maximumIPCPathBytes` bytes;
    ///   `ZeroMQError` such as `.protocolNotSupported`, `.invalidArgument`.
    public func connect(_ endpoint: String) throws {
        try EndpointError.validate(endpoint)
        let handle = try openHandle()
        try valueOrZeroMQError { zmq_connect(handle, endpoint) }
    }

    /// Stops accepting connections on an endpoint (`zmq_unbind`).
    ///
    /// - Parameter endpoint: The endpoint as bound; for a wildcard, the one `lastEndpoint()` gave.
    /// - Throws: `EndpointError`; `ZeroMQError.noEntry` if the endpoint was not bound.
    public func unbind(_ endpoint: String) throws {
        try EndpointError.validate(endpoint)
        let handle = try openHandle()
        try valueOrZeroMQError { zmq_unbind(handle, endpoint) }
    }

    /// Disconnects from an endpoint (`zmq_disconnect`).
    ///
    /// - Parameter endpoint: The endpoint as connected.
    /// - Throws: `EndpointError`; `ZeroMQError.noEntry` if the endpoint was not connected.
    public func disconnect(_ endpoint: String) throws {
        try EndpointError.validate(endpoint)
        let handle = try openHandle()
        try valueOrZeroMQError { zmq_disconnect(handle, endpoint) }
    }

    // MARK: Messages

    /// Sends one multipart message (`zmq_msg_send` with `ZMQ_SNDMORE` on all but the last frame).
    ///
    /// libzmq delivers a multipart message atomically: all frames or none. Once it accepts the
    /// first frame it accepts the rest. On a ROUTER the first frame is the peer's routing id.
    /// `EINTR` is retried.
    ///
    /// - Parameters:
    ///   - frames: The frames, in order; empty frames are allowed. There must be at least one.
    ///   - dontWait: When `true` (`ZMQ_DONTWAIT`), throw `ZeroMQError.again` instead of blocking.
    /// - Throws: `ZeroMQError`: `.invalidArgument` for no frames; `.again` when the message cannot
    ///   be queued now (with `dontWait`, or after `ZMQ_SNDTIMEO`); `.hostUnreachable` from a
    ///   ROUTER with `ZMQ_ROUTER_MANDATORY` and no such peer; `.terminated`; `.notSocket`.
    /// - Complexity: O(total bytes): each frame is copied once into a libzmq message (`zmq_send`).
    public func send(_ frames: [[UInt8]], dontWait: Bool = false) throws {
        guard let last = frames.indices.last else { throw ZeroMQError.invalidArgument }
        let handle = try openHandle()
        for index in frames.indices {
            var flags: Int32 = dontWait ? ZMQ_DONTWAIT : 0
            if index != last { flags |= ZMQ_SNDMORE }
            // zmq_send copies the bytes into a message of its own (zmq_msg_init_size + memcpy).
            _ = try frames[index].withUnsafeBytes { (bytes) throws(ZeroMQError) in
                try valueOrZeroMQError { zmq_send(handle, bytes.baseAddress, bytes.count, flags) }
            }
        }
    }

    /// Sends a single-frame message; see `send(_:dontWait:)` for the multipart form.
    ///
    /// - Parameters:
    ///   - frame: The frame's bytes; may be empty.
    ///   - dontWait: When `true` (`ZMQ_DONTWAIT`), throw `ZeroMQError.again` instead of blocking.
    /// - Throws: `ZeroMQError`, as for `send(_:dontWait:)`.
    public func send(_ frame: [UInt8], dontWait: Bool = false) throws {
        try send([frame], dontWait: dontWait)
    }

    /// Receives all frames of one message (`zmq_msg_recv` into a `zmq_msg_t`, then `zmq_msg_more`).
    ///
    /// Frames of any length arrive whole: each is copied out of libzmq's own message, never
    /// through a fixed-size buffer. `EINTR` is retried (which restarts a `ZMQ_RCVTIMEO` timeout).
    ///
    /// - Parameter dontWait: When `true` (`ZMQ_DONTWAIT`), throw `ZeroMQError.again` if no message
    ///   is queued instead of blocking.
    /// - Returns: The frames, at least one; on a ROUTER the first is the sender's routing id.
    /// - Throws: `ZeroMQError`: `.again` when nothing is queued (with `dontWait`, or after
    ///   `ZMQ_RCVTIMEO`); `.terminated`; `.notSocket`.
    /// - Complexity: O(total bytes).
    public func receive(dontWait: Bool = false) throws -> [[UInt8]] {
        let handle = try openHandle()
        return try withUnsafeTemporaryAllocation(of: zmq_msg_t.self, capacity: 1) { buffer in
            try receiveFrames(handle, message: buffer.baseAddress!, dontWait: dontWait)
        }
    }

    /// `receive(dontWait:)` with its `zmq_msg_t` on the caller's stack.
    private func receiveFrames(
        _ handle: UnsafeMutableRawPointer, message: UnsafeMutablePointer<zmq_msg_t>, dontWait: Bool
    ) throws(ZeroMQError) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        // Later frames of a message are already queued once the first arrives.
        var flags: Int32 = dontWait ? ZMQ_DONTWAIT : 0
        var more = true
        while more {
            zmq_msg_init(message)
            defer { zmq_msg_close(message) }
            try valueOrZeroMQError { zmq_msg_recv(message, handle, flags) }
            let count = zmq_msg_size(message)
            if count == 0 {
                frames.append([])
            } else {
                guard let data = zmq_msg_data(message) else { throw ZeroMQError.fault }
                let source = UnsafeRawBufferPointer(start: data, count: count)
                frames.append(
                    [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                        UnsafeMutableRawBufferPointer(buffer).copyMemory(from: source)
                        initialized = count
                    })
            }
            more = zmq_msg_more(message) != 0
            flags = 0
        }
        return frames
    }
}

/// Sockets belong to one thread; see `Socket`.
@available(*, unavailable)
extension Socket: Sendable {}

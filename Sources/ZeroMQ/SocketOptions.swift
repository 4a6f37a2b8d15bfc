// SPDX-License-Identifier: Apache-2.0

internal import CZeroMQ

// Socket options (`zmq_setsockopt` / `zmq_getsockopt`). Times are in milliseconds, sizes in bytes,
// high-water marks in messages. Like every socket method, these must run on the owner thread.
extension Socket {
    // MARK: Connection behaviour

    /// Sets how long unsent messages are kept after `close()` (`ZMQ_LINGER`).
    ///
    /// - Parameter milliseconds: 0 drops them at once; -1 (libzmq's default) keeps them until sent,
    ///   making `Context.terminate()` wait forever for an absent peer.
    /// - Throws: `ZeroMQError`.
    public func setLinger(milliseconds: Int32) throws {
        try setOption(ZMQ_LINGER, milliseconds)
    }

    /// How long unsent messages are kept after `close()`, in milliseconds (`ZMQ_LINGER`).
    public var linger: Int32 {
        get throws { try option(ZMQ_LINGER, as: Int32.self) }
    }

    /// Makes a ROUTER fail sends to unknown routing ids instead of dropping them
    /// (`ZMQ_ROUTER_MANDATORY`). Write-only in libzmq.
    ///
    /// - Parameter on: `true` to throw `ZeroMQError.hostUnreachable` (or `.again` when the peer's
    ///   queue is full); `false` (libzmq's default) to drop silently.
    /// - Throws: `ZeroMQError.invalidArgument` on a socket that is not a ROUTER.
    public func setRouterMandatory(_ on: Bool) throws {
        try setOption(ZMQ_ROUTER_MANDATORY, Int32(on ? 1 : 0))
    }

    /// Lets a new connection with a routing id already in use take it over from the old one
    /// (`ZMQ_ROUTER_HANDOVER`). Write-only in libzmq.
    ///
    /// - Parameter on: `true` to hand the id to the new peer; `false` (libzmq's default) refuses it
    ///   while the old connection lingers.
    /// - Throws: `ZeroMQError.invalidArgument` on a socket that is not a ROUTER.
    public func setRouterHandover(_ on: Bool) throws {
        try setOption(ZMQ_ROUTER_HANDOVER, Int32(on ? 1 : 0))
    }

    /// Queues messages only on completed connections (`ZMQ_IMMEDIATE`).
    ///
    /// - Parameter on: `true`: with no connected peer a DEALER's send blocks or throws
    ///   `ZeroMQError.again`; `false` (libzmq's default): messages queue for peers not yet there.
    /// - Throws: `ZeroMQError`.
    public func setImmediate(_ on: Bool) throws {
        try setOption(ZMQ_IMMEDIATE, Int32(on ? 1 : 0))
    }

    /// Whether messages are queued only on completed connections (`ZMQ_IMMEDIATE`).
    public var immediate: Bool {
        get throws { try option(ZMQ_IMMEDIATE, as: Int32.self) != 0 }
    }

    /// Sets the largest frame this socket accepts from a peer (`ZMQ_MAXMSGSIZE`).
    ///
    /// The limit applies per frame. A peer sending a larger frame is disconnected; the sender sees
    /// success and loses that message (and the one queued behind it).
    ///
    /// - Parameter bytes: The limit in bytes; -1 (libzmq's default) for none.
    /// - Throws: `ZeroMQError`.
    public func setMaxMessageSize(_ bytes: Int64) throws {
        try setOption(ZMQ_MAXMSGSIZE, bytes)
    }

    /// The largest frame accepted from a peer, in bytes; -1 for none (`ZMQ_MAXMSGSIZE`).
    public var maxMessageSize: Int64 {
        get throws { try option(ZMQ_MAXMSGSIZE, as: Int64.self) }
    }

    /// Turns on ZMTP heartbeats (`ZMQ_HEARTBEAT_IVL`, `ZMQ_HEARTBEAT_TIMEOUT`, `ZMQ_HEARTBEAT_TTL`),
    /// so a hung peer is noticed and its connection dropped. Set before connecting or binding.
    ///
    /// The three options are set in turn; if one fails, those before it stay set.
    ///
    /// - Parameters:
    ///   - interval: Milliseconds between PINGs; 0 (libzmq's default) turns heartbeats off.
    ///   - timeout: Milliseconds to wait for traffic after a PING before dropping the connection;
    ///     -1 means the same as `interval`.
    ///   - ttl: Milliseconds the remote peer should wait for traffic before dropping us, sent in our
    ///     PINGs; kept in deciseconds by libzmq, 0...6_553_599, 0 for none.
    /// - Throws: `ZeroMQError.invalidArgument` for an out-of-range value.
    public func setHeartbeat(interval: Int32, timeout: Int32, ttl: Int32) throws {
        try setOption(ZMQ_HEARTBEAT_IVL, interval)
        try setOption(ZMQ_HEARTBEAT_TIMEOUT, timeout)
        try setOption(ZMQ_HEARTBEAT_TTL, ttl)
    }

    /// The heartbeat settings in milliseconds; `ttl` is rounded down to whole deciseconds.
    public var heartbeat: (interval: Int32, timeout: Int32, ttl: Int32) {
        get throws {
            (
                interval: try option(ZMQ_HEARTBEAT_IVL, as: Int32.self),
                timeout: try option(ZMQ_HEARTBEAT_TIMEOUT, as: Int32.self),
                ttl: try option(ZMQ_HEARTBEAT_TTL, as: Int32.self)
            )
        }
    }

    /// Sets the routing id a ROUTER peer will know this socket by (`ZMQ_ROUTING_ID`). Set before
    /// connecting.
    ///
    /// - Parameter id: 1 to 255 bytes; ids starting with a zero byte are reserved by libzmq.
    /// - Throws: `ZeroMQError.invalidArgument` for an empty or over-long id.
    public func setRoutingId(_ id: [UInt8]) throws {
        try setOption(ZMQ_ROUTING_ID, bytes: id)
    }

    /// The routing id set with `setRoutingId(_:)`, or empty if none (`ZMQ_ROUTING_ID`).
    public var routingId: [UInt8] {
        get throws { try bytesOption(ZMQ_ROUTING_ID, capacity: 256) }
    }

    /// Sets the reconnect delays (`ZMQ_RECONNECT_IVL`, `ZMQ_RECONNECT_IVL_MAX`).
    ///
    /// - Parameters:
    ///   - milliseconds: Delay before reconnecting (libzmq's default 100, plus up to 99 of
    ///     jitter); -1 for no reconnection.
    ///   - max: Upper bound of the doubling back-off; 0 (libzmq's default) keeps the delay fixed.
    /// - Throws: `ZeroMQError.invalidArgument` for a negative `max`.
    public func setReconnectInterval(milliseconds: Int32, max: Int32) throws {
        try setOption(ZMQ_RECONNECT_IVL, milliseconds)
        try setOption(ZMQ_RECONNECT_IVL_MAX, max)
    }

    /// The reconnect delays in milliseconds (`ZMQ_RECONNECT_IVL`, `ZMQ_RECONNECT_IVL_MAX`).
    public var reconnectInterval: (milliseconds: Int32, max: Int32) {
        get throws {
            (
                milliseconds: try option(ZMQ_RECONNECT_IVL, as: Int32.self),
                max: try option(ZMQ_RECONNECT_IVL_MAX, as: Int32.self)
            )
        }
    }

    // MARK: Queues and timeouts

    /// Sets the outbound queue limit per peer (`ZMQ_SNDHWM`). At the mark ROUTER and PUB drop,
    /// DEALER and PUSH block (or throw `.again`).
    ///
    /// - Parameter n: Messages; 0 for no limit; libzmq's default is 1000.
    /// - Throws: `ZeroMQError`.
    public func setSendHighWaterMark(_ n: Int32) throws {
        try setOption(ZMQ_SNDHWM, n)
    }

    /// The outbound queue limit per peer, in messages (`ZMQ_SNDHWM`).
    public var sendHighWaterMark: Int32 {
        get throws { try option(ZMQ_SNDHWM, as: Int32.self) }
    }

    /// Sets the inbound queue limit per peer (`ZMQ_RCVHWM`).
    ///
    /// - Parameter n: Messages; 0 for no limit; libzmq's default is 1000.
    /// - Throws: `ZeroMQError`.
    public func setReceiveHighWaterMark(_ n: Int32) throws {
        try setOption(ZMQ_RCVHWM, n)
    }

    /// The inbound queue limit per peer, in messages (`ZMQ_RCVHWM`).
    public var receiveHighWaterMark: Int32 {
        get throws { try option(ZMQ_RCVHWM, as: Int32.self) }
    }

    /// Sets how long a blocking send waits before throwing `ZeroMQError.again` (`ZMQ_SNDTIMEO`).
    ///
    /// - Parameter milliseconds: -1 (libzmq's default) waits forever; 0 never waits.
    /// - Throws: `ZeroMQError`.
    public func setSendTimeout(milliseconds: Int32) throws {
        try setOption(ZMQ_SNDTIMEO, milliseconds)
    }

    /// The blocking-send timeout in milliseconds, -1 for none (`ZMQ_SNDTIMEO`).
    public var sendTimeout: Int32 {
        get throws { try option(ZMQ_SNDTIMEO, as: Int32.self) }
    }

    /// Sets how long a blocking receive waits before throwing `ZeroMQError.again` (`ZMQ_RCVTIMEO`).
    ///
    /// - Parameter milliseconds: -1 (libzmq's default) waits forever; 0 never waits.
    /// - Throws: `ZeroMQError`.
    public func setReceiveTimeout(milliseconds: Int32) throws {
        try setOption(ZMQ_RCVTIMEO, milliseconds)
    }

    /// The blocking-receive timeout in milliseconds, -1 for none (`ZMQ_RCVTIMEO`).
    public var receiveTimeout: Int32 {
        get throws { try option(ZMQ_RCVTIMEO, as: Int32.self) }
    }

    // MARK: Subscriptions

    /// Subscribes a SUB socket to messages whose first frame starts with `prefix`
    /// (`ZMQ_SUBSCRIBE`).
    ///
    /// - Parameter prefix: The prefix; empty for every message.
    /// - Throws: `ZeroMQError.invalidArgument` on a socket that is not a SUB.
    public func subscribe(_ prefix: [UInt8]) throws {
        try setOption(ZMQ_SUBSCRIBE, bytes: prefix)
    }

    /// Removes one subscription made with `subscribe(_:)` (`ZMQ_UNSUBSCRIBE`).
    ///
    /// - Parameter prefix: The prefix as subscribed.
    /// - Throws: `ZeroMQError.invalidArgument` on a socket that is not a SUB.
    public func unsubscribe(_ prefix: [UInt8]) throws {
        try setOption(ZMQ_UNSUBSCRIBE, bytes: prefix)
    }

    // MARK: Introspection

    /// The endpoint last bound or connected, with wildcards resolved (`ZMQ_LAST_ENDPOINT`), e.g.
    /// `tcp://127.0.0.1:41234` after binding `tcp://127.0.0.1:*`.
    ///
    /// - Returns: The endpoint, or an empty string if none.
    /// - Throws: `ZeroMQError`.
    public func lastEndpoint() throws -> String {
        // libzmq fails with EINVAL when the buffer is too small, without saying what would fit.
        for capacity in [256, 4_096, 65_536] {
            if let bytes = try bytesOption(ZMQ_LAST_ENDPOINT, capacity: capacity, nilIfTooSmall: true) {
                return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        throw ZeroMQError.invalidArgument
    }

    // MARK: Helpers

    /// Sets an integer option (`zmq_setsockopt`) with the width libzmq expects for it.
    internal func setOption<Value: FixedWidthInteger>(
        _ name: Int32,
        _ value: Value
    ) throws(ZeroMQError) {
        let handle = try openHandle()
        var value = value
        try valueOrZeroMQError {
            zmq_setsockopt(handle, name, &value, MemoryLayout<Value>.size)
        }
    }

    /// Sets a binary option (`zmq_setsockopt`).
    internal func setOption(_ name: Int32, bytes: [UInt8]) throws(ZeroMQError) {
        let handle = try openHandle()
        try valueOrZeroMQError {
            bytes.withUnsafeBytes { zmq_setsockopt(handle, name, $0.baseAddress, $0.count) }
        }
    }

    /// Reads an integer option (`zmq_getsockopt`).
    internal func option<Value: FixedWidthInteger>(
        _ name: Int32,
        as type: Value.Type
    ) throws(ZeroMQError) -> Value {
        let handle = try openHandle()
        var value = Value.zero
        var size = MemoryLayout<Value>.size
        try valueOrZeroMQError { zmq_getsockopt(handle, name, &value, &size) }
        return value
    }

    /// Reads a binary or string option (`zmq_getsockopt`) into a buffer of `capacity` bytes.
    internal func bytesOption(_ name: Int32, capacity: Int) throws(ZeroMQError) -> [UInt8] {
        try bytesOption(name, capacity: capacity, nilIfTooSmall: false) ?? []
    }

    /// Reads a binary or string option (`zmq_getsockopt`) into a buffer of `capacity` bytes.
    ///
    /// - Returns: The option's bytes; `nil` when libzmq reports `EINVAL` and `nilIfTooSmall` is
    ///   set, which for a valid option means the buffer was too small.
    internal func bytesOption(
        _ name: Int32,
        capacity: Int,
        nilIfTooSmall: Bool
    ) throws(ZeroMQError) -> [UInt8]? {
        let handle = try openHandle()
        var bytes = [UInt8](repeating: 0, count: capacity)
        var size = capacity
        let result = bytes.withUnsafeMutableBytes { buffer in
            zmq_getsockopt(handle, name, buffer.baseAddress, &size)
        }
        if result == -1 {
            let error = ZeroMQError.current()
            if nilIfTooSmall && error == .invalidArgument { return nil }
            throw error
        }
        bytes.removeLast(capacity - Swift.min(size, capacity))
        return bytes
    }
}

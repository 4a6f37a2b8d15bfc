// SPDX-License-Identifier: Apache-2.0

internal import CZeroMQ

/// One event from a socket monitor (`zmq_socket_monitor`): what happened, a value and the endpoint.
///
/// Monitor messages are two frames: 6 bytes (a 16-bit event kind, then a 32-bit value, both in the
/// host's byte order) and the endpoint's address.
public struct MonitorEvent: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Kinds of monitor event (`ZMQ_EVENT_*`). One event has one kind; a set of kinds selects
    /// what `Socket.monitor(endpoint:events:)` reports.
    public struct Kind: OptionSet, Sendable, Hashable {
        /// The `ZMQ_EVENT_*` bits.
        public let rawValue: UInt16

        /// Wraps `ZMQ_EVENT_*` bits.
        ///
        /// - Parameter rawValue: One or more `ZMQ_EVENT_*` values.
        public init(rawValue: UInt16) {
            self.rawValue = rawValue
        }

        private init(_ value: Int32) {
            self.rawValue = UInt16(truncatingIfNeeded: value)
        }

        /// `ZMQ_EVENT_CONNECTED`: a connection was made; the value is its file descriptor.
        public static let connected = Kind(ZMQ_EVENT_CONNECTED)
        /// `ZMQ_EVENT_CONNECT_DELAYED`: a connect attempt is pending.
        public static let connectDelayed = Kind(ZMQ_EVENT_CONNECT_DELAYED)
        /// `ZMQ_EVENT_CONNECT_RETRIED`: a reconnect is scheduled; the value is the delay in ms.
        public static let connectRetried = Kind(ZMQ_EVENT_CONNECT_RETRIED)
        /// `ZMQ_EVENT_LISTENING`: a bind succeeded; the value is the listening descriptor.
        public static let listening = Kind(ZMQ_EVENT_LISTENING)
        /// `ZMQ_EVENT_BIND_FAILED`: a bind failed; the value is the errno.
        public static let bindFailed = Kind(ZMQ_EVENT_BIND_FAILED)
        /// `ZMQ_EVENT_ACCEPTED`: a connection was accepted; the value is its descriptor.
        public static let accepted = Kind(ZMQ_EVENT_ACCEPTED)
        /// `ZMQ_EVENT_ACCEPT_FAILED`: accepting failed; the value is the errno.
        public static let acceptFailed = Kind(ZMQ_EVENT_ACCEPT_FAILED)
        /// `ZMQ_EVENT_CLOSED`: a connection's descriptor was closed.
        public static let closed = Kind(ZMQ_EVENT_CLOSED)
        /// `ZMQ_EVENT_CLOSE_FAILED`: closing a descriptor failed; the value is the errno.
        public static let closeFailed = Kind(ZMQ_EVENT_CLOSE_FAILED)
        /// `ZMQ_EVENT_DISCONNECTED`: a connection was lost (peer gone, heartbeat timeout, ...).
        public static let disconnected = Kind(ZMQ_EVENT_DISCONNECTED)
        /// `ZMQ_EVENT_MONITOR_STOPPED`: monitoring stopped; the last event sent.
        public static let monitorStopped = Kind(ZMQ_EVENT_MONITOR_STOPPED)
        /// `ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL`: the ZMTP handshake failed for an unknown reason;
        /// the value is the errno.
        public static let handshakeFailedNoDetail = Kind(ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
        /// `ZMQ_EVENT_HANDSHAKE_SUCCEEDED`: the ZMTP handshake (and any CURVE security) succeeded;
        /// the peer can now exchange messages.
        public static let handshakeSucceeded = Kind(ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
        /// `ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL`: the peer broke the ZMTP or security protocol; the
        /// value is a `ZMQ_PROTOCOL_ERROR_*` code.
        public static let handshakeFailedProtocol = Kind(ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
        /// `ZMQ_EVENT_HANDSHAKE_FAILED_AUTH`: the peer was refused by authentication; the value is
        /// the ZAP status code.
        public static let handshakeFailedAuth = Kind(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
        /// Any of the three handshake failures.
        public static let handshakeFailed: Kind = [
            .handshakeFailedNoDetail, .handshakeFailedProtocol, .handshakeFailedAuth,
        ]
        /// `ZMQ_EVENT_ALL`: every event.
        public static let all = Kind(ZMQ_EVENT_ALL)
    }

    /// What happened.
    public let kind: Kind

    /// The event's value: a file descriptor, an errno, a delay or a protocol code, by `kind`.
    public let value: UInt32

    /// The endpoint the event concerns, e.g. `ipc:///tmp/app/socket`.
    public let endpoint: String

    /// Creates an event from its parts.
    ///
    /// - Parameters:
    ///   - kind: What happened; a single kind.
    ///   - value: The event's value.
    ///   - endpoint: The endpoint it concerns.
    public init(kind: Kind, value: UInt32, endpoint: String) {
        self.kind = kind
        self.value = value
        self.endpoint = endpoint
    }

    /// Parses a message received from a monitor endpoint.
    ///
    /// - Parameter frames: The message: a 6-byte frame (16-bit kind, 32-bit value, host byte
    ///   order) and the endpoint as UTF-8.
    /// - Returns: `nil` if the message does not have that shape.
    public init?(frames: [[UInt8]]) {
        guard frames.count == 2, frames[0].count == 6 else { return nil }
        let head = frames[0]
        var kind: UInt16 = 0
        var value: UInt32 = 0
        withUnsafeMutableBytes(of: &kind) { $0.copyBytes(from: head[0..<2]) }
        withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: head[2..<6]) }
        self.init(
            kind: Kind(rawValue: kind),
            value: value,
            endpoint: String(decoding: frames[1], as: UTF8.self)
        )
    }

    /// E.g. `event 0x1000 value 0 endpoint ipc:///tmp/app/socket`.
    public var description: String {
        "event 0x\(String(kind.rawValue, radix: 16)) value \(value) endpoint \(endpoint)"
    }
}

extension Socket {
    /// Starts reporting this socket's events on a PAIR endpoint (`zmq_socket_monitor`).
    ///
    /// libzmq binds a PAIR socket to `endpoint`; connect a `.pair` socket to it (after this call)
    /// on the thread that will read it, and parse each message with `MonitorEvent(frames:)`.
    /// Events are lost while nothing is connected.
    ///
    /// - Parameters:
    ///   - endpoint: An `inproc://` endpoint, unique in the context.
    ///   - events: The kinds to report, e.g. `[.handshakeSucceeded, .disconnected]` or `.all`.
    /// - Throws: `ZeroMQError`: `.protocolNotSupported` for a transport other than inproc;
    ///   `.addressInUse`; `.notSocket`.
    public func monitor(endpoint: String, events: MonitorEvent.Kind) throws {
        try EndpointError.validate(endpoint)
        let handle = try openHandle()
        try valueOrZeroMQError {
            zmq_socket_monitor(handle, endpoint, Int32(events.rawValue))
        }
    }

    /// Stops monitoring (`zmq_socket_monitor` with no endpoint); the monitor endpoint receives
    /// `.monitorStopped` if it asked for it.
    ///
    /// - Throws: `ZeroMQError.notSocket`.
    public func stopMonitor() throws {
        let handle = try openHandle()
        try valueOrZeroMQError { zmq_socket_monitor(handle, nil, 0) }
    }
}

extension MonitorEvent {
    /// A handshake failure's value in plain words, with libzmq's name for it.
    ///
    /// For `.handshakeFailedProtocol` the value is a `ZMQ_PROTOCOL_ERROR_*` code (zmq.h;
    /// zmq_socket_monitor(3)), for `.handshakeFailedAuth` a ZAP status code (RFC 27: 300 temporary
    /// error, 400 authentication failure, 500 internal error), for `.handshakeFailedNoDetail` an
    /// errno. Other kinds get their number.
    public var handshakeFailureDescription: String {
        if kind.contains(.handshakeFailedProtocol) { return Self.protocolErrorDescription(value) }
        if kind.contains(.handshakeFailedAuth) {
            let words =
                switch value {
                case 300: "a temporary error in the peer's authentication handler"
                case 400: "authentication failed: the peer does not accept these credentials"
                case 500: "an internal error in the peer's authentication handler"
                default: "the peer's authentication handler refused"
                }
            return "\(words) (ZAP status \(value))"
        }
        if kind.contains(.handshakeFailedNoDetail) {
            return "\(String(cString: zmq_strerror(Int32(bitPattern: value)))) (errno \(value))"
        }
        return "value \(value)"
    }

    /// A `ZMQ_PROTOCOL_ERROR_*` code (zmq.h) in plain words, e.g. for 0x11000002
    /// `the two sides use different security mechanisms: one requires CURVE, the other uses
    /// none (ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH, 0x11000002)`.
    ///
    /// - Parameter code: The value of a `.handshakeFailedProtocol` event.
    /// - Returns: What went wrong, libzmq's name for it and the code in hexadecimal.
    public static func protocolErrorDescription(_ code: UInt32) -> String {
        let hex = "0x" + String(code, radix: 16)
        let malformed = "the peer sent a malformed ZMTP"
        let known: [Int32: (String, String)] = [
            ZMQ_PROTOCOL_ERROR_ZMTP_UNSPECIFIED: ("the peer broke the ZMTP protocol", "ZMTP_UNSPECIFIED"),
            ZMQ_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND: (
                "the peer sent a ZMTP command that was not expected then", "ZMTP_UNEXPECTED_COMMAND"
            ),
            ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE: (
                "the peer sent ZMTP commands out of sequence", "ZMTP_INVALID_SEQUENCE"
            ),
            ZMQ_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE: ("the security key exchange failed", "ZMTP_KEY_EXCHANGE"),
            ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_UNSPECIFIED: (
                "\(malformed) command", "ZMTP_MALFORMED_COMMAND_UNSPECIFIED"
            ),
            ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_MESSAGE: (
                "\(malformed) MESSAGE command", "ZMTP_MALFORMED_COMMAND_MESSAGE"
            ),
            ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO: (
                "\(malformed) HELLO command", "ZMTP_MALFORMED_COMMAND_HELLO"
            ),
            ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_INITIATE: (
                "\(malformed) INITIATE command", "ZMTP_MALFORMED_COMMAND_INITIATE"
            ),
            ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_ERROR: (
                "\(malformed) ERROR command", "ZMTP_MALFORMED_COMMAND_ERROR"
            ),
            ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_READY: (
                "\(malformed) READY command", "ZMTP_MALFORMED_COMMAND_READY"
            ),
            ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_WELCOME: (
                "\(malformed) WELCOME command", "ZMTP_MALFORMED_COMMAND_WELCOME"
            ),
            ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_METADATA: (
                "the peer sent invalid metadata (socket type, identity)", "ZMTP_INVALID_METADATA"
            ),
            ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC: (
                "a cryptographic check failed: the CURVE keys do not match", "ZMTP_CRYPTOGRAPHIC"
            ),
            ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH: (
                "the two sides use different security mechanisms: one requires CURVE, the other uses none",
                "ZMTP_MECHANISM_MISMATCH"
            ),
            ZMQ_PROTOCOL_ERROR_ZAP_UNSPECIFIED: ("the authentication handler (ZAP) failed", "ZAP_UNSPECIFIED"),
            ZMQ_PROTOCOL_ERROR_ZAP_MALFORMED_REPLY: (
                "the authentication handler (ZAP) sent a malformed reply", "ZAP_MALFORMED_REPLY"
            ),
            ZMQ_PROTOCOL_ERROR_ZAP_BAD_REQUEST_ID: (
                "the authentication handler (ZAP) answered another request", "ZAP_BAD_REQUEST_ID"
            ),
            ZMQ_PROTOCOL_ERROR_ZAP_BAD_VERSION: (
                "the authentication handler (ZAP) speaks another version", "ZAP_BAD_VERSION"
            ),
            ZMQ_PROTOCOL_ERROR_ZAP_INVALID_STATUS_CODE: (
                "the authentication handler (ZAP) sent an invalid status code", "ZAP_INVALID_STATUS_CODE"
            ),
            ZMQ_PROTOCOL_ERROR_ZAP_INVALID_METADATA: (
                "the authentication handler (ZAP) sent invalid metadata", "ZAP_INVALID_METADATA"
            ),
            ZMQ_PROTOCOL_ERROR_WS_UNSPECIFIED: ("the WebSocket protocol was broken", "WS_UNSPECIFIED"),
        ]
        guard let (words, name) = known[Int32(bitPattern: code)] else {
            return "an unknown protocol error (\(hex))"
        }
        return "\(words) (ZMQ_PROTOCOL_ERROR_\(name), \(hex))"
    }
}

// SPDX-License-Identifier: Apache-2.0

internal import CZeroMQ

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// An error reported by libzmq, keeping its C error code (`errno` as returned by `zmq_errno`).
///
/// Codes are either the platform's `errno` values (`EAGAIN`, `EINTR`, ...) or libzmq's own
/// (`ETERM`, `EFSM`, ...), which start at `ZMQ_HAUSNUMERO`. Any code can be represented; the named
/// static members cover the ones this wrapper's callers are expected to handle.
///
/// Match a specific code in a `catch` clause:
///
///     do {
///         let frames = try socket.receive(dontWait: true)
///     } catch ZeroMQError.again {
///         // nothing queued
///     }
public struct ZeroMQError: Error, RawRepresentable, Equatable, Hashable, CustomStringConvertible,
    Sendable
{
    /// The C error code.
    public let rawValue: Int32

    /// Wraps a C error code.
    ///
    /// - Parameter rawValue: An `errno` value or one of libzmq's own codes.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The error libzmq reported for the calling thread's last failed call (`zmq_errno`).
    ///
    /// - Returns: The current thread's libzmq error code, wrapped.
    internal static func current() -> ZeroMQError {
        ZeroMQError(rawValue: zmq_errno())
    }

    /// `EAGAIN`: the operation would block (non-blocking mode, or a send/receive timeout expired).
    public static var again: ZeroMQError { ZeroMQError(rawValue: EAGAIN) }

    /// `EINTR`: a signal interrupted the call. The wrapper retries it wherever that is safe.
    public static var interrupted: ZeroMQError { ZeroMQError(rawValue: EINTR) }

    /// `EHOSTUNREACH`: a ROUTER with `ZMQ_ROUTER_MANDATORY` has no peer with that routing id.
    public static var hostUnreachable: ZeroMQError { ZeroMQError(rawValue: EHOSTUNREACH) }

    /// `ETERM`: the context was terminated or shut down.
    public static var terminated: ZeroMQError { ZeroMQError(rawValue: ETERM) }

    /// `ENAMETOOLONG`: a name (for example an ipc path) is too long.
    public static var nameTooLong: ZeroMQError { ZeroMQError(rawValue: ENAMETOOLONG) }

    /// `EINVAL`: an argument was invalid (bad endpoint, option value or option for this socket).
    public static var invalidArgument: ZeroMQError { ZeroMQError(rawValue: EINVAL) }

    /// `ENOTSOCK`: the socket was invalid, or already closed.
    public static var notSocket: ZeroMQError { ZeroMQError(rawValue: ENOTSOCK) }

    /// `EFSM`: the operation is not allowed in the socket's current state (e.g. REQ sent twice).
    public static var finiteStateMachine: ZeroMQError { ZeroMQError(rawValue: EFSM) }

    /// `EPROTONOSUPPORT`: the endpoint's transport is not supported.
    public static var protocolNotSupported: ZeroMQError { ZeroMQError(rawValue: EPROTONOSUPPORT) }

    /// `ENOCOMPATPROTO`: the transport does not work with this socket type.
    public static var incompatibleProtocol: ZeroMQError { ZeroMQError(rawValue: ENOCOMPATPROTO) }

    /// `EADDRINUSE`: the address is already in use.
    public static var addressInUse: ZeroMQError { ZeroMQError(rawValue: EADDRINUSE) }

    /// `EADDRNOTAVAIL`: the address is not local.
    public static var addressNotAvailable: ZeroMQError { ZeroMQError(rawValue: EADDRNOTAVAIL) }

    /// `ENODEV`: the address names an interface that does not exist.
    public static var noDevice: ZeroMQError { ZeroMQError(rawValue: ENODEV) }

    /// `ENOENT`: for `zmq_unbind` and `zmq_disconnect`, the endpoint was not bound or connected.
    public static var noEntry: ZeroMQError { ZeroMQError(rawValue: ENOENT) }

    /// `EMSGSIZE`: the message is too large.
    public static var messageTooLarge: ZeroMQError { ZeroMQError(rawValue: EMSGSIZE) }

    /// `ENOTSUP`: the operation is not supported by this socket type.
    public static var notSupported: ZeroMQError { ZeroMQError(rawValue: ENOTSUP) }

    /// `EMFILE`: the limit on open sockets (or file descriptors) was reached.
    public static var tooManyOpenFiles: ZeroMQError { ZeroMQError(rawValue: EMFILE) }

    /// `EMTHREAD`: no I/O thread is available.
    public static var noThread: ZeroMQError { ZeroMQError(rawValue: EMTHREAD) }

    /// `ENOMEM`: libzmq could not allocate memory.
    public static var noMemory: ZeroMQError { ZeroMQError(rawValue: ENOMEM) }

    /// `EFAULT`: an invalid pointer (context, socket or message) was passed.
    public static var fault: ZeroMQError { ZeroMQError(rawValue: EFAULT) }

    /// The C name of the code when it is one of the named members, such as `"EAGAIN"`.
    public var name: String? {
        switch rawValue {
        case EAGAIN: "EAGAIN"
        case EINTR: "EINTR"
        case EHOSTUNREACH: "EHOSTUNREACH"
        case ETERM: "ETERM"
        case ENAMETOOLONG: "ENAMETOOLONG"
        case EINVAL: "EINVAL"
        case ENOTSOCK: "ENOTSOCK"
        case EFSM: "EFSM"
        case EPROTONOSUPPORT: "EPROTONOSUPPORT"
        case ENOCOMPATPROTO: "ENOCOMPATPROTO"
        case EADDRINUSE: "EADDRINUSE"
        case EADDRNOTAVAIL: "EADDRNOTAVAIL"
        case ENODEV: "ENODEV"
        case ENOENT: "ENOENT"
        case EMSGSIZE: "EMSGSIZE"
        case ENOTSUP: "ENOTSUP"
        case EMFILE: "EMFILE"
        case EMTHREAD: "EMTHREAD"
        case ENOMEM: "ENOMEM"
        case EFAULT: "EFAULT"
        default: nil
        }
    }

    /// libzmq's message for the code (`zmq_strerror`, which knows libzmq's own codes), then the
    /// C name when known and the number, e.g. `Context was terminated (ETERM, 156384765)`.
    public var description: String {
        let message: String
        if let text = zmq_strerror(rawValue) {
            message = String(cString: text)
        } else {
            message = "Unknown error"
        }
        if let name {
            return "\(message) (\(name), \(rawValue))"
        }
        return "\(message) (\(rawValue))"
    }

    /// Matches a thrown error against a code, so that `catch ZeroMQError.again` works.
    ///
    /// - Parameters:
    ///   - lhs: The code to look for.
    ///   - rhs: Any error.
    /// - Returns: `true` when `rhs` is a `ZeroMQError` with the same code.
    public static func ~= (lhs: ZeroMQError, rhs: any Error) -> Bool {
        guard let error = rhs as? ZeroMQError else { return false }
        return lhs == error
    }
}

/// Runs a libzmq call that returns -1 on failure, turning the failure into a thrown `ZeroMQError`.
///
/// Every C call of this module goes through this helper (or `nonNilOrZeroMQError`), in the manner
/// of swift-system's `valueOrErrno`.
///
/// - Parameters:
///   - retryOnInterrupt: When `true`, a failure with `EINTR` calls `body` again. `body` is
///     re-evaluated, so it can recompute arguments such as a remaining timeout.
///   - body: The C call.
/// - Returns: The call's result, which is not -1.
/// - Throws: `ZeroMQError` from `zmq_errno()` when the call returns -1.
@discardableResult
@inline(__always)
internal func valueOrZeroMQError<I: FixedWidthInteger>(
    retryOnInterrupt: Bool = true,
    _ body: () -> I
) throws(ZeroMQError) -> I {
    while true {
        let result = body()
        if result != -1 { return result }
        let error = ZeroMQError.current()
        if retryOnInterrupt && error == .interrupted { continue }
        throw error
    }
}

/// Runs a libzmq call that returns `NULL` on failure, turning the failure into a thrown error.
///
/// - Parameter body: The C call.
/// - Returns: The non-nil pointer.
/// - Throws: `ZeroMQError` from `zmq_errno()` when the call returns `NULL`.
@inline(__always)
internal func nonNilOrZeroMQError<T>(_ body: () -> T?) throws(ZeroMQError) -> T {
    guard let value = body() else { throw ZeroMQError.current() }
    return value
}

/// An endpoint that this wrapper rejects before calling libzmq, with the reason in words.
///
/// libzmq reports such problems with a bare code (`ENAMETOOLONG` for an ipc path that does not fit
/// `sockaddr_un.sun_path`); this error says which endpoint, what is wrong and what the limit is.
public struct EndpointError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The endpoint as given, e.g. `ipc:///tmp/app/socket`.
    public let endpoint: String

    /// What is wrong, in words.
    public let reason: String

    /// Creates an endpoint error.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint as given.
    ///   - reason: What is wrong, in words.
    public init(endpoint: String, reason: String) {
        self.endpoint = endpoint
        self.reason = reason
    }

    /// `invalid endpoint "<endpoint>": <reason>`.
    public var description: String {
        "invalid endpoint \"\(endpoint)\": \(reason)"
    }

    /// The longest ipc path in bytes (UTF-8): the size of `sockaddr_un.sun_path` less its
    /// terminating NUL. 107 on Linux. An abstract-namespace path (`ipc://@name`) counts its `@`.
    public static let maximumIPCPathBytes: Int = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// Checks what libzmq would reject late or unclearly: a NUL byte anywhere (the C string would be
    /// cut short) and an ipc path longer than `maximumIPCPathBytes`.
    ///
    /// - Parameter endpoint: The endpoint passed to bind, connect, unbind or disconnect.
    /// - Throws: `EndpointError` naming the endpoint, the problem and the limit.
    internal static func validate(_ endpoint: String) throws(EndpointError) {
        if endpoint.utf8.contains(0) {
            throw EndpointError(endpoint: endpoint, reason: "contains a NUL byte")
        }
        let scheme = "ipc://"
        guard endpoint.hasPrefix(scheme) else { return }
        let path = endpoint.dropFirst(scheme.count)
        let length = path.utf8.count
        let limit = maximumIPCPathBytes
        if length > limit {
            throw EndpointError(
                endpoint: endpoint,
                reason: "ipc path \"\(path)\" is \(length) bytes; the limit is \(limit) bytes "
                    + "(sockaddr_un.sun_path holds \(limit + 1) bytes including the terminating NUL)"
            )
        }
    }
}

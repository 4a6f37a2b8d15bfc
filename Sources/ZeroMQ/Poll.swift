// SPDX-License-Identifier: Apache-2.0

internal import CZeroMQ

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// Readiness conditions for `poll(_:timeoutMilliseconds:)` (`ZMQ_POLLIN`, ...).
public struct PollEvents: OptionSet, Sendable, Hashable {
    /// The `ZMQ_POLL*` bits, as in `zmq_pollitem_t.events`.
    public let rawValue: Int16

    /// Wraps `ZMQ_POLL*` bits.
    ///
    /// - Parameter rawValue: One or more `ZMQ_POLL*` values.
    public init(rawValue: Int16) {
        self.rawValue = rawValue
    }

    /// `ZMQ_POLLIN`: a message can be received (socket) or data read (file descriptor).
    public static let readable = PollEvents(rawValue: Int16(ZMQ_POLLIN))
    /// `ZMQ_POLLOUT`: a message can be sent without blocking (or data written).
    public static let writable = PollEvents(rawValue: Int16(ZMQ_POLLOUT))
    /// `ZMQ_POLLERR`: an error condition on a file descriptor (never set for sockets).
    public static let error = PollEvents(rawValue: Int16(ZMQ_POLLERR))
    /// `ZMQ_POLLPRI`: urgent data on a file descriptor (never set for sockets).
    public static let priority = PollEvents(rawValue: Int16(ZMQ_POLLPRI))
}

/// One thing to wait on with `poll(_:timeoutMilliseconds:)`: a socket or a file descriptor (such
/// as the read end of a wake-up pipe), with the conditions of interest (`zmq_pollitem_t`).
///
/// An item holds its socket alive; the socket must stay open and be polled on its owner thread.
public struct PollItem {
    /// The socket, or `nil` for a file descriptor item.
    public let socket: Socket?

    /// The file descriptor, or -1 for a socket item.
    public let fd: Int32

    /// The conditions to wait for.
    public var events: PollEvents

    /// The conditions found by the last `poll`; empty before.
    public var returnedEvents: PollEvents = []

    private init(socket: Socket?, fd: Int32, events: PollEvents) {
        self.socket = socket
        self.fd = fd
        self.events = events
    }

    /// An item waiting on a socket.
    ///
    /// - Parameters:
    ///   - s: The socket; it must still be open when polled.
    ///   - events: Usually `.readable`, or `.writable`.
    /// - Returns: The item.
    public static func socket(_ s: Socket, events: PollEvents) -> PollItem {
        PollItem(socket: s, fd: -1, events: events)
    }

    /// An item waiting on a file descriptor (a pipe, a TCP socket not managed by libzmq, ...).
    ///
    /// - Parameters:
    ///   - fd: The descriptor; the caller keeps it open while polling.
    ///   - events: Usually `.readable`.
    /// - Returns: The item.
    public static func fileDescriptor(_ fd: Int32, events: PollEvents) -> PollItem {
        PollItem(socket: nil, fd: fd, events: events)
    }

    /// The C item, with the socket's handle.
    ///
    /// - Throws: `ZeroMQError.notSocket` if the socket was closed (libzmq would otherwise poll
    ///   `fd` instead).
    fileprivate func cItem() throws(ZeroMQError) -> zmq_pollitem_t {
        let handle = try socket?.openHandle()
        return zmq_pollitem_t(socket: handle, fd: fd, events: events.rawValue, revents: 0)
    }
}

/// Waits until at least one item is ready or the timeout passes (`zmq_poll`), and sets each
/// item's `returnedEvents`.
///
/// A signal (`EINTR`) does not cut the wait short: the call is retried with the time remaining,
/// measured on the monotonic clock, so it returns only when something is ready or the full timeout
/// has passed.
///
/// - Parameters:
///   - items: The sockets and descriptors; each `returnedEvents` is updated.
///   - timeoutMilliseconds: How long to wait; -1 (or any negative value) waits forever, 0 checks
///     and returns at once.
/// - Returns: The number of items with any `returnedEvents`; 0 when the timeout passed.
/// - Throws: `ZeroMQError`: `.notSocket` if an item's socket is closed; `.terminated` if a
///   socket's context was terminated; `.fault` for an invalid item.
/// - Complexity: O(n) in the number of items, plus the wait.
public func poll(_ items: inout [PollItem], timeoutMilliseconds: Int) throws -> Int {
    var cItems: [zmq_pollitem_t] = []
    cItems.reserveCapacity(items.count)
    for item in items {
        cItems.append(try item.cItem())
    }
    let deadline = MonotonicDeadline(timeoutMilliseconds: timeoutMilliseconds)
    let ready = try cItems.withUnsafeMutableBufferPointer { (buffer) throws(ZeroMQError) in
        try valueOrZeroMQError(retryOnInterrupt: true) {
            zmq_poll(buffer.baseAddress, Int32(buffer.count), deadline.remainingMilliseconds())
        }
    }
    for index in items.indices {
        items[index].returnedEvents = PollEvents(rawValue: cItems[index].revents)
    }
    return Int(ready)
}

/// A point on the monotonic clock (`CLOCK_MONOTONIC`), or never.
internal struct MonotonicDeadline {
    /// Nanoseconds on the monotonic clock; `nil` for no deadline.
    private let nanoseconds: UInt64?

    /// A deadline `timeoutMilliseconds` from now; negative means none.
    init(timeoutMilliseconds: Int) {
        guard timeoutMilliseconds >= 0 else {
            nanoseconds = nil
            return
        }
        let (span, overflow) = UInt64(timeoutMilliseconds).multipliedReportingOverflow(
            by: 1_000_000)
        let (end, overflowEnd) = Self.now().addingReportingOverflow(span)
        nanoseconds = overflow || overflowEnd ? nil : end
    }

    /// Milliseconds left, rounded up so a wait never ends early; 0 once passed; -1 for none.
    func remainingMilliseconds() -> Int {
        guard let nanoseconds else { return -1 }
        let now = Self.now()
        guard nanoseconds > now else { return 0 }
        let left = nanoseconds - now
        return Int((left + 999_999) / 1_000_000)
    }

    /// Now on the monotonic clock, in nanoseconds.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}

// SPDX-License-Identifier: Apache-2.0

internal import CZeroMQ

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// A libzmq context: the I/O threads and bookkeeping that sockets are created from (`zmq_ctx_new`).
///
/// Thread safety: a context may be used from any thread; libzmq's context is thread-safe and this
/// class guards its own state with a lock.
///
/// Lifetime: every `Socket` keeps its context alive. Call `terminate()` when done; it blocks until
/// all sockets are closed and, for each socket whose `ZMQ_LINGER` is not 0, until its unsent
/// messages are sent or the linger time runs out (the default linger, -1, waits forever). `deinit`
/// never blocks: if `terminate()` was not called it only calls `zmq_ctx_shutdown`, which leaves the
/// context's threads and memory allocated.
public final class Context: @unchecked Sendable {
    private enum State {
        case open
        case terminating
        case terminated
    }

    /// The `void *` from `zmq_ctx_new`; freed by `zmq_ctx_term`, never used after that.
    private let handle: UnsafeMutableRawPointer

    private let lock = PthreadLock()

    /// Guarded by `lock`.
    private var state = State.open

    /// Creates a context (`zmq_ctx_new`).
    ///
    /// - Throws: `ZeroMQError`, e.g. `.tooManyOpenFiles` when the process is out of descriptors.
    public init() throws {
        handle = try nonNilOrZeroMQError { zmq_ctx_new() }
    }

    deinit {
        // Never zmq_ctx_term here: it can block for the linger period of unsent messages.
        if state == .open {
            zmq_ctx_shutdown(handle)
        }
    }

    /// Whether `terminate()` has been called.
    public var isTerminated: Bool {
        lock.withLock { state != .open }
    }

    /// Terminates the context and frees it (`zmq_ctx_term`).
    ///
    /// Blocking operations on this context's sockets in other threads fail with
    /// `ZeroMQError.terminated`; their owners must then close them. This call blocks until every
    /// socket is closed and every socket's unsent messages are sent or its `ZMQ_LINGER` period has
    /// run out. `EINTR` is retried.
    ///
    /// Idempotent: only the first call terminates; later or concurrent calls return at once. After
    /// this call, creating a socket on this context throws `ZeroMQError.terminated`.
    public func terminate() {
        let first = lock.withLock {
            guard state == .open else { return false }
            state = .terminating
            return true
        }
        guard first else { return }
        // zmq_ctx_term fails only with EINTR (retried) or EFAULT (not possible with a live handle).
        _ = try? valueOrZeroMQError { zmq_ctx_term(handle) }
        lock.withLock { state = .terminated }
    }

    /// Shuts the context down without freeing it (`zmq_ctx_shutdown`); never blocks.
    ///
    /// Blocking operations on this context's sockets fail with `ZeroMQError.terminated` and new
    /// sockets cannot be created. `terminate()` must still be called to free the context. Does
    /// nothing once `terminate()` has been called.
    public func shutdown() {
        lock.withLock {
            guard state == .open else { return }
            zmq_ctx_shutdown(handle)
        }
    }

    /// Creates a socket, closes it when `body` returns or throws, and returns `body`'s result.
    ///
    /// - Parameters:
    ///   - type: The socket type.
    ///   - body: Uses the socket; runs on the calling thread, which owns the socket throughout.
    /// - Returns: What `body` returns.
    /// - Throws: `ZeroMQError` if the socket cannot be created, or what `body` throws.
    public func withSocket<Result>(
        _ type: SocketType,
        _ body: (Socket) throws -> Result
    ) throws -> Result {
        let socket = try Socket(context: self, type: type)
        defer { socket.close() }
        return try body(socket)
    }

    /// Creates a raw socket handle (`zmq_socket`) unless the context is terminating.
    ///
    /// - Parameter type: The socket type.
    /// - Returns: The socket's `void *`.
    /// - Throws: `ZeroMQError.terminated` after `terminate()`, or libzmq's error.
    internal func makeSocketHandle(_ type: SocketType) throws(ZeroMQError) -> UnsafeMutableRawPointer {
        try lock.withLock { () throws(ZeroMQError) -> UnsafeMutableRawPointer in
            // Under the lock, so that terminate() cannot free the context during zmq_socket.
            guard state == .open else { throw ZeroMQError.terminated }
            return try nonNilOrZeroMQError { zmq_socket(handle, type.rawValue) }
        }
    }
}

/// A plain pthread mutex, so the module needs neither Foundation nor a recent Darwin.
internal final class PthreadLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the mutex held.
    func withLock<Result, Failure: Error>(
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

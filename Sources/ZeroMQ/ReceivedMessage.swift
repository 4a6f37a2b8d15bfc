// SPDX-License-Identifier: Apache-2.0
internal import CZeroMQ

/// The frames of one received message, lent by `Socket.withReceivedMessage(dontWait:_:)`: each
/// frame's bytes where libzmq holds them (`zmq_msg_data`, `zmq_msg_size`), not copied.
///
/// Valid only inside the closure it is passed to: the socket closes the messages (`zmq_msg_close`)
/// when the closure returns, so neither the value nor any buffer taken from it may be kept. Copy
/// what must outlive the closure (`Array(message[1])`).
public struct ReceivedMessage: RandomAccessCollection {
    /// Each frame's bytes, in order; on a ROUTER the first is the sender's routing id.
    public typealias Element = UnsafeRawBufferPointer

    /// The socket's reusable messages; the first `count` hold this message's frames.
    private let messages: UnsafeMutablePointer<zmq_msg_t>

    /// The number of frames, at least one.
    public let count: Int

    fileprivate init(messages: UnsafeMutablePointer<zmq_msg_t>, count: Int) {
        self.messages = messages
        self.count = count
    }

    /// 0.
    public var startIndex: Int { 0 }
    /// `count`.
    public var endIndex: Int { count }

    /// The bytes of frame `index` (0 ..< `count`); empty for an empty frame.
    public subscript(index: Int) -> UnsafeRawBufferPointer {
        precondition(index >= 0 && index < count, "frame index \(index) out of 0..<\(count)")
        let message = messages + index
        let size = zmq_msg_size(message)
        guard size > 0, let data = zmq_msg_data(message) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: data, count: size)
    }
}

/// The `zmq_msg_t`s a socket lends out, reused from one receive to the next.
internal final class MessageStorage {
    /// `capacity` messages; those in use are initialised (`zmq_msg_init`), the rest are not.
    private(set) var messages: UnsafeMutablePointer<zmq_msg_t>
    private(set) var capacity = 4
    /// Whether a closure holds the messages now (a nested receive would overwrite them).
    var lending = false

    init() {
        messages = UnsafeMutablePointer<zmq_msg_t>.allocate(capacity: capacity)
    }

    deinit {
        messages.deallocate()
    }

    /// Makes room for one more message after the first `live` ones, which stay valid: a
    /// `zmq_msg_t` must not be copied byte for byte, so each is moved with `zmq_msg_move`.
    func grow(keeping live: Int) {
        let larger = UnsafeMutablePointer<zmq_msg_t>.allocate(capacity: capacity * 2)
        for index in 0..<live {
            zmq_msg_init(larger + index)
            zmq_msg_move(larger + index, messages + index)
            zmq_msg_close(messages + index)
        }
        messages.deallocate()
        messages = larger
        capacity *= 2
    }
}

extension Socket {
    /// Receives all frames of one message and lends them to `body` without copying them: no
    /// allocation per frame or per message once the socket has received a message with as many
    /// frames (the `zmq_msg_t`s are the socket's, reused). For a loop that reads each message
    /// and is done with it (an echo, a decoder that parses straight from the bytes), this is the
    /// cheaper path; `receive(dontWait:)` copies every frame into a new `[UInt8]`.
    ///
    /// Frames of any length arrive whole, as with `receive(dontWait:)`; `EINTR` is retried.
    ///
    /// - Parameters:
    ///   - dontWait: When `true` (`ZMQ_DONTWAIT`), throw `ZeroMQError.again` if no message is
    ///     queued instead of blocking.
    ///   - body: Reads the frames; runs on the calling thread. It may send on this socket (for
    ///     instance `send(_:dontWait:)` with the message itself, an echo) but must not receive on
    ///     it, nor keep the message or its buffers after it returns.
    /// - Returns: What `body` returns.
    /// - Throws: `ZeroMQError`: `.again` when nothing is queued (with `dontWait`, or after
    ///   `ZMQ_RCVTIMEO`); `.finiteStateMachine` when called from inside another
    ///   `withReceivedMessage` body on the same socket; `.terminated`; `.notSocket`. Or what `body`
    ///   throws.
    /// - Complexity: O(number of frames); the bytes are not touched.
    public func withReceivedMessage<Result>(
        dontWait: Bool = false,
        _ body: (ReceivedMessage) throws -> Result
    ) throws -> Result {
        let handle = try openHandle()
        let storage = lendingStorage
        guard !storage.lending else { throw ZeroMQError.finiteStateMachine }
        storage.lending = true
        var count = 0
        defer {
            for index in 0..<count { zmq_msg_close(storage.messages + index) }
            storage.lending = false
        }
        var flags: Int32 = dontWait ? ZMQ_DONTWAIT : 0
        var more = true
        while more {
            if count == storage.capacity { storage.grow(keeping: count) }
            let message = storage.messages + count
            zmq_msg_init(message)
            count += 1  // closed by the defer from here on, whatever happens
            try valueOrZeroMQError { zmq_msg_recv(message, handle, flags) }
            more = zmq_msg_more(message) != 0
            // Later frames of a message are already queued once the first arrives.
            flags = 0
        }
        return try body(ReceivedMessage(messages: storage.messages, count: count))
    }

    /// Sends one frame from borrowed bytes (`zmq_send`, which copies them into a libzmq message).
    ///
    /// With `more` the frame is the start of a multipart message: send the next frame with
    /// `more: false` to end it. libzmq delivers a multipart message atomically. `EINTR` is retried.
    ///
    /// - Parameters:
    ///   - bytes: The frame's bytes; may be empty.
    ///   - more: `true` (`ZMQ_SNDMORE`) when more frames of this message follow.
    ///   - dontWait: When `true` (`ZMQ_DONTWAIT`), throw `ZeroMQError.again` instead of blocking.
    /// - Throws: `ZeroMQError`, as for `send(_:dontWait:)`.
    /// - Complexity: O(bytes.count).
    public func send(bytes: UnsafeRawBufferPointer, more: Bool = false, dontWait: Bool = false) throws {
        let handle = try openHandle()
        var flags: Int32 = dontWait ? ZMQ_DONTWAIT : 0
        if more { flags |= ZMQ_SNDMORE }
        try valueOrZeroMQError { zmq_send(handle, bytes.baseAddress, bytes.count, flags) }
    }

    /// Sends the frames of a received message as one multipart message (an echo, or a forward to
    /// another socket), copying each frame once (`zmq_send`).
    ///
    /// - Parameters:
    ///   - message: The frames, as lent by `withReceivedMessage(dontWait:_:)`.
    ///   - dontWait: When `true` (`ZMQ_DONTWAIT`), throw `ZeroMQError.again` instead of blocking.
    /// - Throws: `ZeroMQError`, as for `send(_:dontWait:)`.
    public func send(_ message: ReceivedMessage, dontWait: Bool = false) throws {
        for index in message.indices {
            try send(bytes: message[index], more: index != message.count - 1, dontWait: dontWait)
        }
    }
}

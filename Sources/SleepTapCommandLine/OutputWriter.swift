// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes whole lines to a descriptor (stdout by default) with write(2): the one write loop of
/// every executable's output, `phone`'s and `watch`'s events and the tools' reports alike.
///
/// A short write is continued and EINTR retried (write(2)); EAGAIN, from a stdout another
/// process left non-blocking (O_NONBLOCK is shared by every descriptor of the open file), waits
/// in poll(2) until the descriptor can be written. EPIPE, when the reader of a pipe is gone
/// (`tool | head`; SIGPIPE must be ignored), is told apart from the other errors, which lose the
/// output (pipe(7)).
package enum OutputWriter {
    /// How a write ended.
    package enum Outcome: Equatable, Sendable {
        /// Every byte was written.
        case written
        /// Nobody reads any more (EPIPE).
        case readerGone
        /// write(2) failed with this errno (`ENOSPC` for `> /dev/full`, `EIO`, `EBADF`).
        case failed(errno: Int32)
    }

    /// Writes `text` and a newline.
    /// - Parameters:
    ///   - text: the line, without its newline.
    ///   - descriptor: where it goes (1, stdout, unless told).
    /// - Returns: how the write ended.
    package static func writeLine(_ text: String, to descriptor: Int32 = 1) -> Outcome {
        write(Array((text + "\n").utf8), to: descriptor)
    }

    /// Writes `bytes` in as few write(2) calls as the descriptor takes (one, unless a short write
    /// or a signal splits it), so lines from one process never interleave.
    /// - Parameters:
    ///   - bytes: what to write.
    ///   - descriptor: where it goes.
    /// - Returns: how the write ended.
    package static func write(_ bytes: [UInt8], to descriptor: Int32) -> Outcome {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress.map { $0 + written }, bytes.count - written)
            }
            if result >= 0 {
                written += result
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK:
                var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                guard poll(&ready, 1, -1) >= 0 || errno == EINTR else { return .failed(errno: errno) }
            case EPIPE: return .readerGone
            case let code: return .failed(errno: code)
            }
        }
        return .written
    }
}

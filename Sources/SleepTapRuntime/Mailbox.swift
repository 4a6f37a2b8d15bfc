// SPDX-License-Identifier: Apache-2.0

import Foundation
package import SleepTapCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Input from other threads (stdin lines, signals) to the loop thread that owns the sockets.
package enum LoopInput: Sendable, Equatable {
    /// One line typed on stdin, without its newline.
    case line(String)
    /// stdin reached end of file and is not a terminal (`< /dev/null`, a closed pipe): only the
    /// command reader ends; the process keeps running.
    case endOfInput
    /// Stop cleanly (save, close the sockets, exit 0), for `cause`.
    case stop(StopCause)
}

/// A thread-safe queue plus a self-pipe: `post` appends and writes one byte; the loop polls the
/// pipe's read end (`zmq_poll` accepts plain file descriptors) so it wakes at once without
/// busy-polling, and only the loop thread ever touches a socket (ZeroMQ sockets are not thread
/// safe: zmq(7) and zmq_socket(3) man pages; zguide chapter 2, "Multithreading with ZeroMQ").
package final class Mailbox: Sendable {
    private let queue = Mutex<[LoopInput]>([])
    private let weatherResults = Mutex<[WeatherOutcome]>([])
    /// Read end of the wake-up pipe; poll it for readability.
    package let readFD: Int32
    private let writeFD: Int32

    /// - Throws: `FileError` if the pipe cannot be created.
    package init() throws(FileError) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            let failure = Errno.current
            throw FileError(path: "pipe", reason: failure.message, errno: failure)
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readFD = fds[0]
        writeFD = fds[1]
    }

    deinit {
        close(readFD)
        close(writeFD)
    }

    /// Appends `input` and wakes the loop. Safe from any thread.
    package func post(_ input: LoopInput) {
        queue.withLock { $0.append(input) }
        var byte: UInt8 = 1
        _ = write(writeFD, &byte, 1)  // EAGAIN (pipe full) is fine: the loop is awake anyway.
    }

    /// Appends the result of a weather fetch done off the loop thread and wakes the loop. Safe
    /// from any thread.
    func post(weather outcome: WeatherOutcome) {
        weatherResults.withLock { $0.append(outcome) }
        var byte: UInt8 = 1
        _ = write(writeFD, &byte, 1)
    }

    /// Takes the weather results posted so far. Loop thread only (after `drain()`).
    func drainWeather() -> [WeatherOutcome] {
        weatherResults.withLock { results in
            defer { results.removeAll() }
            return results
        }
    }

    /// Takes everything posted so far and empties the pipe. Loop thread only.
    package func drain() -> [LoopInput] {
        var sink = [UInt8](repeating: 0, count: 256)
        while read(readFD, &sink, sink.count) > 0 {}
        return queue.withLock { items in
            defer { items.removeAll() }
            return items
        }
    }
}

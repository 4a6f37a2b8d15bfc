import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Input from other threads (stdin lines, signals) to the loop thread that owns the sockets.
public enum LoopInput: Sendable, Equatable {
    /// One line typed on stdin, without its newline.
    case line(String)
    /// stdin reached end of file.
    case endOfInput
    /// SIGINT or SIGTERM (the signal number).
    case stop(Int32)
}

/// A thread-safe queue plus a self-pipe: `post` appends and writes one byte; the loop polls the
/// pipe's read end (`zmq_poll` accepts plain file descriptors) so it wakes at once without
/// busy-polling, and only the loop thread ever touches a socket (zeromq-facts.md pitfall 4).
public final class Mailbox: Sendable {
    private let queue = Mutex<[LoopInput]>([])
    /// Read end of the wake-up pipe; poll it for readability.
    public let readFD: Int32
    private let writeFD: Int32

    /// - Throws: `FileError` if the pipe cannot be created.
    public init() throws(FileError) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            throw FileError(path: "pipe", reason: String(cString: strerror(errno)))
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
    public func post(_ input: LoopInput) {
        queue.withLock { $0.append(input) }
        var byte: UInt8 = 1
        _ = write(writeFD, &byte, 1)  // EAGAIN (pipe full) is fine: the loop is awake anyway.
    }

    /// Takes everything posted so far and empties the pipe. Loop thread only.
    public func drain() -> [LoopInput] {
        var sink = [UInt8](repeating: 0, count: 256)
        while read(readFD, &sink, sink.count) > 0 {}
        return queue.withLock { items in
            defer { items.removeAll() }
            return items
        }
    }
}

/// Reads stdin lines on a background thread and posts them to a mailbox.
public enum StandardInputReader {
    /// Starts the reader thread. It ends at end of file, after posting `.endOfInput`.
    public static func start(posting mailbox: Mailbox) {
        let thread = Thread {
            while let line = readLine(strippingNewline: true) {
                mailbox.post(.line(line))
            }
            mailbox.post(.endOfInput)
        }
        thread.name = "stdin"
        thread.start()
    }
}

/// Turns SIGINT and SIGTERM into `.stop` inputs (Dispatch signal sources; the default actions
/// are disabled so the loop can close sockets and exit 0). SIGPIPE is ignored.
/// `@unchecked`: the sources are set once in `init` and only cancelled after.
public final class SignalTrap: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    public init(posting mailbox: Mailbox) {
        signal(SIGPIPE, SIG_IGN)
        var made: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            // Handled even when ignored on entry (a `cmd &` in a script inherits SIGINT ignored):
            // the documented contract is a clean stop on SIGINT and SIGTERM.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { mailbox.post(.stop(number)) }
            source.resume()
            made.append(source)
        }
        sources = made
    }

    /// Stops listening.
    public func cancel() {
        for source in sources { source.cancel() }
    }
}

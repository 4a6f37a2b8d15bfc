import Foundation
public import SleepTapCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Input from other threads (stdin lines, signals) to the loop thread that owns the sockets.
public enum LoopInput: Sendable, Equatable {
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
public final class Mailbox: Sendable {
    private let queue = Mutex<[LoopInput]>([])
    private let weatherResults = Mutex<[WeatherOutcome]>([])
    /// Read end of the wake-up pipe; poll it for readability.
    public let readFD: Int32
    private let writeFD: Int32

    /// - Throws: `FileError` if the pipe cannot be created.
    public init() throws(FileError) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            let code = errno
            throw FileError(path: "pipe", reason: String(cString: strerror(code)), errno: code)
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
    /// Starts the reader thread. It ends at end of file, after posting what end of file means
    /// (`endOfFile(onTerminal:)`, with isatty(3) of stdin).
    public static func start(posting mailbox: Mailbox) {
        let onTerminal = isatty(STDIN_FILENO) == 1
        let thread = Thread {
            while let line = readLine(strippingNewline: true) {
                mailbox.post(.line(line))
            }
            mailbox.post(endOfFile(onTerminal: onTerminal))
        }
        thread.name = "stdin"
        thread.start()
    }

    /// What end of file on stdin means. On a terminal the user typed Ctrl-D (the terminal's EOF
    /// character, termios(3)), which stops the process like `quit`. Anywhere else (`< /dev/null`,
    /// a pipe whose writer is gone, CI) there is nothing more to read, but the process has its
    /// own work: only the command reader ends.
    public static func endOfFile(onTerminal: Bool) -> LoopInput {
        onTerminal ? .stop(.endOfTerminalInput) : .endOfInput
    }
}

/// Turns SIGINT, SIGTERM and SIGHUP (the terminal went away, or a supervisor's stop) into `.stop`
/// inputs (Dispatch signal sources; the default actions are disabled so the loop can close
/// sockets and exit 0). SIGPIPE is ignored: a closed stdout shows as EPIPE (`EventOutput`).
/// `@unchecked`: the sources are set once in `init` and only cancelled after.
public final class SignalTrap: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    public init(posting mailbox: Mailbox) {
        signal(SIGPIPE, SIG_IGN)
        var made: [any DispatchSourceSignal] = []
        // SIGHUP ignored on entry stays ignored: that is how nohup(1) asks a process to outlive
        // its terminal.
        var onEntry = sigaction()
        sigaction(SIGHUP, nil, &onEntry)
        let hangUpIgnored =
            unsafeBitCast(onEntry.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
        let numbers = hangUpIgnored ? [SIGINT, SIGTERM] : [SIGINT, SIGTERM, SIGHUP]
        for number in numbers {
            // SIGINT and SIGTERM are handled even when ignored on entry (a `cmd &` in a script
            // inherits SIGINT ignored): the documented contract is a clean stop on both.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { mailbox.post(.stop(.signal(number))) }
            source.resume()
            made.append(source)
        }
        sources = made
        // libdispatch installs its handler asynchronously (a few ms); until then these signals
        // are ignored, and one sent right after start-up (such as the parent-death signal of
        // `ParentProcess`) would be lost. Wait for the handlers, at most 1 s.
        let deadline = Date().addingTimeInterval(1)
        while !numbers.allSatisfy(Self.hasHandler) && Date() < deadline {
            usleep(200)
        }
    }

    /// Whether `number` has a handler installed (neither the default action nor ignored).
    private static func hasHandler(_ number: Int32) -> Bool {
        var action = sigaction()
        guard sigaction(number, nil, &action) == 0 else { return false }
        let handler = unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self)
        return handler != unsafeBitCast(SIG_DFL, to: Int.self) && handler != unsafeBitCast(SIG_IGN, to: Int.self)
    }

    /// Stops listening.
    public func cancel() {
        for source in sources { source.cancel() }
    }
}

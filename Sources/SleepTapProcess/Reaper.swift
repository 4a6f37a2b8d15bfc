// SPDX-License-Identifier: Apache-2.0

package import Foundation
import SleepTapCommandLine
package import SleepTapCore

#if canImport(Glibc)
    import Glibc
#endif

/// Every spawned child and temp dir of this process, so that every way out of a tool ends the
/// children (by pid) and removes the dirs: SIGINT, SIGTERM, SIGHUP (`installSignalHandlers`), a
/// closed stdout (`writeLine`), and the normal and error exits (`finish`). A SIGKILL cannot be
/// caught: then the children end by their parent-death signal (`ChildProcess`) and the temp dir
/// stays.
///
/// Exactly one thread ends the process: the first to claim the exit; any later one waits.
package final class Reaper: @unchecked Sendable {
    /// The one reaper of this process.
    package static let shared = Reaper()

    private struct Tracked {
        weak var child: ChildProcess?
    }

    private let lock = NSLock()
    private var children: [Tracked] = []
    private var directories: Set<String> = []
    /// Dirs kept on purpose (`--keep`), named on stderr when a signal ends the process.
    private var kept: [String] = []
    private var position: String?
    private var exiting = false
    private var handlersInstalled = false
    private var signalSources: [any DispatchSourceSignal] = []

    private init() {}

    /// Registers a child (`ChildProcess` does this); one started after the exit began is killed
    /// at once. Held weakly: a child whose output is still open keeps its `ChildProcess` alive.
    func track(_ child: ChildProcess) {
        lock.lock()
        let late = exiting
        if !late {
            children.removeAll { $0.child == nil }
            children.append(Tracked(child: child))
        }
        lock.unlock()
        if late { kill(child.pid, SIGKILL) }
    }

    /// Registers a temp dir to remove on exit.
    package func track(directory: String) {
        lock.lock()
        directories.insert(directory)
        lock.unlock()
    }

    /// Forgets a dir (its owner removed it, or keeps it on purpose).
    package func forget(directory: String) {
        lock.lock()
        directories.remove(directory)
        lock.unlock()
    }

    /// Notes a dir kept on purpose (`sleeptap-demo --keep`): when a signal ends the process, the
    /// message on stderr says where it is, as the normal end does on stdout.
    package func noteKept(directory: String) {
        lock.lock()
        kept.append(directory)
        lock.unlock()
    }

    /// True once a thread has begun ending the process (starting new work is pointless then).
    package var isExiting: Bool {
        lock.lock()
        defer { lock.unlock() }
        return exiting
    }

    /// What the tool is doing, for the message printed when a signal ends it.
    package func setPosition(_ text: String) {
        lock.lock()
        position = text
        lock.unlock()
    }

    /// Claims the exit for the calling thread; false when another thread already did.
    package func claimExit() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if exiting { return false }
        exiting = true
        return true
    }

    /// Ends every child still running, waits for each, removes the dirs. Idempotent.
    ///
    /// SIGTERM first (with SIGCONT, so a stopped child can act on it): phone and watch then save
    /// and close cleanly. Whatever still runs after `grace` seconds gets SIGKILL.
    package func cleanUp(grace: TimeInterval = 3) {
        lock.lock()
        let all = children.compactMap(\.child)
        let dirs = directories
        children = []
        directories = []
        lock.unlock()
        let running = all.filter(\.isRunning)
        for child in running {
            kill(child.pid, SIGTERM)
            kill(child.pid, SIGCONT)
        }
        let deadline = Date().addingTimeInterval(grace)
        for child in running where !child.waitForExit(timeout: max(0, deadline.timeIntervalSinceNow)) {
            kill(child.pid, SIGKILL)
        }
        for child in running { _ = child.waitForExit(timeout: 5) }
        for dir in dirs { try? FileManager.default.removeItem(atPath: dir) }
    }

    /// Ends the process with `status` after the clean-up and then `report`, unless another thread
    /// is already ending it (then waits for that).
    package func finish(_ status: ExitCode, report: () -> Void = {}) -> Never {
        guard claimExit() else {
            while true { pause() }
        }
        cleanUp()
        report()
        exit(status.rawValue)
    }

    /// Turns SIGINT, SIGTERM and SIGHUP into a clean-up and exit 128 + signal, with a message on
    /// stderr naming `program` and the position. Idempotent.
    ///
    /// Dispatch signal sources (libdispatch installs its own handler), and no SIG_IGN: children
    /// inherit ignored signals, and a phone or watch spawned with SIGHUP ignored would keep it so
    /// (nohup). The handler is installed asynchronously: this waits for it (at most 2 s), so that
    /// a signal right after this call is not lost.
    package func installSignalHandlers(program: String) {
        let numbers = [SIGINT, SIGTERM, SIGHUP]
        lock.lock()
        if handlersInstalled {
            lock.unlock()
            return
        }
        handlersInstalled = true
        signalSources = numbers.map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in interrupted(by: number, program: program) }
            source.resume()
            return source
        }
        lock.unlock()
        let deadline = Date().addingTimeInterval(2)
        while !numbers.allSatisfy(Self.hasHandler) && Date() < deadline {
            usleep(1_000)
        }
    }

    private func interrupted(by signal: Int32, program: String) {
        guard claimExit() else { return }  // another thread is already ending the process
        lock.lock()
        let current = position
        let keptDirectories = kept
        lock.unlock()
        let name = String(cString: strsignal(signal))
        writeError("\(program): \(name) (signal \(signal))\(current.map { " during \($0)" } ?? ""); cleaning up")
        cleanUp()
        for directory in keptDirectories { writeError("\(program): state and sockets kept in \(directory)") }
        exit(128 + signal)
    }

    /// Whether `number` has a handler installed (neither the default action nor ignored).
    package static func hasHandler(_ number: Int32) -> Bool {
        var action = sigaction()
        guard sigaction(number, nil, &action) == 0 else { return false }
        let handler = unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self)
        return handler != unsafeBitCast(SIG_DFL, to: Int.self) && handler != unsafeBitCast(SIG_IGN, to: Int.self)
    }

    /// Writes `line` and a newline to stdout at once with write(2). When nobody reads stdout any
    /// more (EPIPE: the reader of `tool | head` exited; SIGPIPE must be ignored) the tool has no
    /// one to talk to: it cleans up and exits 0. Any other write error: it cleans up, says why on
    /// stderr and exits 74.
    package func writeLine(_ line: String) {
        switch OutputWriter.writeLine(line) {
        case .written: break
        case .readerGone:
            if isExiting { return }  // a line of the final report: the exit is under way
            finish(.ok)
        case .failed(let code):
            // Any other error (`> /dev/full`, a full disk) loses the output just as surely:
            // say why on stderr and end with 74 (EX_IOERR), never go on in silence.
            if isExiting { return }
            finish(.ioError) { writeError("\(Self.program): cannot write to stdout: \(Errno(code))") }
        }
    }

    /// This tool's name, for messages (the last component of argv[0]).
    static var program: String {
        URL(fileURLWithPath: CommandLine.arguments.first ?? "sleeptap").lastPathComponent
    }

    /// Checks descriptors 0, 1 and 2 before anything opens a file: a closed one would be reused by
    /// the next open(2), pipe(2) or socket(2) (the lowest free descriptor, open(2)), and the output
    /// would go into a child's pipe or a temp file. A closed stdin or stderr is opened on
    /// /dev/null; a closed stdout ends the tool with 74 (EX_IOERR) and a message on stderr.
    package static func requireStandardStreams() {
        var stdoutClosed = false
        for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] {
            guard fcntl(descriptor, F_GETFD) == -1, errno == EBADF else { continue }
            if descriptor == STDOUT_FILENO { stdoutClosed = true }
            let opened = open("/dev/null", descriptor == STDIN_FILENO ? O_RDONLY : O_WRONLY)
            if opened >= 0 && opened != descriptor {
                dup2(opened, descriptor)
                close(opened)
            }
        }
        guard !stdoutClosed else {
            shared.writeError("\(program): stdout (file descriptor 1) is closed: the output has nowhere to go")
            exit(ExitCode.ioError.rawValue)
        }
    }

    /// Writes `line` and a newline to stderr (errors there are ignored).
    package func writeError(_ line: String) {
        try? FileHandle.standardError.write(contentsOf: Data((line + "\n").utf8))
    }
}

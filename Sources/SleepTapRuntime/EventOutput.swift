// SPDX-License-Identifier: Apache-2.0

package import Foundation
import SleepTapCommandLine
package import SleepTapCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Writes events as JSON Lines to a file descriptor (stdout by default), one `write(2)` per line
/// so lines from one process never interleave. Only the loop thread writes.
///
/// A closed output ends the process cleanly: when the reader of a pipe is gone (`phone | head -2`),
/// write(2) fails with EPIPE (SIGPIPE is ignored, `SignalTrap`), and the loop also sees the pipe's
/// error condition in poll(2) while idle (`pollableDescriptor`). Either way the output is marked
/// closed, later lines are dropped, and the `whenClosed` action runs once (it posts a stop).
///
/// Any other write error (`> /dev/full`: ENOSPC, a full disk, EIO) loses the events just as
/// surely: it is said once on stderr, the output is marked closed the same way, and `failure`
/// keeps the cause, so the process stops with exit 74 (`ExitCode.ioError`) instead of going on
/// in silence.
package final class EventOutput: @unchecked Sendable {
    private let handle: FileHandle
    private let clock: any SleepTapCore.Clock
    private let process: EventSource
    /// Whether the output is closed, and the action to run when it is found so. The action is
    /// boxed in a class: a closure kept directly in a `Mutex`'s generic value is re-abstracted
    /// (wrapped in one more thunk) by every `withLock` of an unoptimised build, so each emitted
    /// event grew a chain of nested closure contexts whose release at exit overflowed the stack.
    private let closure = Mutex<(closed: Bool, action: CloseAction?)>((false, nil))
    private let writeFailure = Mutex<String?>(nil)

    /// - Parameters:
    ///   - handle: where lines go (stdout).
    ///   - clock: gives each event's `time` (virtual now).
    ///   - process: the process writing the lines (each line's `source`, but for the simulated
    ///     OS's `os.*` events).
    package init(handle: FileHandle = .standardOutput, clock: any SleepTapCore.Clock, process: EventSource) {
        self.handle = handle
        self.clock = clock
        self.process = process
    }

    /// Writes `event` stamped with `time`, or virtual now when nil. Dropped once the output is closed.
    package func emit(_ event: Event, at time: Date? = nil) {
        guard !isClosed else { return }
        let line = Array((event.jsonLine(time: time ?? clock.now, process: process) + "\n").utf8)
        switch OutputWriter.write(line, to: handle.fileDescriptor) {
        case .written: break
        case .readerGone: noteClosed()  // nobody reads any more
        case .failed(let code):
            // The events are lost: say why.
            noteFailed(Errno(code).message)
            noteClosed()
        }
    }

    /// Why a write to the output failed (other than EPIPE), e.g. `No space left on device`; nil
    /// while every write succeeded or the reader merely went away.
    package var failure: String? { writeFailure.withLock { $0 } }

    /// Records the first write failure and says it on stderr.
    private func noteFailed(_ reason: String) {
        let first = writeFailure.withLock { failure -> Bool in
            guard failure == nil else { return false }
            failure = reason
            return true
        }
        if first { diagnose(process.rawValue, "cannot write events to stdout: \(reason); stopping") }
    }

    /// Whether the output was found closed.
    package var isClosed: Bool { closure.withLock { $0.closed } }

    /// Runs `action` once when the output is found closed (at once if it already is).
    package func whenClosed(_ action: @escaping @Sendable () -> Void) {
        let runNow = closure.withLock { state in
            if state.closed { return true }
            state.action = CloseAction(action)
            return false
        }
        if runNow { action() }
    }

    /// Marks the output closed and runs the `whenClosed` action, the first time only.
    func noteClosed() {
        let action = closure.withLock { state -> CloseAction? in
            if state.closed { return nil }
            state.closed = true
            defer { state.action = nil }
            return state.action
        }
        action?.run()
    }

    /// The descriptor to poll for the reader's going away (POLLERR on a pipe without a reader,
    /// pipe(7); POLLHUP on a socket whose peer closed): the output when it is a pipe or a socket,
    /// nil for a terminal or a file, where no reader can go away.
    var pollableDescriptor: Int32? {
        var status = stat()
        guard fstat(handle.fileDescriptor, &status) == 0 else { return nil }
        let type = status.st_mode & S_IFMT
        return type == S_IFIFO || type == S_IFSOCK ? handle.fileDescriptor : nil
    }
}

/// The name this process was started as (the last path component of `argv[0]`: `sleeptap-watch`
/// when installed under that name), or `fallback` when there is none; for the hints that name
/// a command to run (`see NAME --help`).
package func invokedName(_ fallback: String) -> String {
    guard let first = CommandLine.arguments.first, !first.isEmpty else { return fallback }
    let name = (first as NSString).lastPathComponent
    return name.isEmpty ? fallback : name
}

/// The `whenClosed` action, in a box that a `Mutex` holds by reference (see `EventOutput.closure`).
private final class CloseAction: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

/// Prints a diagnostic line on stderr, prefixed with the program name.
package func diagnose(_ program: String, _ message: String) {
    let line = "\(program): \(message)\n"
    try? FileHandle.standardError.write(contentsOf: Data(line.utf8))
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCommandLine
package import SleepTapCore

#if canImport(Glibc)
    import Glibc
#endif

/// The standard descriptors of phone and watch: stdout carries their whole output, so a stdout
/// that is closed or cannot be written is an error (exit 74, `ExitCode.ioError`, with a message
/// on stderr), never silence.
package enum StandardStreams {
    /// Checks descriptors 0, 1 and 2 before anything else opens a file. A closed one would be
    /// reused by the next open(2), pipe(2) or socket(2), which returns the lowest free descriptor
    /// (open(2)): events written into the mailbox's pipe, commands read from it, messages written
    /// into the state dir's lock. So each closed one is first opened on /dev/null: a closed stdin
    /// then reads as end of file (`< /dev/null`), a closed stderr loses only the messages.
    /// - Returns: nil when stdout is open; otherwise the message to print (the caller exits 74).
    package static func secure() -> String? {
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
        return stdoutClosed ? "stdout (file descriptor 1) is closed: the events have nowhere to go" : nil
    }

    /// Writes `text` and a newline to stdout (`OutputWriter`).
    /// - Returns: nil when every byte was written; else why not (strerror(3) of the errno),
    ///   e.g. `No space left on device` for `> /dev/full`, `Broken pipe` when the reader is gone.
    package static func writeLine(_ text: String) -> String? {
        switch OutputWriter.writeLine(text) {
        case .written: nil
        case .readerGone: Errno(EPIPE).message
        case .failed(let code): Errno(code).message
        }
    }

    /// Prints `text` on stdout (usage, version, a tool's report) and tells how the process ends.
    /// - Returns: `.ok`, or `.ioError` after a message on stderr naming `program` and the cause.
    package static func print(_ text: String, program: String) -> ExitCode {
        guard let problem = writeLine(text) else { return .ok }
        diagnose(program, "cannot write to stdout: \(problem)")
        return .ioError
    }
}

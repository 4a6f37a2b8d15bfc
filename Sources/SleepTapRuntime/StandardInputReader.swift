// SPDX-License-Identifier: Apache-2.0

import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reads stdin lines on a background thread and posts them to a mailbox.
package enum StandardInputReader {
    /// Starts the reader thread. It ends at end of file, after posting what end of file means
    /// (`endOfFile(onTerminal:)`, with isatty(3) of stdin).
    package static func start(posting mailbox: Mailbox) {
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
    package static func endOfFile(onTerminal: Bool) -> LoopInput {
        onTerminal ? .stop(.endOfTerminalInput) : .endOfInput
    }
}

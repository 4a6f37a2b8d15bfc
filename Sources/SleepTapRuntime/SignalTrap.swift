// SPDX-License-Identifier: Apache-2.0

import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Turns SIGINT, SIGTERM and SIGHUP (the terminal went away, or a supervisor's stop) into `.stop`
/// inputs (Dispatch signal sources), so the loop can close sockets and exit 0. SIGPIPE is
/// ignored: a closed stdout shows as EPIPE (`EventOutput`).
///
/// No signal is lost between start-up and the sources' registration. On Linux, libdispatch
/// receives a source's signal through a signalfd(2), which reads signals that are pending because
/// they are blocked. So the stop signals are blocked first, in the main thread before any other
/// thread exists (`holdStopSignals()`); every thread created later (libdispatch's, libzmq's, the
/// stdin reader) inherits that mask (pthread_sigmask(3)), and they stay blocked for the life of
/// the process (signalfd(2): the signals "should be blocked using sigprocmask(2)"). A signal sent
/// meanwhile stays pending, and the signalfd reports it once the source is registered; Linux
/// keeps it pending even while its disposition is to ignore it (POSIX leaves that unspecified;
/// Linux `kernel/signal.c`, `sig_ignored()`: blocked signals are never ignored). The disposition
/// is never set to SIG_IGN here: that discards a pending signal (POSIX sigaction(): "Setting a
/// signal action to SIG_IGN for a signal that is pending shall cause the pending signal to be
/// discarded"). A signal that arrives before the main thread blocks it (while the runtime loads)
/// has its default action: the process ends by that signal (exit status 128 + N in a shell).
/// `@unchecked`: the sources are set once in `init` and only cancelled after.
package final class SignalTrap: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    /// The signals that stop the process: SIGINT and SIGTERM always (also when ignored on entry:
    /// a `cmd &` in a script inherits SIGINT ignored, and the documented contract is a clean stop
    /// on both), SIGHUP unless ignored on entry (that is how nohup(1) asks a process to outlive
    /// its terminal).
    package static var stopSignals: [Int32] {
        var onEntry = sigaction()
        sigaction(SIGHUP, nil, &onEntry)
        let hangUpIgnored =
            unsafeBitCast(onEntry.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
        return hangUpIgnored ? [SIGINT, SIGTERM] : [SIGINT, SIGTERM, SIGHUP]
    }

    /// Blocks `stopSignals` in the calling thread (pthread_sigmask(3)). Call it first thing in the
    /// main thread, before any other thread is created, so that every thread inherits the mask
    /// and a stop signal sent during start-up waits, pending, for the `SignalTrap`. Idempotent.
    package static func holdStopSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        for number in stopSignals { sigaddset(&set, number) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Starts turning the stop signals into `.stop` inputs for `mailbox` (and blocks them in the
    /// calling thread, if `holdStopSignals()` was not called yet).
    package init(posting mailbox: Mailbox) {
        signal(SIGPIPE, SIG_IGN)
        Self.holdStopSignals()
        var made: [any DispatchSourceSignal] = []
        for number in Self.stopSignals {
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { mailbox.post(.stop(.signal(number))) }
            source.resume()
            made.append(source)
        }
        sources = made
    }

    /// Stops listening.
    package func cancel() {
        for source in sources { source.cancel() }
    }
}

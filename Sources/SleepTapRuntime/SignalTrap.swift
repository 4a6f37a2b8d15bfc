import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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

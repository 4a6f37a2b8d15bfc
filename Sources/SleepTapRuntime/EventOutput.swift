public import Foundation
public import SleepTapCore

/// Writes events as JSON Lines to a file descriptor (stdout by default), one `write(2)` per line
/// so lines from one process never interleave. Only the loop thread writes.
public final class EventOutput: @unchecked Sendable {
    private let handle: FileHandle
    private let clock: any SleepTapCore.Clock

    /// - Parameters:
    ///   - handle: where lines go (stdout).
    ///   - clock: gives each event's `time` (virtual now).
    public init(handle: FileHandle = .standardOutput, clock: any SleepTapCore.Clock) {
        self.handle = handle
        self.clock = clock
    }

    /// Writes `event` stamped with `time`, or virtual now when nil.
    public func emit(_ event: Event, at time: Date? = nil) {
        let line = event.jsonLine(time: time ?? clock.now) + "\n"
        // A closed stdout (EPIPE) must not kill the process; SIGPIPE is ignored at start-up.
        try? handle.write(contentsOf: Data(line.utf8))
    }
}

/// Prints a diagnostic line on stderr, prefixed with the program name.
public func diagnose(_ program: String, _ message: String) {
    let line = "\(program): \(message)\n"
    try? FileHandle.standardError.write(contentsOf: Data(line.utf8))
}

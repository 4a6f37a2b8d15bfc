// SPDX-License-Identifier: Apache-2.0

public import SleepTapOS

/// Why a process stops cleanly, other than the `quit` command.
public enum StopCause: Sendable, Equatable {
    /// SIGINT, SIGTERM or SIGHUP (the signal number).
    case signal(Int32)
    /// End of file typed on a terminal (Ctrl-D): the user is done, as with `quit`.
    case endOfTerminalInput
    /// Nobody reads the event output any more (a closed pipe: EPIPE, as after `| head -2`).
    case outputClosed
    /// The virtual clock reached 2199-12-31T23:59:59Z, the last instant the clock flags allow
    /// (a high `--clock-speed` runs through the range in minutes).
    case clockRangeEnd

    /// The fields of the `phone.stopping` / `watch.stopping` event: `signal` (the number) or
    /// `reason` (`end of input`, `output closed`, `virtual time reached the end of 2199`).
    public var eventFields: [(String, EventValue)] {
        switch self {
        case .signal(let number): [("signal", .int(Int64(number)))]
        case .endOfTerminalInput: [("reason", .string("end of input"))]
        case .outputClosed: [("reason", .string("output closed"))]
        case .clockRangeEnd: [("reason", .string("virtual time reached the end of 2199"))]
        }
    }
}

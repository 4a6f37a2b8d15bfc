// SPDX-License-Identifier: Apache-2.0

/// A process exit status, with the conventional codes of `sysexits.h` (sysexits(3)) as named
/// members; every SleepTap executable ends with one of these.
///
/// A `RawRepresentable` struct rather than an enum: the status of a child process (what the demo,
/// the soak and the tests read) can be any value from 0 to 255.
public struct ExitCode: RawRepresentable, Hashable, Sendable, Error, CustomStringConvertible {
    /// The status as `exit(3)` takes it.
    public var rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The status `rawValue` (0 to 255 as a process sees it), unlabelled.
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// 0, `EXIT_SUCCESS`: the work was done, or the process was asked to stop.
    public static let ok = ExitCode(0)
    /// 1, `EXIT_FAILURE`: the work failed (the demo's expected event did not come, an invariant of
    /// the soak broke).
    public static let failure = ExitCode(1)
    /// 64, `EX_USAGE`: bad command-line arguments.
    public static let usage = ExitCode(64)
    /// 65, `EX_DATAERR`: a bad input file (schedule, state file, key).
    public static let dataError = ExitCode(65)
    /// 69, `EX_UNAVAILABLE`: the endpoint could not be bound or connected.
    public static let unavailable = ExitCode(69)
    /// 70, `EX_SOFTWARE`: an internal error (a tool could not run at all).
    public static let software = ExitCode(70)
    /// 73, `EX_CANTCREAT`: the state directory or a file in it cannot be created or written.
    public static let cantCreate = ExitCode(73)
    /// 74, `EX_IOERR`: stdout is closed or cannot be written (`> /dev/full`, a full disk).
    public static let ioError = ExitCode(74)

    public var description: String { "\(rawValue)" }
}

// SPDX-License-Identifier: Apache-2.0

/// A process exit status, with the conventional codes of `sysexits.h` (sysexits(3)) as named
/// members; every SleepTap executable ends with one of these.
///
/// A `RawRepresentable` struct rather than an enum: the status of a child process (what the demo,
/// the soak and the tests read) can be any value from 0 to 255.
package struct ExitCode: RawRepresentable, Hashable, Sendable, Error, CustomStringConvertible {
    /// The status as `exit(3)` takes it.
    package var rawValue: Int32

    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// The status `rawValue` (0 to 255 as a process sees it), unlabelled.
    package init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// 0, `EXIT_SUCCESS`: the work was done, or the process was asked to stop.
    package static let ok = ExitCode(0)
    /// 1, `EXIT_FAILURE`: the work failed (the demo's expected event did not come, an invariant of
    /// the soak broke).
    package static let failure = ExitCode(1)
    /// 64, `EX_USAGE`: bad command-line arguments.
    package static let usage = ExitCode(64)
    /// 65, `EX_DATAERR`: a bad input file (schedule, state file, key).
    package static let dataError = ExitCode(65)
    /// 69, `EX_UNAVAILABLE`: the endpoint could not be bound or connected.
    package static let unavailable = ExitCode(69)
    /// 70, `EX_SOFTWARE`: an internal error (a tool could not run at all).
    package static let software = ExitCode(70)
    /// 73, `EX_CANTCREAT`: the state directory or a file in it cannot be created or written.
    package static let cantCreate = ExitCode(73)
    /// 74, `EX_IOERR`: stdout is closed or cannot be written (`> /dev/full`, a full disk).
    package static let ioError = ExitCode(74)

    package var description: String { "\(rawValue)" }
}

// SPDX-License-Identifier: Apache-2.0

public import SleepTapCore

/// A file operation that failed; `path` names the file, `reason` the cause (strerror text).
public struct FileError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    /// The failing system call's errno (`ENOSPC`, `EACCES`, `EROFS`, …), so callers can tell
    /// failures apart without reading `reason`; nil when no system call failed (the content
    /// was refused, or the state could not be encoded).
    public var errno: Errno?

    /// - Parameters:
    ///   - path: the file.
    ///   - reason: the cause in words.
    ///   - errno: the failing call's errno, nil when no system call failed.
    public init(path: String, reason: String, errno: Errno? = nil) {
        self.path = path
        self.reason = reason
        self.errno = errno
    }

    /// A failed system call: the reason is `what`, a colon and the system's words for `errno`.
    /// - Parameters:
    ///   - path: the file.
    ///   - what: what failed (`open failed`, `cannot open lock file`).
    ///   - errno: the failing call's errno.
    public init(path: String, _ what: String, errno: Errno) {
        self.init(path: path, reason: "\(what): \(errno.message)", errno: errno)
    }

    public var description: String { "\(path): \(reason)" }
}

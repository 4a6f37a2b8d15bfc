// SPDX-License-Identifier: Apache-2.0

package import SleepTapCore

/// A file operation that failed; `path` names the file, `reason` the cause (strerror text).
package struct FileError: Error, Equatable, Sendable, CustomStringConvertible {
    package var path: String
    package var reason: String
    /// The failing system call's errno (`ENOSPC`, `EACCES`, `EROFS`, …), so callers can tell
    /// failures apart without reading `reason`; nil when no system call failed (the content
    /// was refused, or the state could not be encoded).
    package var errno: Errno?

    /// - Parameters:
    ///   - path: the file.
    ///   - reason: the cause in words.
    ///   - errno: the failing call's errno, nil when no system call failed.
    package init(path: String, reason: String, errno: Errno? = nil) {
        self.path = path
        self.reason = reason
        self.errno = errno
    }

    /// A failed system call: the reason is `what`, a colon and the system's words for `errno`.
    /// - Parameters:
    ///   - path: the file.
    ///   - what: what failed (`open failed`, `cannot open lock file`).
    ///   - errno: the failing call's errno.
    package init(path: String, _ what: String, errno: Errno) {
        self.init(path: path, reason: "\(what): \(errno.message)", errno: errno)
    }

    package var description: String { "\(path): \(reason)" }
}

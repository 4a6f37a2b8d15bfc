// SPDX-License-Identifier: Apache-2.0

/// A file operation that failed; `path` names the file, `reason` the cause (strerror text).
public struct FileError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    /// The `errno` of the failing system call (`ENOSPC`, `EACCES`, `EROFS`, …), so callers can
    /// tell failures apart without reading `reason`; nil when no system call failed (the content
    /// was refused, or the state could not be encoded).
    public var errno: Int32?

    /// - Parameters:
    ///   - path: the file.
    ///   - reason: the cause in words.
    ///   - errno: the failing call's `errno`, nil when no system call failed.
    public init(path: String, reason: String, errno: Int32? = nil) {
        self.path = path
        self.reason = reason
        self.errno = errno
    }
    public var description: String { "\(path): \(reason)" }
}

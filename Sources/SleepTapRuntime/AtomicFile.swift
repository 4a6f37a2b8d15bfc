// SPDX-License-Identifier: Apache-2.0

package import Foundation
package import SleepTapCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Crash-safe whole-file writes: write a temp file in the same directory, fsync it, rename it
/// over the target, fsync the directory (POSIX rename(2) is atomic within one file system).
/// After a crash the file holds either the old or the new bytes, never a mix.
package enum AtomicFile {
    /// Replaces the file at `path` with `data` atomically and durably.
    /// - Parameter durable: false skips both fsyncs: the rename is still atomic for readers (they
    ///   see the old file or the new one), but after a crash the file may be empty or missing.
    ///   For output that is made again rather than recovered (a simulation's files).
    /// - Throws: `FileError` naming `path` and the failing call (and the temporary file beside
    ///   `path`, `PATH.tmp-PID`, when the call was on it); the old file is untouched.
    ///   Also when something other than a regular file is at `path` (`notReplaceable(_:)`).
    package static func write(_ data: Data, to path: String, durable: Bool = true) throws(FileError) {
        if let refusal = refusal(path) { throw refusal }
        let directory = FilePaths.directory(of: path)
        let temp = temporaryPath(path)
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure(path, "open of its temporary file \(temp)") }
        var ok = false
        defer {
            if !ok { unlink(temp) }
        }
        let written = data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += n
            }
            return true
        }
        guard written else {
            let error = failure(path, "write of its temporary file \(temp)")
            close(fd)
            throw error
        }
        guard !durable || fsync(fd) == 0 else {
            let error = failure(path, "fsync of its temporary file \(temp)")
            close(fd)
            throw error
        }
        close(fd)
        guard rename(temp, path) == 0 else { throw failure(path, "rename") }
        ok = true
        guard durable else { return }
        let dirFd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFd >= 0 {
            _ = fsync(dirFd)
            close(dirFd)
        }
    }

    /// Why `write(_:to:durable:)` to `path` would fail before writing anything, nil when it can
    /// start: what is at `path` is not replaceable (`notReplaceable(_:)`), or its temporary file
    /// cannot be created (tried: created, then removed). A check for a tool to make before long
    /// work whose result goes to `path`; `access(2)` would not do, as it says yes to root where
    /// the file system says no (/proc, a read-only mount).
    /// - Returns: the failure, naming `path`.
    package static func cannotWrite(_ path: String) -> FileError? {
        if let refusal = refusal(path) { return refusal }
        let temp = temporaryPath(path)
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return failure(path, "open of its temporary file \(temp)") }
        close(fd)
        unlink(temp)
        return nil
    }

    /// Why `write(_:to:durable:)` must not replace what is at `path`, nil when it may (nothing
    /// there, or a regular file). The rename would put a regular file in place of a directory
    /// entry of any other kind: a device such as /dev/null, a FIFO, or a symbolic link (the link
    /// itself, not its target, would be replaced: rename(2)).
    /// - Returns: the reason, and the errno a caller reports: `EISDIR` for a directory (what the
    ///   rename itself would fail with), `EEXIST` for the rest.
    package static func notReplaceable(_ path: String) -> (reason: String, errno: Errno)? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG else { return nil }
        return (
            "exists and is not a regular file (a directory, device, FIFO or symbolic link); not replaced",
            Errno(info.st_mode & S_IFMT == S_IFDIR ? EISDIR : EEXIST)
        )
    }

    /// Creates `path` (and parents) with mode 0700 if missing, like `mkdir -p`.
    /// - Throws: `FileError` when it cannot be created or is not a writable directory, naming the
    ///   directory that failed and the cause in the system's words (strerror), e.g.
    ///   `/srv/st: cannot create directory: Permission denied`.
    package static func ensureDirectory(_ path: String) throws(FileError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw FileError(path: path, reason: "exists and is not a directory") }
        } else {
            var prefix = path.hasPrefix("/") ? "" : "."
            for component in path.split(separator: "/") {
                prefix += "/" + component
                if mkdir(prefix, 0o700) == 0 || errno == EEXIST { continue }
                throw failure(prefix, "cannot create directory", call: "mkdir")
            }
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue
            else { throw FileError(path: path, reason: "cannot create directory: a file is in the way") }
        }
        guard access(path, W_OK | X_OK) == 0 else {
            throw failure(path, "directory not writable", call: "access")
        }
    }

    /// A failure with errno's words and, for permission errors, who owns what is in the way.
    private static func failure(_ path: String, _ what: String, call: String) -> FileError {
        let failure = Errno.current
        var reason = "\(what): \(failure)"
        if failure.code == EACCES || failure.code == EPERM {
            let shown = call == "mkdir" ? FilePaths.directory(of: path) : path
            var info = stat()
            if stat(shown, &info) == 0 {
                reason +=
                    " (\(shown) is \(EndpointDiagnosis.ownerAndMode(info)); "
                    + "this process runs as \(EndpointDiagnosis.userName(geteuid())))"
            }
        }
        return FileError(path: path, reason: reason, errno: failure)
    }

    /// The temporary file a write to `path` makes beside it: `PATH.tmp-PID`.
    private static func temporaryPath(_ path: String) -> String { "\(path).tmp-\(getpid())" }

    /// `notReplaceable(_:)` as the failure a write reports.
    private static func refusal(_ path: String) -> FileError? {
        notReplaceable(path).map { FileError(path: path, reason: $0.reason, errno: $0.errno) }
    }

    private static func failure(_ path: String, _ call: String) -> FileError {
        FileError(path: path, "\(call) failed", errno: .current)
    }
}

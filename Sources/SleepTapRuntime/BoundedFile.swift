// SPDX-License-Identifier: Apache-2.0

package import Foundation
package import SleepTapCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reads a regular file of at most a given number of bytes: the one reader of the package's
/// input files (state, schedule, scenario, certificate and run-record files).
///
/// The file is opened first, with `O_NONBLOCK` so that a FIFO never waits for a writer (and
/// `O_NOCTTY`, so that a terminal never becomes the controlling one), and then
/// checked with fstat(2), so the checks and the read are of the same file; symbolic links are
/// followed (open(2), fstat(2)).
package enum BoundedFile {
    /// Why a file was not read.
    package enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// open(2) failed with this errno (`ENOENT`: there is no such file).
        case cannotOpen(Errno)
        /// The path names a directory.
        case isDirectory
        /// The path names a device, a FIFO or a socket.
        case notRegularFile
        /// The file holds more than `limit` bytes; `size` is its length in bytes (fstat(2)'s,
        /// or the bytes read when it grew while being read).
        case tooLarge(size: Int, limit: Int)
        /// read(2) failed with this errno.
        case cannotRead(Errno)

        package var description: String {
            switch self {
            case .cannotOpen(let code), .cannotRead(let code): "cannot be read: \(code)"
            case .isDirectory: "is a directory, not a file"
            case .notRegularFile: "is not a regular file (a device, FIFO or socket)"
            case .tooLarge(let size, let limit): "\(size) bytes, over the \(BoundedFile.words(limit)) limit"
            }
        }

        /// The errno of the system call that failed, nil when the file was refused for its kind
        /// or its size.
        package var errno: Errno? {
            switch self {
            case .cannotOpen(let code), .cannotRead(let code): code
            case .isDirectory, .notRegularFile, .tooLarge: nil
            }
        }
    }

    /// The bytes of the regular file at `path`.
    /// - Parameters:
    ///   - path: the file; a relative path is resolved against the working directory.
    ///   - limit: the largest file read, in bytes.
    /// - Returns: the file's bytes, at most `limit` of them.
    /// - Throws: `Failure` when the file cannot be opened or read, is not a regular file, or is
    ///   longer than `limit` (refused before it is read, from fstat(2)'s size).
    package static func read(_ path: String, limit: Int) throws(Failure) -> Data {
        var buffer = Data()
        let count = try read(path, in: AT_FDCWD, limit: limit, into: &buffer)
        buffer.count = count
        return buffer
    }

    /// Reads the regular file `name` of the directory open at `directory` into `buffer`, which
    /// grows as needed and can be kept from file to file (openat(2)).
    /// - Parameters:
    ///   - name: the file, relative to `directory`.
    ///   - directory: an open directory's descriptor, or `AT_FDCWD` for the working directory.
    ///   - limit: the largest file read, in bytes.
    ///   - buffer: where the bytes go; bytes after the returned count are left over from before.
    /// - Returns: the number of bytes read into the start of `buffer`.
    /// - Throws: `Failure`, as `read(_:limit:)`.
    package static func read(
        _ name: UnsafePointer<CChar>, in directory: Int32, limit: Int, into buffer: inout Data
    ) throws(Failure) -> Int {
        let fd = openat(directory, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw .cannotOpen(.current) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .cannotRead(.current) }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw .isDirectory
        default: throw .notRegularFile
        }
        let size = Int(info.st_size)
        guard size <= limit else { throw .tooLarge(size: size, limit: limit) }
        // One byte more than the limit is room to see a file that grew past it.
        let room = min(size, limit) + 1
        if buffer.count < room { buffer.count = max(room, 4_096) }
        var count = 0
        while true {
            if count == buffer.count { buffer.count = min(buffer.count * 2, limit + 1) }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .cannotRead(.current)
            }
            if n == 0 { return count }
            count += n
            if count > limit { throw .tooLarge(size: count, limit: limit) }
        }
    }

    /// A limit in words: `16 MiB`, `64 KiB` or `1000 bytes`.
    static func words(_ limit: Int) -> String {
        if limit >= 1 << 20, limit % (1 << 20) == 0 { return "\(limit >> 20) MiB (\(limit)-byte)" }
        if limit >= 1 << 10, limit % (1 << 10) == 0 { return "\(limit >> 10) KiB (\(limit)-byte)" }
        return "\(limit)-byte"
    }
}

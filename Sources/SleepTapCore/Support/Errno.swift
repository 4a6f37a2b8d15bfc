// SPDX-License-Identifier: Apache-2.0

import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A failed system call's `errno`: its number, its symbolic name (`ENOSPC`) and the system's
/// words for it (strerror(3), "No space left on device").
///
/// The one place the package turns an errno into words; the numbers are Linux's
/// (asm-generic/errno-base.h and errno.h, errno(3)).
package struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The errno number.
    package var code: Int32

    /// - Parameter code: the errno number.
    package init(_ code: Int32) {
        self.code = code
    }

    /// The calling thread's `errno` now: read it right after the call that failed.
    package static var current: Errno { Errno(errno) }

    /// The system's words for it (strerror(3)).
    package var message: String { String(cString: strerror(code)) }

    /// Its symbolic name (`ENOSPC`, `EACCES`, …), nil for a number this table does not name.
    package var name: String? {
        switch code {
        case EPERM: "EPERM"
        case ENOENT: "ENOENT"
        case ESRCH: "ESRCH"
        case EINTR: "EINTR"
        case EIO: "EIO"
        case ENXIO: "ENXIO"
        case EBADF: "EBADF"
        case EAGAIN: "EAGAIN"
        case ENOMEM: "ENOMEM"
        case EACCES: "EACCES"
        case EBUSY: "EBUSY"
        case EEXIST: "EEXIST"
        case EXDEV: "EXDEV"
        case ENOTDIR: "ENOTDIR"
        case EISDIR: "EISDIR"
        case EINVAL: "EINVAL"
        case ENFILE: "ENFILE"
        case EMFILE: "EMFILE"
        case EFBIG: "EFBIG"
        case ENOSPC: "ENOSPC"
        case EROFS: "EROFS"
        case EMLINK: "EMLINK"
        case EPIPE: "EPIPE"
        case ENAMETOOLONG: "ENAMETOOLONG"
        case ENOTEMPTY: "ENOTEMPTY"
        case ELOOP: "ELOOP"
        case EADDRINUSE: "EADDRINUSE"
        case ECONNREFUSED: "ECONNREFUSED"
        case EDQUOT: "EDQUOT"
        default: nil
        }
    }

    /// The system's words, as strerror(3) gives them (what every message of the package shows).
    package var description: String { message }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore

#if canImport(Glibc)
    import Glibc
#endif

/// Who may reach an ipc socket: only the user. The socket's directory must be owned by this
/// user and closed to group and others (0700), so another user's process cannot even reach the
/// socket file (connect(2) needs search permission on the directory).
enum IPCDirectoryPolicy {
    /// Creates the socket's directory (0700) when missing (if `create`), then checks it.
    /// - Returns: nil when the directory is private, else what is wrong and how to fix it.
    static func problem(for endpoint: Endpoint, create: Bool) -> String? {
        guard case .ipc(let path) = endpoint else { return nil }
        guard !path.hasPrefix("@") else {
            return "abstract ipc sockets (@name) have no directory to protect; use a path"
        }
        let directory = FilePaths.directory(of: path)
        let socket = (path as NSString).lastPathComponent
        var info = stat()
        if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            return "\(path) is a directory; an ipc endpoint names the socket file itself: "
                + privateDirectoryAdvice(directory: path, socket: "phone.sock")
        }
        if let blocked = nonDirectoryOnTheWay(to: directory) {
            return "the socket directory \(directory) cannot be used: \(blocked) is not a directory "
                + "(\(fileKind(blocked))); give a path whose directories are directories"
        }
        if directory == "/" {
            return "the socket would be in / (the root directory), which stays open to every user; "
                + privateDirectoryAdvice(directory: directory, socket: socket) + " (or pass --insecure)"
        }
        if stat(directory, &info) != 0 {
            guard create else { return nil }  // the phone creates it; connecting retries meanwhile
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
                return "cannot create the socket directory \(directory): \(Errno.current)"
            }
            guard stat(directory, &info) == 0 else { return "cannot inspect \(directory)" }
        }
        guard info.st_uid == geteuid() else {
            return "the socket directory \(directory) belongs to another user "
                + "(\(EndpointDiagnosis.userName(info.st_uid)), uid \(info.st_uid)); "
                + privateDirectoryAdvice(directory: directory, socket: socket)
        }
        guard info.st_mode & 0o077 == 0 else {
            let mode = String(info.st_mode & 0o7777, radix: 8)
            var advice = privateDirectoryAdvice(directory: directory, socket: socket)
            // A shared directory (sticky bit, like /tmp) must stay open to everyone: never advise
            // closing it. Nor a directory root owns: it may be a system directory (/etc, /var)
            // that other users need. A directory of one's own may simply be closed.
            if info.st_mode & S_ISVTX == 0 && geteuid() != 0 {
                advice += ", or run `chmod 700 \(directory)` if only you use it"
            }
            return "the socket directory \(directory) is mode \(mode): other users could reach the socket; "
                + advice + " (or pass --insecure)"
        }
        return nil
    }

    /// The first existing component of `directory` (from the top) that is not a directory,
    /// e.g. a regular file named where a directory belongs; nil when there is none.
    static func nonDirectoryOnTheWay(to directory: String) -> String? {
        var prefix = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            prefix += "/" + component
            var info = stat()
            guard stat(prefix, &info) == 0 else { return nil }  // missing from here on
            if (info.st_mode & S_IFMT) != S_IFDIR { return prefix }
        }
        return nil
    }

    /// `a regular file`, `a socket`, … for messages.
    static func fileKind(_ path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return "missing" }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return "a regular file"
        case S_IFSOCK: return "a socket"
        case S_IFIFO: return "a FIFO"
        case S_IFCHR, S_IFBLK: return "a device"
        default: return "not a directory"
        }
    }

    /// The fix for a socket directory others can reach: a private subdirectory of it (the phone
    /// creates a missing one with mode 0700), or the user's runtime directory (`$XDG_RUNTIME_DIR`,
    /// private to the user by the XDG Base Directory Specification).
    static func privateDirectoryAdvice(directory: String, socket: String) -> String {
        let user = EndpointDiagnosis.userName(geteuid()).replacingOccurrences(of: "/", with: "_")
        // Never a new directory in / itself: /tmp is the place for temporary files of any user
        // (Filesystem Hierarchy Standard 3.0, section 3.18).
        let parent = directory == "/" ? "/tmp" : directory
        var advice =
            "put the socket in a private directory of your own, e.g. "
            + "--endpoint ipc://\(parent)/sleeptap-\(user)/\(socket) (the phone creates it, mode 0700)"
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            advice += " or ipc://\(runtime)/\(socket)"
        }
        return advice
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore

#if canImport(Glibc)
    import Glibc
#endif

/// One process per state dir and per ipc endpoint.
///
/// libzmq unlinks whatever is at an ipc path before it binds (libzmq `ipc_listener.cpp`), so a
/// second phone on the same endpoint would silently take it over, and an endpoint that names an
/// ordinary file would destroy it. These checks run before binding or writing anything.
enum SingleInstance {
    /// Holds an exclusive `flock` on `<dir>/.lock` for the life of the process. The holder's
    /// record is written once the dir is known to be the program's (`claim(_:program:)`), so a
    /// process refused afterwards leaves the last holder's record as it was.
    /// - Returns: the lock's file descriptor (keep it open), or a message naming the holder (its
    ///   program and pid: another phone, or the watch whose state dir this is).
    static func lockStateDirectory(_ directory: String, program: String) -> Result<Int32, FileError> {
        let path = directory + "/.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            return .failure(FileError(path: path, "cannot open lock file", errno: .current))
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = read(fd, &buffer, buffer.count)
            close(fd)
            let holder = count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
            return .failure(FileError(path: directory, reason: heldReason(holder, program: program)))
        }
        return .success(fd)
    }

    /// Writes `PID PROGRAM` into the held lock file `fd`, so that a process refused the lock
    /// can name the holder.
    static func claim(_ fd: Int32, program: String) {
        _ = ftruncate(fd, 0)
        let record = "\(getpid()) \(program)\n"
        _ = record.withCString { pwrite(fd, $0, strlen($0), 0) }
    }

    /// Why a state dir whose lock holds `record` (`PID PROGRAM`, or a bare pid) cannot be used by
    /// `program`.
    static func heldReason(_ record: String, program: String) -> String {
        let parts = record.split(whereSeparator: \.isWhitespace)
        let pid = parts.first.map(String.init) ?? "?"
        let holder = parts.count > 1 ? String(parts[1]) : nil
        switch holder {
        case program:
            return "in use by another \(program) (pid \(pid)); one process per state dir"
        case "phone", "watch":
            return "in use by a running \(holder ?? "") (pid \(pid)): it is that \(holder ?? "")'s state dir; "
                + "give the \(program) a state dir of its own"
        default:
            return "in use by another process (pid \(pid)); one process per state dir"
        }
    }

    /// The state files a program keeps in its state dir (each may also have a `.prev` copy).
    static func stateFiles(of program: String) -> [String] {
        program == "phone" ? ["phone.json", PhoneStateFiles.appFileName, "os.json"] : ["watch.json"]
    }

    /// A phone and a watch never share a state dir: their files would sit side by side, and a
    /// watch started on a stopped phone's dir would write its state there.
    /// - Returns: nil when `directory` holds no state file of the other program; else why it is
    ///   not `program`'s state dir.
    static func otherProgramsState(in directory: String, program: String) -> String? {
        let other = program == "phone" ? "watch" : "phone"
        for name in stateFiles(of: other) {
            for candidate in [name, name + ".prev"] {
                var info = stat()
                if lstat(directory + "/" + candidate, &info) == 0 {
                    return "holds \(candidate), a \(other)'s state: it is a \(other)'s state dir; "
                        + "give the \(program) a state dir of its own"
                }
            }
        }
        return nil
    }

    /// For `ipc://PATH`: nil when binding is safe (nothing there, or a stale socket nobody
    /// listens on); otherwise why not (a live socket, or a path that is not a socket).
    static func ipcBindProblem(_ endpoint: Endpoint) -> String? {
        guard let path = endpoint.socketPath else { return nil }  // tcp, or Linux's abstract namespace
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            return "\(path) exists and is not a socket; refusing to replace it"
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return connected == 0 ? "another process is listening on \(path)" : nil
    }

    /// Removes the socket file of an ipc endpoint this process bound, on a clean exit.
    static func removeSocketFile(_ endpoint: Endpoint) {
        guard let path = endpoint.socketPath else { return }
        var info = stat()
        if lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK {
            unlink(path)
        }
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
package import SleepTapCommandLine

/// A ZeroMQ endpoint as the executables accept it (`--endpoint`), parsed and checked once.
///
/// `description` gives the endpoint in zmq's syntax for `zmq_bind`/`zmq_connect` (zmq_ipc(7),
/// zmq_tcp(7)). inproc:// works only inside one process, so the executables do not accept it.
package enum Endpoint: Hashable, Sendable, CustomStringConvertible {
    /// `ipc://PATH`: a unix-domain socket. `path` is absolute, or `@name` for a socket in Linux's
    /// abstract namespace, which has no file (unix(7)).
    case ipc(path: String)
    /// `tcp://HOST:PORT`; `host` as written (an IPv6 literal in brackets, or `*` for every
    /// interface), `port` nil for `*` (the phone binds a port the system picks).
    case tcp(host: String, port: UInt16?)

    /// The longest ipc path: `sockaddr_un.sun_path` holds 108 bytes on Linux with the NUL (unix(7)).
    package static let maximumIPCPathBytes = 107

    /// The endpoint in zmq's syntax, e.g. `ipc:///run/user/1000/sleeptap.sock` or `tcp://127.0.0.1:5555`.
    package var description: String {
        switch self {
        case .ipc(let path): return "ipc://" + path
        case .tcp(let host, let port): return "tcp://\(host):\(port.map { String($0) } ?? "*")"
        }
    }

    /// The socket file of an ipc endpoint; nil for tcp and for an abstract-namespace name.
    package var socketPath: String? {
        guard case .ipc(let path) = self, !path.hasPrefix("@") else { return nil }
        return path
    }

    /// The host of a tcp endpoint without the brackets of an IPv6 literal; nil for ipc.
    package var tcpHost: String? {
        guard case .tcp(var host, _) = self else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host
    }

    /// Parses `ipc://PATH` or `tcp://HOST:PORT` (port 1-65535, or `*`).
    ///
    /// A relative ipc path is resolved against `workingDirectory` (the process's working directory
    /// at start), so two processes started in different directories meet only when they name the
    /// same socket file; the result must fit `sockaddr_un.sun_path` (107 bytes on Linux, unix(7)).
    /// An abstract-namespace name (`ipc://@name`) has no file and is kept as given.
    /// - Parameters:
    ///   - text: the endpoint as given.
    ///   - flag: the flag it came with, for messages.
    ///   - workingDirectory: what a relative ipc path is resolved against.
    /// - Returns: the endpoint, with an absolute ipc path.
    /// - Throws: `UsageError` naming the flag, the text and what is wrong.
    package static func parse(_ text: String, flag: String, workingDirectory: String) throws(UsageError) -> Endpoint {
        let shown = ArgumentReader.clip(text)
        guard let scheme = ["ipc://", "tcp://"].first(where: { text.hasPrefix($0) }) else {
            throw UsageError("\(flag) \"\(shown)\": expected ipc://PATH or tcp://HOST:PORT")
        }
        let rest = String(text.dropFirst(scheme.count))
        guard !rest.isEmpty else { throw UsageError("\(flag) \"\(shown)\": nothing after \(scheme)") }
        if scheme == "ipc://" {
            guard !rest.utf8.contains(0) else { throw UsageError("\(flag): the ipc path contains a NUL byte") }
            let path = absoluteIPCPath(rest, workingDirectory: workingDirectory)
            guard path.utf8.count <= maximumIPCPathBytes else {
                let resolved = path == rest ? "" : " resolves to \(ArgumentReader.clip(path)), which"
                throw UsageError(
                    "\(flag) \"\(shown)\": the ipc path\(resolved) is \(path.utf8.count) bytes; "
                        + "Linux allows at most 107 (sun_path); use a shorter path")
            }
            return .ipc(path: path)
        }
        let portError = UsageError(
            "\(flag) \"\(shown)\": expected tcp://HOST:PORT with a port from 1 to 65535 (or * for the phone)")
        guard let colon = rest.lastIndex(of: ":"), colon != rest.startIndex else { throw portError }
        let host = String(rest[..<colon])
        let portText = rest[rest.index(after: colon)...]
        if portText == "*" { return .tcp(host: host, port: nil) }
        guard let port = Int(portText), (1...65_535).contains(port) else { throw portError }
        return .tcp(host: host, port: UInt16(port))
    }

    /// `path` made absolute against `workingDirectory`, without `.` components; `..` is kept
    /// (the kernel resolves it, and removing it by hand is wrong across symbolic links). An
    /// absolute path or an abstract-namespace name (`@name`) is returned unchanged.
    static func absoluteIPCPath(_ path: String, workingDirectory: String) -> String {
        guard !path.hasPrefix("/"), !path.hasPrefix("@") else { return path }
        let parts = (workingDirectory + "/" + path).split(separator: "/").filter { $0 != "." }
        return "/" + parts.joined(separator: "/")
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// Why an endpoint cannot be used, in plain words, where libzmq reports a bare code or nothing.
enum EndpointDiagnosis {
    /// For `tcp://HOST:PORT`: nil when HOST is `*`, a numeric address or a name that resolves;
    /// otherwise that the host name could not be resolved, with getaddrinfo(3)'s reason.
    /// - Parameter permanentOnly: report only a name that does not exist (EAI_NONAME), not a
    ///   failure that may pass (EAI_AGAIN, a resolver that is down).
    static func unresolvableHost(_ endpoint: Endpoint, permanentOnly: Bool = false) -> String? {
        guard let host = endpoint.tcpHost, host != "*", !host.isEmpty else { return nil }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &result)
        if let result { freeaddrinfo(result) }
        guard status != 0, !permanentOnly || status == EAI_NONAME else { return nil }
        let reason = status == EAI_SYSTEM ? Errno.current.message : String(cString: gai_strerror(status))
        return "the host name \(host) could not be resolved (\(reason))"
    }

    /// A bind or connect failure in words: libzmq's ENODEV on tcp means the host part named no
    /// address or interface of this machine (bind) or could not be resolved.
    /// - Returns: the reason to print after the endpoint.
    static func explain(_ error: any Error, endpoint: Endpoint, binding: Bool) -> String {
        guard let zmq = error as? ZeroMQError, zmq == .noDevice || zmq == .invalidArgument,
            let host = endpoint.tcpHost
        else { return "\(error)" }
        if let unresolved = unresolvableHost(endpoint) { return unresolved }
        return binding
            ? "\(host) is not an address or interface of this machine (a phone binds a local address, or *)"
            : "\(error)"
    }

    /// For `ipc://PATH`: nil when this user may reach the socket (or nothing stands in the way
    /// yet); otherwise `permission denied`, naming the directory or socket file that refuses and
    /// its owner and mode. connect(2) on a unix socket needs search permission on every
    /// directory of the path and write permission on the socket file (unix(7)).
    static func ipcPermissionProblem(_ endpoint: Endpoint) -> String? {
        guard let path = endpoint.socketPath else { return nil }
        // The first directory on the way that this user may not search.
        var directory = ""
        for component in path.split(separator: "/").dropLast() {
            directory += "/" + component
            var info = stat()
            guard stat(directory, &info) == 0 else { return nil }  // missing: the phone may create it
            if access(directory, X_OK) != 0 && errno == EACCES {
                return "permission denied: cannot reach \(path): the directory \(directory) is "
                    + "\(ownerAndMode(info)) and this user (\(userName(geteuid()))) may not enter it"
            }
        }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK else { return nil }
        guard access(path, W_OK) != 0, errno == EACCES else { return nil }
        return "permission denied: cannot connect to the socket \(path): it is \(ownerAndMode(info)) "
            + "and this user (\(userName(geteuid()))) may not write to it"
    }

    /// What stops a watch from ever reaching `endpoint`, checked before it connects: a tcp host
    /// name that does not resolve, or an ipc socket this user is not permitted to reach. libzmq
    /// itself would retry such a connect for ever without a word.
    static func connectProblem(_ endpoint: Endpoint) -> String? {
        unresolvableHost(endpoint, permanentOnly: true) ?? ipcPermissionProblem(endpoint)
    }

    /// E.g. `owned by root (uid 0), mode 0700`.
    static func ownerAndMode(_ info: stat) -> String {
        "owned by \(userName(info.st_uid)) (uid \(info.st_uid)), mode 0\(String(info.st_mode & 0o7777, radix: 8))"
    }

    /// The user's login name from the password database, else the uid.
    static func userName(_ uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
        return String(cString: name)
    }
}

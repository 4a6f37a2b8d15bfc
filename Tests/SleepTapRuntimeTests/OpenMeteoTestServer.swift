// SPDX-License-Identifier: Apache-2.0

import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A tiny HTTP/1.1 server for the client tests: listens on 127.0.0.1 on an ephemeral port, one
/// thread, one request per connection (`Connection: close`). The first path component picks the
/// canned answer (`/ok/v1/forecast?...` → route "ok"). A `hang` answer accepts and never replies.
/// `stop()` is idempotent, ends the thread within ~50 ms and closes every descriptor; call it in a
/// `defer` right after creating the server.
final class OpenMeteoTestServer: Sendable {
    enum Answer: Sendable {
        case respond(status: Int, body: String)
        case hang
    }

    struct SetupError: Error, CustomStringConvertible {
        var description: String
    }

    let port: UInt16
    private let listener: Int32
    private let routes: [String: Answer]
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let stopped = Mutex<Bool>(false)
    private let seen = Mutex<[String]>([])

    /// Request targets (path and query) received so far.
    var requests: [String] { seen.withLock { $0 } }

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    init(routes: [String: Answer]) throws {
        self.routes = routes
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SetupError(description: "socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        do {
            port = try Self.bindLoopback(fd)
            guard listen(fd, 16) == 0 else {
                throw SetupError(description: "listen: \(String(cString: strerror(errno)))")
            }
        } catch {
            close(fd)
            throw error
        }
        listener = fd
        let thread = Thread { [self] in serve() }
        thread.name = "OpenMeteoTestServer"
        thread.start()
    }

    /// Binds `fd` to 127.0.0.1 port 0 and returns the port the kernel chose.
    static func bindLoopback(_ fd: Int32) throws -> UInt16 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw SetupError(description: "bind: \(String(cString: strerror(errno)))") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw SetupError(description: "getsockname: \(String(cString: strerror(errno)))") }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Stops the thread (waiting at most 5 s) and closes all descriptors. Idempotent.
    func stop() {
        let already = stopped.withLock { value in
            defer { value = true }
            return value
        }
        guard !already else { return }
        stopping.store(true, ordering: .sequentiallyConsistent)
        _ = finished.wait(timeout: .now() + 5)
    }

    /// The server thread: poll the listener every 50 ms so `stop()` is noticed promptly.
    private func serve() {
        var held: [Int32] = []
        defer {
            for fd in held { close(fd) }
            close(listener)
            finished.signal()
        }
        while !stopping.load(ordering: .sequentiallyConsistent) {
            var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, 50)
            guard ready > 0 else { continue }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            _ = setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let target = readRequestTarget(connection)
            seen.withLock { $0.append(target) }
            let route = target.split(separator: "/", omittingEmptySubsequences: true).first.map(String.init) ?? ""
            switch routes[route] ?? .respond(status: 404, body: "no route \(route)") {
            case .hang:
                held.append(connection)
            case .respond(let status, let body):
                let bytes = Array(body.utf8)
                let head =
                    "HTTP/1.1 \(status) \(status == 200 ? "OK" : "Error")\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(bytes.count)\r\nConnection: close\r\n\r\n"
                sendAll(connection, Array(head.utf8) + bytes)
                shutdown(connection, Int32(SHUT_WR))
                close(connection)
            }
        }
    }

    /// Reads the request head and returns its target (`/ok/v1/forecast?...`), "" if unreadable.
    private func readRequestTarget(_ fd: Int32) -> String {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while data.count < 65_536 {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            data += buffer[0..<n]
            if data.count >= 4, String(decoding: data.suffix(4), as: UTF8.self) == "\r\n\r\n" { break }
        }
        let firstLine = String(decoding: data, as: UTF8.self).split(separator: "\r\n").first ?? ""
        let parts = firstLine.split(separator: " ")
        return parts.count >= 2 ? String(parts[1]) : ""
    }

    private func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return }
            offset += n
        }
    }
}

/// A port on 127.0.0.1 that refuses connections: bound, never listening, held until `close()`.
final class RefusingPort {
    let port: UInt16
    private var fd: Int32

    init() throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw OpenMeteoTestServer.SetupError(description: "socket failed") }
        do {
            port = try OpenMeteoTestServer.bindLoopback(fd)
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// Releases the port. Idempotent.
    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    deinit { close() }
}

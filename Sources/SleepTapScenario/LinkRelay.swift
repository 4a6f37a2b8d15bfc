// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore

#if canImport(Glibc)
    import Glibc
#endif

/// The radio between the watch and the phone in a process run: a byte relay on Unix domain
/// sockets (unix(7)) that the watch connects to instead of the phone's ipc socket, and that can
/// take the phone out of the watch's reach and bring it back.
///
/// - Up: each connection the watch makes is joined to a new connection to the phone's socket and
///   bytes are copied both ways, unchanged (ZMTP, RFC 23/ZMTP, passes through as it is).
/// - `down`: every joined connection is closed on both sides at once: what was in flight is lost,
///   the watch's socket monitor reports the disconnection (`link.down`), the phone's ROUTER loses
///   the peer (its sends fail with EHOSTUNREACH). While down, the watch's reconnections are
///   accepted and held without an answer: its ZMTP greeting waits in the relay, so libzmq's
///   reconnect back-off (up to 1 wall second, many virtual hours at a scenario's speed) never
///   delays the return.
/// - `up`: every held connection is joined to the phone and the waiting greeting sent on: the
///   handshake completes at once (`link.up`).
///
/// This is how the twin models the link too (`TwinStep.link(up:)`): the phone keeps running and
/// its background work goes on while the watch cannot reach it. One thread copies the bytes; the
/// messages are small (a batch is a few kilobytes), so writes block.
final class LinkRelay: @unchecked Sendable {
    /// A failure to set the relay up: the call and errno's text.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private struct Pair {
        var watch: Int32
        /// -1 while the link is down (the watch's bytes wait in `pending`).
        var phone: Int32
        var pending: [UInt8] = []
        /// While up: when the phone's socket was first missing (the phone not bound yet).
        var waitingSince: Date?
    }

    /// How long a connection is held while up for a phone that has not bound its socket yet
    /// (spawned at the same time as the watch), tried every `retryMilliseconds`.
    static let phoneWait: TimeInterval = 5
    static let retryMilliseconds: Int32 = 5

    private let listenPath: String
    private let phonePath: String
    private let listener: Int32
    private let controlRead: Int32
    private let controlWrite: Int32
    private let condition = NSCondition()
    private var applied = 0
    private var requested = 0
    private var finished = false
    /// Touched by the relay thread only.
    private var pairs: [Pair] = []
    private var up: Bool

    /// Listens on `listenPath` and relays to `phonePath` (both socket paths, under 108 bytes).
    /// - Parameter up: whether the link starts up.
    /// - Throws: `Failure` when the socket cannot be made, bound or listened on.
    init(listenPath: String, phonePath: String, up: Bool = true) throws {
        self.listenPath = listenPath
        self.phonePath = phonePath
        self.up = up
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket(AF_UNIX): \(Errno.current)") }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        guard var address = Self.address(listenPath) else {
            Glibc.close(fd)
            throw Failure(description: "\(listenPath): a socket path must be under 108 bytes")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let reason = Errno.current
            Glibc.close(fd)
            throw Failure(description: "cannot listen on \(listenPath): \(reason)")
        }
        listener = fd
        var control: [Int32] = [0, 0]
        guard pipe(&control) == 0 else {
            Glibc.close(fd)
            throw Failure(description: "pipe: \(Errno.current)")
        }
        for end in control { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        controlRead = control[0]
        controlWrite = control[1]
        let thread = Thread { [self] in serve() }
        thread.name = "sleeptap-link-relay"
        thread.start()
    }

    /// Takes the phone out of reach (`false`) or brings it back (`true`); returns once done.
    func setLink(up: Bool) {
        command(up ? "u" : "d")
    }

    /// Closes every connection and the listening socket, ends the thread, removes the socket
    /// file. Idempotent.
    func close() {
        condition.lock()
        let done = finished
        condition.unlock()
        guard !done else { return }
        command("q")
        unlink(listenPath)
    }

    private func command(_ byte: Character) {
        condition.lock()
        guard !finished else {
            condition.unlock()
            return
        }
        requested += 1
        let ticket = requested
        condition.unlock()
        var value = byte.asciiValue ?? 0
        _ = write(controlWrite, &value, 1)
        condition.lock()
        while applied < ticket && !finished { condition.wait() }
        condition.unlock()
    }

    static func address(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        return address
    }

    /// A new connection to the phone's socket, or -1 when it is not there.
    private func connectPhone() -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0, var address = Self.address(phonePath) else { return -1 }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if connected != 0 {
            Glibc.close(fd)
            return -1
        }
        return fd
    }

    /// Writes every byte (MSG_NOSIGNAL: a closed peer is an error, not SIGPIPE).
    private static func sendAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += sent
        }
        return true
    }

    private func closePair(_ index: Int) {
        let pair = pairs.remove(at: index)
        shutdown(pair.watch, Int32(SHUT_RDWR))
        Glibc.close(pair.watch)
        if pair.phone >= 0 {
            shutdown(pair.phone, Int32(SHUT_RDWR))
            Glibc.close(pair.phone)
        }
    }

    /// Joins a held connection to the phone and sends what waited; false when that failed (a
    /// phone not there yet is waited for, `phoneWait`).
    private func join(_ index: Int) -> Bool {
        let phone = connectPhone()
        guard phone >= 0 else {
            let since = pairs[index].waitingSince ?? Date()
            pairs[index].waitingSince = since
            return Date().timeIntervalSince(since) < Self.phoneWait
        }
        pairs[index].waitingSince = nil
        pairs[index].phone = phone
        let pending = pairs[index].pending
        pairs[index].pending = []
        return Self.sendAll(phone, pending[...])
    }

    private func apply(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "d"):
            up = false
            while !pairs.isEmpty { closePair(pairs.count - 1) }
        case UInt8(ascii: "u"):
            up = true
            for index in pairs.indices.reversed() where pairs[index].phone < 0 {
                if !join(index) { closePair(index) }
            }
        default:
            return false
        }
        return true
    }

    private func serve() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        loop: while true {
            if up {
                for index in pairs.indices.reversed() where pairs[index].phone < 0 {
                    if !join(index) { closePair(index) }
                }
            }
            var items = [
                pollfd(fd: controlRead, events: Int16(POLLIN), revents: 0),
                pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
            ]
            for pair in pairs {
                items.append(pollfd(fd: pair.watch, events: Int16(POLLIN), revents: 0))
                items.append(pollfd(fd: pair.phone, events: Int16(POLLIN), revents: 0))  // -1 is skipped
            }
            // While up, a connection waiting for the phone's socket is retried shortly.
            let waiting = up && pairs.contains { $0.phone < 0 }
            if poll(&items, nfds_t(items.count), waiting ? Self.retryMilliseconds : -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            if items[0].revents != 0 {
                var byte: UInt8 = 0
                guard read(controlRead, &byte, 1) == 1, apply(byte) else { break loop }
                condition.lock()
                applied += 1
                condition.broadcast()
                condition.unlock()
                continue
            }
            if items[1].revents != 0 {
                let fd = accept(listener, nil, nil)
                if fd >= 0 {
                    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                    pairs.append(Pair(watch: fd, phone: -1))
                    if up && !join(pairs.count - 1) { closePair(pairs.count - 1) }
                }
                continue
            }
            // Copy what is readable; a pair whose side ended or failed is closed on both sides.
            let ready = pairs.indices.map { (items[2 + 2 * $0].revents, items[3 + 2 * $0].revents) }
            var broken: [Int] = []
            for (index, (fromWatch, fromPhone)) in ready.enumerated() {
                if fromWatch != 0 {
                    let count = read(pairs[index].watch, &buffer, buffer.count)
                    if count <= 0 {
                        broken.append(index)
                        continue
                    }
                    if pairs[index].phone >= 0 {
                        if !Self.sendAll(pairs[index].phone, buffer[0..<count]) { broken.append(index) }
                    } else if pairs[index].pending.count < 1 << 20 {
                        pairs[index].pending += buffer[0..<count]
                    }
                }
                if fromPhone != 0 && pairs[index].phone >= 0 && !broken.contains(index) {
                    let count = read(pairs[index].phone, &buffer, buffer.count)
                    if count <= 0 || !Self.sendAll(pairs[index].watch, buffer[0..<count]) { broken.append(index) }
                }
            }
            for index in Set(broken).sorted(by: >) { closePair(index) }
        }
        while !pairs.isEmpty { closePair(pairs.count - 1) }
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
        Glibc.close(listener)
        Glibc.close(controlRead)
        Glibc.close(controlWrite)
    }
}

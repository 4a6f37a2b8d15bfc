// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapProcess
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The weather fetch runs off the phone's socket thread: a weather server that never answers
/// does not stall the phone.
@Suite("weather fetch off the socket thread")
struct WeatherFetchTests {
    /// A loopback TCP port that accepts connections (the kernel completes the handshake) and
    /// never answers: listening, never accepting.
    /// - Returns: the port and the socket to close afterwards.
    static func silentPort() throws -> (port: UInt16, socket: Int32) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0, "socket: \(String(cString: strerror(errno)))")
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard named, listen(fd, 8) == 0 else {
            close(fd)
            throw CocoaError(.fileWriteUnknown)
        }
        return (UInt16(bigEndian: address.sin_port), fd)
    }

    @Test("A weather server that never answers: status is answered within 2 s while the fetch waits, and quit exits 0")
    func silentServerDoesNotStall() throws {
        let scenario = try Scenario()
        defer { scenario.close() }
        let (port, holder) = try Self.silentPort()
        defer { close(holder) }
        // The client's timeout is 10 s: a phone that fetched on its socket thread would be deaf
        // that long.
        let phone = try FlagEffectTests.phone(scenario, ["--weather", "http://127.0.0.1:\(port)"])
        let dates = try phone.expect(.batchGenerated)
        phone.send(line: "status")
        let status = try #require(phone.waitFor(.phoneStatus, from: dates.index, timeout: 2), "status waited")
        let before = phone.events[..<status.index]
        #expect(
            !before.contains {
                $0.name.map { [.weatherFetched, .weatherSkipped, .weatherFailed].contains($0) } == true
            }, "the fetch was still waiting")
        phone.send(line: "quit")
        #expect(phone.waitForExit(timeout: 3), "quit while the fetch waits")
        #expect(phone.stop() == 0)
    }
}

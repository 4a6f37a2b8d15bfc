// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCommandLine
import Testing

@testable import SleepTapRuntime

@Suite("Endpoints")
struct EndpointTests {
    @Test(
        "An endpoint is parsed once into its parts, and its description is the zmq endpoint",
        arguments: [
            ("ipc:///tmp/s/p.sock", Endpoint.ipc(path: "/tmp/s/p.sock"), "ipc:///tmp/s/p.sock"),
            ("ipc://run/p.sock", .ipc(path: "/home/u/run/p.sock"), "ipc:///home/u/run/p.sock"),
            ("ipc://@sleeptap", .ipc(path: "@sleeptap"), "ipc://@sleeptap"),
            ("tcp://127.0.0.1:5555", .tcp(host: "127.0.0.1", port: 5555), "tcp://127.0.0.1:5555"),
            ("tcp://[::1]:65535", .tcp(host: "[::1]", port: 65_535), "tcp://[::1]:65535"),
            ("tcp://*:*", .tcp(host: "*", port: nil), "tcp://*:*"),
        ])
    func parsed(text: String, endpoint: Endpoint, description: String) throws {
        #expect(try Endpoint.parse(text, flag: "--endpoint", workingDirectory: "/home/u") == endpoint)
        #expect(endpoint.description == description)
    }

    @Test("Only an ipc path has a socket file; only tcp has a host (an IPv6 literal without brackets)")
    func parts() {
        #expect(Endpoint.ipc(path: "/tmp/p.sock").socketPath == "/tmp/p.sock")
        #expect(Endpoint.ipc(path: "@sleeptap").socketPath == nil)
        #expect(Endpoint.tcp(host: "[::1]", port: 1).socketPath == nil)
        #expect(Endpoint.tcp(host: "[::1]", port: 1).tcpHost == "::1")
        #expect(Endpoint.ipc(path: "/tmp/p.sock").tcpHost == nil)
    }

    @Test(
        "A bad endpoint is a usage error naming the flag and what is wrong",
        arguments: [
            ("inproc://x", "expected ipc://PATH or tcp://HOST:PORT"),
            ("tcp://host", "expected tcp://HOST:PORT with a port from 1 to 65535"),
            ("tcp://host:0", "expected tcp://HOST:PORT with a port from 1 to 65535"),
            ("tcp://host:65536", "expected tcp://HOST:PORT with a port from 1 to 65535"),
            ("tcp://:5555", "expected tcp://HOST:PORT with a port from 1 to 65535"),
            ("ipc://", "nothing after ipc://"),
        ])
    func refused(text: String, reason: String) {
        #expect {
            try Endpoint.parse(text, flag: "--endpoint", workingDirectory: "/")
        } throws: { error in
            let message = (error as? UsageError)?.message ?? ""
            return message.hasPrefix("--endpoint") && message.contains(reason)
        }
    }
}

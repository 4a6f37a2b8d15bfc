// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import ZeroMQ

@Suite("Monitor, errors and library")
struct MonitorAndErrorTests {
    @Test("A monitored DEALER reports handshakeSucceeded once a ROUTER binds")
    func monitorHandshakeSucceeded() throws {
        try withTemporaryDirectory { directory in
            try withContext { context in
                let endpoint = uniqueEndpoint("ipc", in: directory)
                let monitorEndpoint = "inproc://monitor-\(UUID().uuidString)"

                let dealer = try makeSocket(context, .dealer)
                defer { dealer.close() }
                try dealer.setReconnectInterval(milliseconds: 10, max: 0)
                try dealer.monitor(endpoint: monitorEndpoint, events: .handshakeSucceeded)
                let monitor = try makeSocket(context, .pair)
                defer { monitor.close() }
                try monitor.connect(monitorEndpoint)

                try dealer.connect(endpoint)
                let router = try makeSocket(context, .router)
                defer { router.close() }
                try router.bind(endpoint)

                let event = try #require(MonitorEvent(frames: try receive(monitor)))
                #expect(event.kind == .handshakeSucceeded)
                #expect(event.endpoint == endpoint)
            }
        }
    }

    @Test("MonitorEvent parses the two-frame message in host byte order")
    func monitorEventParsing() {
        var head: [UInt8] = []
        withUnsafeBytes(of: UInt16(0x1000)) { head += $0 }
        withUnsafeBytes(of: UInt32(0xDEAD_BEEF)) { head += $0 }
        let event = MonitorEvent(frames: [head, bytes("ipc:///tmp/x")])
        #expect(
            event
                == MonitorEvent(kind: .handshakeSucceeded, value: 0xDEAD_BEEF, endpoint: "ipc:///tmp/x")
        )
        #expect(MonitorEvent.Kind.handshakeFailed.contains(.handshakeFailedAuth))
        #expect(MonitorEvent.Kind.all.contains(.disconnected))
    }

    @Test("MonitorEvent rejects messages of the wrong shape")
    func monitorEventRejectsBadShape() {
        #expect(MonitorEvent(frames: []) == nil)
        #expect(MonitorEvent(frames: [[1, 0, 0, 0, 0, 0]]) == nil)
        #expect(MonitorEvent(frames: [[1, 0, 0, 0, 0], []]) == nil)
        #expect(MonitorEvent(frames: [[1, 0, 0, 0, 0, 0], [], []]) == nil)
    }

    @Test("Errors describe themselves with zmq_strerror, the C name and the code")
    func errorDescription() {
        let terminated = ZeroMQError.terminated
        #expect(terminated.description.contains("Context was terminated"))
        #expect(terminated.description.contains("ETERM"))
        #expect(terminated.description.contains(String(terminated.rawValue)))
        #expect(ZeroMQError.finiteStateMachine.name == "EFSM")
        #expect(ZeroMQError(rawValue: 123_456).name == nil)
        #expect(ZeroMQError(rawValue: 123_456).description.contains("123456"))
    }

    @Test("~= matches codes of thrown errors only")
    func errorPatternMatching() {
        struct Other: Error {}
        #expect(ZeroMQError.again ~= (ZeroMQError.again as any Error))
        #expect(!(ZeroMQError.again ~= (ZeroMQError.interrupted as any Error)))
        #expect(!(ZeroMQError.again ~= (Other() as any Error)))
    }

    @Test("Library: version 4.x with ipc")
    func library() {
        #expect(ZeroMQLibrary.version.major == 4)
        #expect(ZeroMQLibrary.headerVersion.major == 4)
        #expect(ZeroMQLibrary.has("ipc"))
    }
}

@Suite("Handshake failures in words")
struct HandshakeFailureWordsTests {
    @Test(
        "ZMQ_PROTOCOL_ERROR_* codes from zmq.h are said in words with their name; unknown codes keep the number",
        arguments: [
            (
                UInt32(0x1100_0002), "different security mechanisms",
                "ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH, 0x11000002"
            ),
            (UInt32(0x1100_0001), "the CURVE keys do not match", "ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC, 0x11000001"),
            (UInt32(0x1000_0013), "malformed ZMTP HELLO command", "ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO"),
            (UInt32(0x2000_0001), "(ZAP) sent a malformed reply", "ZMQ_PROTOCOL_ERROR_ZAP_MALFORMED_REPLY"),
            (UInt32(0x4000_0000), "an unknown protocol error", "0x40000000"),
        ])
    func protocolErrors(code: UInt32, words: String, name: String) {
        let text = MonitorEvent.protocolErrorDescription(code)
        #expect(text.contains(words) && text.contains(name), "\(text)")
        let event = MonitorEvent(kind: .handshakeFailedProtocol, value: code, endpoint: "tcp://127.0.0.1:1")
        #expect(event.handshakeFailureDescription == text)
    }

    @Test("A ZAP refusal names the status; a failure without detail names the errno")
    func authAndErrno() {
        let refused = MonitorEvent(kind: .handshakeFailedAuth, value: 400, endpoint: "tcp://127.0.0.1:1")
        #expect(
            refused.handshakeFailureDescription
                == "authentication failed: the peer does not accept these credentials (ZAP status 400)")
        let reset = MonitorEvent(
            kind: .handshakeFailedNoDetail, value: UInt32(ECONNRESET), endpoint: "tcp://127.0.0.1:1")
        #expect(
            reset.handshakeFailureDescription.contains("Connection reset by peer"),
            "\(reset.handshakeFailureDescription)")
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import ZeroMQ

@Suite("CURVE", .enabled(if: ZeroMQLibrary.has("curve")))
struct CurveTests {
    @Test("Key pairs are 40 Z85 characters; the public key derives from the secret")
    func keyPairs() throws {
        let keys = try CurveKeyPair.generate()
        #expect(keys.publicKey.utf8.count == 40)
        #expect(keys.secretKey.utf8.count == 40)
        #expect(try CurveKeyPair.publicKey(forSecretKey: keys.secretKey) == keys.publicKey)
        #expect(!keys.description.contains(keys.secretKey))
        #expect(throws: ZeroMQError.invalidArgument) {
            try CurveKeyPair.publicKey(forSecretKey: "short")
        }
    }

    @Test("ROUTER/DEALER round trip over ipc with CURVE")
    func curveRoundTrip() throws {
        let server = try CurveKeyPair.generate()
        let client = try CurveKeyPair.generate()
        try withTemporaryDirectory { directory in
            try withContext { context in
                let endpoint = uniqueEndpoint("ipc", in: directory)
                let router = try makeSocket(context, .router)
                defer { router.close() }
                try router.setCurveServer(secretKey: server.secretKey)
                try router.bind(endpoint)

                let dealer = try makeSocket(context, .dealer)
                defer { dealer.close() }
                try dealer.setCurveClient(keys: client, serverPublicKey: server.publicKey)
                try dealer.connect(endpoint)

                try dealer.send(bytes("secret hello"))
                let request = try receive(router)
                #expect(request.last == bytes("secret hello"))
                try router.send([request[0], bytes("secret reply")])
                #expect(try receive(dealer) == [bytes("secret reply")])
            }
        }
    }

    @Test("A wrong server key surfaces as a handshake failure on the server's monitor")
    func wrongServerKeyIsSurfaced() throws {
        let server = try CurveKeyPair.generate()
        let impostor = try CurveKeyPair.generate()
        let client = try CurveKeyPair.generate()
        try withTemporaryDirectory { directory in
            try withContext { context in
                let endpoint = uniqueEndpoint("ipc", in: directory)
                let monitorEndpoint = "inproc://curve-monitor-\(UUID().uuidString)"
                let router = try makeSocket(context, .router)
                defer { router.close() }
                try router.setCurveServer(secretKey: server.secretKey)
                try router.monitor(endpoint: monitorEndpoint, events: .handshakeFailed)
                let monitor = try makeSocket(context, .pair)
                defer { monitor.close() }
                try monitor.connect(monitorEndpoint)
                try router.bind(endpoint)

                let dealer = try makeSocket(context, .dealer)
                defer { dealer.close() }
                try dealer.setCurveClient(keys: client, serverPublicKey: impostor.publicKey)
                try dealer.connect(endpoint)
                try dealer.send(bytes("never arrives"))  // Succeeds: the failure is silent here.

                let event = try #require(MonitorEvent(frames: try receive(monitor)))
                #expect(event.kind == .handshakeFailedProtocol)
                #expect(event.value == 0x1100_0001)  // ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC
                #expect(try hasMessage(router) == false)
            }
        }
    }
}

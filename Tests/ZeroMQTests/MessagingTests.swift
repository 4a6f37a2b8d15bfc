// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import ZeroMQ

@Suite("Messaging")
struct MessagingTests {
    @Test(
        "ROUTER/DEALER round trip: routing id is the first frame; the reply is routed back",
        arguments: ["ipc", "inproc"])
    func routerDealerRoundTrip(transport: String) throws {
        try withTemporaryDirectory { directory in
            try withContext { context in
                let endpoint = uniqueEndpoint(transport, in: directory)
                let router = try makeSocket(context, .router)
                defer { router.close() }
                try router.setRouterMandatory(true)
                try router.bind(endpoint)

                let dealer = try makeSocket(context, .dealer)
                defer { dealer.close() }
                try dealer.setRoutingId(bytes("watch-1"))
                try dealer.connect(endpoint)

                try dealer.send(bytes("hello"))
                let request = try receive(router)
                #expect(request == [bytes("watch-1"), bytes("hello")])

                try router.send([request[0], bytes("world")])
                #expect(try receive(dealer) == [bytes("world")])
            }
        }
    }

    @Test("A large message arrives whole", arguments: [1_100, 1_048_576])
    func largeMessageArrivesWhole(size: Int) throws {
        try withTemporaryDirectory { directory in
            try withContext { context in
                let endpoint = uniqueEndpoint("ipc", in: directory)
                let router = try makeSocket(context, .router)
                defer { router.close() }
                try router.bind(endpoint)
                let dealer = try makeSocket(context, .dealer)
                defer { dealer.close() }
                try dealer.connect(endpoint)

                let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 % 251) }
                try dealer.send(payload)
                let frames = try receive(router)
                #expect(frames.count == 2)
                #expect(frames.last?.count == size)
                #expect(frames.last == payload)

                try router.send([frames[0], payload])
                #expect(try receive(dealer) == [payload])
            }
        }
    }

    @Test("Multipart with an empty frame keeps every frame, in order, both ways")
    func multipartWithEmptyFrame() throws {
        try withContext { context in
            let endpoint = uniqueEndpoint("inproc", in: "")
            let router = try makeSocket(context, .router)
            defer { router.close() }
            try router.bind(endpoint)
            let dealer = try makeSocket(context, .dealer)
            defer { dealer.close() }
            try dealer.connect(endpoint)

            let message: [[UInt8]] = [bytes("head"), [], bytes("tail")]
            try dealer.send(message)
            let received = try receive(router)
            #expect(Array(received.dropFirst()) == message)

            try router.send([received[0]] + message)
            #expect(try receive(dealer) == message)
        }
    }

    @Test("Sending no frames is an invalid argument")
    func sendingNoFramesThrows() throws {
        try withContext { context in
            let dealer = try makeSocket(context, .dealer)
            defer { dealer.close() }
            #expect(throws: ZeroMQError.invalidArgument) { try dealer.send([[UInt8]]()) }
        }
    }

    @Test("receive(dontWait:) on an empty socket throws ZeroMQError.again")
    func receiveDontWaitThrowsAgain() throws {
        try withContext { context in
            let dealer = try makeSocket(context, .dealer)
            defer { dealer.close() }
            do {
                let frames = try dealer.receive(dontWait: true)
                Issue.record("expected EAGAIN, received \(frames)")
            } catch ZeroMQError.again {
                // Expected.
            }
        }
    }

    @Test("A DEALER with IMMEDIATE and no peer refuses a non-blocking send with EAGAIN")
    func immediateDealerWithoutPeer() throws {
        // Over ipc: an inproc connect to an unbound name makes its pipe at once, IMMEDIATE or not.
        try withTemporaryDirectory { directory in
            try withContext { context in
                let dealer = try makeSocket(context, .dealer)
                defer { dealer.close() }
                try dealer.setImmediate(true)
                try dealer.connect(uniqueEndpoint("ipc", in: directory))
                #expect(throws: ZeroMQError.again) { try dealer.send(bytes("x"), dontWait: true) }
            }
        }
    }

    @Test("ROUTER_MANDATORY: sending to an absent routing id throws hostUnreachable")
    func routerMandatoryHostUnreachable() throws {
        try withContext { context in
            let router = try makeSocket(context, .router)
            defer { router.close() }
            try router.setRouterMandatory(true)
            try router.bind(uniqueEndpoint("inproc", in: ""))
            do {
                try router.send([bytes("nobody"), bytes("lost")])
                Issue.record("expected EHOSTUNREACH")
            } catch ZeroMQError.hostUnreachable {
                // Expected.
            }
        }
    }

    @Test("ROUTER_HANDOVER: a second DEALER with the same routing id takes over")
    func routerHandover() throws {
        try withContext { context in
            let endpoint = uniqueEndpoint("inproc", in: "")
            let router = try makeSocket(context, .router)
            defer { router.close() }
            try router.setRouterMandatory(true)
            try router.setRouterHandover(true)
            try router.bind(endpoint)

            let old = try makeSocket(context, .dealer)
            defer { old.close() }
            try old.setRoutingId(bytes("watch"))
            try old.connect(endpoint)
            try old.send(bytes("from-old"))
            #expect(try receive(router) == [bytes("watch"), bytes("from-old")])

            let new = try makeSocket(context, .dealer)
            defer { new.close() }
            try new.setRoutingId(bytes("watch"))
            try new.connect(endpoint)
            try new.send(bytes("from-new"))
            #expect(try receive(router) == [bytes("watch"), bytes("from-new")])

            try router.send([bytes("watch"), bytes("to-new")])
            #expect(try receive(new) == [bytes("to-new")])
            #expect(try hasMessage(old) == false)
        }
    }

    @Test(
        "Closing a socket with a queued message, LINGER 0, lets terminate return promptly",
        arguments: [Int32(0), 100])
    func closeThenTerminateIsPrompt(linger: Int32) throws {
        try withTemporaryDirectory { directory in
            let context = try Context()
            let dealer = try Socket(context: context, type: .dealer)
            try dealer.setImmediate(false)
            try dealer.setLinger(milliseconds: linger)
            try dealer.connect(uniqueEndpoint("ipc", in: directory))  // Nobody binds it.
            try dealer.send(bytes("queued for nobody"), dontWait: true)
            dealer.close()

            let clock = ContinuousClock()
            let elapsed = clock.measure { context.terminate() }
            #expect(elapsed < .seconds(2))
            #expect(context.isTerminated)
        }
    }
}

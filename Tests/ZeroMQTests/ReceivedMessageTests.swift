// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ZeroMQ

@Suite("Borrowed receive: withReceivedMessage and send(bytes:)")
struct ReceivedMessageTests {
    /// Waits up to 2 s for a message on `socket`.
    static func awaitMessage(_ socket: Socket) throws {
        var items = [PollItem.socket(socket, events: .readable)]
        guard try ZeroMQ.poll(&items, timeoutMilliseconds: 2_000) == 1 else {
            throw TimedOut(what: "a message on \(socket.type)")
        }
    }

    @Test(
        "The lent frames are the message's, in order, of any length; the echo arrives whole",
        arguments: [0, 1, 1_100, 1_048_576])
    func lentFramesAreTheMessage(size: Int) throws {
        try withTemporaryDirectory { directory in
            try withContext { context in
                let endpoint = uniqueEndpoint("ipc", in: directory)
                let router = try makeSocket(context, .router)
                defer { router.close() }
                try router.bind(endpoint)
                let dealer = try makeSocket(context, .dealer)
                defer { dealer.close() }
                try dealer.setRoutingId(bytes("w1"))
                try dealer.connect(endpoint)

                let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 % 251) }
                try payload.withUnsafeBytes { try dealer.send(bytes: $0) }
                try Self.awaitMessage(router)
                let seen = try router.withReceivedMessage(dontWait: true) { message in
                    // Echo it as it is, from the lent bytes.
                    try router.send(message)
                    return message.map { Array($0) }
                }
                #expect(seen == [bytes("w1"), payload])
                try Self.awaitMessage(dealer)
                #expect(try dealer.receive(dontWait: true) == [payload])
            }
        }
    }

    @Test("Multipart from send(bytes:more:): empty frames kept; the reused storage holds the next, shorter message")
    func multipartAndReuse() throws {
        try withContext { context in
            let endpoint = uniqueEndpoint("inproc", in: "")
            let pull = try makeSocket(context, .pull)
            defer { pull.close() }
            try pull.bind(endpoint)
            let push = try makeSocket(context, .push)
            defer { push.close() }
            try push.connect(endpoint)

            // More frames than the socket's first storage holds (4): it grows, keeping those received.
            let first: [[UInt8]] = [bytes("head"), []] + (1...7).map { bytes("frame \($0)") } + [bytes("tail")]
            for (index, frame) in first.enumerated() {
                try frame.withUnsafeBytes { try push.send(bytes: $0, more: index < first.count - 1) }
            }
            try push.send([bytes("only")])
            try Self.awaitMessage(pull)
            let one = try pull.withReceivedMessage { message in message.map { Array($0) } }
            #expect(one == first)
            try Self.awaitMessage(pull)
            let two = try pull.withReceivedMessage { message in (message.count, message.map { Array($0) }) }
            #expect(two.0 == 1)
            #expect(two.1 == [bytes("only")])
        }
    }

    @Test(
        "Nothing queued with dontWait is EAGAIN; a nested receive on the same socket is EFSM; the body's error passes through"
    )
    func errors() throws {
        try withContext { context in
            let endpoint = uniqueEndpoint("inproc", in: "")
            let pull = try makeSocket(context, .pull)
            defer { pull.close() }
            try pull.bind(endpoint)
            let push = try makeSocket(context, .push)
            defer { push.close() }
            try push.connect(endpoint)

            #expect(throws: ZeroMQError.again) { try pull.withReceivedMessage(dontWait: true) { _ in } }
            try push.send(bytes("a"))
            try push.send(bytes("b"))
            try Self.awaitMessage(pull)
            #expect(throws: ZeroMQError.finiteStateMachine) {
                try pull.withReceivedMessage { _ in try pull.withReceivedMessage(dontWait: true) { _ in } }
            }
            struct Stop: Error, Equatable {}
            #expect(throws: Stop()) { try pull.withReceivedMessage(dontWait: true) { _ in throw Stop() } }
            // After an error in the body the socket lends again.
            try push.send(bytes("c"))
            try Self.awaitMessage(pull)
            #expect(try pull.withReceivedMessage(dontWait: true) { Array($0[0]) } == bytes("c"))
        }
    }

    @Test("On a closed socket both new calls throw ENOTSOCK")
    func closedSocket() throws {
        try withContext { context in
            let socket = try makeSocket(context, .pull)
            socket.close()
            #expect(throws: ZeroMQError.notSocket) { try socket.withReceivedMessage(dontWait: true) { _ in } }
            #expect(throws: ZeroMQError.notSocket) {
                try [UInt8]([1]).withUnsafeBytes { try socket.send(bytes: $0) }
            }
        }
    }
}

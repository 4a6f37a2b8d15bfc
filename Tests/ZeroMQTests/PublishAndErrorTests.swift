// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

@Suite("PUB/SUB filters, socket type names and the errors libzmq gives for bad endpoints")
struct PublishAndErrorTests {
    /// Publishes `frame` every 10 ms until `subscriber` has a message (a subscription reaches the
    /// publisher asynchronously: zguide, "slow joiner"), then returns what it received.
    func publishUntilReceived(_ frame: [UInt8], on publisher: Socket, to subscriber: Socket) throws -> [[UInt8]] {
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            try publisher.send(frame)
            if try hasMessage(subscriber) { return try subscriber.receive(dontWait: true) }
            var items = [PollItem.socket(subscriber, events: .readable)]
            _ = try ZeroMQ.poll(&items, timeoutMilliseconds: 10)
        }
        throw TimedOut(what: "a subscribed message")
    }

    @Test("SUB receives only the prefixes it subscribed to; unsubscribe stops a prefix")
    func subscribeAndUnsubscribe() throws {
        try withContext { context in
            let endpoint = "inproc://pubsub-\(UUID().uuidString)"
            let publisher = try makeSocket(context, .pub)
            defer { publisher.close() }
            try publisher.bind(endpoint)
            let subscriber = try makeSocket(context, .sub)
            defer { subscriber.close() }
            try subscriber.connect(endpoint)
            try subscriber.subscribe(bytes("a"))

            #expect(try publishUntilReceived(bytes("a0"), on: publisher, to: subscriber) == [bytes("a0")])
            while try hasMessage(subscriber) { _ = try subscriber.receive(dontWait: true) }
            // A publisher keeps the order of its messages: "b1" would arrive before "a1" if it passed.
            try publisher.send(bytes("b1"))
            try publisher.send(bytes("a1"))
            #expect(try receive(subscriber) == [bytes("a1")])

            try subscriber.unsubscribe(bytes("a"))
            try subscriber.subscribe(bytes("b"))
            #expect(try publishUntilReceived(bytes("b2"), on: publisher, to: subscriber) == [bytes("b2")])
            while try hasMessage(subscriber) { _ = try subscriber.receive(dontWait: true) }
            try publisher.send(bytes("a3"))
            try publisher.send(bytes("b3"))
            #expect(try receive(subscriber) == [bytes("b3")])
        }
    }

    @Test("Socket types print libzmq's names; an unknown one its number")
    func socketTypeNames() {
        let names: [(SocketType, String)] = [
            (.pair, "PAIR"), (.pub, "PUB"), (.sub, "SUB"), (.req, "REQ"), (.rep, "REP"), (.dealer, "DEALER"),
            (.router, "ROUTER"), (.pull, "PULL"), (.push, "PUSH"), (.xpub, "XPUB"), (.xsub, "XSUB"),
        ]
        for (type, name) in names { #expect(type.description == name) }
        #expect(SocketType(rawValue: 99).description == "socket type 99")
        #expect(Set(names.map { $0.0.rawValue }).count == names.count, "every type is a different libzmq constant")
    }

    @Test("Bad endpoints fail with the errno libzmq sets, named in the description")
    func endpointErrors() throws {
        try withContext { context in
            let first = try makeSocket(context, .router)
            defer { first.close() }
            try first.bind("tcp://127.0.0.1:*")
            let taken = try first.lastEndpoint()
            let second = try makeSocket(context, .router)
            defer { second.close() }

            func failure(_ body: () throws -> Void) -> ZeroMQError? {
                do {
                    try body()
                    return nil
                } catch let error as ZeroMQError {
                    return error
                } catch {
                    return nil
                }
            }
            let inUse = failure { try second.bind(taken) }
            #expect(inUse == .addressInUse)
            #expect(inUse?.name == "EADDRINUSE")
            #expect(inUse?.description.hasSuffix("(EADDRINUSE, \(EADDRINUSE))") == true, "\(String(describing: inUse))")
            // 192.0.2.1 is TEST-NET-1 (RFC 5737): no interface of this machine has it; nothing is sent.
            let notHere = failure { try second.bind("tcp://192.0.2.1:5555") }
            #expect(notHere == .addressNotAvailable)
            #expect(notHere?.name == "EADDRNOTAVAIL")
            let noProtocol = failure { try second.bind("nosuch://endpoint") }
            #expect(noProtocol == .protocolNotSupported)
            #expect(noProtocol?.name == "EPROTONOSUPPORT")
        }
        #expect(ZeroMQError(rawValue: 9_999).name == nil)
        #expect(ZeroMQError(rawValue: 9_999).description.hasSuffix("(9999)"))
    }

    @Test("A monitor event prints its kind in hex, its value and its endpoint")
    func monitorEventDescription() {
        let event = MonitorEvent(kind: .connected, value: 7, endpoint: "ipc:///tmp/app/socket")
        #expect(event.description == "event 0x1 value 7 endpoint ipc:///tmp/app/socket")
    }
}

// SPDX-License-Identifier: Apache-2.0
// A ROUTER/DEALER round trip through SleepTap's ZeroMQ library product; prints what each side
// received and exits 0, or names the failure on stderr and exits 1.
import Foundation
import ZeroMQ

/// Binds a ROUTER on a free loopback port, connects a DEALER, sends "ping" and answers "pong"
/// through the routing id the ROUTER received.
/// - Returns: the DEALER's routing id as the ROUTER saw it, and the reply the DEALER received.
/// - Throws: `ZeroMQError` (`.again` when nothing arrives within 5 s).
func roundTrip() throws -> (routingId: String, reply: String) {
    let context = try Context()
    defer { context.terminate() }

    let router = try Socket(context: context, type: .router)
    defer { router.close() }
    try router.setLinger(milliseconds: 0)
    try router.setRouterMandatory(true)  // an unknown routing id is an error, not a silent drop
    try router.setReceiveTimeout(milliseconds: 5_000)
    try router.bind("tcp://127.0.0.1:*")  // any free port
    let endpoint = try router.lastEndpoint()

    let dealer = try Socket(context: context, type: .dealer)
    defer { dealer.close() }
    try dealer.setLinger(milliseconds: 0)
    try dealer.setReceiveTimeout(milliseconds: 5_000)
    try dealer.setRoutingId(Array("watch-1".utf8))
    try dealer.connect(endpoint)

    try dealer.send(Array("ping".utf8))
    let request = try router.receive()  // [routing id, "ping"]
    try router.send([request[0], Array("pong".utf8)])
    let reply = try dealer.receive()  // ["pong"]
    return (String(decoding: request[0], as: UTF8.self), String(decoding: reply[0], as: UTF8.self))
}

do {
    let (routingId, reply) = try roundTrip()
    print("ROUTER received ping from \(routingId); DEALER received \(reply)")
    let version = ZeroMQLibrary.version
    print("libzmq \(version.major).\(version.minor).\(version.patch)")
} catch {
    FileHandle.standardError.write(Data("zeromq-roundtrip: \(error)\n".utf8))
    exit(1)
}

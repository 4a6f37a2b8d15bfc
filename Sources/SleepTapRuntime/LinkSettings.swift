// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import ZeroMQ

/// Socket settings for the phone-watch link, each set on purpose because libzmq's default does
/// not suit it (defaults as listed in the zmq_setsockopt(3) man page, libzmq 4.3).
enum LinkSettings {
    /// Close immediately: nothing left queued may block shutdown (LINGER default -1 hangs).
    static let lingerMilliseconds: Int32 = 0
    /// ZMTP heartbeats: PING every 1 s, drop a silent peer after 3 s (a SIGSTOPped peer is
    /// otherwise never noticed).
    static let heartbeatInterval: Int32 = 1000
    static let heartbeatTimeout: Int32 = 3000
    static let heartbeatTTL: Int32 = 3000
    /// Reconnect quickly after a peer restart (default 100 ms), backing off to 1 s.
    static let reconnectInterval: Int32 = 50
    static let reconnectIntervalMax: Int32 = 1000

    /// The phone's ROUTER: ROUTER_MANDATORY (unroutable sends fail with EHOSTUNREACH instead of
    /// vanishing), ROUTER_HANDOVER (a restarted watch with the same routing id takes over),
    /// MAXMSGSIZE, heartbeats, LINGER 0.
    static func makeRouter(_ context: Context) throws -> Socket {
        let socket = try Socket(context: context, type: .router)
        do {
            try socket.setLinger(milliseconds: lingerMilliseconds)
            try socket.setRouterMandatory(true)
            try socket.setRouterHandover(true)
            try socket.setMaxMessageSize(Int64(WireCodec.maxFrameBytes))
            try socket.setHeartbeat(interval: heartbeatInterval, timeout: heartbeatTimeout, ttl: heartbeatTTL)
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    /// The watch's DEALER: fixed routing id, IMMEDIATE (no queueing for a phone that is not
    /// there: HELLO is sent on each handshake instead), MAXMSGSIZE, heartbeats, LINGER 0.
    static func makeDealer(_ context: Context, routingId: String) throws -> Socket {
        let socket = try Socket(context: context, type: .dealer)
        do {
            try socket.setLinger(milliseconds: lingerMilliseconds)
            try socket.setRoutingId(Array(routingId.utf8))
            try socket.setImmediate(true)
            try socket.setMaxMessageSize(Int64(WireCodec.maxFrameBytes))
            try socket.setHeartbeat(interval: heartbeatInterval, timeout: heartbeatTimeout, ttl: heartbeatTTL)
            try socket.setReconnectInterval(milliseconds: reconnectInterval, max: reconnectIntervalMax)
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    /// A human description of a ZeroMQ failure for stderr.
    static func describe(_ error: any Error) -> String {
        String(describing: error)
    }
}

/// Reads every message waiting on `socket` without blocking.
func drainMessages(_ socket: Socket) -> [[[UInt8]]] {
    var messages: [[[UInt8]]] = []
    while true {
        do {
            messages.append(try socket.receive(dontWait: true))
        } catch {
            break  // EAGAIN: nothing more; anything else: the next poll will say
        }
        if messages.count >= 1000 { break }  // let timers and input run between floods
    }
    return messages
}

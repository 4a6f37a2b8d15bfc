// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore

#if canImport(Glibc)
    import Glibc
#endif

/// The twin's watch ports: what `WatchDriver` performs the watch node's actions on in the twin,
/// the embedded counterparts of the `watch` process's DEALER, state file, poll-loop timers,
/// stdout and stderr.
///
/// The link to the phone, the state store and stderr are the watch's own; the timer heap and the
/// log are the twin's, shared with the phone, and lent to the ports for the length of one watch
/// input (`Twin` swaps them in and out), so both sides arm on one heap and write one log in
/// order.
struct EmbeddedWatchPorts: WatchPorts, Sendable {
    /// The twin's timer heap, lent for one input (an empty one otherwise).
    var scheduler: VirtualScheduler<Twin.Timer>
    /// The twin's log, lent for one input (empty otherwise).
    var log: [Twin.Entry] = []
    /// The link from the watch to the phone.
    var link: FaultyLink<WireMessage>
    /// The bytes of the wire frames this side put on the link (`Twin.measureLinkBytes()`).
    var meter = LinkByteMeter()
    /// The watch's state file (`watch.json`).
    var store = FlakyStore<WatchSyncState>()
    /// What the watch wrote on stderr, with the virtual instants.
    var standardError: [(at: Date, line: String)] = []
    /// Whether the watch process runs.
    var running = false
    /// Whether the watch holds a connection to the running phone. Without one, sends fail as on
    /// the DEALER with ZMQ_IMMEDIATE (EAGAIN).
    var connected = false
    /// Whether the node asked for a reconnect in the input being handled: the twin connects
    /// after the input, as the socket monitor of the process reports the connection after it.
    var reconnectAsked = false
    /// The virtual instant wall second 0 maps to.
    let start: Date
    /// Virtual seconds per wall second.
    let speed: Double

    /// Ports for a watch that does not run yet, sending on `link`.
    /// - Parameters:
    ///   - start: the twin's start (wall second 0).
    ///   - speed: virtual seconds per wall second.
    ///   - link: the link from the watch to the phone.
    init(start: Date, speed: Double, link: FaultyLink<WireMessage>) {
        self.start = start
        self.speed = speed
        self.link = link
        scheduler = VirtualScheduler(start: start)
    }

    func now() -> NodeTime {
        let now = scheduler.now
        return NodeTime(now: now, wall: now.timeIntervalSince(start) / speed)
    }

    var isStopping: Bool { !running }

    mutating func send(_ message: WireMessage, at time: NodeTime) -> WatchNode.SendResult {
        guard connected, link.send(message, at: scheduler.now) else { return .failed(reason: "no connection (EAGAIN)") }
        meter.count(message)
        return .sent
    }

    mutating func save(_ state: WatchSyncState) -> PersistResult {
        store.write(state).map { .failed(errno: $0, reason: Errno($0).message) } ?? .succeeded
    }

    mutating func arm(_ timer: WatchTimer, _ deadline: TimerDeadline) {
        switch deadline {
        case .after(let seconds): scheduler.arm(.watch(timer), at: scheduler.now.addingTimeInterval(seconds * speed))
        case .at(let instant): scheduler.arm(.watch(timer), at: instant)
        }
    }

    mutating func cancel(_ timer: WatchTimer) { scheduler.cancel(.watch(timer)) }

    mutating func emit(_ event: Event, at instant: Date) {
        log.append(Twin.Entry(at: instant, source: .watch, event: event))
    }

    mutating func diagnose(_ line: String) { standardError.append((scheduler.now, line)) }

    mutating func reconnect() -> WatchNode.ReconnectResult {
        reconnectAsked = true
        return .succeeded
    }

    mutating func stop() {
        running = false
        connected = false
    }
}

// SPDX-License-Identifier: Apache-2.0

package import Foundation

/// What a `WatchDriver` performs the watch node's actions on: the link to the phone, the state
/// file, the timers, the event output, stderr and the process's end.
///
/// The `watch` process gives the ZeroMQ DEALER, the state file (`AtomicFile`) and its poll
/// loop's timers; the embedded twin gives its `FaultyLink`, `FlakyStore` and
/// `VirtualScheduler`. A port performs and reports; it decides nothing (the node does). The
/// shape follows swift-nio's `EmbeddedChannel`, which hosts the real handler on simulated I/O.
package protocol WatchPorts {
    /// Both time bases now (virtual now, monotonic wall seconds): what the node's next input
    /// carries.
    mutating func now() -> NodeTime
    /// Whether the process is stopping: once true, no further action is performed (`*.stopping`
    /// is the last line).
    var isStopping: Bool { get }
    /// Sends `message` to the phone without waiting (a HELLO carries `time.now` as its `sentAt`).
    /// - Parameters:
    ///   - message: the message.
    ///   - time: the moment of the send.
    /// - Returns: whether it was queued, or why not in words.
    mutating func send(_ message: WireMessage, at time: NodeTime) -> WatchNode.SendResult
    /// Writes `state` durably (written and fsync'd before it returns).
    /// - Returns: `.succeeded`, or the failure with its errno.
    mutating func save(_ state: WatchSyncState) -> PersistResult
    /// Arms `timer` at `deadline`, replacing an earlier deadline of the same timer. A wall
    /// duration (`.after`) counts from now; a virtual instant (`.at`) is mapped through the
    /// port's clock.
    mutating func arm(_ timer: WatchTimer, _ deadline: TimerDeadline)
    /// Disarms `timer`; one not armed stays unarmed.
    mutating func cancel(_ timer: WatchTimer)
    /// Writes `event` as one event line stamped with the virtual `instant`.
    mutating func emit(_ event: Event, at instant: Date)
    /// Writes `line` to stderr (the port prefixes the program name).
    mutating func diagnose(_ line: String)
    /// Disconnects from the phone's endpoint and connects again.
    /// - Returns: whether both calls succeeded, or why not in words.
    mutating func reconnect() -> WatchNode.ReconnectResult
    /// Stops the process cleanly: `isStopping` is true from now on.
    mutating func stop()
}

/// A message from the phone as the watch node takes it: decoded at the edge (by the driver,
/// from the DEALER's frames) or refused with the reason.
public enum WatchInbound: Equatable, Sendable {
    /// A message that passed `WireCodec.decode`.
    case message(WireMessage)
    /// Frames that did not: the reason in words, and whether to answer with ERROR (never to a
    /// frame that claims to be an ERROR itself, so two peers never trade ERRORs forever).
    case refused(reason: String, answer: Bool)

    /// What a DEALER hands over, decoded: exactly one frame, then `WireCodec.decode` (the strict
    /// scan and the protocol's rules, docs/protocol.md).
    /// - Parameter frames: the frames of one ZeroMQ message.
    public init(frames: [[UInt8]]) {
        guard frames.count == 1 else {
            self = .refused(reason: "expected 1 frame, got \(frames.count)", answer: true)
            return
        }
        do throws(ProtocolError) {
            self = .message(try WireCodec.decode(frames[0]))
        } catch {
            self = .refused(reason: error.reason, answer: !WireCodec.claimsToBeError(frames[0]))
        }
    }
}

/// The one interpreter of `WatchAction`, for the `watch` process and the embedded twin alike:
/// it hands the node each input at the ports' now, performs the actions it returns in order, and
/// feeds each result back (a send, a write, a reconnect) as the node's next input before the
/// rest. It decides nothing itself.
///
/// Durable before acknowledged: a `persist` ends an action list, and what depends on it comes
/// from `WatchNode.persisted(_:at:)`, which the driver calls with the write's result.
package struct WatchDriver<Ports: WatchPorts> {
    /// The machine. Replacing it is a new process on the same ports (the twin's restart).
    package var node: WatchNode
    /// What the actions are performed on.
    package var ports: Ports

    /// A driver of `node` on `ports`; nothing runs until the first input (`start`).
    /// - Parameters:
    ///   - node: the watch node, built from its configuration and stored state.
    ///   - ports: the link, state file, timers, output and stop of its host.
    @inlinable
    package init(node: WatchNode, ports: Ports) {
        self.node = node
        self.ports = ports
    }

    // MARK: Inputs

    /// The process started (`WatchNode.start(processID:at:)`).
    /// - Parameter processID: the pid `watch.started` names.
    @inlinable
    package mutating func start(processID: Int32) {
        let time = ports.now()
        run(node.start(processID: processID, at: time))
    }

    /// One ZeroMQ message from the phone, decoded here (`WatchInbound(frames:)`).
    /// - Parameter frames: the message's frames.
    @inlinable
    package mutating func received(frames: [[UInt8]]) {
        let inbound = WatchInbound(frames: frames)
        let time = ports.now()
        run(node.received(inbound, at: time))
    }

    /// One message from the phone already decoded (the twin's typed link, `WireCodec.delivered`).
    /// - Parameter message: the message.
    @inlinable
    package mutating func received(message: WireMessage) {
        let time = ports.now()
        run(node.received(message: message, at: time))
    }

    /// What the transport reported about the link (the socket monitor).
    /// - Parameter event: the link event.
    @inlinable
    package mutating func link(_ event: WatchLinkEvent) {
        let time = ports.now()
        run(node.link(event, at: time))
    }

    /// An armed timer is due (already disarmed by the port).
    /// - Parameter timer: the timer.
    @inlinable
    package mutating func timerFired(_ timer: WatchTimer) {
        let time = ports.now()
        run(node.timerFired(timer, at: time))
    }

    /// A line of the watch's stdin language.
    /// - Parameter line: the line, without its newline.
    @inlinable
    package mutating func command(line: String) {
        let time = ports.now()
        run(node.command(line: line, at: time))
    }

    /// A signal, a closed output or Ctrl-D on a terminal.
    /// - Parameter cause: why the process stops.
    @inlinable
    package mutating func stop(_ cause: StopCause) {
        let time = ports.now()
        run(node.stop(cause, at: time))
    }

    /// The process ends without a stop (its loop failed): what the rate limits still hold back.
    @inlinable
    package mutating func finish() {
        let time = ports.now()
        run(node.finish(at: time))
    }

    // MARK: The interpreter

    /// Performs `actions` in order, feeding each result back to the node before the next (one
    /// loop, so each action is copied once).
    @inlinable
    mutating func run(_ actions: [WatchAction]) {
        for action in actions {
            // `watch.stopping` is the last line: once the process stops, nothing more is done.
            guard !ports.isStopping else { return }
            switch action {
            case .send(let message):
                let time = ports.now()
                let result = ports.send(message, at: time)
                run(node.sent(message, result, at: ports.now()))
            case .persist(let state):
                let result = ports.save(state)
                run(node.persisted(result, at: ports.now()))
            case .arm(let timer, let deadline):
                ports.arm(timer, deadline)
            case .cancel(let timer):
                ports.cancel(timer)
            case .emit(let event, let instant):
                ports.emit(event, at: instant)
            case .diagnose(let line):
                ports.diagnose(line)
            case .reconnect:
                let result = ports.reconnect()
                run(node.reconnected(result, at: ports.now()))
            case .stop:
                ports.stop()
            }
        }
    }
}

extension WatchDriver: Sendable where Ports: Sendable {}

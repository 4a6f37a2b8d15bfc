// SPDX-License-Identifier: Apache-2.0

import Foundation
public import SleepTapCore
import ZeroMQ

/// The `watch` process: start-up (signals, state dir, state file, keys), a ZeroMQ DEALER plus a
/// socket monitor that reports connections and handshakes, then `WatchDriver` runs `WatchNode`.
public final class WatchRuntime {
    private let options: WatchOptions
    private let program = "watch"

    public init(options: WatchOptions) { self.options = options }

    /// Runs until SIGINT, SIGTERM or `quit`.
    /// - Returns: the process exit status.
    public func run() -> ExitCode {
        let clock = options.clock.makeClock()
        let output = EventOutput(clock: clock, process: .watch)

        let startUp: StartUp<WatchSyncState>
        switch StartUp<WatchSyncState>.begin(
            role: .watch, stateDirectory: options.stateDirectory, fileName: "watch.json",
            keysDirectory: options.keysDirectory, output: output, validate: { $0.validationProblem })
        {
        case .success(let value): startUp = value
        case .failure(let exit): return exit
        }
        defer { startUp.close() }
        let mailbox = startUp.mailbox
        let stateFile = startUp.stateFile
        let loaded = startUp.loaded
        let keys = startUp.keys

        let context: Context
        let dealer: Socket
        let monitor: Socket
        let monitorEndpoint = "inproc://sleeptap-watch-monitor"
        do {
            context = try Context()
            dealer = try LinkSettings.makeDealer(context, routingId: options.id)
            if let keys { try dealer.setCurveClient(keys: keys.mine, serverPublicKey: keys.peerPublicKey) }
            try dealer.monitor(
                endpoint: monitorEndpoint,
                events: [.connected, .connectRetried, .handshakeSucceeded, .disconnected, .handshakeFailed])
            monitor = try Socket(context: context, type: .pair)
            try monitor.setLinger(milliseconds: 0)
            try monitor.connect(monitorEndpoint)
        } catch {
            diagnose(program, "cannot create a ZeroMQ socket: \(error)")
            return .software
        }
        defer {
            try? dealer.stopMonitor()
            dealer.close()
            monitor.close()
            context.terminate()
        }
        if !options.insecure, let problem = IPCDirectoryPolicy.problem(for: options.endpoint, create: false) {
            diagnose(program, "refusing \(options.endpoint): \(problem)")
            return .unavailable
        }
        if let problem = EndpointDiagnosis.connectProblem(options.endpoint) {
            diagnose(program, "cannot connect to \(options.endpoint): \(problem)")
            return .unavailable
        }
        do {
            try dealer.connect(options.endpoint.description)
        } catch {
            diagnose(program, "cannot connect to \(options.endpoint): \(error)")
            return .unavailable
        }

        StandardInputReader.start(posting: mailbox)
        let driver = WatchDriver(
            node: WatchNode(
                configuration: options.nodeConfiguration(
                    statePath: stateFile.path, keysDirectory: keys == nil ? nil : options.keysDirectory,
                    systemZone: MachineZone.current),
                state: loaded),
            dealer: dealer, monitor: monitor, mailbox: mailbox, stateFile: stateFile, clock: clock, output: output)
        let status = driver.run()
        return output.failure == nil ? status : .ioError
    }
}

/// Drives a `WatchNode`: maps the DEALER, the monitor, the mailbox and the timers to node inputs
/// and performs the node's actions, in order, in `run(_:)`. It makes no protocol decision.
///
/// Thread-safety: create, run and drop on one thread (it owns the sockets' use).
final class WatchDriver {
    private var node: WatchNode
    private let dealer: Socket
    private let monitor: Socket
    /// This process's HELLO `instance`: 64 random bits chosen at start.
    private let instance = UInt64.random(in: 1...UInt64.max)
    private let stateFile: StateFile<WatchSyncState>
    private let clock: any SleepTapCore.Clock
    private let output: EventOutput
    private let loop: EventLoop<WatchTimer>
    /// The node's virtual now and monotonic wall seconds.
    private lazy var times = NodeTimeSource(clock: clock)

    init(
        node: WatchNode, dealer: Socket, monitor: Socket, mailbox: Mailbox, stateFile: StateFile<WatchSyncState>,
        clock: any SleepTapCore.Clock, output: EventOutput
    ) {
        self.node = node
        self.dealer = dealer
        self.monitor = monitor
        self.stateFile = stateFile
        self.clock = clock
        self.output = output
        loop = EventLoop(sockets: [dealer, monitor], mailbox: mailbox, output: output)
    }

    /// Both time bases now.
    private var time: NodeTime { times.now() }

    /// Runs until the node stops.
    /// - Returns: the process exit status.
    func run() -> ExitCode {
        var exitStatus = ExitCode.ok
        run(node.start(processID: getpid(), at: time))
        do {
            try loop.run(
                readable: { index in
                    if index == 1 {
                        for frames in drainMessages(monitor) {
                            guard let event = MonitorEvent(frames: frames) else { continue }
                            run(node.link(Self.linkEvent(event), at: time))
                        }
                    } else {
                        for frames in drainMessages(dealer) { run(node.received(frames: frames, at: time)) }
                    }
                },
                input: { item in
                    switch item {
                    case .stop(let cause): run(node.stop(cause, at: time))
                    case .endOfInput: break
                    case .line(let line): run(node.command(line: line, at: time))
                    }
                },
                timer: { timer in run(node.timerFired(timer, at: time)) })
        } catch {
            diagnose("watch", "poll failed: \(error)")
            exitStatus = .software
        }
        run(node.finish(at: time))
        return exitStatus
    }

    /// Performs `actions` in order, feeding each result back to the node.
    private func run(_ actions: [WatchAction]) {
        for action in actions { run(action) }
    }

    /// The one interpreter of `WatchAction`.
    private func run(_ action: WatchAction) {
        // `*.stopping` is the last line: once the loop is told to stop, nothing more is done.
        guard !loop.stopping else { return }
        switch action {
        case .send(let message):
            do {
                // A HELLO says when (this side's virtual now) and which process sent it.
                try dealer.send(WireCodec.encode(message, sentAt: time.now, instance: instance), dontWait: true)
                run(node.sent(message, .sent, at: time))
            } catch {
                run(node.sent(message, .failed(reason: String(describing: error)), at: time))
            }
        case .persist(let state):
            do {
                try stateFile.save(state)
                run(node.persisted(.succeeded, at: time))
            } catch {
                run(node.persisted(.failed(errno: error.errno?.code, reason: error.reason), at: time))
            }
        case .arm(let timer, .after(let seconds)):
            loop.arm(timer, after: seconds)
        case .arm(let timer, .at(let instant)):
            loop.arm(timer, at: clock.wallDate(for: instant))
        case .cancel(let timer):
            loop.cancel(timer)
        case .emit(let event, let instant):
            output.emit(event, at: instant)
        case .diagnose(let line):
            diagnose("watch", line)
        case .reconnect:
            let endpoint = node.configuration.endpoint
            try? dealer.disconnect(endpoint)
            do {
                try dealer.connect(endpoint)
                run(node.reconnected(.succeeded, at: time))
            } catch {
                run(node.reconnected(.failed(reason: "\(error)"), at: time))
            }
        case .stop:
            loop.stop()
        }
    }

    /// A socket monitor event as the node's link input.
    private static func linkEvent(_ event: MonitorEvent) -> WatchLinkEvent {
        if event.kind.contains(.connected) { return .connected }
        if event.kind.contains(.connectRetried) { return .connectRetried }
        if event.kind.contains(.handshakeSucceeded) { return .handshakeSucceeded }
        if event.kind.contains(.disconnected) { return .disconnected }
        return .handshakeFailed(
            code: event.value, authentication: event.kind.contains(.handshakeFailedAuth),
            description: event.handshakeFailureDescription)
    }
}

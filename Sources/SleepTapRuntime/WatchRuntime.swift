// SPDX-License-Identifier: Apache-2.0

import Foundation
package import SleepTapCore
import ZeroMQ

/// The `watch` process: start-up (signals, state dir, state file, keys), a ZeroMQ DEALER plus a
/// socket monitor that reports connections and handshakes, then `WatchDriver` runs `WatchNode`.
package final class WatchRuntime {
    private let options: WatchOptions
    private let program = "watch"

    package init(options: WatchOptions) { self.options = options }

    /// Runs until SIGINT, SIGTERM or `quit`.
    /// - Returns: the process exit status.
    package func run() -> ExitCode {
        let clock = options.clock.makeClock()
        let output = EventOutput(clock: clock, process: .watch)

        let startUp: StartUp<WatchSyncState>
        switch StartUp<WatchSyncState>.begin(
            role: .watch, stateDirectory: options.stateDirectory, fileName: "watch.json",
            keysDirectory: options.keysDirectory, output: output, validate: { $0.validationProblem },
            preflight: {
                // A socket directory that would be refused is refused before the state dir is made.
                guard !options.insecure, let problem = IPCDirectoryPolicy.problem(for: options.endpoint, create: false)
                else { return nil }
                diagnose(program, "refusing \(options.endpoint): \(problem)")
                return .unavailable
            })
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
        let node = WatchNode(
            configuration: options.nodeConfiguration(
                statePath: stateFile.path, keysDirectory: keys == nil ? nil : options.keysDirectory,
                systemZone: MachineZone.current),
            state: loaded)
        let loop = WatchLoop(
            node: node, dealer: dealer, monitor: monitor, mailbox: mailbox, stateFile: stateFile, clock: clock,
            output: output)
        let rangeEnd = ClockRangeWatch(options.clock, mailbox: mailbox)
        let status = loop.run()
        if rangeEnd.reached {
            diagnose(program, ClockRangeWatch.message)
            return .usage
        }
        return output.failure == nil ? status : .ioError
    }
}

/// The `watch` process's ports: the DEALER, the state file, the poll loop's timers, stdout and
/// stderr. `WatchDriver` performs the node's actions on them.
struct WatchProcessPorts: WatchPorts {
    let dealer: Socket
    /// The endpoint a `.reconnect` disconnects from and connects to again.
    let endpoint: String
    /// This process's HELLO `instance`: 64 random bits chosen at start.
    let instance = UInt64.random(in: 1...UInt64.max)
    let stateFile: StateFile<WatchSyncState>
    let clock: any SleepTapCore.Clock
    let output: EventOutput
    let loop: EventLoop<WatchTimer>
    /// The node's virtual now and monotonic wall seconds.
    let times: NodeTimeSource

    func now() -> NodeTime { times.now() }

    var isStopping: Bool { loop.stopping }

    func send(_ message: WireMessage, at time: NodeTime) -> WatchNode.SendResult {
        do {
            // A HELLO says when (this side's virtual now) and which process sent it.
            try dealer.send(WireCodec.encode(message, sentAt: time.now, instance: instance), dontWait: true)
            return .sent
        } catch {
            return .failed(reason: String(describing: error))
        }
    }

    func save(_ state: WatchSyncState) -> PersistResult {
        do {
            try stateFile.save(state)
            return .succeeded
        } catch {
            return .failed(errno: error.errno?.code, reason: error.reason)
        }
    }

    func arm(_ timer: WatchTimer, _ deadline: TimerDeadline) {
        switch deadline {
        case .after(let seconds): loop.arm(timer, after: seconds)
        case .at(let instant): loop.arm(timer, at: clock.wallDate(for: instant))
        }
    }

    func cancel(_ timer: WatchTimer) { loop.cancel(timer) }

    func emit(_ event: Event, at instant: Date) { output.emit(event, at: instant) }

    func diagnose(_ line: String) { SleepTapRuntime.diagnose("watch", line) }

    func reconnect() -> WatchNode.ReconnectResult {
        try? dealer.disconnect(endpoint)
        do {
            try dealer.connect(endpoint)
            return .succeeded
        } catch {
            return .failed(reason: "\(error)")
        }
    }

    func stop() { loop.stop() }
}

/// The `watch` process's poll loop: maps the DEALER, the socket monitor, the mailbox and the
/// timers to the inputs of its `WatchDriver`. It makes no protocol decision.
///
/// Thread-safety: create, run and drop on one thread (it owns the sockets' use).
final class WatchLoop {
    private var driver: WatchDriver<WatchProcessPorts>
    private let dealer: Socket
    private let monitor: Socket
    private let loop: EventLoop<WatchTimer>

    init(
        node: WatchNode, dealer: Socket, monitor: Socket, mailbox: Mailbox, stateFile: StateFile<WatchSyncState>,
        clock: any SleepTapCore.Clock, output: EventOutput
    ) {
        self.dealer = dealer
        self.monitor = monitor
        let loop = EventLoop<WatchTimer>(sockets: [dealer, monitor], mailbox: mailbox, output: output)
        self.loop = loop
        driver = WatchDriver(
            node: node,
            ports: WatchProcessPorts(
                dealer: dealer, endpoint: node.configuration.endpoint, stateFile: stateFile, clock: clock,
                output: output, loop: loop, times: NodeTimeSource(clock: clock)))
    }

    /// Runs until the node stops.
    /// - Returns: the process exit status.
    func run() -> ExitCode {
        var exitStatus = ExitCode.ok
        driver.start(processID: getpid())
        do {
            try loop.run(
                readable: { index in
                    if index == 1 {
                        for frames in drainMessages(monitor) {
                            guard let event = MonitorEvent(frames: frames) else { continue }
                            driver.link(Self.linkEvent(event))
                        }
                    } else {
                        for frames in drainMessages(dealer) { driver.received(frames: frames) }
                    }
                },
                input: { item in
                    switch item {
                    case .stop(let cause): driver.stop(cause)
                    case .endOfInput: break
                    case .line(let line): driver.command(line: line)
                    }
                },
                timer: { timer in driver.timerFired(timer) })
        } catch {
            diagnose("watch", "poll failed: \(error)")
            exitStatus = .software
        }
        driver.finish()
        return exitStatus
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

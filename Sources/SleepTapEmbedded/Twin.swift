// SPDX-License-Identifier: Apache-2.0

public import Foundation
public import SleepTapCore
public import SleepTapOS

/// Something that happens to the twin at a virtual instant (a scenario step).
public enum TwinStep: Sendable {
    /// A line of the phone's stdin language (`open`, `time-zone Asia/Tokyo`, `reboot`, …).
    case phone(String)
    /// A line of the watch's stdin language (`bed`, `time-zone Europe/Berlin`, `07:30`, …).
    case watch(String)
    /// The phone goes out of the watch's reach (messages in flight are lost) or comes back.
    case link(up: Bool)
    /// The phone process restarts; `keepState: false` starts it from an empty state dir (the OS
    /// state is the device's and survives either way). The same as `.phone("quit")` then
    /// `.startPhone(keepState:)` at the same instant.
    case restartPhone(keepState: Bool)
    /// A phone process starts (after `.phone("quit")` ended the last one; ignored while one
    /// runs), on the state dir as it is or, with `keepState: false`, an empty one. The watch's
    /// link comes up with it.
    case startPhone(keepState: Bool)
    /// The watch process restarts, with or without its state file: a clean stop (`watch.stopping`,
    /// as `.watch("quit")`) when one runs, then `.startWatch(keepState:)` at the same instant.
    case restartWatch(keepState: Bool)
    /// A watch process starts (after `.watch("quit")` or `.killWatch` ended the last one; ignored
    /// while one runs), on its state file as it is or, with `keepState: false`, without one. The
    /// alarms the file holds are re-armed (one that came due while no watch ran rings at start).
    case startWatch(keepState: Bool)
    /// The phone process is killed (SIGKILL): no `phone.stopping`, no held-back event counts said,
    /// its timers and whatever was in flight on its connection lost; the state dir keeps what the
    /// last write left (each write is whole, by rename(2)). Ignored when no phone runs.
    case killPhone
    /// The watch process is killed (SIGKILL): no `watch.stopping`, its timers and what was in
    /// flight lost, the state file as last written. Ignored when no watch runs.
    case killWatch
    /// The phone's next writes fail: the 1-based numbers of the coming writes, with this errno.
    case failPhoneWrites(Set<Int>, errno: Int32)
}

/// The embedded twin: the real `PhoneNode` and `WatchNode` in one process, driven by a
/// virtual-time timer heap (every timer the processes would arm fires here too: resend, HELLO
/// retry, heartbeats, handshake and relink, the OS's launches, the nightly tap), linked by an
/// in-memory link with seeded faults, writing to in-memory stores that can fail on demand.
///
/// Wall-clock durations (transport timing) become virtual durations at `speed` virtual seconds
/// per wall second, as in the processes run with `--clock-speed`. Everything is deterministic:
/// the same configuration and steps give the same log.
public struct Twin: Sendable {
    /// The tz database the phone runs on (`phone --tzdata`), and the watch too unless
    /// `watchZones` names its own; nil = the one in use where the twin runs (`ZoneDatabase.current`).
    public var zones: ZoneDatabase?
    /// The watch's own tz database (`watch --tzdata`): every input the watch node handles runs
    /// with it as `ZoneDatabase.current` (its local-time planning, bed taps, manual fallback), as
    /// a watch whose OS ships older tzdata than the phone's; nil = `zones`.
    public var watchZones: ZoneDatabase?
    /// The timers of both nodes, on one heap.
    public enum Timer: Hashable, Sendable {
        /// A timer of the phone node (resend, heartbeat, the OS's launch, …).
        case phone(PhoneTimer)
        /// A timer of the watch node (HELLO retry, heartbeat, the nightly tap, …).
        case watch(WatchTimer)
    }

    /// What the in-memory link hands the receiving node.
    public enum LinkMode: Sendable, Equatable {
        /// The frame `WireCodec.encode` writes, which the receiving node decodes with
        /// `WireCodec.decode` (the strict scan and `JSONSerialization`), as on the sockets.
        case frames
        /// The message value the frame would decode to (`WireCodec.delivered`: instants floored
        /// to the whole second, the batch checked entry by entry), handed to the node's
        /// `received(message:)` without writing or parsing JSON; a message that might not
        /// survive the wire goes as its frame. The same events and run records as `.frames`
        /// (`TwinLinkModeTests`), at a fraction of the cost: the fleet's mode.
        case messages
    }

    /// One line of the log: when, who (`phone`, `watch`, or `os` for the simulated OS's events),
    /// and the event, as the processes would write it.
    public struct Entry: Sendable {
        /// The event's virtual instant.
        public var at: Date
        /// Which side wrote it.
        public var source: EventSource
        /// The event.
        public var event: Event

        /// The line the process would write.
        public var jsonLine: String { event.jsonLine(time: at, process: source) }
    }

    /// The virtual instant both processes start at.
    public let start: Date
    /// Virtual seconds per wall second.
    public let speed: Double
    /// How messages reach the other node (`.frames` unless given).
    public let linkMode: LinkMode
    /// Every event both sides wrote, in the order they wrote them.
    public private(set) var log: [Entry] = []
    /// The phone's run records (docs/metrics.md), in the order the phone made them: what
    /// `phone --metrics-dir` would have written.
    public var runRecords: [RunRecord] { phoneDriver.ports.runRecords }
    /// The steps performed (link changes, restarts, commands), with their virtual instants.
    public private(set) var performed: [(at: Date, step: TwinStep)] = []
    /// The steps that found their process in the wrong state and did nothing (a line or a kill
    /// for a process that is not running, a start of one that runs; a restart of a stopped one
    /// starts it and is listed too): the index in `performed`, and which process (`phone` or
    /// `watch`) and whether it ran.
    public private(set) var misdirected: [(index: Int, process: EventSource, running: Bool)] = []
    /// What the watch wrote on stderr, with the virtual instants.
    public var watchStandardError: [(at: Date, line: String)] { watchDriver.ports.standardError }
    /// How many times each timer fired (for reports, and to show resends and heartbeats at work).
    public private(set) var fired: [Timer: Int] = [:]
    /// The event loop: every timer both nodes armed, and the virtual now.
    public private(set) var scheduler: VirtualScheduler<Timer>
    /// The link from the phone to the watch.
    public var toWatch: FaultyLink<WireMessage> { phoneDriver.ports.link }
    /// The link from the watch to the phone.
    public var toPhone: FaultyLink<WireMessage> { watchDriver.ports.link }
    /// The phone's state file (`phone.json`), as a restarted phone would read it.
    public var phoneStore: FlakyStore<PhoneSyncState> { phoneDriver.ports.store }
    /// The simulated OS's state file (`os.json`): the device's, it outlives the app.
    public var osStore: FlakyStore<SimulatedOS> { phoneDriver.ports.osStore }
    /// The watch's state file (`watch.json`).
    public var watchStore: FlakyStore<WatchSyncState> { watchDriver.ports.store }
    /// The phone node of the running (or last) phone process.
    public var phone: PhoneNode { phoneDriver.node }
    /// The phone node on the twin's ports: the driver the `phone` process runs, on embedded I/O.
    private var phoneDriver: PhoneDriver<EmbeddedPhonePorts>
    /// The watch node.
    public var watch: WatchNode { watchDriver.node }
    /// `WatchNode.requestChecksLow` of every watch this twin ran, the one running included.
    public var watchRequestChecksLow: Int { retiredRequestChecksLow + watchDriver.node.requestChecksLow }
    private var retiredRequestChecksLow = 0
    /// The watch node on the twin's ports: the driver the `watch` process runs, on embedded I/O.
    private var watchDriver: WatchDriver<EmbeddedWatchPorts>
    /// How the phone is built at every start.
    public private(set) var phoneSetup: PhoneSetup
    /// The watch's configuration.
    public let watchSetup: WatchNode.Configuration
    private var random: SplitMix64
    private var steps: [(at: Date, order: Int, step: Scheduled)] = []
    private var stepOrder = 0
    /// Whether each process runs (both start at `boot`).
    public var phoneRunning: Bool { phoneDriver.ports.running }
    /// Whether the watch process runs.
    public var watchRunning: Bool { watchDriver.ports.running }
    /// The running watch process's HELLO `instance`, drawn at each start from its own stream so
    /// the twin's other draws stay as they were (`WireCodec.Hello.instance`).
    private var watchInstance: UInt64 = 0
    private var watchInstances: SplitMix64
    /// Whether the watch holds a connection to the running phone (made when both run and the
    /// link is up). Without one, sends fail as on the sockets: the phone's ROUTER says
    /// EHOSTUNREACH (ZMQ_ROUTER_MANDATORY), the watch's DEALER EAGAIN (ZMQ_IMMEDIATE).
    public var connected: Bool { watchDriver.ports.connected }
    /// Phone processes started so far (the first one runs the node made at `init`).
    private var phoneStarts = 0

    /// A step, or a process's first start at `boot`.
    private enum Scheduled: Sendable {
        case step(TwinStep)
        case bootPhone
        case bootWatch
    }

    /// - Parameters:
    ///   - start: the virtual instant both processes start at.
    ///   - speed: virtual seconds per wall second (what `--clock-speed` would be).
    ///   - phone: how to build the phone.
    ///   - watch: the watch's configuration.
    ///   - faults: link faults, the same both ways.
    ///   - seed: seeds the link faults and the phone's epochs (SplitMix64).
    ///   - linkMode: frames decoded by the receiving node (the default), or message values.
    public init(
        start: Date, speed: Double = 1, phone: PhoneSetup, watch: WatchNode.Configuration,
        faults: LinkFaults = .none, seed: UInt64 = 0, linkMode: LinkMode = .frames
    ) {
        self.start = start
        self.speed = max(speed, 1e-9)
        self.linkMode = linkMode
        var random = SplitMix64(state: seed)
        watchInstances = SplitMix64(state: seed ^ 0x5754_4348_494E_5354)
        let toWatch = FaultyLink<WireMessage>(faults: faults, seed: random.next())
        let toPhone = FaultyLink<WireMessage>(faults: faults, seed: random.next())
        scheduler = VirtualScheduler(start: start)
        phoneSetup = phone
        watchSetup = watch
        phoneDriver = PhoneDriver(
            node: Self.makePhone(phone, state: nil, os: nil, random: &random, at: start),
            ports: EmbeddedPhonePorts(
                start: start, speed: self.speed, link: toWatch, weather: phone.weather, schedule: phone.schedule))
        watchDriver = WatchDriver(
            node: WatchNode(configuration: watch),
            ports: EmbeddedWatchPorts(start: start, speed: self.speed, link: toPhone))
        self.random = random
    }

    private static func makePhone(
        _ setup: PhoneSetup, state: PhoneSyncState?, os: SimulatedOS?, random: inout SplitMix64, at now: Date
    ) -> PhoneNode {
        setup.makeNode(state: state, os: os, randomSeed: random.next(), at: now)
    }

    /// Adds a step at the virtual instant `at` (steps at the same instant run in the order added).
    public mutating func schedule(_ step: TwinStep, at instant: Date) {
        add(.step(step), at: instant)
    }

    private mutating func add(_ step: Scheduled, at instant: Date) {
        steps.append((instant, stepOrder, step))
        stepOrder += 1
        steps.sort { ($0.at, $0.order) < ($1.at, $1.order) }
    }

    /// Starts both processes now (the phone first, as the demo does) and connects the link.
    public mutating func boot() {
        ZoneDatabase.$scoped.withValue(zones ?? ZoneDatabase.current) {
            startPhone(keepState: true)
            startWatch()
        }
    }

    /// Starts each process at its own virtual instant, as processes spawned one after the other
    /// on a shared virtual clock start: the phone at `phoneAt`, the watch at `watchAt` (both at
    /// or after `start`). The link comes up when both run. A step at the same instant as a start
    /// runs after it when it was added later.
    public mutating func boot(phoneAt: Date, watchAt: Date) {
        if phoneAt <= watchAt {
            add(.bootPhone, at: phoneAt)
            add(.bootWatch, at: watchAt)
        } else {
            add(.bootWatch, at: watchAt)
            add(.bootPhone, at: phoneAt)
        }
    }

    private mutating func connectWatch() {
        guard toWatch.isUp, phoneRunning, watchRunning else { return }
        watchDriver.ports.connected = true
        watchInput { $0.link(.connected) }
        watchInput { $0.link(.handshakeSucceeded) }
    }

    /// Counts from now on the bytes each side puts on the link, each message measured as the
    /// frame `WireCodec.encode` writes for it (the ZeroMQ envelope not included): `linkBytes`.
    public mutating func measureLinkBytes() {
        phoneDriver.ports.meter.isOn = true
        watchDriver.ports.meter.isOn = true
    }

    /// The bytes measured since `measureLinkBytes()`, phone to watch and watch to phone.
    public var linkBytes: (toWatch: Int, toPhone: Int) {
        (phoneDriver.ports.meter.bytes, watchDriver.ports.meter.bytes)
    }

    /// Runs every timer, step and delivery due until `end` (virtual), in order.
    /// - Complexity: proportional to the number of timers and messages in the interval.
    public mutating func run(until end: Date) {
        ZoneDatabase.$scoped.withValue(zones ?? ZoneDatabase.current) { runSteps(until: end) }
    }

    private mutating func runSteps(until end: Date) {
        while true {
            let toWatchArrival = phoneDriver.ports.link.nextArrival
            let toPhoneArrival = watchDriver.ports.link.nextArrival
            func earlier(_ a: Date?, _ b: Date?) -> Date? {
                guard let a else { return b }
                guard let b else { return a }
                return b < a ? b : a
            }
            let soonest = earlier(
                earlier(earlier(scheduler.nextDeadline(), toWatchArrival), toPhoneArrival), steps.first?.at)
            guard let next = soonest, next <= end else { break }
            if let arrival = toWatchArrival, arrival == next {
                advance(to: next)
                for message in phoneDriver.ports.link.receive(upTo: next) where watchRunning {
                    if linkMode == .messages, let value = WireCodec.delivered(message) {
                        watchInput { $0.received(message: value) }
                    } else {
                        watchInput { $0.received(frames: [WireCodec.encode(message)]) }
                    }
                }
                continue
            }
            if let arrival = toPhoneArrival, arrival == next {
                advance(to: next)
                for message in watchDriver.ports.link.receive(upTo: next) where phoneRunning {
                    // A HELLO carries the watch's now and process instance, as WatchRuntime sends it.
                    let hello = WireCodec.Hello(sentAt: scheduler.now, instance: watchInstance)
                    if linkMode == .messages, let value = WireCodec.delivered(message) {
                        let isHello: Bool
                        if case .hello = value { isHello = true } else { isHello = false }
                        phoneInput { $0.messageReceived(value, hello: isHello ? hello : nil) }
                    } else {
                        let id = Array(phoneSetup.node.watchID.utf8)
                        let frame = WireCodec.encode(message, sentAt: hello.sentAt, instance: hello.instance)
                        phoneInput { $0.messageReceived([id, frame]) }
                    }
                }
                continue
            }
            if let step = steps.first, step.at == next {
                steps.removeFirst()
                advance(to: next)
                switch step.step {
                case .step(let step): perform(step)
                case .bootPhone: startPhone(keepState: true)
                case .bootWatch: startWatch()
                }
                continue
            }
            guard let (timer, _) = scheduler.popDue(notAfter: next) else { break }
            fired[timer, default: 0] += 1
            switch timer {
            case .phone(let timer) where phoneRunning:
                phoneInput { $0.timerFired(timer) }
            case .watch(let timer) where watchRunning:
                watchInput { $0.timerFired(timer) }
            default:
                break
            }
        }
        advance(to: end)
    }

    private mutating func advance(to instant: Date) { scheduler.advance(to: instant) }

    private mutating func perform(_ step: TwinStep) {
        performed.append((scheduler.now, step))
        func misdirect(_ process: EventSource, running: Bool) {
            misdirected.append((performed.count - 1, process, running))
        }
        switch step {
        case .phone, .killPhone, .restartPhone: if !phoneRunning { misdirect(.phone, running: false) }
        case .watch, .killWatch, .restartWatch: if !watchRunning { misdirect(.watch, running: false) }
        case .startPhone: if phoneRunning { misdirect(.phone, running: true) }
        case .startWatch: if watchRunning { misdirect(.watch, running: true) }
        case .link, .failPhoneWrites: break
        }
        switch step {
        case .phone(let line):
            if phoneRunning { phoneInput { $0.commandLine(line) } }
        case .watch(let line):
            if watchRunning { watchInput { $0.command(line: line) } }
        case .link(let up):
            if up {
                phoneDriver.ports.link.reconnect()
                watchDriver.ports.link.reconnect()
                connectWatch()
            } else {
                phoneDriver.ports.link.disconnect()
                watchDriver.ports.link.disconnect()
                if connected {
                    watchDriver.ports.connected = false
                    watchInput { $0.link(.disconnected) }
                }
            }
        case .restartPhone(let keepState):
            if phoneRunning { phoneInput { $0.commandLine("quit") } }
            startPhone(keepState: keepState)
        case .startPhone(let keepState):
            if !phoneRunning { startPhone(keepState: keepState) }
        case .restartWatch(let keepState):
            if watchRunning { watchInput { $0.command(line: "quit") } }
            if watchRunning { killWatch() }  // a watch that did not stop on quit
            restartWatch(keepState: keepState)
        case .startWatch(let keepState):
            if !watchRunning { restartWatch(keepState: keepState) }
        case .killPhone:
            if phoneRunning {
                phoneDriver.ports.running = false
                phoneStopped()
            }
        case .killWatch:
            if watchRunning { killWatch() }
        case .failPhoneWrites(let writes, let errno):
            phoneDriver.ports.store.failing = Set(writes.map { $0 + phoneStore.writes })
            phoneDriver.ports.store.errno = errno
        }
    }

    /// A phone process starts: after the first, a new node on what the state dir holds (or an
    /// empty one), on the OS as stored; then the watch's link comes up.
    private mutating func startPhone(keepState: Bool) {
        if phoneStarts > 0 {
            phoneDriver.node = Self.makePhone(
                phoneSetup, state: keepState ? phoneStore.held : nil, os: osStore.held, random: &random,
                at: scheduler.now)
        }
        if !keepState { phoneDriver.ports.store.wipe() }
        phoneStarts += 1
        phoneDriver.ports.running = true
        phoneInput { $0.start() }
        connectWatch()
    }

    /// The phone process ended: its timers are gone, whatever was in flight on its connection is
    /// lost, and the watch sees the connection drop.
    private mutating func phoneStopped() {
        for timer in PhoneTimer.allCases { scheduler.cancel(.phone(timer)) }
        dropInFlight()
        if connected {
            watchDriver.ports.connected = false
            watchInput { $0.link(.disconnected) }
        }
    }

    /// A new watch process on what its state file holds (or none): a new node, no timers.
    private mutating func restartWatch(keepState: Bool) {
        retiredRequestChecksLow += watchDriver.node.requestChecksLow
        for timer in WatchTimer.allCases { scheduler.cancel(.watch(timer)) }
        if !keepState { watchDriver.ports.store.wipe() }
        watchDriver.node = ZoneDatabase.$scoped.withValue(watchDatabase) {
            WatchNode(configuration: watchSetup, state: watchStore.held)
        }
        watchDriver.ports.connected = false
        startWatch()
    }

    /// The watch process dies without a stop: its timers are gone, whatever was in flight on its
    /// connection is lost, and the phone's sends fail (the ROUTER has lost the peer).
    private mutating func killWatch() {
        watchDriver.ports.running = false
        watchDriver.ports.connected = false
        for timer in WatchTimer.allCases { scheduler.cancel(.watch(timer)) }
        dropInFlight()
    }

    /// A process at one end went away: whatever was in flight on the link is lost, and the link
    /// stays as it was (both directions go up and down together, `.link(up:)`).
    private mutating func dropInFlight() {
        let up = phoneDriver.ports.link.isUp
        phoneDriver.ports.link.disconnect()
        watchDriver.ports.link.disconnect()
        if up {
            phoneDriver.ports.link.reconnect()
            watchDriver.ports.link.reconnect()
        }
    }

    /// The watch process starts (with the node as built) and connects when the phone runs.
    private mutating func startWatch() {
        watchDriver.ports.running = true
        watchInstance = max(1, watchInstances.next())
        watchInput { $0.start(processID: 2) }
        connectWatch()
    }

    /// Hands the phone's driver one input at the current virtual instant: the driver performs
    /// the node's actions on the twin's phone ports, which hold the timer heap and the log for the
    /// length of the input. A stop the node asked for ends the process after it.
    private mutating func phoneInput(_ input: (inout PhoneDriver<EmbeddedPhonePorts>) -> Void) {
        phoneDriver.ports.watchConnected = connected
        swap(&scheduler, &phoneDriver.ports.scheduler)
        swap(&log, &phoneDriver.ports.log)
        input(&phoneDriver)
        swap(&scheduler, &phoneDriver.ports.scheduler)
        swap(&log, &phoneDriver.ports.log)
        if phoneDriver.ports.stopAsked {
            phoneDriver.ports.stopAsked = false
            phoneStopped()
        }
    }

    /// The database the watch's inputs run with: its own, else the twin's, else the one in use.
    private var watchDatabase: ZoneDatabase { watchZones ?? zones ?? ZoneDatabase.current }

    /// Hands the watch's driver one input at the current virtual instant, with the watch's own
    /// tz database in use (`watchZones`): the driver performs the node's actions on the twin's
    /// watch ports, which hold the timer heap and the log for the length of the input. A
    /// reconnect the node asked for connects after it, as the process's socket monitor reports.
    private mutating func watchInput(_ input: (inout WatchDriver<EmbeddedWatchPorts>) -> Void) {
        let database = watchDatabase
        swap(&scheduler, &watchDriver.ports.scheduler)
        swap(&log, &watchDriver.ports.log)
        ZoneDatabase.$scoped.withValue(database) { input(&watchDriver) }
        swap(&scheduler, &watchDriver.ports.scheduler)
        swap(&log, &watchDriver.ports.log)
        if watchDriver.ports.reconnectAsked {
            watchDriver.ports.reconnectAsked = false
            connectWatch()
        }
    }

    /// The log's events named `name`, optionally only from `source`, in order.
    public func events(_ name: EventName, from source: EventSource? = nil) -> [Entry] {
        log.filter { $0.event.name == name && (source == nil || $0.source == source) }
    }
}

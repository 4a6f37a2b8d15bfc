public import Foundation

/// The phone and watch cores in one process, over an in-memory link, in virtual time: the fast,
/// deterministic form of the two-process system (same cores, no sockets, no threads).
///
/// Messages are delivered at once and in order. Each night at `bedAt` (local) the simulated user
/// taps bed on the watch and answers a manual-entry prompt with `manualWake`. The OS launches the
/// phone in the background when its scheduler says so. The user never opens the phone app after
/// the first launch unless `userOpens` says so.
public struct Simulation: Sendable {
    /// Everything that happened, in order: (virtual time, "phone" / "watch", event).
    public private(set) var log: [(at: Date, source: String, event: Event)] = []
    public private(set) var app: PhoneApp
    public private(set) var watch: WatchCore
    public let zone: TimeZone
    public let bedAt: LocalTime
    public let manualWake: LocalTime
    public let early: Bool
    /// Virtual instants at which the user opens the phone app.
    public var userOpens: [Date]

    public init(
        app: PhoneApp, watch: WatchCore = WatchCore(), early: Bool, bedAt: LocalTime, manualWake: LocalTime,
        userOpens: [Date] = []
    ) {
        self.app = app
        self.watch = watch
        self.zone = app.zone
        self.early = early
        self.bedAt = bedAt
        self.manualWake = manualWake
        self.userOpens = userOpens.sorted()
    }

    /// Runs from `start` (the first user launch) until `end`.
    public mutating func run(from start: Date, until end: Date) {
        let calendar = WakeCalendar.calendar(in: zone)
        var pendingToWatch: [WireMessage] = []
        var pendingToPhone: [WireMessage] = []

        func phoneEffects(_ effects: [PhoneEffect], at now: Date) {
            for effect in effects {
                switch effect {
                case .emit(let event): log.append((now, "phone", event))
                case .send(let message):
                    log.append((now, "phone", WireEvents.sent(message)))
                    pendingToWatch.append(message)
                // Memory is the store, delivery is reliable, and the app asks for the weather inline.
                case .persist, .armResend, .cancelResend, .fetchWeather: break
                }
            }
        }
        func watchEffects(_ effects: [WatchEffect], at now: Date) {
            for effect in effects {
                switch effect {
                case .emit(let event): log.append((now, "watch", event))
                case .send(let message):
                    log.append((now, "watch", WireEvents.sent(message)))
                    pendingToPhone.append(message)
                case .persist, .armHelloRetry, .cancelHelloRetry: break
                }
            }
        }
        func deliver(at now: Date) {
            while !pendingToWatch.isEmpty || !pendingToPhone.isEmpty {
                if !pendingToWatch.isEmpty {
                    let message = pendingToWatch.removeFirst()
                    watchEffects(watch.receive(message), at: now)
                }
                if !pendingToPhone.isEmpty {
                    let message = pendingToPhone.removeFirst()
                    phoneEffects(app.receive(message), at: now)
                }
            }
        }

        phoneEffects(app.launch(at: start, byUser: true, early: early), at: start)
        watchEffects(watch.connected(), at: start)
        deliver(at: start)

        var nextBed = WakeCalendar.next(bedAt, after: start, in: calendar)
        var opens = userOpens.filter { $0 > start }
        var now = start
        var sameInstant = 0
        while now < end {
            let launch = app.nextBackgroundLaunch(after: now)
            let candidates = [launch, nextBed, opens.first].compactMap { $0 }.filter { $0 <= end }
            guard let next = candidates.min() else { break }
            sameInstant = next <= now ? sameInstant + 1 : 0
            if sameInstant > 1_000 {
                log.append((now, "simulation", Event("simulation.stuck", [("at", .date(now))])))
                break
            }
            now = max(now, next)
            if let open = opens.first, open == next {
                opens.removeFirst()
                phoneEffects(app.launch(at: now, byUser: true, early: early), at: now)
            } else if let bed = nextBed, bed == next {
                watchEffects(watch.bedTap(at: now), at: now)
                if watch.awaitingManualEntry {
                    watchEffects(watch.manualWakeTime(manualWake.description, at: now, in: zone), at: now)
                }
                nextBed = WakeCalendar.next(bedAt, after: now, in: calendar)
            } else {
                phoneEffects(app.backgroundLaunchDue(at: now, early: early), at: now)
            }
            deliver(at: now)
        }
    }

    /// The events named `name` from `source`, in order.
    public func events(_ name: String, from source: String? = nil) -> [(at: Date, event: Event)] {
        log.filter { $0.event.name == name && (source == nil || $0.source == source) }.map { ($0.at, $0.event) }
    }
}

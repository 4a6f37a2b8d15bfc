public import Foundation

/// What the phone's sync state machine asks its runtime to do. The runtime performs effects in
/// order; if a `persist` fails it stops there and restores the core's previous value, so nothing
/// is sent on the strength of state that is not on disk.
public enum PhoneEffect: Equatable, Sendable {
    /// Write this state durably (state file in the state dir).
    case persist(PhoneSyncState)
    /// Send to the watch. On success the runtime emits `WireEvents.sent(message)`.
    case send(WireMessage)
    /// (Re)arm the resend timer, `after` wall seconds from now (transport timing is wall time).
    case armResend(after: TimeInterval)
    /// Disarm the resend timer.
    case cancelResend
    /// Write an observable event.
    case emit(Event)
}

/// The phone's durable state: the newest batch (the outbox) and whether the watch acked it, the
/// pending bedtime notices, and the device seed for daily rotation.
public struct PhoneSyncState: Codable, Equatable, Sendable {
    /// The highest seq ever issued; the next batch gets `lastSeq + 1`.
    public var lastSeq: UInt64
    /// The newest batch, kept until acknowledged (and after, to answer HELLO).
    public var outbox: WakeBatch?
    /// True once the watch acknowledged `outbox.seq`.
    public var acked: Bool
    /// The OS's pending local notifications as last set by the phone.
    public var notifications: PendingNotifications
    /// Per-device seed for `DailyRotation`, fixed at first start.
    public var deviceSeed: UInt64
    /// Seed 003's run history: last scheduled, last run, the last 30 runs.
    public var refreshLog: RefreshLog
    /// The cached forecast (6 h cache of the weather step).
    public var weather: Forecast?

    public init(
        lastSeq: UInt64 = 0, outbox: WakeBatch? = nil, acked: Bool = false,
        notifications: PendingNotifications = PendingNotifications(), deviceSeed: UInt64 = 0,
        refreshLog: RefreshLog = RefreshLog(), weather: Forecast? = nil
    ) {
        self.lastSeq = lastSeq
        self.outbox = outbox
        self.acked = acked
        self.notifications = notifications
        self.deviceSeed = deviceSeed
        self.refreshLog = refreshLog
        self.weather = weather
    }

    private enum CodingKeys: String, CodingKey {
        case lastSeq, outbox, acked, notifications, deviceSeed, refreshLog, weather
    }

    /// Strict on the sync fields; `notifications` and `deviceSeed` may be absent (older files).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        lastSeq = try container.decode(UInt64.self, forKey: .lastSeq)
        outbox = try container.decodeIfPresent(WakeBatch.self, forKey: .outbox)
        acked = try container.decode(Bool.self, forKey: .acked)
        notifications = try container.decodeIfPresent(PendingNotifications.self, forKey: .notifications) ?? .init()
        deviceSeed = try container.decodeIfPresent(UInt64.self, forKey: .deviceSeed) ?? 0
        refreshLog = try container.decodeIfPresent(RefreshLog.self, forKey: .refreshLog) ?? RefreshLog()
        weather = try container.decodeIfPresent(Forecast.self, forKey: .weather)
    }
}

/// What one refresh produced: the wake-ups for the watch and the bedtime notices.
public struct RefreshPlan: Equatable, Sendable {
    public var entries: [WakeEntry]
    public var notices: [NotificationRecord]
    /// Virtual now of the refresh.
    public var generatedAt: Date
    /// IANA identifier of the zone used.
    public var timeZone: String
    /// When the next background refresh may start (next wake-up + 1 h), if any.
    public var earliestBeginDate: Date?

    /// Plans a refresh of `schedule` in `zone` at `now` (batch, notices, next request).
    public static func make(
        schedule: WakeSchedule, zone: TimeZone, now: Date, horizonDays: Int = BatchPlanner.defaultHorizonDays,
        deviceSeed: UInt64
    ) -> RefreshPlan {
        let entries = BatchPlanner.entries(for: schedule, in: zone, after: now, horizonDays: horizonDays)
        return RefreshPlan(
            entries: entries,
            notices: BedtimeNoticePlanner.notices(
                for: entries, schedule: schedule, in: zone, now: now, seed: deviceSeed),
            generatedAt: now, timeZone: zone.identifier,
            earliestBeginDate: RefreshPlanner.earliestBeginDate(after: now, schedule: schedule, in: zone))
    }

    public init(
        entries: [WakeEntry], notices: [NotificationRecord] = [], generatedAt: Date, timeZone: String,
        earliestBeginDate: Date? = nil
    ) {
        self.entries = entries
        self.notices = notices
        self.generatedAt = generatedAt
        self.timeZone = timeZone
        self.earliestBeginDate = earliestBeginDate
    }
}

/// Resend timing for unacknowledged batches: exponential backoff in wall seconds.
public struct ResendPolicy: Equatable, Sendable {
    /// First delay, seconds.
    public var initial: TimeInterval
    /// Upper bound on a delay, seconds.
    public var maximum: TimeInterval

    public init(initial: TimeInterval = 0.25, maximum: TimeInterval = 4) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The delay before resend number `attempt` (1-based): `initial × 2^(attempt-1)`, capped.
    public func delay(attempt: Int) -> TimeInterval {
        let exponent = Double(max(0, min(attempt - 1, 30)))
        return min(maximum, initial * pow(2, exponent))
    }
}

/// The phone's half of the sync protocol, sans I/O (docs/protocol.md "Phone").
///
/// Outbox + resend until ACK (zguide "Lazy Pirate", reduced to one value); HELLO answered with
/// the newest batch or UP_TO_DATE (zguide "Clone", reduced to one value).
public struct PhoneCore: Sendable {
    public private(set) var state: PhoneSyncState
    public var resendPolicy: ResendPolicy
    private var attempt = 0

    /// - Parameters:
    ///   - state: as loaded from disk, or a fresh one.
    ///   - resendPolicy: resend backoff.
    public init(state: PhoneSyncState = PhoneSyncState(), resendPolicy: ResendPolicy = ResendPolicy()) {
        self.state = state
        self.resendPolicy = resendPolicy
    }

    /// Changes the non-sync parts of the state (notices, run history, weather cache).
    /// - Returns: one `persist` of the new state.
    public mutating func update(_ body: (inout PhoneSyncState) -> Void) -> [PhoneEffect] {
        var copy = state
        body(&copy)
        // The sync fields belong to the protocol logic: keep them as they were.
        copy.lastSeq = state.lastSeq
        copy.outbox = state.outbox
        copy.acked = state.acked
        state = copy
        return [.persist(state)]
    }

    /// Effects to perform once at start-up: resume resending an unacknowledged outbox.
    public mutating func start() -> [PhoneEffect] {
        guard let outbox = state.outbox, !state.acked else { return [] }
        attempt = 1
        return [.send(.batch(outbox)), .armResend(after: resendPolicy.delay(attempt: attempt))]
    }

    /// Publishes a freshly generated set of wake-ups as the next batch (no notices change).
    public mutating func publish(entries: [WakeEntry], generatedAt: Date, timeZone: String) -> [PhoneEffect] {
        refresh(RefreshPlan(entries: entries, generatedAt: generatedAt, timeZone: timeZone), replacesNotices: false)
    }

    /// Applies a refresh: replaces the pending bedtime notices with the plan's (each added one
    /// is a `notification.added` event) and publishes the wake-ups as the next batch.
    ///
    /// - Parameters:
    ///   - plan: from `RefreshPlan.make`.
    ///   - replacesNotices: false to leave notices alone.
    /// - Returns: persist (one write of batch and notices), events, send, arm the resend timer.
    public mutating func refresh(_ plan: RefreshPlan, replacesNotices: Bool = true) -> [PhoneEffect] {
        guard state.lastSeq < WireCodec.maxSeq else {
            return [.emit(Event("seq.exhausted", [("lastSeq", .int(Int64(clamping: state.lastSeq)))]))]
        }
        let seq = state.lastSeq + 1
        let batch = WakeBatch(
            seq: seq,
            generatedAt: Date(timeIntervalSince1970: plan.generatedAt.timeIntervalSince1970.rounded(.down)),
            timeZone: plan.timeZone, entries: plan.entries)
        var added: [NotificationRecord] = []
        state.notifications.removeDelivered(before: plan.generatedAt)
        if replacesNotices {
            added = state.notifications.replace(prefix: BedtimeNoticePlanner.idPrefix, with: plan.notices)
        }
        state.lastSeq = seq
        state.outbox = batch
        state.acked = false
        attempt = 1
        var effects: [PhoneEffect] = [.persist(state)]
        effects += added.map { record in
            .emit(
                Event(
                    "notification.added",
                    [("id", .string(record.id)), ("fireDate", .date(record.fireDate)), ("text", .string(record.text))]
                ))
        }
        effects += [
            .emit(Event("batch.generated", WireEvents.batchFields(batch))),
            .send(.batch(batch)),
            .armResend(after: resendPolicy.delay(attempt: attempt)),
        ]
        return effects
    }

    /// The resend timer fired: send the outbox again unless acknowledged.
    public mutating func resendDue() -> [PhoneEffect] {
        guard let outbox = state.outbox, !state.acked else { return [] }
        attempt += 1
        return [.send(.batch(outbox)), .armResend(after: resendPolicy.delay(attempt: attempt))]
    }

    /// A message from the watch.
    public mutating func receive(_ message: WireMessage) -> [PhoneEffect] {
        switch message {
        case .hello(let lastSeq):
            return hello(lastSeq: lastSeq)
        case .ack(let seq, let coverageEnd):
            guard let outbox = state.outbox, seq == outbox.seq else {
                return [
                    .emit(
                        Event(
                            "ack.stale",
                            [("seq", .int(Int64(clamping: seq))), ("newest", .int(Int64(clamping: state.lastSeq)))]))
                ]
            }
            var fields: [(String, EventValue)] = [("seq", .int(Int64(clamping: seq)))]
            fields.append(("coverageEnd", coverageEnd.map { EventValue.date($0) } ?? .null))
            if state.acked {
                return [.emit(Event("ack.duplicate", fields))]
            }
            state.acked = true
            attempt = 0
            return [.persist(state), .cancelResend, .emit(Event("ack.received", fields))]
        case .error(let reason):
            return [.emit(Event("peer.error", [("reason", .string(reason))]))]
        case .ping:
            return []  // liveness only: the runtime notes when the watch was last heard
        case .batch, .upToDate:
            let reason = "\(message.typeName) is a phone-to-watch message"
            return [.emit(Event("message.rejected", [("reason", .string(reason))])), .send(.error(reason: reason))]
        }
    }

    private mutating func hello(lastSeq: UInt64) -> [PhoneEffect] {
        guard var outbox = state.outbox else {
            return [.send(.upToDate(seq: lastSeq))]
        }
        if lastSeq == outbox.seq {
            var effects: [PhoneEffect] = []
            if !state.acked {
                state.acked = true
                effects += [.persist(state), .cancelResend]
            }
            return effects + [.send(.upToDate(seq: outbox.seq))]
        }
        if lastSeq < outbox.seq {
            attempt = 1
            return [.send(.batch(outbox)), .armResend(after: resendPolicy.delay(attempt: attempt))]
        }
        guard lastSeq < WireCodec.maxSeq else {
            let reason = "lastSeq \(lastSeq) leaves no seq to issue; reset the watch's state"
            return [
                .emit(Event("seq.exhausted", [("watchSeq", .int(Int64(clamping: lastSeq)))])),
                .send(.error(reason: reason)),
            ]
        }
        // The watch holds a seq this phone never issued: the phone's state was lost or reset.
        // Renumber the newest batch above it so the watch accepts it (never older over newer).
        let previous = outbox.seq
        outbox.seq = lastSeq + 1
        state.lastSeq = outbox.seq
        state.outbox = outbox
        state.acked = false
        attempt = 1
        return [
            .persist(state),
            .emit(
                Event(
                    "seq.resync",
                    [
                        ("watchSeq", .int(Int64(clamping: lastSeq))), ("from", .int(Int64(clamping: previous))),
                        ("to", .int(Int64(clamping: outbox.seq))),
                    ])),
            .send(.batch(outbox)),
            .armResend(after: resendPolicy.delay(attempt: attempt)),
        ]
    }
}

/// Events that describe a message once the transport has sent it.
public enum WireEvents {
    /// `seq`, `count`, `first`, `last` (first/last wake-up instants, null when empty).
    public static func batchFields(_ batch: WakeBatch) -> [(String, EventValue)] {
        [
            ("seq", .int(Int64(clamping: batch.seq))),
            ("count", .int(Int64(batch.entries.count))),
            ("first", batch.entries.first.map { .date($0.wake) } ?? .null),
            ("last", batch.entries.last.map { .date($0.wake) } ?? .null),
            ("timeZone", .string(batch.timeZone)),
        ]
    }

    /// `batch.sent`, `ack.sent`, `hello.sent`, `up_to_date.sent` or `error.sent`, with fields.
    public static func sent(_ message: WireMessage) -> Event {
        switch message {
        case .batch(let batch):
            return Event("batch.sent", batchFields(batch))
        case .ack(let seq, let end):
            return Event(
                "ack.sent", [("seq", .int(Int64(clamping: seq))), ("coverageEnd", end.map { .date($0) } ?? .null)])
        case .hello(let lastSeq):
            return Event("hello.sent", [("lastSeq", .int(Int64(clamping: lastSeq)))])
        case .upToDate(let seq):
            return Event("up_to_date.sent", [("seq", .int(Int64(clamping: seq)))])
        case .error(let reason):
            return Event("error.sent", [("reason", .string(reason))])
        case .ping:
            return Event("ping.sent", [])
        }
    }
}

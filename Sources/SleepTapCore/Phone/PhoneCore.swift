// SPDX-License-Identifier: Apache-2.0

public import Foundation
package import SleepTapOS

/// The phone's durable state: the newest batch (the outbox) and whether the watch acked it, the
/// pending bedtime notices, and the device seed for daily rotation.
public struct PhoneSyncState: Codable, Equatable, Sendable {
    /// The current numbering epoch (`WakeBatch.epoch`); 0 until the phone first starts.
    public var epoch: UInt64
    /// The highest seq ever issued in `epoch`; the next batch gets `lastSeq + 1`.
    public var lastSeq: UInt64
    /// The newest batch, kept until acknowledged (and after, to answer HELLO).
    public var outbox: WakeBatch?
    /// True once the watch acknowledged exactly `outbox` (its epoch, seq and digest).
    public var acked: Bool
    /// The OS's pending local notifications as last set by the phone.
    public var notifications: PendingNotifications
    /// Per-device seed for `DailyRotation`, fixed at first start.
    public var deviceSeed: UInt64
    /// The run history: last scheduled, last run, the last 30 runs.
    public var refreshLog: RefreshLog
    /// The cached forecast (6 h cache of the weather step).
    public var weather: Forecast?

    /// A state with the given fields; the defaults describe a phone that never ran.
    public init(
        epoch: UInt64 = 0, lastSeq: UInt64 = 0, outbox: WakeBatch? = nil, acked: Bool = false,
        notifications: PendingNotifications = PendingNotifications(), deviceSeed: UInt64 = 0,
        refreshLog: RefreshLog = RefreshLog(), weather: Forecast? = nil
    ) {
        self.epoch = epoch
        self.lastSeq = lastSeq
        self.outbox = outbox
        self.acked = acked
        self.notifications = notifications
        self.deviceSeed = deviceSeed
        self.refreshLog = refreshLog
        self.weather = weather
    }

    private enum CodingKeys: String, CodingKey {
        case epoch, lastSeq, outbox, acked, notifications, deviceSeed, refreshLog, weather
    }

    /// Strict on the sync fields; `epoch`, `notifications` and `deviceSeed` may be absent (older
    /// files: a missing epoch is 0, and the phone starts a new one).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        epoch = try container.decodeHex64IfPresent(forKey: .epoch) ?? 0
        lastSeq = try container.decode(UInt64.self, forKey: .lastSeq)
        outbox = try container.decodeIfPresent(WakeBatch.self, forKey: .outbox)
        acked = try container.decode(Bool.self, forKey: .acked)
        notifications = try container.decodeIfPresent(PendingNotifications.self, forKey: .notifications) ?? .init()
        deviceSeed = try container.decodeHex64IfPresent(forKey: .deviceSeed) ?? 0
        refreshLog = try container.decodeIfPresent(RefreshLog.self, forKey: .refreshLog) ?? RefreshLog()
        weather = try container.decodeIfPresent(Forecast.self, forKey: .weather)
    }

    /// Writes `epoch` and `deviceSeed` as 16 hex digits (`Hex64`, as the wire writes an epoch),
    /// never as JSON numbers: a number above 2^53 is not exact in every JSON reader (RFC 8259,
    /// section 6; I-JSON, RFC 7493, section 2.2). The decoder reads both forms.
    /// - Throws: the encoder's errors.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Hex64.string(epoch), forKey: .epoch)
        try container.encode(lastSeq, forKey: .lastSeq)
        try container.encodeIfPresent(outbox, forKey: .outbox)
        try container.encode(acked, forKey: .acked)
        try container.encode(notifications, forKey: .notifications)
        try container.encode(Hex64.string(deviceSeed), forKey: .deviceSeed)
        try container.encode(refreshLog, forKey: .refreshLog)
        try container.encodeIfPresent(weather, forKey: .weather)
    }
}

/// What one refresh produced: the wake-ups for the watch and the bedtime notices.
public struct RefreshPlan: Equatable, Sendable {
    /// The wake-ups for the watch, strictly increasing by instant.
    public var entries: [WakeEntry]
    /// The bedtime notices to hand to the OS.
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
            // The batch's first entry is the next wake-up `RefreshPlanner` would look up again.
            earliestBeginDate: RefreshPlanner.earliestBeginDate(nextWake: entries.first, in: zone))
    }

    /// A plan with the given fields.
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
package struct ResendPolicy: Equatable, Sendable {
    /// First delay, seconds.
    package var initial: TimeInterval
    /// Upper bound on a delay, seconds.
    package var maximum: TimeInterval

    /// Backoff from `initial` wall seconds, doubling up to `maximum` (defaults 0.25 s and 4 s).
    package init(initial: TimeInterval = 0.25, maximum: TimeInterval = 4) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The delay before resend number `attempt` (1-based): `initial × 2^(attempt-1)`, capped.
    package func delay(attempt: Int) -> TimeInterval {
        let exponent = Double(max(0, min(attempt - 1, 30)))
        return min(maximum, initial * pow(2, exponent))
    }
}

/// The phone's half of the sync protocol, sans I/O (docs/protocol.md "Phone").
///
/// Outbox + resend until ACK (zguide "Lazy Pirate", reduced to one value); HELLO answered with
/// the newest batch or UP_TO_DATE (zguide "Clone", reduced to one value).
///
/// Numbering: a batch is (epoch, seq). A seq is never issued twice in an epoch, whatever fails:
/// the core keeps the highest seq it ever issued in memory, and a failed write
/// (`persistFailed()`) rolls the state back only to what is on disk, never below a seq already
/// issued. No peer message moves the counter: when the watch holds a batch this phone did not
/// issue (the phone's state was lost or restored from an older copy, or another process spoke
/// for the phone), the phone starts a new random epoch and re-sends its newest batch in it.
public struct PhoneCore: Sendable {
    /// The sync state, including what is not on disk yet.
    public private(set) var state: PhoneSyncState
    /// Resend backoff for an unacknowledged outbox.
    package var resendPolicy: ResendPolicy
    /// The last state the runtime reported on disk (`persisted(_:)`); what `persistFailed()`
    /// returns to.
    public private(set) var durable: PhoneSyncState
    private var attempt = 0
    /// The highest seq issued since this core was made, on disk or not (seqs continue across
    /// epochs; only an exhausted seq space starts again at 1).
    private var issuedHighWater: UInt64
    private var random: SplitMix64

    /// - Parameters:
    ///   - state: as loaded from disk (`durable` starts as it), or a fresh one. An epoch of 0
    ///     (a fresh state, or a file from before epochs) gets a new random epoch; an outbox from
    ///     before epochs is re-issued in it, unacknowledged.
    ///   - resendPolicy: resend backoff.
    ///   - randomSeed: seeds the generator of epochs (SplitMix64); pass a random value in
    ///     production and a fixed one in tests.
    package init(
        state: PhoneSyncState = PhoneSyncState(), resendPolicy: ResendPolicy = ResendPolicy(), randomSeed: UInt64 = 0
    ) {
        self.durable = state
        self.resendPolicy = resendPolicy
        self.random = SplitMix64(state: randomSeed ^ state.deviceSeed)
        self.issuedHighWater = state.lastSeq
        self.state = state
        adoptEpoch(nextEpoch())
    }

    /// Gives a state without an epoch (fresh, or from before epochs) the epoch `epoch`; an
    /// outbox from before epochs is re-issued in it, unacknowledged.
    private mutating func adoptEpoch(_ epoch: UInt64) {
        guard state.epoch == 0 else { return }
        state.epoch = epoch
        if var outbox = state.outbox {
            outbox.epoch = epoch
            state.outbox = outbox
            state.acked = false
        }
    }

    private mutating func nextEpoch() -> UInt64 {
        var value: UInt64 = 0
        while value == 0 || value == state.epoch { value = random.next() }
        return value
    }

    /// The runtime wrote `saved` to disk.
    public mutating func persisted(_ saved: PhoneSyncState) {
        durable = saved
    }

    /// A write failed: the state goes back to what is on disk (`durable`), keeping the numbering
    /// ahead of every seq already issued, so the next batch gets a seq never used before.
    /// The phone node drops the rest of the actions of the step whose write failed.
    public mutating func persistFailed() {
        let epoch = state.epoch
        state = durable
        state.lastSeq = max(state.lastSeq, issuedHighWater)
        adoptEpoch(epoch)
        attempt = 0
    }

    /// Changes the non-sync parts of the state (notices, run history, weather cache).
    /// - Returns: one `persist` of the new state.
    public mutating func update(_ body: (inout PhoneSyncState) -> Void) -> [PhoneAction] {
        var copy = state
        body(&copy)
        // The sync fields belong to the protocol logic: keep them as they were.
        copy.epoch = state.epoch
        copy.lastSeq = state.lastSeq
        copy.outbox = state.outbox
        copy.acked = state.acked
        state = copy
        return [.persist(state)]
    }

    /// Actions to perform once at start-up: resume resending an unacknowledged outbox.
    public mutating func start() -> [PhoneAction] {
        guard let outbox = state.outbox, !state.acked else { return [] }
        attempt = 1
        var actions: [PhoneAction] = durable == state ? [] : [.persist(state)]
        actions += [.send(.batch(outbox)), .arm(.resend, .after(resendPolicy.delay(attempt: attempt)))]
        return actions
    }

    /// Publishes a freshly generated set of wake-ups as the next batch (no notices change).
    /// - Parameters:
    ///   - entries: the wake-ups, in time order.
    ///   - generatedAt: the batch's `generatedAt` (virtual now, UTC).
    ///   - timeZone: the IANA zone the wake-ups were planned in.
    ///   - unlessUnchanged: when the wake-ups and zone equal the acknowledged batch's
    ///     (the same digest), publish nothing: `batch.unchanged`
    ///     (`refresh(_:replacesNotices:unlessUnchanged:at:)`).
    ///   - now: the virtual instant (UTC) the events are stamped with.
    public mutating func publish(
        entries: [WakeEntry], generatedAt: Date, timeZone: String, unlessUnchanged: Bool = false, at now: Date
    ) -> [PhoneAction] {
        refresh(
            RefreshPlan(entries: entries, generatedAt: generatedAt, timeZone: timeZone), replacesNotices: false,
            unlessUnchanged: unlessUnchanged, at: now)
    }

    /// The next seq to issue, moving to a new epoch when the current one is used up.
    private mutating func issueSeq(at now: Date) -> (seq: UInt64, epochEvent: PhoneAction?) {
        let next = max(state.lastSeq, issuedHighWater)
        guard next >= WireCodec.maxSeq else {
            issuedHighWater = next + 1
            state.lastSeq = next + 1
            return (next + 1, nil)
        }
        let from = state.epoch
        state.epoch = nextEpoch()
        issuedHighWater = 1
        state.lastSeq = 1
        return (1, Self.epochChanged(from: from, to: state.epoch, reason: "seq space exhausted", at: now))
    }

    static func epochChanged(from: UInt64, to: UInt64, reason: String, at now: Date) -> PhoneAction {
        .emit(
            Event(
                .epochChanged,
                [("from", .string(Hex64.string(from))), ("to", .string(Hex64.string(to))), ("reason", .string(reason))]),
            at: now)
    }

    /// Applies a refresh: replaces the pending bedtime notices with the plan's (each added one
    /// is a `notification.added` event, each one the 64-request cap pushes out a
    /// `notification.dropped`) and publishes the wake-ups as the next batch.
    ///
    /// No churn: with `unlessUnchanged`, when the outbox is acknowledged and the plan's wake-ups
    /// and zone hash to its digest (docs/protocol.md, "Digest"), no seq is issued and nothing is
    /// sent: the watch already holds these dates. The actions are then the notices' (a write
    /// only if they changed) and `batch.unchanged` {seq, epoch, digest, timeZone} naming the
    /// acknowledged batch (docs/protocol.md, phone rule 7).
    ///
    /// - Parameters:
    ///   - plan: from `RefreshPlan.make`.
    ///   - replacesNotices: false to leave notices alone.
    ///   - unlessUnchanged: skip a batch equal to the acknowledged one (OS-launched refreshes).
    ///   - now: the virtual instant (UTC) the events are stamped with; the plan's `generatedAt` is
    ///     the device's wall clock, which the user may have set away from it.
    /// - Returns: persist (one write of batch and notices), events, send, arm the resend timer.
    public mutating func refresh(
        _ plan: RefreshPlan, replacesNotices: Bool = true, unlessUnchanged: Bool = false, at now: Date
    ) -> [PhoneAction] {
        let before = state
        var change = NotificationChange()
        state.notifications.removeDelivered(before: plan.generatedAt)
        if replacesNotices {
            change = state.notifications.update(prefix: BedtimeNoticePlanner.idPrefix, with: plan.notices)
        }
        if unlessUnchanged, let outbox = state.outbox, state.acked, outbox.timeZone == plan.timeZone,
            WakeBatch(seq: 0, generatedAt: plan.generatedAt, timeZone: plan.timeZone, entries: plan.entries).digest
                == outbox.digest
        {
            var actions: [PhoneAction] = state == before ? [] : [.persist(state)]
            actions += change.events(at: now)
            actions.append(
                .emit(
                    Event(
                        .batchUnchanged,
                        [
                            ("seq", .int(Int64(clamping: outbox.seq))), ("epoch", .string(Hex64.string(outbox.epoch))),
                            ("digest", .string(Hex64.string(outbox.digest))), ("timeZone", .string(outbox.timeZone)),
                        ]),
                    at: now))
            return actions
        }
        let (seq, epochEvent) = issueSeq(at: now)
        let batch = WakeBatch(
            epoch: state.epoch, seq: seq,
            generatedAt: Date(timeIntervalSince1970: plan.generatedAt.timeIntervalSince1970.rounded(.down)),
            timeZone: plan.timeZone, entries: plan.entries)
        state.outbox = batch
        state.acked = false
        attempt = 1
        var actions: [PhoneAction] = [.persist(state)]
        if let epochEvent { actions.append(epochEvent) }
        actions += change.events(at: now)
        actions += [
            .emit(Event(.batchGenerated, WireEvents.batchFields(batch)), at: now),
            .send(.batch(batch)),
            .arm(.resend, .after(resendPolicy.delay(attempt: attempt))),
        ]
        return actions
    }

    /// The resend timer fired: send the outbox again unless acknowledged.
    public mutating func resendDue() -> [PhoneAction] {
        guard let outbox = state.outbox, !state.acked else { return [] }
        attempt += 1
        return [.send(.batch(outbox)), .arm(.resend, .after(resendPolicy.delay(attempt: attempt)))]
    }

    /// A message from the watch, received at virtual instant `now` (UTC; the events' stamp).
    public mutating func receive(_ message: WireMessage, at now: Date) -> [PhoneAction] {
        switch message {
        case .hello(let held):
            return hello(held, at: now)
        case .ack(let ref, let coverageEnd):
            var fields: [(String, EventValue)] = [
                ("seq", .int(Int64(clamping: ref.seq))), ("epoch", .string(Hex64.string(ref.epoch))),
                ("digest", .string(Hex64.string(ref.digest))),
            ]
            guard let outbox = state.outbox, ref.epoch == outbox.epoch, ref.seq == outbox.seq else {
                fields.append(("newest", .int(Int64(clamping: state.lastSeq))))
                return [.emit(Event(.ackStale, fields), at: now)]
            }
            guard ref.digest == outbox.digest else {
                // Same number, other dates: the watch stored a batch this phone did not send
                // as its current one. Never record it as acknowledged; re-issue in a new epoch.
                fields.append(("expected", .string(Hex64.string(outbox.digest))))
                return [.emit(Event(.ackMismatch, fields), at: now)]
                    + reissue(
                        reason: "the watch acknowledged \(ref) but this phone's batch \(outbox.seq) differs", at: now)
            }
            fields.append(("coverageEnd", coverageEnd.map { EventValue.date($0) } ?? .null))
            if state.acked {
                return [.emit(Event(.ackDuplicate, fields), at: now)]
            }
            state.acked = true
            attempt = 0
            return [.persist(state), .cancel(.resend), .emit(Event(.ackReceived, fields), at: now)]
        case .error(let reason):
            return [.emit(Event(.peerError, [("reason", .string(reason))]), at: now)]
        case .ping:
            return []  // liveness only: the runtime notes when the watch was last heard
        case .request:
            return []  // the phone node hands it to the app and its OS (PhoneApp.watchRequest)
        case .batch, .upToDate:
            let reason = "\(message.typeName) is a phone-to-watch message"
            return [
                .emit(Event(.messageRejected, [("reason", .string(reason))]), at: now), .send(.error(reason: reason)),
            ]
        }
    }

    private mutating func hello(_ held: BatchRef?, at now: Date) -> [PhoneAction] {
        guard let outbox = state.outbox else {
            return [.send(.upToDate(seq: held?.seq ?? 0))]
        }
        if held == outbox.ref {
            var actions: [PhoneAction] = []
            if !state.acked {
                state.acked = true
                attempt = 0
                actions += [.persist(state), .cancel(.resend)]
            }
            return actions + [.send(.upToDate(seq: outbox.seq))]
        }
        guard let held, held.epoch == outbox.epoch, held.seq >= outbox.seq else {
            // The watch holds nothing, an older batch of this epoch, or a batch of another
            // epoch: the newest batch replaces it.
            attempt = 1
            return [.send(.batch(outbox)), .arm(.resend, .after(resendPolicy.delay(attempt: attempt)))]
        }
        // Same epoch, and a seq above this phone's newest or the same seq with other dates: the
        // watch holds a batch this phone did not issue as its current one.
        return reissue(reason: "the watch holds \(held), which this phone did not issue as its newest batch", at: now)
    }

    /// Starts a new epoch and sends the newest batch in it, as seq `lastSeq + 1`.
    private mutating func reissue(reason: String, at now: Date) -> [PhoneAction] {
        guard var outbox = state.outbox else { return [] }
        let from = state.epoch
        state.epoch = nextEpoch()
        let (seq, _) = issueSeq(at: now)
        outbox.epoch = state.epoch
        outbox.seq = seq
        state.outbox = outbox
        state.acked = false
        attempt = 1
        return [
            .persist(state), Self.epochChanged(from: from, to: state.epoch, reason: reason, at: now),
            .send(.batch(outbox)), .arm(.resend, .after(resendPolicy.delay(attempt: attempt))),
        ]
    }
}

/// Events that describe a message once the transport has sent it.
package enum WireEvents {
    /// `seq`, `count`, `first`, `last` (first/last wake-up instants, null when empty).
    package static func batchFields(_ batch: WakeBatch) -> [(String, EventValue)] {
        [
            ("seq", .int(Int64(clamping: batch.seq))), ("epoch", .string(Hex64.string(batch.epoch))),
            ("digest", .string(Hex64.string(batch.digest))),
            ("count", .int(Int64(batch.entries.count))),
            ("first", batch.entries.first.map { .date($0.wake) } ?? .null),
            ("last", batch.entries.last.map { .date($0.wake) } ?? .null),
            ("timeZone", .string(batch.timeZone)),
        ]
    }

    /// A REQUEST's `id`, `nightsLeft` and `coverageEnd` (null for an empty batch).
    package static func requestFields(_ request: DateRequest) -> [(String, EventValue)] {
        [
            ("id", .int(Int64(clamping: request.id))), ("nightsLeft", .int(Int64(request.nightsLeft))),
            ("coverageEnd", request.coverageEnd.map { .date($0) } ?? .null),
        ]
    }

    /// `batch.sent`, `ack.sent`, `hello.sent`, `up_to_date.sent`, `request.sent` or `error.sent`, with fields;
    /// nil for a heartbeat PING, which is not reported.
    package static func sent(_ message: WireMessage) -> Event? {
        switch message {
        case .batch(let batch):
            return Event(.batchSent, batchFields(batch))
        case .ack(let ref, let end):
            return Event(
                .ackSent,
                [
                    ("seq", .int(Int64(clamping: ref.seq))), ("epoch", .string(Hex64.string(ref.epoch))),
                    ("digest", .string(Hex64.string(ref.digest))), ("coverageEnd", end.map { .date($0) } ?? .null),
                ])
        case .hello(let held):
            return Event(
                .helloSent,
                [
                    ("lastSeq", .int(Int64(clamping: held?.seq ?? 0))),
                    ("epoch", held.map { .string(Hex64.string($0.epoch)) } ?? .null),
                ])
        case .upToDate(let seq):
            return Event(.upToDateSent, [("seq", .int(Int64(clamping: seq)))])
        case .error(let reason):
            return Event(.errorSent, [("reason", .string(reason))])
        case .request(let request):
            return Event(.requestSent, WireEvents.requestFields(request))
        case .ping:
            return nil
        }
    }
}

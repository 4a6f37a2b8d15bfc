// SPDX-License-Identifier: Apache-2.0

public import Foundation
import SleepTapOS

/// What the watch's state machine asks its runtime to do, performed in order. A failed
/// `persist` stops the list (no ACK for a batch that is not on disk: durable before acknowledged).
public enum WatchEffect: Equatable, Sendable {
    /// Write this state durably before anything after it in the list is performed.
    case persist(WatchSyncState)
    /// Send to the phone. On success the runtime emits `WireEvents.sent(message)`.
    case send(WireMessage)
    /// (Re)arm the HELLO retry timer, `after` wall seconds from now.
    case armHelloRetry(after: TimeInterval)
    /// Disarm the HELLO retry timer.
    case cancelHelloRetry
    /// Write an observable event.
    case emit(Event)
    /// Set the alarm to ring at this instant (the answer to a bed tap, or a typed wake time):
    /// `WatchNode` arms it and rings it there (its "Alarm" rules).
    case setAlarm(Date)
}

/// The watch's durable state: the newest applied batch and the alarms set and not yet rung.
public struct WatchSyncState: Codable, Equatable, Sendable {
    /// Seq of the applied batch (within its epoch), 0 before the first batch.
    public var lastAppliedSeq: UInt64
    /// The cached batch (the watch's wake dates).
    public var batch: WakeBatch?
    /// The alarms set and not yet rung (instants, UTC), in time order without repeats; nil when
    /// none is set. Optional in the file: a state file written before alarms were stored reads as
    /// none (docs/protocol.md, "The alarm").
    public var alarms: [Date]?

    /// A state with the given fields; the defaults describe a watch that never stored a batch
    /// and has no alarm set.
    public init(lastAppliedSeq: UInt64 = 0, batch: WakeBatch? = nil, alarms: [Date]? = nil) {
        self.lastAppliedSeq = lastAppliedSeq
        self.batch = batch
        self.alarms = alarms
    }
}

/// The result of a bed tap: the cached wake-up for the coming morning, or manual entry.
public enum BedTapOutcome: Equatable, Sendable {
    /// A cached wake-up lies ahead. `remaining` counts the cached wake-ups ahead of the tap, this
    /// one included.
    case cached(WakeEntry, timeZone: String, remaining: Int)
    /// No cached wake-up lies ahead; the user must type the wake time.
    case manualEntry(reason: String)
}

/// The watch's half of the sync protocol plus its bed-tap logic, sans I/O.
public struct WatchCore: Sendable {
    /// The durable state: the newest applied batch.
    public private(set) var state: WatchSyncState
    /// True between a bed tap that fell back to manual entry and the user's answer.
    public private(set) var awaitingManualEntry = false
    /// Wall seconds to wait for any reply to HELLO before sending it again.
    public var helloRetry: TimeInterval
    /// Count of stale (older-seq) batches ignored since start.
    public private(set) var staleIgnored = 0

    /// A state machine starting from `state` (as loaded from disk), retrying HELLO every
    /// `helloRetry` wall seconds.
    public init(state: WatchSyncState = WatchSyncState(), helloRetry: TimeInterval = 2) {
        self.state = state
        self.helloRetry = helloRetry
    }

    /// The link to the phone came (back) up: say HELLO with the last applied seq.
    public mutating func connected() -> [WatchEffect] {
        [.send(.hello(state.batch?.ref)), .armHelloRetry(after: helloRetry)]
    }

    /// No reply to HELLO in time: say it again (Lazy Pirate).
    public mutating func helloRetryDue() -> [WatchEffect] {
        connected()
    }

    /// A message from the phone.
    public mutating func receive(_ message: WireMessage) -> [WatchEffect] {
        switch message {
        case .batch(let batch):
            return [.cancelHelloRetry] + apply(batch)
        case .upToDate(let seq):
            return [.cancelHelloRetry, .emit(Event(.syncUpToDate, [("seq", .int(Int64(clamping: seq)))]))]
        case .error(let reason):
            return [.cancelHelloRetry, .emit(Event(.peerError, [("reason", .string(reason))]))]
        case .ping:
            return []  // liveness only: the runtime notes when the phone was last heard
        case .hello, .ack, .request:
            let reason = "\(message.typeName) is a watch-to-phone message"
            return [.emit(Event(.messageRejected, [("reason", .string(reason))])), .send(.error(reason: reason))]
        }
    }

    /// Applies a BATCH (docs/protocol.md, watch rule 2). A batch of another epoch than the one
    /// held replaces it (the phone started a new sequence space); within an epoch a higher seq
    /// replaces, the same seq with the same digest is a duplicate, the same seq with other dates
    /// is a conflict (acknowledged with what is held, so the phone sees the difference), and a
    /// lower seq is stale.
    private mutating func apply(_ batch: WakeBatch) -> [WatchEffect] {
        let seq = Int64(clamping: batch.seq)
        if let held = state.batch, held.epoch == batch.epoch {
            if batch.seq < held.seq {
                // Never older over newer. Tell the phone what we hold so a reset phone can catch up.
                staleIgnored += 1
                return [
                    .emit(Event(.batchStale, [("seq", .int(seq)), ("applied", .int(Int64(clamping: held.seq)))])),
                    .send(.hello(held.ref)),
                ]
            }
            if batch.seq == held.seq {
                let digest = batch.digest
                let event =
                    digest == held.digest
                    ? Event(.batchDuplicate, [("seq", .int(seq))])  // the phone missed our ACK
                    : Event(
                        .batchConflict,
                        [
                            ("seq", .int(seq)), ("held", .string(Hex64.string(held.digest))),
                            ("received", .string(Hex64.string(digest))),
                        ])
                return [.emit(event), .send(.ack(held.ref, coverageEnd: held.coverageEnd))]
            }
        }
        let epochChanged = state.batch.map { $0.epoch != batch.epoch } ?? false
        state = WatchSyncState(lastAppliedSeq: batch.seq, batch: batch, alarms: state.alarms)
        return [
            .persist(state),
            .emit(
                Event(
                    .batchApplied,
                    [
                        ("seq", .int(seq)), ("epoch", .string(Hex64.string(batch.epoch))),
                        ("count", .int(Int64(batch.entries.count))),
                        ("coverageEnd", batch.coverageEnd.map { .date($0) } ?? .null),
                        ("timeZone", .string(batch.timeZone)), ("zoneKnown", .bool(batch.zoneIsKnown)),
                        ("epochChanged", .bool(epochChanged)),
                    ])),
            .send(.ack(batch.ref, coverageEnd: batch.coverageEnd)),
        ]
    }

    /// Records the alarms set and not yet rung in the durable state (nil when `alarms` is empty);
    /// the node writes the state when they differ from what is on disk.
    mutating func noteAlarms(_ alarms: [Date]) {
        state.alarms = alarms.isEmpty ? nil : alarms
    }

    /// Looks up the wake-up for a bed tap at `now`: the first cached wake-up strictly after `now`.
    ///
    /// The watch's fallback boundary: with a Mar 6-12 2025 batch at 06:30 America/New_York, a tap
    /// at 2025-03-12T10:29Z shows Mar 12; at 10:31Z no cached wake-up is ahead, so it asks for
    /// manual entry.
    public static func lookup(at now: Date, in batch: WakeBatch?) -> BedTapOutcome {
        guard let batch else {
            return .manualEntry(reason: "no wake dates cached yet")
        }
        guard let index = batch.entries.firstIndex(where: { $0.wake > now }) else {
            let end = batch.coverageEnd.map { ISO8601.string($0) } ?? "an empty batch"
            return .manualEntry(reason: "cached wake dates ran out (last was \(end), batch \(batch.seq))")
        }
        return .cached(batch.entries[index], timeZone: batch.timeZone, remaining: batch.entries.count - index)
    }

    /// The nights left: the cached wake-ups strictly after `now` (0 without a batch). A bed tap
    /// at `now` shows the first of them.
    public static func nightsLeft(at now: Date, in batch: WakeBatch?) -> Int {
        batch?.entries.count { $0.wake > now } ?? 0
    }

    /// The night a tap belongs to: the tap's local date and time in the zone the watch lives in,
    /// and that zone (`tapLocalDate`, `tapLocalTime`, `tapTimeZone`).
    static func tapFields(at now: Date, in zone: TimeZone) -> [(String, EventValue)] {
        let calendar = WakeCalendar.calendar(in: zone)
        return [
            ("tapLocalDate", .string(WakeCalendar.localDateString(now, in: calendar))),
            ("tapLocalTime", .string(WakeCalendar.localTimeString(now, in: calendar))),
            ("tapTimeZone", .string(zone.identifier)),
        ]
    }

    /// The user tapped "bed" at `now`.
    /// - Parameters:
    ///   - now: virtual now.
    ///   - zone: the zone the watch lives in (the tap's local date and time are given in it).
    /// - Returns: `bed.wake_time` {wakeTime, localDate, localTime, timeZone (the wake-up's, from
    ///   the batch), utcOffset (seconds east of UTC), zoneKnown (whether this watch's tz database
    ///   knows the zone), remaining (cached wake-ups ahead of the tap, this one included), the tap's
    ///   fields}, or `fallback.manual_entry` {reason, the tap's fields} after which the watch
    ///   awaits a typed `HH:MM`.
    public mutating func bedTap(at now: Date, in zone: TimeZone) -> [WatchEffect] {
        let tap = Self.tapFields(at: now, in: zone)
        switch Self.lookup(at: now, in: state.batch) {
        case .cached(let entry, let batchZone, let remaining):
            awaitingManualEntry = false
            return [
                .emit(
                    Event(
                        .bedWakeTime,
                        [
                            ("wakeTime", .date(entry.wake)), ("localDate", .string(entry.localDate)),
                            ("localTime", .string(entry.localTime)), ("timeZone", .string(batchZone)),
                            ("utcOffset", .int(Int64(entry.utcOffset))),
                            ("zoneKnown", .bool(WakeCalendar.zone(named: batchZone) != nil)),
                            ("remaining", .int(Int64(remaining))),
                        ] + tap)),
                .setAlarm(entry.wake),
            ]
        case .manualEntry(let reason):
            awaitingManualEntry = true
            return [.emit(Event(.fallbackManualEntry, [("reason", .string(reason))] + tap))]
        }
    }

    /// The user typed a wake time after a manual-entry prompt.
    ///
    /// - Parameters:
    ///   - text: `HH:MM`.
    ///   - now: virtual now.
    ///   - zone: the zone the typed time is meant in.
    /// - Returns: `manual.wake_time` {wakeTime, localDate, localTime, timeZone, the tap's fields:
    ///   the instant the time was typed}, or `input.rejected` {reason}
    ///   (still awaiting) when the text is not a time or no prompt is open.
    public mutating func manualWakeTime(_ text: String, at now: Date, in zone: TimeZone) -> [WatchEffect] {
        guard awaitingManualEntry else {
            return [
                .emit(
                    Event(
                        .inputRejected,
                        [
                            ("input", .string(echoed(text))),
                            ("reason", .string("no manual-entry prompt is open; tap bed first")),
                        ]))
            ]
        }
        guard let time = LocalTime(parsing: text) else {
            return [
                .emit(
                    Event(
                        .inputRejected,
                        [
                            ("input", .string(echoed(text))),
                            ("reason", .string("expected a wake time HH:MM (00:00-23:59)")),
                        ]))
            ]
        }
        let calendar = WakeCalendar.calendar(in: zone)
        guard let wake = WakeCalendar.next(time, after: now, in: calendar) else {
            return [
                .emit(
                    Event(
                        .inputRejected,
                        [("input", .string(echoed(text))), ("reason", .string("no such local time ahead"))]))
            ]
        }
        awaitingManualEntry = false
        return [
            .emit(
                Event(
                    .manualWakeTime,
                    [
                        ("wakeTime", .date(wake)),
                        ("localDate", .string(WakeCalendar.localDateString(wake, in: calendar))),
                        ("localTime", .string(WakeCalendar.localTimeString(wake, in: calendar))),
                        ("timeZone", .string(zone.identifier)),
                    ] + Self.tapFields(at: now, in: zone))),
            .setAlarm(wake),
        ]
    }

    /// `cache.status` {count, coverageEnd, seq, remaining (cached wake-ups ahead of `now`, as in
    /// `bed.wake_time`)}: what the watch holds at `now`.
    public func status(at now: Date) -> Event {
        let entries = state.batch?.entries ?? []
        return Event(
            .cacheStatus,
            [
                ("count", .int(Int64(entries.count))),
                ("remaining", .int(Int64(Self.nightsLeft(at: now, in: state.batch)))),
                ("coverageEnd", state.batch?.coverageEnd.map { .date($0) } ?? .null),
                ("seq", .int(Int64(clamping: state.lastAppliedSeq))),
                ("timeZone", state.batch.map { .string($0.timeZone) } ?? .null),
                ("staleIgnored", .int(Int64(staleIgnored))),
            ])
    }
}

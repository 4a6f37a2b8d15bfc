// SPDX-License-Identifier: Apache-2.0

public import Foundation
import Synchronization

/// One wake-up: the absolute instant and how it reads on the wall clock of the batch's zone.
public struct WakeEntry: Codable, Equatable, Hashable, Sendable {
    /// The wake-up instant (serialised as ISO-8601 UTC, e.g. `2025-03-07T11:30:00Z`).
    public var wake: Date
    /// Local calendar date of the wake-up in its zone, `yyyy-MM-dd`.
    public var localDate: String
    /// Local wall time of the wake-up in its zone, `HH:MM` (after any gap shift).
    public var localTime: String
    /// IANA identifier of the zone `localDate` and `localTime` are in (the zone used).
    public var timeZone: String
    /// The zone's offset from UTC at `wake`, in seconds east of UTC (`+32400` for Tokyo). With it a
    /// receiver whose time-zone database lacks `timeZone` (a renamed or newer zone) can still check
    /// and show the local date and time: `localDate`/`localTime` read `wake + utcOffset` in UTC.
    public var utcOffset: Int

    /// An entry with the given fields.
    /// - Parameters:
    ///   - wake: the wake-up instant.
    ///   - localDate: its local date in `timeZone`, `yyyy-MM-dd`.
    ///   - localTime: its local wall time in `timeZone`, `HH:MM`.
    ///   - timeZone: the IANA identifier of the zone.
    ///   - utcOffset: seconds east of UTC at `wake`; nil computes it from `timeZone` with this
    ///     tz database in use (`WakeCalendar.utcOffset`; Foundation's for a zone it lacks).
    public init(wake: Date, localDate: String, localTime: String, timeZone: String, utcOffset: Int? = nil) {
        self.wake = wake
        self.localDate = localDate
        self.localTime = localTime
        self.timeZone = timeZone
        self.utcOffset =
            utcOffset ?? TimeZone(identifier: timeZone).map { WakeCalendar.utcOffset(of: $0, at: wake) } ?? 0
    }

    private enum CodingKeys: String, CodingKey { case wake, localDate, localTime, timeZone, utcOffset }

    /// `utcOffset` may be absent (state files written before it existed): it is then computed
    /// from `timeZone`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            wake: try container.decode(Date.self, forKey: .wake),
            localDate: try container.decode(String.self, forKey: .localDate),
            localTime: try container.decode(String.self, forKey: .localTime),
            timeZone: try container.decode(String.self, forKey: .timeZone),
            utcOffset: try container.decodeIfPresent(Int.self, forKey: .utcOffset))
    }
}

/// A numbered set of upcoming wake-ups, the unit the phone sends and the watch caches.
///
/// A batch is identified by (`epoch`, `seq`) and its content by `digest`: the watch acknowledges
/// exactly what it stored (`BatchRef`), so a phone never records as acknowledged a batch whose
/// content differs from what the watch holds.
public struct WakeBatch: Codable, Equatable, Sendable {
    /// The phone's numbering epoch: a random 64-bit value chosen when the phone starts a new
    /// sequence space (first start, or when the watch holds a batch this phone did not issue).
    /// 0 only in state files written before epochs existed.
    public var epoch: UInt64
    /// Sequence number, ≥ 1, strictly increasing within an epoch; the watch never applies a lower
    /// one over a higher one of the same epoch.
    public var seq: UInt64
    /// When the phone generated it (virtual time).
    public var generatedAt: Date
    /// IANA identifier of the zone the entries' local dates and times are in. The receiver's
    /// time-zone database may not know it (`zoneIsKnown`); the entries' `utcOffset` still apply.
    public var timeZone: String { didSet { digest = Self.digest(timeZone: timeZone, entries: entries) } }
    /// Wake-ups, strictly increasing by instant, at most one per local day.
    public var entries: [WakeEntry] { didSet { digest = Self.digest(timeZone: timeZone, entries: entries) } }
    /// FNV-1a 64 of the batch's canonical text (docs/protocol.md "Digest"): the zone, then one
    /// line per entry. Two batches with the same digest hold the same wake-ups. Computed when the
    /// zone or the entries are set (the phone and the watch ask for it several times a batch).
    public private(set) var digest: UInt64

    /// A batch with the given fields; `entries` must be strictly increasing by instant.
    public init(epoch: UInt64 = 0, seq: UInt64, generatedAt: Date, timeZone: String, entries: [WakeEntry]) {
        self.epoch = epoch
        self.seq = seq
        self.generatedAt = generatedAt
        self.timeZone = timeZone
        self.entries = entries
        self.digest = Self.digest(timeZone: timeZone, entries: entries)
    }

    private enum CodingKeys: String, CodingKey { case epoch, seq, generatedAt, timeZone, entries }

    /// `epoch` may be absent (state files written before epochs existed): it is then 0.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            epoch: try container.decodeHex64IfPresent(forKey: .epoch) ?? 0,
            seq: try container.decode(UInt64.self, forKey: .seq),
            generatedAt: try container.decode(Date.self, forKey: .generatedAt),
            timeZone: try container.decode(String.self, forKey: .timeZone),
            entries: try container.decode([WakeEntry].self, forKey: .entries))
    }

    /// Writes `epoch` as the 16 hex digits the wire uses (`Hex64`), not as a JSON number: a
    /// number above 2^53 is not exact in every JSON reader (RFC 8259, section 6; I-JSON, RFC 7493,
    /// section 2.2).
    /// - Throws: the encoder's errors.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Hex64.string(epoch), forKey: .epoch)
        try container.encode(seq, forKey: .seq)
        try container.encode(generatedAt, forKey: .generatedAt)
        try container.encode(timeZone, forKey: .timeZone)
        try container.encode(entries, forKey: .entries)
    }

    /// The last wake-up instant the batch covers, or nil for an empty batch.
    public var coverageEnd: Date? { entries.last?.wake }

    /// What identifies this batch and its content on the wire (HELLO and ACK carry it).
    public var ref: BatchRef { BatchRef(epoch: epoch, seq: seq, digest: digest) }

    /// The digest's canonical text, `zone\n` then `wake localDate localTime utcOffset\n` per
    /// entry (wake as `ISO8601.string`), hashed with FNV-1a 64.
    /// - Complexity: O(entries).
    static func digest(timeZone: String, entries: [WakeEntry]) -> UInt64 {
        var text: [UInt8] = []
        text.reserveCapacity(timeZone.utf8.count + 1 + entries.count * 48)
        text += timeZone.utf8
        text.append(UInt8(ascii: "\n"))
        for entry in entries {
            text += ISO8601.string(entry.wake).utf8
            text.append(UInt8(ascii: " "))
            text += entry.localDate.utf8
            text.append(UInt8(ascii: " "))
            text += entry.localTime.utf8
            text.append(UInt8(ascii: " "))
            text += String(entry.utcOffset).utf8
            text.append(UInt8(ascii: "\n"))
        }
        return FNV1a64.hash(text)
    }

    /// Whether this machine's time-zone database knows `timeZone`.
    public var zoneIsKnown: Bool { WakeCalendar.zone(named: timeZone) != nil }

    /// The zone to show and plan local times in on this machine: `timeZone` when known here,
    /// otherwise a fixed offset (the first entry's `utcOffset`, else UTC).
    public var displayZone: TimeZone {
        if let zone = WakeCalendar.zone(named: timeZone) { return zone }
        return TimeZone(secondsFromGMT: entries.first?.utcOffset ?? 0) ?? TimeZone(secondsFromGMT: 0) ?? .current
    }
}

/// Identifies a batch and its content: the epoch, the seq and the digest of its entries.
public struct BatchRef: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The phone's numbering epoch (16 hex digits on the wire).
    public var epoch: UInt64
    /// The batch's sequence number within `epoch`.
    public var seq: UInt64
    /// FNV-1a 64 of the batch's canonical text (`WakeBatch.digest`).
    public var digest: UInt64

    /// A reference to batch `seq` of `epoch` whose entries hash to `digest`.
    public init(epoch: UInt64, seq: UInt64, digest: UInt64) {
        self.epoch = epoch
        self.seq = seq
        self.digest = digest
    }

    /// `epoch/seq/digest`, the hex forms the wire uses.
    public var description: String { "\(Hex64.string(epoch))/\(seq)/\(Hex64.string(digest))" }
}

/// The 64-bit FNV-1a hash (Fowler, Noll, Vo; IETF draft-eastlake-fnv, "FNV-1a"): offset basis
/// 14695981039346656037, prime 1099511628211, each byte XORed in before the multiply.
package enum FNV1a64 {
    /// The FNV-1a 64 hash of `bytes`.
    package static func hash(_ bytes: [UInt8]) -> UInt64 {
        var value: UInt64 = 14_695_981_039_346_656_037
        for byte in bytes {
            value ^= UInt64(byte)
            value = value &* 1_099_511_628_211
        }
        return value
    }
}

/// A 64-bit value as exactly 16 lower-case hexadecimal digits (how epochs and digests travel).
package enum Hex64 {
    /// `value` as 16 lower-case hexadecimal digits, zero-padded (`000000000000002a`).
    package static func string(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Parses exactly 16 lower-case hexadecimal digits; nil otherwise.
    package static func parse(_ text: String) -> UInt64? {
        guard text.utf8.count == 16, text.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else { return nil }
        return UInt64(text, radix: 16)
    }
}

extension KeyedDecodingContainer {
    /// A 64-bit value stored as `Hex64`'s 16 hex digits, or as a JSON number (files written
    /// before it was stored as hex; Foundation's decoder reads the number's digits exactly).
    /// - Throws: `DecodingError.dataCorrupted` naming the key for a string that is not 16
    ///   lower-case hex digits; the decoder's errors for anything else.
    func decodeHex64IfPresent(forKey key: Key) throws -> UInt64? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let text = try? decode(String.self, forKey: key) {
            guard let value = Hex64.parse(text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: self, debugDescription: "\"\(text)\" is not 16 lower-case hex digits")
            }
            return value
        }
        return try decode(UInt64.self, forKey: key)
    }
}

/// Turns a schedule into the wake-ups the watch should hold.
public enum BatchPlanner {
    /// The default horizon: 7 local days of wake-ups (this project's rule).
    public static let defaultHorizonDays = 7

    /// The wake-ups of `horizonDays` consecutive local days, starting with the day of the next
    /// wake-up strictly after `now`.
    ///
    /// Each day's instant follows the gap / repeated-time rule of `WakeCalendar`;
    /// days are stepped with `Calendar.date(byAdding: .day, ...)`, never 86,400 s (Foundation's
    /// answers kept, `WakeCalendar.adding`, as are the entries' local fields). Days off
    /// contribute nothing, so a schedule with days off yields fewer than `horizonDays` entries.
    ///
    /// - Parameters:
    ///   - schedule: weekly wake times.
    ///   - zone: the zone the wall times are meant in.
    ///   - now: entries are strictly after this instant.
    ///   - horizonDays: number of local days covered, ≥ 1.
    /// - Returns: entries strictly increasing by instant; empty when the schedule has no wake-up.
    /// - Complexity: O(horizonDays) calendar look-ups.
    public static func entries(
        for schedule: WakeSchedule, in zone: TimeZone, after now: Date,
        horizonDays: Int = defaultHorizonDays
    ) -> [WakeEntry] {
        let calendar = WakeCalendar.calendar(in: zone)
        let today = LocalDayCache.startOfDay(now, in: calendar)
        // Find the first local day (today or within the next week) with a wake-up after now.
        var firstDay: Date?
        for offset in 0...7 {
            guard let day = WakeCalendar.adding(.day, offset, to: today, in: calendar) else { break }
            if let time = schedule.wakeTime(onDayOf: day, in: calendar),
                let instant = WakeCalendar.instant(of: time, onDayOf: day, in: calendar),
                instant > now
            {
                firstDay = day
                break
            }
        }
        guard let start = firstDay else { return [] }
        // The batch from `start` does not depend on `now` (`days(from:...)`), and the phone plans
        // the same one at each run and app open until the next wake-up passes.
        let key = BatchCache.Key(schedule: schedule, zone: zone, start: start, horizonDays: horizonDays)
        if let key, let known = BatchCache.shared.withLock({ $0.value(for: key) }) { return known }
        let result = days(from: start, for: schedule, in: zone, calendar: calendar, horizonDays: horizonDays)
        if let key { BatchCache.shared.withLock { $0.keep(result, for: key) } }
        return result
    }

    /// The wake-ups of `horizonDays` consecutive local days from `start`, the first local day
    /// with a wake-up after the planning instant: the part of `entries(for:in:after:horizonDays:)`
    /// that does not depend on that instant. The first day's wake-up is after it (that is how
    /// `start` was found), and each later one is kept only when after the last kept, so after it
    /// too.
    static func days(
        from start: Date, for schedule: WakeSchedule, in zone: TimeZone, calendar: Calendar, horizonDays: Int
    ) -> [WakeEntry] {
        var result: [WakeEntry] = []
        for offset in 0..<max(1, horizonDays) {
            guard let day = WakeCalendar.adding(.day, offset, to: start, in: calendar),
                let time = schedule.wakeTime(onDayOf: day, in: calendar),
                let instant = WakeCalendar.instant(of: time, onDayOf: day, in: calendar)
            else { continue }
            if let last = result.last, instant <= last.wake { continue }
            result.append(WakeCalendar.entry(at: instant, in: zone, calendar: calendar))
        }
        return result
    }
}

/// Batches of `BatchPlanner.days(from:for:in:calendar:horizonDays:)`, fixed by the zone's rules,
/// the first local day, the horizon and the weekly wake times; a schedule with one-off overrides
/// is not kept (`Key.init` is nil). Shared by every thread, in two generations (`Memo`) of 2,048
/// batches: a phone plans the same batch again within hours, so a few thousand are enough, and
/// 25,000 batches of 7 entries held 30 MB more in a 1,000-device comparison for no more speed.
enum BatchCache {
    struct Key: Hashable {
        var database: Int
        var zone: String
        var start: TimeInterval
        var horizonDays: Int
        /// The wake minute of day + 1 (0: no wake-up) of Sunday to Thursday, 11 bits each.
        var sundayToThursday: UInt64
        /// The same of Friday and Saturday.
        var fridayAndSaturday: UInt64

        /// The key of a batch, nil when `schedule` has overrides.
        init?(schedule: WakeSchedule, zone: TimeZone, start: Date, horizonDays: Int) {
            guard schedule.overrides.isEmpty else { return nil }
            func minutes(_ day: Weekday) -> UInt64 {
                schedule.wakeTimes[day].map { UInt64($0.hour * 60 + $0.minute + 1) } ?? 0
            }
            database = WakeCalendar.databaseKey(of: zone)
            self.zone = zone.identifier
            self.start = start.timeIntervalSince1970
            self.horizonDays = horizonDays
            sundayToThursday =
                minutes(.sunday) << 44 | minutes(.monday) << 33 | minutes(.tuesday) << 22 | minutes(.wednesday) << 11
                | minutes(.thursday)
            fridayAndSaturday = minutes(.friday) << 11 | minutes(.saturday)
        }
    }

    static let shared = Mutex(Memo<Key, [WakeEntry]>(generation: 2_048))
}

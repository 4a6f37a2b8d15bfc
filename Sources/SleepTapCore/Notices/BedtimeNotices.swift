// SPDX-License-Identifier: Apache-2.0

public import Foundation
package import SleepTapOS

/// A pending local notification, as the phone would hand it to the OS (UNNotificationRequest:
/// identifier, trigger date, body).
public struct NotificationRecord: Codable, Equatable, Hashable, Sendable {
    /// Stable identifier; re-adding the same id replaces the old request (as on iOS).
    public var id: String
    /// When it fires.
    public var fireDate: Date
    /// The text shown.
    public var text: String

    /// A notification with identifier `id` that fires at `fireDate` (an absolute instant) showing `text`.
    public init(id: String, fireDate: Date, text: String) {
        self.id = id
        self.fireDate = fireDate
        self.text = text
    }
}

/// The OS's pending-notification list, reduced to iOS's rule: at most 64 pending local
/// notifications per app, the soonest kept ("Scheduling a Notification Locally from Your App",
/// Apple: "the system keeps the soonest-firing 64 notifications").
public struct PendingNotifications: Codable, Equatable, Sendable {
    /// iOS's limit of pending local notifications per app.
    public static let limit = 64

    /// Pending requests, soonest first, at most `limit`.
    public private(set) var records: [NotificationRecord] = []

    /// A pending list holding the soonest `limit` of `records`, soonest first.
    public init(records: [NotificationRecord] = []) {
        self.records = Self.capped(records)
    }

    private enum CodingKeys: String, CodingKey {
        case records
    }

    /// Reads `records` as stored and keeps the list's rule on them (soonest first, one per id,
    /// at most `limit`), whatever order a file holds them in.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        records = Self.capped(try container.decode([NotificationRecord].self, forKey: .records))
    }

    /// Replaces every pending request whose id starts with `prefix` with `new` (an update
    /// replaces the previous set), then keeps the soonest `limit` of all.
    /// - Returns: the records of `new` that are pending afterwards (each is a `notification.added`).
    @discardableResult
    public mutating func replace(prefix: String, with new: [NotificationRecord]) -> [NotificationRecord] {
        let others = records.filter { !$0.id.hasPrefix(prefix) }
        records = Self.capped(others + new)
        let kept = IDs(records.map(\.id))
        return new.filter { kept.contains($0.id) }.sorted(by: Self.soonerFirst)
    }

    /// Replaces every pending request whose id starts with `prefix` with `new`, then keeps the
    /// soonest `limit` of all, and says what changed.
    /// - Returns: the records of `new` now pending, and every record (new or already pending)
    ///   the `limit` pushed out. Replaced records of `prefix` are neither.
    package mutating func update(prefix: String, with new: [NotificationRecord]) -> NotificationChange {
        if let change = mergedUpdate(prefix: prefix, with: new) { return change }
        let candidates = records.filter { !$0.id.hasPrefix(prefix) } + new
        let added = replace(prefix: prefix, with: new)
        let kept = IDs(records.map(\.id))
        var seen = IDs([])
        let dropped = candidates.reversed().filter { seen.insert($0.id) && !kept.contains($0.id) }
            .sorted(by: Self.soonerFirst)
        return NotificationChange(added: added, dropped: dropped)
    }

    /// `update(prefix:with:)` by one merge, where every id of `new` has `prefix` and none repeats
    /// (what the app's jobs pass): the pending records without the prefix are already sorted and
    /// unique (`records`' invariant), so they and the sorted `new` merge in one pass and the
    /// limit cuts the tail. Nil for any other `new`, which takes the general path.
    private mutating func mergedUpdate(prefix: String, with new: [NotificationRecord]) -> NotificationChange? {
        guard new.count <= 16, new.allSatisfy({ $0.id.hasPrefix(prefix) }) else { return nil }
        for (index, record) in new.enumerated() where new[..<index].contains(where: { $0.id == record.id }) {
            return nil
        }
        let fresh = new.sorted(by: Self.soonerFirst)
        var merged: [NotificationRecord] = []
        merged.reserveCapacity(records.count + fresh.count)
        var change = NotificationChange()
        var next = 0
        for record in records where !record.id.hasPrefix(prefix) {
            while next < fresh.count, Self.soonerFirst(fresh[next], record) {
                if merged.count < Self.limit { change.added.append(fresh[next]) }
                merged.append(fresh[next])
                next += 1
            }
            merged.append(record)
        }
        for record in fresh[next...] {
            if merged.count < Self.limit { change.added.append(record) }
            merged.append(record)
        }
        if merged.count > Self.limit {
            change.dropped = Array(merged[Self.limit...])
            merged.removeSubrange(Self.limit...)
        }
        records = merged
        return change
    }

    /// The pending list's order: by fire date, then by id.
    private static func soonerFirst(_ a: NotificationRecord, _ b: NotificationRecord) -> Bool {
        a.fireDate != b.fireDate ? a.fireDate < b.fireDate : a.id < b.id
    }

    /// Drops requests that fired at or before `now`.
    public mutating func removeDelivered(before now: Date) {
        records.removeAll { $0.fireDate <= now }
    }

    private static func capped(_ list: [NotificationRecord]) -> [NotificationRecord] {
        // A later one with the same id wins: the last of each id, found from the end.
        var ids = IDs([])
        var unique: [NotificationRecord] = []
        unique.reserveCapacity(list.count)
        for record in list.reversed() where ids.insert(record.id) { unique.append(record) }
        let sorted = unique.sorted(by: Self.soonerFirst)
        return Array(sorted.prefix(limit))
    }

    /// A set of ids: a list searched in order while it is short (a job's update holds about a
    /// dozen), a hashed set beyond that.
    private struct IDs {
        private var list: [String] = []
        private var set: Set<String>?

        init(_ ids: [String]) {
            for id in ids { _ = insert(id) }
        }

        func contains(_ id: String) -> Bool {
            if let set { return set.contains(id) }
            return list.contains(id)
        }

        /// Adds `id`; false when it was there already.
        mutating func insert(_ id: String) -> Bool {
            if set != nil { return set!.insert(id).inserted }
            if list.contains(id) { return false }
            list.append(id)
            if list.count > 32 {
                set = Set(list)
                list = []
            }
            return true
        }
    }
}

/// What one `PendingNotifications.update` did.
package struct NotificationChange: Equatable, Sendable {
    /// Records of the update now pending, soonest first.
    package var added: [NotificationRecord] = []
    /// Records the 64-request limit pushed out, soonest first: the OS would never show them.
    package var dropped: [NotificationRecord] = []

    /// A change that added `added` and pushed out `dropped`.
    package init(added: [NotificationRecord] = [], dropped: [NotificationRecord] = []) {
        self.added = added
        self.dropped = dropped
    }

    /// `notification.added` {id, fireDate, text} for each added record, then
    /// `notification.dropped` {id, fireDate, text, reason} for each dropped one, stamped with
    /// virtual instant `now` (UTC).
    package func events(at now: Date) -> [PhoneAction] { events(delivery: "alert", at: now) }

    /// `events(at:)`, each `notification.added` with `delivery`: what the user sees when it fires
    /// (`alert`; `quiet` for an iOS provisional authorization, Notification Center only; `none`
    /// on Android with the permission revoked).
    /// - Parameters:
    ///   - delivery: the `delivery` field of each `notification.added`.
    ///   - now: the virtual instant (UTC) the events are stamped with.
    package func events(delivery: String, at now: Date) -> [PhoneAction] {
        let reason = "over the limit of \(PendingNotifications.limit) pending notifications; the soonest are kept"
        return added.map {
            .emit(Event(.notificationAdded, Self.fields($0) + [("delivery", .string(delivery))]), at: now)
        }
            + dropped.map {
                .emit(Event(.notificationDropped, Self.fields($0) + [("reason", .string(reason))]), at: now)
            }
    }

    /// iOS: `notification.failed` {id, fireDate, text, domain, code, error, reason} for each of
    /// `records`, whose `UNUserNotificationCenter.add` failed because the authorization does not
    /// allow notifications (`UNErrorDomain` code 1, `UNError.Code.notificationsNotAllowed`).
    /// - Parameters:
    ///   - records: the notices the app asked the OS to add.
    ///   - authorization: the app's authorization (`denied` or `not-determined`).
    ///   - now: the virtual instant (UTC) the events are stamped with.
    package static func failures(
        _ records: [NotificationRecord], authorization: NotificationAuthorization, at now: Date
    ) -> [PhoneAction] {
        let reason =
            "the notification authorization is \(authorization.rawValue): UNUserNotificationCenter.add failed "
            + "(UNErrorDomain code 1, notificationsNotAllowed); nothing is pending"
        return records.map { record in
            .emit(
                Event(
                    .notificationFailed,
                    fields(record) + [
                        ("domain", .string(NotificationAuthorization.notAllowedDomain)),
                        ("code", .int(Int64(NotificationAuthorization.notAllowedCode))),
                        ("error", .string("notificationsNotAllowed")), ("reason", .string(reason)),
                    ]),
                at: now)
        }
    }

    private static func fields(_ record: NotificationRecord) -> [(String, EventValue)] {
        [("id", .string(record.id)), ("fireDate", .date(record.fireDate)), ("text", .string(record.text))]
    }
}

/// Daily rotation of notice texts: which of `count` texts a given local day shows, shifted by the
/// device's seed so not every user sees the same one.
package enum DailyRotation {
    /// `SplitMix64(state: seed &+ day).next() % count`, where `day` is the number of days since
    /// 1970-01-01 of the local date (for UTC this equals `Int(t / 86400)` of a Unix time `t`).
    ///
    /// - Parameters:
    ///   - date: the local calendar date.
    ///   - seed: the device's seed.
    ///   - count: number of texts, ≥ 1.
    /// - Returns: an index in `0..<count`.
    package static func entryIndex(for date: LocalDate, seed: UInt64, count: Int) -> Int {
        precondition(count >= 1, "DailyRotation needs at least one entry")
        var generator = SplitMix64(state: seed &+ UInt64(bitPattern: Int64(date.daysSinceEpoch)))
        return Int(generator.next() % UInt64(count))
    }
}

/// Bedtime notices: one per wake-up, at wake − sleep target − lead.
package enum BedtimeNoticePlanner {
    /// Identifier prefix of bedtime notices; an update replaces every pending one.
    package static let idPrefix = "bedtime-"

    /// The built-in texts, rotated daily. `{bed}` is the bedtime, `{wake}` the wake time (local).
    package static let texts = [
        "Time to wind down: bed at {bed} gives you your sleep before {wake}.",
        "Screens off soon. Bedtime {bed}, alarm {wake}.",
        "Your wake-up is {wake}. Head to bed by {bed}.",
        "A calm evening helps: aim for bed at {bed} (wake {wake}).",
        "Bedtime in a little while: {bed}. Tomorrow starts at {wake}.",
    ]

    /// `template` with every `{bed}` replaced by `bed` and every `{wake}` by `wake`.
    static func filled(_ template: String, bed: String, wake: String) -> String {
        let bytes = Array(template.utf8)
        let bedToken = Array("{bed}".utf8)
        let wakeToken = Array("{wake}".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "{") {
                if bytes[index...].starts(with: bedToken) {
                    out.append(contentsOf: bed.utf8)
                    index += bedToken.count
                    continue
                }
                if bytes[index...].starts(with: wakeToken) {
                    out.append(contentsOf: wake.utf8)
                    index += wakeToken.count
                    continue
                }
            }
            out.append(bytes[index])
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Notices for `entries` whose fire instant is after `now`.
    ///
    /// - Parameters:
    ///   - entries: wake-ups (from `BatchPlanner`).
    ///   - schedule: gives the sleep target and lead, in minutes.
    ///   - zone: the zone for the local times in the text and the rotation's local date.
    ///   - now: notices firing at or before it are left out.
    ///   - seed: the device seed for `DailyRotation`.
    /// - Returns: records with id `bedtime-<wake local date>`, fire = wake − target − lead
    ///   (elapsed time: a DST night is an hour shorter or longer on the wall, not in sleep).
    package static func notices(
        for entries: [WakeEntry], schedule: WakeSchedule, in zone: TimeZone, now: Date, seed: UInt64
    ) -> [NotificationRecord] {
        let calendar = WakeCalendar.calendar(in: zone)
        let sleep = TimeInterval(schedule.sleepTargetMinutes * 60)
        let lead = TimeInterval(schedule.bedtimeNoticeLeadMinutes * 60)
        return entries.compactMap { entry in
            let bed = entry.wake.addingTimeInterval(-sleep)
            let fire = bed.addingTimeInterval(-lead)
            guard fire > now else { return nil }
            let wakeDate = LocalDate(entry.wake, in: calendar)
            let index = DailyRotation.entryIndex(for: wakeDate, seed: seed, count: texts.count)
            let text = filled(
                texts[index], bed: WakeCalendar.localTimeString(bed, in: calendar),
                wake: WakeCalendar.localTimeString(entry.wake, in: calendar))
            return NotificationRecord(id: idPrefix + wakeDate.description, fireDate: fire, text: text)
        }
    }
}

/// When the phone asks the OS to run its refresh job next.
package enum RefreshPlanner {
    /// earliestBeginDate = the next wake-up after `now` + 1 h (this project's rule: the earliest
    /// time is the user's wake-up time plus one hour). The wake-up follows the calendar rule of
    /// `WakeCalendar`, so it is right across DST changes; the hour is elapsed time. nil when the
    /// schedule has no wake-up in the next 8 days.
    package static func earliestBeginDate(after now: Date, schedule: WakeSchedule, in zone: TimeZone) -> Date? {
        // The first entry of any horizon is the first day's (the search for it looks 8 days ahead).
        earliestBeginDate(
            nextWake: BatchPlanner.entries(for: schedule, in: zone, after: now, horizonDays: 1).first, in: zone)
    }

    /// `earliestBeginDate(after:schedule:in:)` from the next wake-up already found: the first
    /// entry of a batch planned at the same instant (`BatchPlanner.entries`: its first entry is
    /// the same for every horizon). nil when there is none.
    package static func earliestBeginDate(nextWake next: WakeEntry?, in zone: TimeZone) -> Date? {
        guard let next else { return nil }
        return WakeCalendar.adding(.hour, 1, to: next.wake, in: WakeCalendar.calendar(in: zone))
    }
}

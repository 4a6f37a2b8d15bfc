// SPDX-License-Identifier: Apache-2.0
package import Foundation
package import SleepTapCore
package import SleepTapEmbedded
package import SleepTapOS
package import SleepTapRuntime

/// One night of a simulated watch: its bed tap, where the wake-up came from (the cached dates or
/// the user's typed time) and whether the alarm rang at it (docs/fleet.md, "Night records").
///
/// Written as `metrics/watch_nights/<device>-<YYYY-MM-DD>.json` (the tap's UTC day) beside the
/// phone's run records, which the weekly report reads alone.
package struct WatchNight: Equatable, Sendable {
    /// Where the night's wake-up came from.
    package enum Source: String, Sendable {
        /// A cached date of the phone's batch covered the night (`bed.wake_time`).
        case cache
        /// No cached date did: the watch asked and the user typed the time
        /// (`fallback.manual_entry`, `manual.wake_time`).
        case manual
    }

    /// Whether the alarm rang right.
    package enum Alarm: String, Sendable {
        /// It rang first at the wake-up the night answered (not late), and for a cached date that
        /// wake-up is the device's schedule's for its local date, in the batch's zone.
        case right
        /// It was set or rang at another instant, rang late, or a cached date is off the schedule.
        case wrong
        /// The wake-up fell before the end of the simulation and the alarm did not ring for it.
        case missed
        /// The wake-up lies at or after the end of the simulation: not judged.
        case afterEnd
    }

    /// The device's name (`device-000042`), as in its run records.
    package var device: String
    /// `ios` or `android`.
    package var platform: Platform
    /// The tap's instant.
    package var tapAt: Date
    /// The tap's local date (`YYYY-MM-DD`) in the zone the watch lives in.
    package var tapLocalDate: String
    /// The tap's local time (`HH:MM`) in that zone.
    package var tapLocalTime: String
    /// That zone's identifier (`America/Chicago`).
    package var tapTimeZone: String
    /// Where the wake-up came from.
    package var source: Source
    /// The wake-up the night answered (the cached date, or the typed time); nil when none was
    /// set by the end.
    package var wakeTime: Date?
    /// Cached wake-ups ahead of the tap, this night's included; 0 for a manual entry.
    package var nightsLeft: Int
    /// When the alarm first rang for `wakeTime`; nil when it did not.
    package var alarmFiredAt: Date?
    /// The verdict on the alarm.
    package var alarm: Alarm
    /// The phone's staleness at the tap: hours since its last successful background run ended;
    /// nil when there was none yet.
    package var stalenessHours: Double?

    /// The directory under a metrics root, beside `RunRecordFile.directory`.
    package static let directory = "metrics/watch_nights"

    /// Whether the alarm rang wrong or not at all (`wrong`, `missed`): what must never happen.
    package var alarmFailed: Bool { alarm == .wrong || alarm == .missed }

    /// The nights of a device's twin log: one per bed tap of its watch, in order.
    /// - Parameters:
    ///   - log: the twin's log.
    ///   - device: the device's name; `platform` its platform.
    ///   - schedule: the device's wake schedule, the truth a cached date is checked against.
    ///   - records: the phone's run records, for the staleness at each tap.
    ///   - end: the end of the simulation: wake-ups from it on are `afterEnd`.
    package static func nights(
        of log: [Twin.Entry], device: String, platform: Platform, schedule: WakeSchedule, records: [RunRecord],
        end: Date
    ) -> [WatchNight] {
        var nights: [WatchNight] = []
        var alarmSet: [Date?] = []
        func string(_ value: EventValue?) -> String {
            if case .string(let text)? = value { return text }
            return ""
        }
        func date(_ value: EventValue?) -> Date? {
            if case .date(let instant)? = value { return instant }
            return nil
        }
        for entry in log where entry.source == .watch {
            let event = entry.event
            switch event.name {
            case .bedWakeTime, .fallbackManualEntry:
                let cached = event.name == .bedWakeTime
                var left = 0
                if cached, case .int(let remaining)? = event["remaining"] { left = Int(remaining) }
                var night = WatchNight(
                    device: device, platform: platform, tapAt: entry.at, tapLocalDate: string(event["tapLocalDate"]),
                    tapLocalTime: string(event["tapLocalTime"]), tapTimeZone: string(event["tapTimeZone"]),
                    source: cached ? .cache : .manual, wakeTime: cached ? date(event["wakeTime"]) : nil,
                    nightsLeft: left, alarmFiredAt: nil, alarm: .missed, stalenessHours: nil)
                if cached, !onSchedule(event, schedule: schedule) { night.alarm = .wrong }
                nights.append(night)
                alarmSet.append(nil)
            case .manualWakeTime:
                if let last = nights.indices.last, nights[last].source == .manual, nights[last].wakeTime == nil {
                    nights[last].wakeTime = date(event["wakeTime"])
                }
            case .alarmSet:
                if let last = nights.indices.last, alarmSet[last] == nil { alarmSet[last] = date(event["alarmTime"]) }
            case .alarmFired where event["snoozes"] == .int(0):
                guard let time = date(event["alarmTime"]) else { continue }
                var late = 0.0
                if case .double(let seconds)? = event["late"] { late = seconds }
                // Every night that set this alarm (a Friday's and a Saturday's tap both answer
                // Monday's wake-up when the weekend has none) is answered by its ring.
                for index in nights.indices where alarmSet[index] == time && nights[index].alarmFiredAt == nil {
                    nights[index].alarmFiredAt = late == 0 ? time : entry.at
                }
            default:
                continue
            }
        }
        let successes = records.filter { $0.kind.isRun && $0.success == true }.map(\.at).sorted()
        for index in nights.indices {
            var night = nights[index]
            if let last = successes.last(where: { $0 <= night.tapAt }) {
                night.stalenessHours = (night.tapAt.timeIntervalSince(last) / 3_600 * 1_000).rounded() / 1_000
            }
            if night.alarm != .wrong {
                if let wake = night.wakeTime, alarmSet[index] != nil, alarmSet[index] != wake {
                    night.alarm = .wrong
                } else if let fired = night.alarmFiredAt, let wake = night.wakeTime {
                    night.alarm = fired == wake ? .right : .wrong
                } else if let wake = night.wakeTime, wake >= end {
                    night.alarm = .afterEnd
                } else if night.wakeTime == nil, night.tapAt.addingTimeInterval(86_400) >= end {
                    night.alarm = .afterEnd
                } else {
                    night.alarm = .missed
                }
            }
            nights[index] = night
        }
        return nights
    }

    /// Whether a `bed.wake_time`'s cached wake-up is the schedule's for its local date, in the
    /// batch's zone.
    static func onSchedule(_ event: Event, schedule: WakeSchedule) -> Bool {
        guard case .string(let zoneName)? = event["timeZone"], case .date(let wake)? = event["wakeTime"],
            case .string(let localTime)? = event["localTime"], let zone = TimeZone(identifier: zoneName)
        else { return false }
        let calendar = WakeCalendar.calendar(in: zone)
        return schedule.wakeTime(onDayOf: wake, in: calendar)?.description == localTime
    }

    // MARK: The file

    /// The file name of a device's nights on the tap's UTC day: `<device>-<YYYY-MM-DD>.json`.
    package static func fileName(device: String, day: Date) -> String {
        "\(device)-\(RunRecordFile.utcDay(day)).json"
    }

    /// One night as a JSON object on one line, keys sorted, every key written (null where there
    /// is no value); instants in `RunRecordFile.instantString`'s form.
    package var line: String {
        func quoted(_ text: String) -> String {
            let data = (try? Self.stringEncoder.encode(text)) ?? Data("\"\"".utf8)
            return String(decoding: data, as: UTF8.self)
        }
        func instant(_ date: Date?) -> String { date.map { quoted(RunRecordFile.instantString($0)) } ?? "null" }
        let fields: [(String, String)] = [
            ("alarm", quoted(alarm.rawValue)), ("alarmFiredAt", instant(alarmFiredAt)), ("device", quoted(device)),
            ("nightsLeft", String(nightsLeft)), ("platform", quoted(platform.rawValue)),
            ("source", quoted(source.rawValue)),
            ("stalenessHours", stalenessHours.map { String(format: "%.3f", $0) } ?? "null"),
            ("tapAt", instant(tapAt)), ("tapLocalDate", quoted(tapLocalDate)), ("tapLocalTime", quoted(tapLocalTime)),
            ("tapTimeZone", quoted(tapTimeZone)), ("wakeTime", instant(wakeTime)),
        ]
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// Writes each string field as a JSON string. Made once: `JSONEncoder.encode` may be called
    /// from any thread (it copies its options), and making an encoder per field cost more than
    /// using it.
    private static let stringEncoder = JSONEncoder()

    /// A file's bytes: `[`, one night per line, `]`, a final newline (as `RunRecordFile.encode`).
    package static func encode(_ nights: [WatchNight]) -> Data {
        Data(("[\n" + nights.map(\.line).joined(separator: ",\n") + (nights.isEmpty ? "" : "\n") + "]\n").utf8)
    }

    /// Writes `nights` under `root/metrics/watch_nights`, one file per device and UTC day of the
    /// tap, each written once, atomically (`AtomicFile`), replacing a file of the same name.
    /// - Parameter durable: false skips the fsync (a simulation makes its files again rather
    ///   than recovering them).
    /// - Throws: `FileError` naming the file or directory that cannot be written.
    package static func write(_ nights: [WatchNight], root: String, durable: Bool = false) throws(FileError) {
        let directory = root + "/" + Self.directory
        try AtomicFile.ensureDirectory(directory)
        var byFile: [String: [WatchNight]] = [:]
        for night in nights { byFile[fileName(device: night.device, day: night.tapAt), default: []].append(night) }
        for (name, group) in byFile.sorted(by: { $0.key < $1.key }) {
            try AtomicFile.write(encode(group), to: directory + "/" + name, durable: durable)
        }
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation

/// The part of the phone's state that sync does not need: the pending bedtime notices, the run
/// history and the forecast cache. The phone process keeps it in its own file, `phone-app.json`
/// in the state dir, written only when it changed, so that the ACK path writes the small sync
/// part alone (docs/architecture.md, "The phone's state files").
package struct PhoneAppState: Codable, Equatable, Sendable {
    /// The OS's pending local notifications as last set by the phone.
    package var notifications: PendingNotifications
    /// The run history: last scheduled, last run, the last 30 runs.
    package var refreshLog: RefreshLog
    /// The cached forecast (6 h cache of the weather step).
    package var weather: Forecast?

    /// A part with the given fields; the defaults describe a phone that never ran.
    package init(
        notifications: PendingNotifications = PendingNotifications(), refreshLog: RefreshLog = RefreshLog(),
        weather: Forecast? = nil
    ) {
        self.notifications = notifications
        self.refreshLog = refreshLog
        self.weather = weather
    }

    private enum CodingKeys: String, CodingKey {
        case notifications, refreshLog, weather
    }

    /// The longest run a history may hold, seconds: a day (iOS gives an app refresh task about
    /// 30 s, a processing task minutes; Android's work stops at 10 min).
    static let longestRun: Double = 86_400

    /// Why this part is not one the phone could have written (phone-app.json is refused and moved
    /// aside on load), or nil: a run of negative, infinite or over-a-day duration, more runs than
    /// the history keeps, a cached forecast with no hours or with hours out of order (the weather
    /// step would take it as fresh for 6 h and find nothing in it).
    package var validationProblem: String? {
        let runs = refreshLog.history
        guard runs.count <= RefreshLog.historyLimit else {
            return "refreshLog.history holds \(runs.count) runs (at most \(RefreshLog.historyLimit))"
        }
        for (index, run) in runs.enumerated() where !(run.duration >= 0 && run.duration <= Self.longestRun) {
            return "refreshLog.history[\(index)].duration \(run.duration): expected 0 to 86400 seconds"
        }
        if let weather {
            guard !weather.hours.isEmpty else { return "weather.hours is empty (a forecast has hours)" }
            for (index, pair) in zip(weather.hours, weather.hours.dropFirst()).enumerated()
            where pair.0.time >= pair.1.time {
                return "weather.hours[\(index + 1)].time is not after weather.hours[\(index)].time"
            }
        }
        return nil
    }

    /// Every field may be absent (a phone that never ran): absent is its default.
    /// - Throws: the decoder's errors for a field of the wrong type.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        notifications = try container.decodeIfPresent(PendingNotifications.self, forKey: .notifications) ?? .init()
        refreshLog = try container.decodeIfPresent(RefreshLog.self, forKey: .refreshLog) ?? RefreshLog()
        weather = try container.decodeIfPresent(Forecast.self, forKey: .weather)
    }
}

extension PhoneSyncState {
    /// What sync needs, and all that `phone.json` holds: the epoch, the last seq issued, the
    /// outbox, whether the watch acknowledged it, and the device seed. An ACK changes only this.
    package struct SyncPart: Codable, Equatable, Sendable {
        /// `PhoneSyncState.epoch`.
        package var epoch: UInt64
        /// `PhoneSyncState.lastSeq`.
        package var lastSeq: UInt64
        /// `PhoneSyncState.outbox`.
        package var outbox: WakeBatch?
        /// `PhoneSyncState.acked`.
        package var acked: Bool
        /// `PhoneSyncState.deviceSeed`.
        package var deviceSeed: UInt64

        private enum CodingKeys: String, CodingKey {
            case epoch, lastSeq, outbox, acked, deviceSeed
        }

        /// Reads the fields as `PhoneSyncState` does (an absent epoch or seed is 0).
        /// - Throws: the decoder's errors, and `DecodingError.dataCorrupted` for a bad hex value.
        package init(from decoder: any Decoder) throws {
            let whole = try PhoneSyncState(from: decoder)
            self = whole.syncPart
        }

        init(epoch: UInt64, lastSeq: UInt64, outbox: WakeBatch?, acked: Bool, deviceSeed: UInt64) {
            self.epoch = epoch
            self.lastSeq = lastSeq
            self.outbox = outbox
            self.acked = acked
            self.deviceSeed = deviceSeed
        }

        /// Writes the epoch and the device seed as 16 hex digits, as `PhoneSyncState` does.
        /// - Throws: the encoder's errors.
        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(Hex64.string(epoch), forKey: .epoch)
            try container.encode(lastSeq, forKey: .lastSeq)
            try container.encodeIfPresent(outbox, forKey: .outbox)
            try container.encode(acked, forKey: .acked)
            try container.encode(Hex64.string(deviceSeed), forKey: .deviceSeed)
        }
    }

    /// The sync part of this state (what `phone.json` holds).
    package var syncPart: SyncPart {
        SyncPart(epoch: epoch, lastSeq: lastSeq, outbox: outbox, acked: acked, deviceSeed: deviceSeed)
    }

    /// The app part of this state (what `phone-app.json` holds).
    package var app: PhoneAppState {
        get { PhoneAppState(notifications: notifications, refreshLog: refreshLog, weather: weather) }
        set {
            notifications = newValue.notifications
            refreshLog = newValue.refreshLog
            weather = newValue.weather
        }
    }
}

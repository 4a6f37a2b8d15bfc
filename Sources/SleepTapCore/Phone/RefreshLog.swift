// SPDX-License-Identifier: Apache-2.0

public import Foundation
import SleepTapOS

/// What started a refresh run; the raw value is the `run.record` event's and the state file's `kind`.
package enum RunKind: String, Codable, CaseIterable, Sendable {
    /// The OS launched the app in the background.
    case background
    /// The user opened the app.
    case foreground
    /// The OS woke the app for a message from the paired watch asking for dates (a REQUEST).
    case watchRequest = "watch-request"
    /// iOS launched the app for its `BGProcessingTask` (`phone --processing-task on`): the same
    /// job, on the charger while the device is idle.
    case processing
    /// The OS woke the app for a server push (`push`, docs/scheduler.md "A server push").
    case push
}

/// One finished refresh run, as `RefreshLog.markCompleted` records it.
package struct RefreshRun: Codable, Equatable, Sendable {
    /// When the run finished (virtual time).
    package var at: Date
    /// The run's scheduled time: the `earliestBeginDate` of the request the OS launch answered
    /// (on Android the work's next run time), nil for a foreground run or when unknown. Not the
    /// renewal the run itself submitted.
    package var scheduledAt: Date?
    /// Whether the run finished its work (setTaskCompleted(success: true) / Result.success).
    package var success: Bool
    /// Low Power Mode at the time.
    package var lowPower: Bool
    /// Android standby bucket value (10-45) at the time, nil on iOS (stored as the number; events
    /// name it).
    package var bucket: Int?
    /// An OS launch or the user opening the app.
    package var kind: RunKind
    /// Virtual seconds the run took.
    package var duration: TimeInterval

    /// The `run.record` event (stdin `history`): the bucket by its name (`rare`), as everywhere
    /// else, the duration in seconds.
    package var event: Event {
        Event(
            .runRecord,
            [
                ("at", .date(at)), ("scheduledAt", scheduledAt.map { .date($0) } ?? .null),
                ("success", .bool(success)), ("lowPower", .bool(lowPower)),
                ("bucket", bucket.flatMap(StandbyBucket.init(rawValue:)).map { .string($0.name) } ?? .null),
                ("kind", .string(kind.rawValue)), ("duration", .double(duration)),
            ])
    }

    /// A run record with the given fields (`bucket` is the Android standby bucket's raw value).
    package init(
        at: Date, scheduledAt: Date?, success: Bool, lowPower: Bool, bucket: Int?, kind: RunKind,
        duration: TimeInterval
    ) {
        self.at = at
        self.scheduledAt = scheduledAt
        self.success = success
        self.lowPower = lowPower
        self.bucket = bucket
        self.kind = kind
        self.duration = duration
    }
}

/// The refresh run history: measure freshness instead of trusting the scheduler.
///
/// Keeps the last time a request was scheduled, the last run, and the last 30 runs. Two ages:
/// staleness, hours since the last successful BACKGROUND run (the scheduler working; a user's
/// open does not reset it), and data age, hours since the last successful run of either kind
/// (how old the data on the phone is). docs/metrics.md.
public struct RefreshLog: Codable, Equatable, Sendable {
    /// How many runs are kept: the last 30 (this project's rule; enough to analyse freshness).
    package static let historyLimit = 30

    /// When the last request was submitted successfully.
    public private(set) var lastScheduledAt: Date?
    /// When the last run (background or foreground, successful or not) finished.
    public private(set) var lastRunAt: Date?
    /// When the last successful run (background or foreground) finished.
    public private(set) var lastSuccessAt: Date?
    /// When the last successful background run (app refresh or processing) finished: the start of staleness.
    public private(set) var lastBackgroundSuccessAt: Date?
    /// The last `historyLimit` runs, oldest first.
    package private(set) var history: [RefreshRun] = []

    /// An empty history.
    public init() {}

    /// A request was submitted at `now`.
    package mutating func markScheduled(at now: Date) {
        lastScheduledAt = now
    }

    /// A run finished. Appends to the history (keeping the last 30) and updates last run.
    /// - Parameters:
    ///   - now: when the run finished (virtual time).
    ///   - scheduledAt: the earliestBeginDate of the request a background run answered (nil for a
    ///     foreground run or a watch's REQUEST).
    ///   - success: whether the run finished its work.
    ///   - lowPower: Low Power Mode at the time.
    ///   - bucket: the Android standby bucket's value, nil on iOS.
    ///   - kind: what started the run.
    ///   - duration: virtual seconds the run took.
    package mutating func markCompleted(
        at now: Date, scheduledAt: Date? = nil, success: Bool, lowPower: Bool, bucket: Int?, kind: RunKind,
        duration: TimeInterval
    ) {
        lastRunAt = now
        if success { lastSuccessAt = now }
        if success && Self.resetsStaleness(kind) { lastBackgroundSuccessAt = now }
        history.append(
            RefreshRun(
                at: now, scheduledAt: scheduledAt, success: success, lowPower: lowPower, bucket: bucket,
                kind: kind, duration: duration))
        if history.count > Self.historyLimit { history.removeFirst(history.count - Self.historyLimit) }
    }

    /// Whether a successful run of `kind` ends staleness: a run the app got without the user
    /// (the refresh task, the processing task, a server push); not the user's open, and not a
    /// watch's REQUEST, which the watch asks for (docs/metrics.md, "Two ages, two meanings").
    static func resetsStaleness(_ kind: RunKind) -> Bool {
        switch kind {
        case .background, .processing, .push: true
        case .foreground, .watchRequest: false
        }
    }

    /// Staleness: hours since the last successful background run finished, nil before the first
    /// one. A foreground refresh does not count (it is the user, not the scheduler). Never
    /// negative: a run that lies after `now` (a clock set back) counts as just now.
    public func stalenessHours(at now: Date) -> Double? {
        lastBackgroundSuccessAt.map { max(0, now.timeIntervalSince($0)) / 3_600 }
    }

    /// Data age: hours since the last successful run of either kind finished (how old the wake
    /// dates and weather on the phone are), nil before the first one; never negative.
    public func dataAgeHours(at now: Date) -> Double? {
        lastSuccessAt.map { max(0, now.timeIntervalSince($0)) / 3_600 }
    }
}

// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// Why the OS has not run the pending refresh request: a reason code, Android's
/// `JobScheduler.PENDING_JOB_REASON_*` name where one exists, this model's own name otherwise.
///
/// The Android values are those of `JobScheduler.getPendingJobReason(int)` (API 34) and
/// `getPendingJobReasons(int)` (API 36); the raw value is the name the events and docs use
/// (docs/scheduler.md, "Why hasn't it run?").
public enum PendingReasonCode: String, CaseIterable, Sendable, CustomStringConvertible {
    /// `PENDING_JOB_REASON_EXECUTING` (-1): the run is in flight.
    case executing = "PENDING_JOB_REASON_EXECUTING"
    /// `PENDING_JOB_REASON_INVALID_JOB_ID` (-2): no such request (nothing pending, nothing enqueued).
    case invalidJobID = "PENDING_JOB_REASON_INVALID_JOB_ID"
    /// `PENDING_JOB_REASON_APP_STANDBY` (2): the standby bucket allows no run at all.
    case appStandby = "PENDING_JOB_REASON_APP_STANDBY"
    /// `PENDING_JOB_REASON_BACKGROUND_RESTRICTION` (3): the user switched background work off
    /// (iOS Background App Refresh; Android background restriction).
    case backgroundRestriction = "PENDING_JOB_REASON_BACKGROUND_RESTRICTION"
    /// `PENDING_JOB_REASON_CONSTRAINT_BATTERY_NOT_LOW` (4).
    case constraintBatteryNotLow = "PENDING_JOB_REASON_CONSTRAINT_BATTERY_NOT_LOW"
    /// `PENDING_JOB_REASON_CONSTRAINT_CHARGING` (5).
    case constraintCharging = "PENDING_JOB_REASON_CONSTRAINT_CHARGING"
    /// `PENDING_JOB_REASON_CONSTRAINT_CONNECTIVITY` (6).
    case constraintConnectivity = "PENDING_JOB_REASON_CONSTRAINT_CONNECTIVITY"
    /// `PENDING_JOB_REASON_CONSTRAINT_DEVICE_IDLE` (8).
    case constraintDeviceIdle = "PENDING_JOB_REASON_CONSTRAINT_DEVICE_IDLE"
    /// `PENDING_JOB_REASON_CONSTRAINT_MINIMUM_LATENCY` (9): not yet eligible (iOS
    /// `earliestBeginDate`; WorkManager's next run time: initial delay, period, back-off).
    case constraintMinimumLatency = "PENDING_JOB_REASON_CONSTRAINT_MINIMUM_LATENCY"
    /// `PENDING_JOB_REASON_CONSTRAINT_STORAGE_NOT_LOW` (11).
    case constraintStorageNotLow = "PENDING_JOB_REASON_CONSTRAINT_STORAGE_NOT_LOW"
    /// `PENDING_JOB_REASON_DEVICE_STATE` (12): Low Power Mode, Battery Saver or Doze.
    case deviceState = "PENDING_JOB_REASON_DEVICE_STATE"
    /// `PENDING_JOB_REASON_JOB_SCHEDULER_OPTIMIZATION` (13): eligible, waiting for the instant the
    /// system chose (iOS: the drawn opportunity).
    case jobSchedulerOptimization = "PENDING_JOB_REASON_JOB_SCHEDULER_OPTIMIZATION"
    /// `PENDING_JOB_REASON_QUOTA` (14): the bucket's job quota is used up until a known instant.
    case quota = "PENDING_JOB_REASON_QUOTA"
    /// `PENDING_JOB_REASON_USER` (15): the user force-quit (iOS) or force-stopped (Android) the app.
    case user = "PENDING_JOB_REASON_USER"
    /// This model's own: the OS launches the app, but the launch handler was not registered in
    /// time, so it is never entered (iOS; the nearest Android reason, `PENDING_JOB_REASON_APP`,
    /// means the OS does not start the job at all).
    case handlerNotRegisteredInTime = "HANDLER_NOT_REGISTERED_IN_TIME"
    /// This model's own: nothing holds the request back; it runs at the next opportunity.
    case ready = "READY"

    /// Android's integer value of the `PENDING_JOB_REASON_*` constant; nil for this model's own codes.
    public var androidValue: Int? {
        switch self {
        case .executing: -1
        case .invalidJobID: -2
        case .appStandby: 2
        case .backgroundRestriction: 3
        case .constraintBatteryNotLow: 4
        case .constraintCharging: 5
        case .constraintConnectivity: 6
        case .constraintDeviceIdle: 8
        case .constraintMinimumLatency: 9
        case .constraintStorageNotLow: 11
        case .deviceState: 12
        case .jobSchedulerOptimization: 13
        case .quota: 14
        case .user: 15
        case .handlerNotRegisteredInTime, .ready: nil
        }
    }

    /// The raw value, e.g. "PENDING_JOB_REASON_QUOTA".
    public var description: String { rawValue }
}

/// One condition holding the pending request back at an instant.
public struct PendingReason: Equatable, Sendable {
    /// The reason code.
    public var code: PendingReasonCode
    /// The condition's short name, unique within one answer: `earliestBeginDate`, `opportunity`,
    /// `lowPower`, `battery`, `backgroundRefresh`, `forceQuit`, `quota`, `energyBudget`, `dataBudget`,
    /// `bucket`, `doze`, a constraint
    /// (`requiresCharging`, `requiresNetwork`, `requiresDeviceIdle`, `requiresBatteryNotLow`,
    /// `requiresStorageNotLow`), `handler`, `running`, `request`, `ready`.
    public var condition: String
    /// The condition's state in words ("Battery Saver is on"); for a `handler` reason with a
    /// `launchedAt`, "launched at <ISO 8601 UTC>, " and then the words given.
    public var state: String {
        guard let launchedAt else { return words }
        return "launched at \(launchedAt.osText), " + words
    }
    /// The words given, without the launch instant (built into `state` only when it is read).
    private var words: String
    /// When the condition lifts by itself (virtual instant, UTC); nil when unknown or only a user
    /// action lifts it.
    public var until: Date?
    /// For `handler`: the launch at which the handler was not entered, nil when none happened yet.
    public var launchedAt: Date?

    /// - Parameters:
    ///   - code: the reason code.
    ///   - condition: the condition's short name.
    ///   - state: its state in words; with a `launchedAt`, the words after "launched at <instant>, ".
    ///   - until: when it lifts by itself, nil when unknown.
    ///   - launchedAt: the launch that did not enter the handler (`handler` only).
    public init(
        _ code: PendingReasonCode, _ condition: String, _ state: String, until: Date? = nil, launchedAt: Date? = nil
    ) {
        self.code = code
        self.condition = condition
        self.words = state
        self.until = until
        self.launchedAt = launchedAt
    }

    /// The reason as an event object: `reason` (the code), `state`, `until` and, for `handler`, `launchedAt`.
    public var object: EventObject {
        var fields: [(String, EventValue)] = [
            ("reason", .string(code.rawValue)), ("state", .string(state)), ("until", .schedulerDate(until)),
        ]
        if condition == "handler" { fields.append(("launchedAt", .schedulerDate(launchedAt))) }
        return EventObject(fields)
    }
}

/// The answer to "why hasn't it run?" at one instant: every condition holding the pending refresh
/// request back (never empty: `READY` when nothing does), as a pure function of the simulated OS's
/// state (`SimulatedOS.why(at:)`), the way `adb shell dumpsys jobscheduler` lists a job's unmet
/// constraints and Android 16's `JobScheduler.getPendingJobReasons(int)` returns its reasons.
public struct WhyAnswer: Equatable, Sendable {
    /// The request's identifier (task identifier or unique work name), nil when nothing is pending.
    public var identifier: String?
    /// The conditions, in the order docs/scheduler.md lists them; never empty.
    public var reasons: [PendingReason]
    /// When the OS next launches under the current conditions (virtual instant), nil when never.
    public var nextLaunch: Date?

    /// - Parameters:
    ///   - identifier: the request's identifier, nil when none.
    ///   - reasons: the conditions; an empty list becomes `READY`.
    ///   - nextLaunch: the next launch, nil when never.
    public init(identifier: String?, reasons: [PendingReason], nextLaunch: Date?) {
        self.identifier = identifier
        self.reasons =
            reasons.isEmpty
            ? [
                PendingReason(
                    .ready, "ready", "nothing holds it back: it runs at the next opportunity", until: nextLaunch)
            ]
            : reasons
        self.nextLaunch = nextLaunch
    }

    /// The first reason's code (the one a single `getPendingJobReason` would return).
    public var code: PendingReasonCode { reasons[0].code }

    /// The reason for `condition`, nil when it does not hold.
    public func reason(_ condition: String) -> PendingReason? { reasons.first { $0.condition == condition } }

    /// The reasons in words, joined by "; " (instants as ISO 8601 UTC), e.g. "launched at
    /// 2025-03-07T13:46:00Z, handler not registered in time: it is never entered".
    public var summary: String {
        reasons.map { reason in
            var text = reason.state
            if let until = reason.until, reason.condition != "ready" { text += " (until \(until.osText))" }
            return text
        }.joined(separator: "; ")
    }

    /// `codes` without repeats, in their first order.
    private static func distinct(_ codes: [String]) -> [String] {
        // A handful of codes: a scan of the kept ones costs less than hashing each.
        var kept: [String] = []
        kept.reserveCapacity(codes.count)
        for code in codes where !kept.contains(code) { kept.append(code) }
        return kept
    }

    /// The fields of `os.why` and of `phone.status`'s `why`: `identifier`, `reason` (the first
    /// reason's code), `reasonCodes` (each code once, in the reasons' order, comma-separated: two
    /// budgets used up are one `PENDING_JOB_REASON_QUOTA`), `summary`, `until` (the first reason's),
    /// `launchedAt` (the launch that did not enter the handler, else null), `nextLaunch`, and
    /// `reasons`, an object with one entry per condition (`PendingReason.object`).
    public var fields: [(String, EventValue)] {
        [
            ("identifier", identifier.map { .string($0) } ?? .null),
            ("reason", .string(code.rawValue)),
            ("reasonCodes", .string(Self.distinct(reasons.map(\.code.rawValue)).joined(separator: ","))),
            ("summary", .string(summary)),
            ("until", .schedulerDate(reasons[0].until)),
            ("launchedAt", .schedulerDate(reason("handler")?.launchedAt)),
            ("nextLaunch", .schedulerDate(nextLaunch)),
            ("reasons", .object(EventObject(reasons.map { ($0.condition, .object($0.object)) }))),
        ]
    }

    /// The `os.why` event.
    public var event: OSEvent { OSEvent(.osWhy, fields) }
}

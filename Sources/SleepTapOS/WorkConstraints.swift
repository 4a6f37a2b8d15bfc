// SPDX-License-Identifier: Apache-2.0

import Foundation

/// One requirement of WorkManager's `Constraints` on the work request:
/// the work waits while it is unmet (Android, "Define work requests", "Work constraints";
/// `androidx.work.Constraints`).
///
/// The raw value is the constraint's name in a list (`network`, `charging`, …). Each maps to the
/// `JobScheduler.PENDING_JOB_REASON_CONSTRAINT_*` code `why` gives while it is unmet.
public enum WorkConstraint: String, CaseIterable, Codable, Comparable, Sendable {
    /// `setRequiredNetworkType(CONNECTED)`: a network connection.
    case network
    /// `setRequiresCharging(true)`: plugged in.
    case charging
    /// `setRequiresDeviceIdle(true)`: the device is idle (`deviceIdle(at:)` of the scheduler
    /// says when, in this model).
    case deviceIdle = "device-idle"
    /// `setRequiresBatteryNotLow(true)`: the battery is not low.
    case batteryNotLow = "battery-not-low"
    /// `setRequiresStorageNotLow(true)`: storage is not low.
    case storageNotLow = "storage-not-low"

    /// The reason code `why` gives while the constraint is unmet.
    public var pendingReason: PendingReasonCode {
        switch self {
        case .network: .constraintConnectivity
        case .charging: .constraintCharging
        case .deviceIdle: .constraintDeviceIdle
        case .batteryNotLow: .constraintBatteryNotLow
        case .storageNotLow: .constraintStorageNotLow
        }
    }

    /// The condition name in `why`'s reasons (`requiresNetwork`, `requiresCharging`, …).
    public var condition: String {
        switch self {
        case .network: "requiresNetwork"
        case .charging: "requiresCharging"
        case .deviceIdle: "requiresDeviceIdle"
        case .batteryNotLow: "requiresBatteryNotLow"
        case .storageNotLow: "requiresStorageNotLow"
        }
    }

    /// The unmet state in words ("no network connection").
    public var unmetState: String {
        switch self {
        case .network: "the work requires a network connection; there is none"
        case .charging: "the work requires charging; the device is not charging"
        case .deviceIdle: "the work requires the device to be idle; it is not"
        case .batteryNotLow: "the work requires the battery not to be low; it is low"
        case .storageNotLow: "the work requires storage not to be low; it is low"
        }
    }

    /// `JobParameters`/`WorkInfo` `STOP_REASON_CONSTRAINT_*` of a run stopped because the
    /// constraint became unmet (Android, `JobParameters` reference): battery-not-low 5,
    /// charging 6, connectivity 7, device idle 8, storage-not-low 9.
    public var stopReason: WorkStopReason {
        switch self {
        case .batteryNotLow: .constraintBatteryNotLow
        case .charging: .constraintCharging
        case .network: .constraintConnectivity
        case .deviceIdle: .constraintDeviceIdle
        case .storageNotLow: .constraintStorageNotLow
        }
    }

    /// Declaration order (network, charging, device-idle, battery-not-low, storage-not-low).
    public static func < (lhs: WorkConstraint, rhs: WorkConstraint) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// The names a constraint list accepts, comma-separated, for messages.
    public static let names = allCases.map(\.rawValue).joined(separator: ",")

    /// Parses a comma-separated constraint list (e.g. `network,charging`); `none` is the
    /// empty list.
    /// - Returns: the constraints, in declaration order, each once.
    /// - Throws: the first name that is not a constraint (an empty item is named as ""), or the
    ///   first one given twice (`isDuplicate`).
    public static func parseList(_ text: String) -> Result<[WorkConstraint], WorkConstraintError> {
        if text == "none" { return .success([]) }
        var found: Set<WorkConstraint> = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let constraint = WorkConstraint(rawValue: String(item)) else {
                return .failure(WorkConstraintError(value: String(item)))
            }
            guard found.insert(constraint).inserted else {
                return .failure(WorkConstraintError(value: String(item), isDuplicate: true))
            }
        }
        return .success(found.sorted())
    }
}

/// A constraint list's item that names no constraint, or names one already in the list.
public struct WorkConstraintError: Error, Equatable, Sendable {
    /// The item as given.
    public var value: String
    /// The item is a constraint given a second time (`network,network`).
    public var isDuplicate = false
}

/// `WorkInfo.getStopReason()` values: the `JobParameters.STOP_REASON_*` constants (Android,
/// `JobParameters` and `androidx.work.WorkInfo` references). The raw value is the integer code.
public enum WorkStopReason: Int, CaseIterable, Sendable {
    /// `STOP_REASON_UNDEFINED` (0).
    case undefined = 0
    /// `STOP_REASON_CANCELLED_BY_APP` (1).
    case cancelledByApp = 1
    /// `STOP_REASON_PREEMPT` (2).
    case preempt = 2
    /// `STOP_REASON_TIMEOUT` (3).
    case timeout = 3
    /// `STOP_REASON_DEVICE_STATE` (4).
    case deviceState = 4
    /// `STOP_REASON_CONSTRAINT_BATTERY_NOT_LOW` (5).
    case constraintBatteryNotLow = 5
    /// `STOP_REASON_CONSTRAINT_CHARGING` (6).
    case constraintCharging = 6
    /// `STOP_REASON_CONSTRAINT_CONNECTIVITY` (7).
    case constraintConnectivity = 7
    /// `STOP_REASON_CONSTRAINT_DEVICE_IDLE` (8).
    case constraintDeviceIdle = 8
    /// `STOP_REASON_CONSTRAINT_STORAGE_NOT_LOW` (9).
    case constraintStorageNotLow = 9
    /// `STOP_REASON_QUOTA` (10).
    case quota = 10
    /// `STOP_REASON_BACKGROUND_RESTRICTION` (11).
    case backgroundRestriction = 11
    /// `STOP_REASON_APP_STANDBY` (12).
    case appStandby = 12
    /// `STOP_REASON_USER` (13).
    case user = 13
    /// `STOP_REASON_SYSTEM_PROCESSING` (14).
    case systemProcessing = 14
    /// `STOP_REASON_ESTIMATED_APP_LAUNCH_TIME_CHANGED` (15).
    case estimatedAppLaunchTimeChanged = 15

    /// The constant's name, e.g. `STOP_REASON_QUOTA`.
    public var name: String {
        switch self {
        case .undefined: "STOP_REASON_UNDEFINED"
        case .cancelledByApp: "STOP_REASON_CANCELLED_BY_APP"
        case .preempt: "STOP_REASON_PREEMPT"
        case .timeout: "STOP_REASON_TIMEOUT"
        case .deviceState: "STOP_REASON_DEVICE_STATE"
        case .constraintBatteryNotLow: "STOP_REASON_CONSTRAINT_BATTERY_NOT_LOW"
        case .constraintCharging: "STOP_REASON_CONSTRAINT_CHARGING"
        case .constraintConnectivity: "STOP_REASON_CONSTRAINT_CONNECTIVITY"
        case .constraintDeviceIdle: "STOP_REASON_CONSTRAINT_DEVICE_IDLE"
        case .constraintStorageNotLow: "STOP_REASON_CONSTRAINT_STORAGE_NOT_LOW"
        case .quota: "STOP_REASON_QUOTA"
        case .backgroundRestriction: "STOP_REASON_BACKGROUND_RESTRICTION"
        case .appStandby: "STOP_REASON_APP_STANDBY"
        case .user: "STOP_REASON_USER"
        case .systemProcessing: "STOP_REASON_SYSTEM_PROCESSING"
        case .estimatedAppLaunchTimeChanged: "STOP_REASON_ESTIMATED_APP_LAUNCH_TIME_CHANGED"
        }
    }

    /// A reason by its name (`STOP_REASON_QUOTA`, or without the prefix, any case) or its code (`10`).
    /// - Returns: nil when `text` names none.
    public init?(parsing text: String) {
        if let code = Int(text) {
            self.init(rawValue: code)
            return
        }
        let upper = text.uppercased()
        let full =
            upper.hasPrefix("STOP_REASON_") ? upper : "STOP_REASON_" + upper.replacingOccurrences(of: "-", with: "_")
        guard let found = Self.allCases.first(where: { $0.name == full }) else { return nil }
        self = found
    }
}

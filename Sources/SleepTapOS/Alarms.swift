// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// How an Android app set an alarm (`AlarmManager`), which decides whether it needs the exact
/// alarm permission and what Doze does to it.
public enum AlarmKind: String, Codable, Sendable, CaseIterable {
    /// `setAlarmClock()`: exact, fires on time in Doze, and Doze ends shortly before it
    /// (Android, "Optimize for Doze and App Standby").
    case alarmClock = "alarm-clock"
    /// `setExact()`: exact, deferred to the next maintenance window in Doze.
    case exact
    /// `setExactAndAllowWhileIdle()`: exact, may fire in Doze within the exact while-idle quota
    /// (`AlarmSettings.exactWhileIdleQuota` per `exactWhileIdleWindow`).
    case exactAllowWhileIdle = "exact-while-idle"
    /// `setAndAllowWhileIdle()`: inexact, may fire in Doze at most once per
    /// `AlarmSettings.whileIdleInterval` per app.
    case allowWhileIdle = "while-idle"
    /// `set()`: inexact, deferred to the next maintenance window in Doze.
    case inexact

    /// Whether setting it needs `SCHEDULE_EXACT_ALARM` or `USE_EXACT_ALARM` (Android 14,
    /// "Schedule exact alarms are denied by default": `setExact`, `setExactAndAllowWhileIdle`,
    /// `setAlarmClock`).
    public var needsExactPermission: Bool {
        switch self {
        case .alarmClock, .exact, .exactAllowWhileIdle: true
        case .allowWhileIdle, .inexact: false
        }
    }
}

/// Which exact alarm permission the app's manifest declares.
public enum ExactAlarmDeclaration: String, Codable, Sendable, CaseIterable {
    /// `SCHEDULE_EXACT_ALARM`: the user grants or revokes it in Settings; denied by default for a
    /// new install on Android 14 (API 34) and later (Android 14, "Schedule exact alarms are denied
    /// by default").
    case schedule
    /// `USE_EXACT_ALARM`: for alarm-clock and calendar apps, a normal permission granted at
    /// install, with no user toggle (same page).
    case use
}

/// The alarm rules' numbers, in virtual seconds; nil in an older encoding = the defaults.
///
/// Sources: Android, "Optimize for Doze and App Standby" (the 9-minute while-idle spacing); AOSP
/// `AlarmManagerService` (`ALLOW_WHILE_IDLE_QUOTA` 72 per `ALLOW_WHILE_IDLE_WINDOW` 1 h for exact
/// while-idle alarms). How long before a `setAlarmClock` alarm Doze ends is not documented: the
/// default lead (180 s) is this model's assumption.
public struct AlarmSettings: Codable, Equatable, Sendable {
    /// Seconds before a `setAlarmClock` alarm at which Doze ends (default 180; this model's
    /// assumption: Android documents only "shortly before").
    public var dozeExitLead: TimeInterval
    /// Seconds between two inexact while-idle alarms of an app in Doze (default 540, 9 min;
    /// Android, "Optimize for Doze and App Standby").
    public var whileIdleInterval: TimeInterval
    /// Exact while-idle alarms an app may fire in Doze per window (default 72; AOSP
    /// `AlarmManagerService` `ALLOW_WHILE_IDLE_QUOTA`).
    public var exactWhileIdleQuota: Int
    /// The window of that quota, seconds (default 3,600; AOSP `ALLOW_WHILE_IDLE_WINDOW`).
    public var exactWhileIdleWindow: TimeInterval

    /// - Parameters: the numbers in seconds and the quota; see the properties.
    public init(
        dozeExitLead: TimeInterval = 180, whileIdleInterval: TimeInterval = 540, exactWhileIdleQuota: Int = 72,
        exactWhileIdleWindow: TimeInterval = 3_600
    ) {
        self.dozeExitLead = max(0, dozeExitLead)
        self.whileIdleInterval = max(0, whileIdleInterval)
        self.exactWhileIdleQuota = max(1, exactWhileIdleQuota)
        self.exactWhileIdleWindow = max(1, exactWhileIdleWindow)
    }
}

/// One alarm the app set and the OS holds.
public struct Alarm: Codable, Equatable, Sendable {
    /// The app's name for it (its `PendingIntent`): setting another with the same tag replaces it.
    public var tag: String
    /// How it was set.
    public var kind: AlarmKind
    /// The instant the app asked for (`triggerAtMillis`, `AlarmClockInfo.getTriggerTime()`).
    public var triggerAt: Date
    /// The instant it was set.
    public var setAt: Date

    /// An alarm `tag` of `kind` for `triggerAt`, set at `setAt`.
    public init(tag: String, kind: AlarmKind, triggerAt: Date, setAt: Date) {
        self.tag = tag
        self.kind = kind
        self.triggerAt = triggerAt
        self.setAt = setAt
    }
}

/// `AlarmManager` threw `SecurityException`: an exact alarm without the exact alarm permission.
public struct AlarmRefusal: Error, Equatable, Sendable {
    /// What the exception says, in words.
    public var reason: String
}

/// What a change of `SCHEDULE_EXACT_ALARM` did.
public struct ExactAlarmPermissionChange: Equatable, Sendable {
    /// The exact alarms the OS deleted (revoked: deleted with no broadcast, the app is killed).
    public var deleted: [Alarm] = []
    /// Whether `ACTION_SCHEDULE_EXACT_ALARM_PERMISSION_STATE_CHANGED` was sent (granted).
    public var broadcast = false
    /// Whether the change applied (false: the app declares `USE_EXACT_ALARM`, which has no toggle).
    public var applied = true
}

// SPDX-License-Identifier: Apache-2.0

/// The app's notification authorization on iOS, as `UNUserNotificationCenter`'s
/// `getNotificationSettings` reports it (`UNAuthorizationStatus`); the raw value is the case's
/// name in words (`authorized`, `denied`, `provisional`, `not-determined`).
public enum NotificationAuthorization: String, CaseIterable, Codable, Sendable, CustomStringConvertible {
    /// `.authorized`: notices are delivered with their alert (the default of this model).
    case authorized
    /// `.denied`: the user turned notifications off; `add` fails with `UNErrorDomain` code 1.
    case denied
    /// `.provisional`: delivered quietly, to Notification Center only (Apple,
    /// `UNAuthorizationOptions.provisional`).
    case provisional
    /// `.notDetermined`: the user has not answered the prompt; `add` fails as for `denied`.
    case notDetermined = "not-determined"

    /// Apple's error for an `add` the authorization does not allow: `UNErrorDomain` code 1,
    /// `UNError.Code.notificationsNotAllowed` (Apple, "UNError.Code.notificationsNotAllowed").
    public static let notAllowedDomain = "UNErrorDomain"
    /// `UNError.Code.notificationsNotAllowed.rawValue`.
    public static let notAllowedCode = 1

    /// Whether `UNUserNotificationCenter.add` succeeds (false for `denied` and `notDetermined`).
    public var allowsAdding: Bool { self == .authorized || self == .provisional }

    /// What the user sees of a delivered notice: `alert` (banner, sound, lock screen),
    /// `quiet` (provisional: Notification Center only, no banner or sound), `none`.
    public var delivery: String {
        switch self {
        case .authorized: "alert"
        case .provisional: "quiet"
        case .denied, .notDetermined: "none"
        }
    }

    /// The raw value (`not-determined`, …).
    public var description: String { rawValue }
}

// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// A server push's priority as the sender sets it (docs/scheduler.md, "A server push").
///
/// - iOS: a background notification (`content-available`, sent with `apns-priority` 5) is low
///   priority whatever is asked: the system may throttle it and does not guarantee it (Apple,
///   "Pushing background updates to your app").
/// - Android: Firebase Cloud Messaging's message priority. A high-priority message is delivered
///   at once and may wake a device in Doze; a normal-priority one is delivered at once while the
///   device is awake and waits for Doze's next maintenance window otherwise (Android, "Optimize
///   for Doze and App Standby"; Firebase, "Set and manage Android message priority").
public enum PushPriority: String, Codable, CaseIterable, Sendable {
    /// FCM normal priority; iOS's background notification.
    case normal
    /// FCM high priority; iOS delivers it as a background notification all the same.
    case high
}

/// What the OS does with a server push that reaches the device.
public struct PushDelivery: Equatable, Sendable {
    /// Whether the app gets the push (at `deliverAt`).
    public var woken: Bool
    /// When the app gets it: the arrival, or Doze's next maintenance window (Android, normal
    /// priority); nil when it does not get it.
    public var deliverAt: Date?
    /// Virtual seconds the app may run for it (iOS 30); nil = no limit in this model (Android).
    public var budget: TimeInterval?
    /// Seconds before the end of `budget` at which the app is told to finish (iOS; 0 on Android).
    public var expirationWarning: TimeInterval
    /// Why the app does not get it, nil when it does.
    public var reason: String?

    /// A delivery as described by each field.
    public init(
        woken: Bool, deliverAt: Date?, budget: TimeInterval?, expirationWarning: TimeInterval, reason: String?
    ) {
        self.woken = woken
        self.deliverAt = deliverAt
        self.budget = budget
        self.expirationWarning = expirationWarning
        self.reason = reason
    }
}

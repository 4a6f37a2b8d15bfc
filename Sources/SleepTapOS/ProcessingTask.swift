// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// A `BGProcessingTaskRequest`: deferrable maintenance work the system runs only while the
/// device is idle (Apple, developer.apple.com/documentation/backgroundtasks/bgprocessingtaskrequest).
///
/// Apple's rules this model keeps (docs/scheduler.md, "Processing tasks"): no launch before
/// `earliestBeginDate`; the task starts only while the device is idle, on external power when
/// `requiresExternalPower` is true and with a network connection when
/// `requiresNetworkConnectivity` is true (both default to false, as in `BGProcessingTaskRequest`);
/// the system calls the expiration handler when the user starts using the device (WWDC19
/// session 707, "Advances in App Background Execution").
public struct ProcessingRequest: Codable, Equatable, Sendable {
    /// The task identifier (listed in `BGTaskSchedulerPermittedIdentifiers`).
    public var identifier: String
    /// No launch before this virtual instant; nil = as soon as the conditions allow.
    public var earliestBeginDate: Date?
    /// `requiresExternalPower`: the task starts only while the device is charging (default false).
    public var requiresExternalPower: Bool
    /// `requiresNetworkConnectivity`: the task starts only with a network connection (default false).
    public var requiresNetworkConnectivity: Bool

    /// - Parameters:
    ///   - identifier: the task identifier.
    ///   - earliestBeginDate: the lower bound of the launch, virtual instant; nil = none.
    ///   - requiresExternalPower: start only on external power (default false).
    ///   - requiresNetworkConnectivity: start only with a network connection (default false).
    public init(
        identifier: String, earliestBeginDate: Date? = nil, requiresExternalPower: Bool = false,
        requiresNetworkConnectivity: Bool = false
    ) {
        self.identifier = identifier
        self.earliestBeginDate = earliestBeginDate
        self.requiresExternalPower = requiresExternalPower
        self.requiresNetworkConnectivity = requiresNetworkConnectivity
    }
}

extension IOSBackgroundScheduler {
    /// Virtual seconds a processing run may take when `Configuration.processingBudget` is nil:
    /// 300 (WWDC19 session 707 says processing tasks get "several minutes"; the number is this
    /// model's assumption).
    public static let defaultProcessingBudget: TimeInterval = 300

    /// Seconds the screen must stay off before the device counts as idle when
    /// `Configuration.idleDelay` is nil: 600 (Apple gives no number; this model's assumption).
    public static let defaultIdleDelay: TimeInterval = 600
}

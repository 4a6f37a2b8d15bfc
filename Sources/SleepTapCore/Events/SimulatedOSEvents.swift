// SPDX-License-Identifier: Apache-2.0

package import Foundation
package import SleepTapOS

// The one place where the simulated OS (the SleepTapOS module, which knows nothing of the sleep
// app) meets the app's events and zones: its trace entries become `Event`s, its stored zone is
// judged by the tz database in use.

extension EventName {
    /// The catalogue's name of an event the simulated OS traced (the same `os.*` text).
    /// - Parameter name: the OS's name for it.
    package init(_ name: OSEventName) {
        self =
            switch name {
            case .osLaunch: .osLaunch
            case .osLaunchDropped: .osLaunchDropped
            case .osOpportunityMissed: .osOpportunityMissed
            case .osRequestSubmitted: .osRequestSubmitted
            case .osRequestReplaced: .osRequestReplaced
            case .osRequestCancelled: .osRequestCancelled
            case .osRequestRejected: .osRequestRejected
            case .osRegister: .osRegister
            case .osRegisterRefused: .osRegisterRefused
            case .osAppLaunched: .osAppLaunched
            case .osAppKilled: .osAppKilled
            case .osAppCrashed: .osAppCrashed
            case .osAppUpdated: .osAppUpdated
            case .osTaskCompleted: .osTaskCompleted
            case .osTaskExpired: .osTaskExpired
            case .osCompleteIgnored: .osCompleteIgnored
            case .osSimulateFailed: .osSimulateFailed
            case .osConditionsChanged: .osConditionsChanged
            case .osRebooted: .osRebooted
            case .osWorkEnqueued: .osWorkEnqueued
            case .osWorkKept: .osWorkKept
            case .osWorkRescheduled: .osWorkRescheduled
            case .osWorkCompleted: .osWorkCompleted
            case .osWorkStopped: .osWorkStopped
            case .osWatchMessage: .osWatchMessage
            case .osPush: .osPush
            case .osWhy: .osWhy
            case .osDoze: .osDoze
            case .osTestDriver: .osTestDriver
            case .osTimeChanged: .osTimeChanged
            case .osAlarmFired: .osAlarmFired
            case .osScreen: .osScreen
            }
    }
}

extension Event {
    /// The event the phone writes for an entry of the simulated OS's trace: the same name and
    /// fields, in the same order (docs/protocol.md, "Events").
    /// - Parameter event: the OS's trace entry.
    package init(_ event: OSEvent) {
        self.init(EventName(event.name))
        assert(
            event.fields.allSatisfy { !Self.lineKeys.contains($0.key) }, "\(event.name): a field named like a line key")
        fields = event.fields
    }
}

extension SimulatedOS {
    /// The device's zone as stored, nil when none was set (or the stored name is not a zone of
    /// the tz database in use, `WakeCalendar.zone(named:)`).
    package var timeZone: TimeZone? { timeZoneIdentifier.flatMap(WakeCalendar.zone(named:)) }

    /// Why a decoded `os.json` cannot be used, nil when it can: `validationProblem(zoneProblem:)`
    /// with the stored zone judged by the tz database in use (`WakeCalendar.unknownZoneReason`).
    package var validationProblem: String? {
        validationProblem(zoneProblem: {
            WakeCalendar.zone(named: $0) == nil ? WakeCalendar.unknownZoneReason($0) : nil
        })
    }
}

// SPDX-License-Identifier: Apache-2.0
import Foundation

/// The twin's nights against the processes', night by night: the same local date, tap time,
/// outcome and nights left (`ScenarioNight.sameNight(as:)`), and as many nights.
package struct NightComparison: Sendable, CustomStringConvertible {
    /// What the processes were compared with (for messages), e.g. `the twin on the processes' instants`.
    package var against: String
    /// How many nights each side had.
    package var twinNights: Int
    package var processNights: Int
    /// The 0-based index of the first night that differs (or that one side lacks); nil when all agree.
    package var firstDifference: Int?
    /// That night on each side; nil when the side has no such night.
    package var twin: ScenarioNight?
    package var processes: ScenarioNight?

    package var equal: Bool { firstDifference == nil }

    /// Compares two nights lists.
    /// - Parameters:
    ///   - twin: the twin's nights, in order.
    ///   - processes: the processes' nights, in order.
    ///   - against: what the twin side is, for messages.
    package static func compare(
        twin: [ScenarioNight], processes: [ScenarioNight], against: String = "the twin"
    ) -> NightComparison {
        let first =
            zip(twin, processes).enumerated().first { !$0.element.0.sameNight(as: $0.element.1) }?.offset
            ?? (twin.count == processes.count ? nil : min(twin.count, processes.count))
        return NightComparison(
            against: against, twinNights: twin.count, processNights: processes.count, firstDifference: first,
            twin: first.flatMap { $0 < twin.count ? twin[$0] : nil },
            processes: first.flatMap { $0 < processes.count ? processes[$0] : nil })
    }

    /// `the processes and the twin agree on 21 nights`, or the first differing night from both
    /// sides: `the processes and the twin differ at night 5: processes 2026-07-24 23:00 manual
    /// entry, 0 nights left; twin 2026-07-24 23:00 cached wake-up, 3 nights left`.
    package var description: String {
        guard let index = firstDifference else {
            return "the processes and \(against) agree on \(processNights) nights"
        }
        return "the processes and \(against) differ at night \(index + 1): processes "
            + (processes?.summaryText ?? "no such night (\(processNights) nights)") + "; twin "
            + (twin?.summaryText ?? "no such night (\(twinNights) nights)")
    }

    /// The comparison as a JSON-ready object: `equal`, `against`, `twinNights`, `processNights`
    /// and, when they differ, `night` (1-based), `twin` and `processes` (nights or null).
    package var summary: [String: Any] {
        var object: [String: Any] = [
            "equal": equal, "against": against, "twinNights": twinNights, "processNights": processNights,
        ]
        if let index = firstDifference {
            object["night"] = index + 1
            object["twin"] = twin?.summary ?? NSNull()
            object["processes"] = processes?.summary ?? NSNull()
        }
        return object
    }
}

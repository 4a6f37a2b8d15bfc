// SPDX-License-Identifier: Apache-2.0
package import Foundation
import SleepTapCore
package import SleepTapOS

/// The model `sleeptap-calibrate` writes (schemaVersion 1, every field in docs/calibration.md):
/// what a fleet's run records say about its OS, per group.
package struct CalibrationModel: Equatable, Sendable {
    /// The model file's format version.
    package static let schemaVersion = 1

    /// What the records cannot identify: the model keeps the platforms' documented rules there.
    package static let notIdentified = [
        "Doze and its maintenance windows: records carry no Doze state; the built-in rules stay (Android, Optimize for Doze and App Standby)",
        "standby quotas and their windows: records show quota stops, not the quota; the built-in per-bucket limits stay (Android, App Standby Buckets)",
        "conditions (network, charging, Low Power Mode, Background App Refresh off): a request the OS held for a condition looks like a late one",
        "why iOS chose a moment: the delay is what the system did, not its rule; Apple documents only that the wait can be many hours",
        "the run's start: a background record's `at` is the run's end, so delays include the run (seconds, within its budget)",
    ]

    /// An input file that was skipped, and why.
    package struct Skipped: Equatable, Sendable {
        /// The file's name in `metrics/bg_runs`.
        package var file: String
        /// Why it was skipped (the strict reader's first problem).
        package var reason: String
    }

    /// The delay of the requests in one bin of the days since the device's last user open at
    /// their eligibility (iOS groups only).
    package struct OpenBin: Equatable, Sendable {
        /// Lower bound, days (inclusive); nil for the requests with no open before them.
        package var fromDays: Double?
        /// Upper bound, days (exclusive); nil for none (and in the bin without an open).
        package var toDays: Double?
        /// The bin's Kaplan–Meier fit, as the group's `delay`.
        package var delay: EmpiricalDistribution
    }

    /// One group's fit.
    package struct Group: Equatable, Sendable {
        /// `all`, `ios`, `android`, `android, rare`, `version 1.1`, `ios, version 1.1`, ...
        package var name: String
        /// The group's selectors; nil where the group spans every value.
        package var platform: Platform?
        package var bucket: StandbyBucket?
        package var appVersion: String?
        /// Devices with any record in the group.
        package var devices = 0
        /// `submitted` records (requests) in the group, and how they ended: answered by a
        /// `background` run, by a `dropped` launch, replaced by a later submit before any launch,
        /// or still pending at the end of the records.
        package var submitted = 0
        package var answeredByRun = 0
        package var answeredByDrop = 0
        package var replaced = 0
        package var pendingAtEnd = 0
        /// (replaced + pendingAtEnd) ÷ submitted; nil without requests.
        package var neverAnsweredShare: Double?
        /// Launches: background runs (handler entered), of them successful, expired and stopped
        /// past the standby quota; dropped launches (no handler registered in time); and launches
        /// whose request has no `submitted` record in the input.
        package var background = 0
        package var succeeded = 0
        package var expired = 0
        package var quotaStops = 0
        package var dropped = 0
        package var unmatchedLaunches = 0
        /// dropped ÷ (background + dropped); expired ÷ background; quotaStops ÷ background;
        /// succeeded ÷ submitted (the weekly report's execution rate); nil on a zero denominator.
        package var dropRate: Double?
        package var expirationRate: Double?
        package var quotaStopRate: Double?
        package var executionRate: Double?
        /// Seconds from a request's eligibility (its earliestBeginDate, or its submit when later)
        /// to the launch that answered it.
        package var delay = EmpiricalDistribution([], confidence: 0.95)
        /// iOS groups: `delay` by the days since the last user open at eligibility, in
        /// `Calibration.openBinStartsDays` order, the bin without an open last; nil elsewhere.
        package var delayByDaysSinceOpen: [OpenBin]?
        /// Seconds between a device's consecutive background runs.
        package var spacing = EmpiricalDistribution([], confidence: 0.95)

        /// An empty group called `name`.
        package init(name: String) { self.name = name }
    }

    /// Two-sided coverage of the quantiles' intervals.
    package var confidence: Double
    /// Input: devices, records, good files, skipped files, the first and last record's `at`.
    package var devices = 0
    package var records = 0
    package var files = 0
    package var skipped: [Skipped] = []
    package var firstRecordAt: Date?
    package var lastRecordAt: Date?
    /// Groups in order: all, platforms, Android buckets, app versions, platform and app version.
    package var groups: [Group] = []

    /// An empty model at `confidence`.
    package init(confidence: Double) { self.confidence = confidence }

    /// The group called `name`, if any.
    package func group(_ name: String) -> Group? { groups.first { $0.name == name } }

    /// The model as a JSON object (for `JSONSerialization`; absent values are `NSNull`).
    package func jsonObject() -> [String: Any] {
        func value(_ x: Double?) -> Any { x.map { $0 as Any } ?? NSNull() }
        func distribution(_ d: EmpiricalDistribution) -> [String: Any] {
            [
                "method": d.method.rawValue, "n": d.n, "censored": d.censored, "meanSeconds": value(d.mean),
                "histogram": d.histogram,
                "quantiles": d.quantiles.map { q in
                    [
                        "p": q.p, "seconds": value(q.value), "lowerSeconds": value(q.lower),
                        "upperSeconds": value(q.upper),
                    ] as [String: Any]
                },
            ]
        }
        return [
            "schemaVersion": Self.schemaVersion,
            "kind": "sleeptap.calibration",
            "interval": [
                "confidence": confidence,
                "delay": EmpiricalDistribution.Method.kaplanMeier.rawValue,
                "spacing": EmpiricalDistribution.Method.orderStatistic.rawValue,
            ] as [String: Any],
            "histogramEdgesSeconds": Calibration.histogramEdges,
            "notIdentified": Self.notIdentified,
            "input": [
                "devices": devices, "records": records, "files": files,
                "skipped": skipped.map { ["file": $0.file, "reason": $0.reason] },
                "firstRecordAt": firstRecordAt.map { ISO8601.string($0) as Any } ?? NSNull(),
                "lastRecordAt": lastRecordAt.map { ISO8601.string($0) as Any } ?? NSNull(),
            ] as [String: Any],
            "groups": groups.map { g -> [String: Any] in
                var object: [String: Any] = [
                    "group": g.name, "platform": g.platform.map { $0.rawValue as Any } ?? NSNull(),
                    "bucket": g.bucket.map { $0.name as Any } ?? NSNull(),
                    "appVersion": g.appVersion.map { $0 as Any } ?? NSNull(), "devices": g.devices,
                    "submitted": g.submitted, "answeredByRun": g.answeredByRun, "answeredByDrop": g.answeredByDrop,
                    "replaced": g.replaced, "pendingAtEnd": g.pendingAtEnd,
                    "neverAnsweredShare": value(g.neverAnsweredShare), "background": g.background,
                    "succeeded": g.succeeded, "expired": g.expired, "quotaStops": g.quotaStops, "dropped": g.dropped,
                    "unmatchedLaunches": g.unmatchedLaunches, "dropRate": value(g.dropRate),
                    "expirationRate": value(g.expirationRate), "quotaStopRate": value(g.quotaStopRate),
                    "executionRate": value(g.executionRate), "delay": distribution(g.delay),
                    "spacing": distribution(g.spacing),
                ]
                if let bins = g.delayByDaysSinceOpen {
                    object["delayByDaysSinceOpen"] = bins.map { b -> [String: Any] in
                        ["fromDays": value(b.fromDays), "toDays": value(b.toDays), "delay": distribution(b.delay)]
                    }
                }
                return object
            },
        ]
    }

    /// The model file's bytes: `jsonObject()` with sorted keys and a final newline.
    package func json() -> Data {
        var data =
            (try? JSONSerialization.data(
                withJSONObject: jsonObject(), options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        data.append(0x0A)
        return data
    }

    /// The readable summary: per group n, the delay's quantiles with their intervals (hours), the
    /// never-answered share and the launch rates; then what the records cannot identify.
    package func summary() -> String {
        func hours(_ x: Double?) -> String { x.map { String(format: "%.2f", $0 / 3_600) } ?? "open" }
        func percent(_ x: Double?) -> String { x.map { String(format: "%.1f %%", $0 * 100) } ?? "n/a" }
        var lines = [
            "calibration: \(devices) devices, \(records) records in \(files) files"
                + (skipped.isEmpty ? "" : ", \(skipped.count) skipped"),
            "delay = hours from a request's earliestBeginDate (or its submit, when later) to the launch that answered it;",
            "  Kaplan-Meier: a request replaced, or pending at the end, is censored there, not dropped;",
            "  one replaced or pending before its earliestBeginDate was never at risk of a launch and is not",
            "  counted (so censored is at most the never-answered requests);",
            String(
                format:
                    "intervals: %.0f %% per quantile; delay Brookmeyer-Crowley (Greenwood), spacing order-statistic (binomial)",
                confidence * 100),
        ]
        for g in groups {
            lines.append("")
            lines.append(
                "\(g.name): \(g.devices) devices, \(g.submitted) requests, never answered \(percent(g.neverAnsweredShare)) "
                    + "(\(g.replaced) replaced, \(g.pendingAtEnd) pending at the end)")
            lines.append(
                "  launches: \(g.background) runs, \(g.dropped) dropped (\(percent(g.dropRate))), "
                    + "expired \(percent(g.expirationRate)), quota stops \(percent(g.quotaStopRate)), "
                    + "execution rate \(percent(g.executionRate))")
            for (label, d) in [("delay", g.delay), ("spacing", g.spacing)] {
                let quantiles = d.quantiles.map { q in
                    "p\(Int((q.p * 100).rounded())) \(hours(q.value)) [\(hours(q.lower)), \(hours(q.upper))]"
                }
                let censored = d.method == .kaplanMeier ? ", censored \(d.censored)" : ""
                lines.append(
                    "  \(label) (h), n = \(d.n)\(censored): "
                        + (d.n == 0 ? "no samples" : quantiles.joined(separator: ", ")))
            }
            for bin in g.delayByDaysSinceOpen ?? [] {
                let d = bin.delay
                let days =
                    bin.fromDays.map { from in
                        "days since the last open "
                            + (bin.toDays.map { String(format: "[%g, %g)", from, $0) } ?? String(format: "≥ %g", from))
                    } ?? "no open before the request"
                let quantiles = d.quantiles.filter { [0.5, 0.9].contains($0.p) }.map { q in
                    "p\(Int((q.p * 100).rounded())) \(hours(q.value)) [\(hours(q.lower)), \(hours(q.upper))]"
                }
                lines.append(
                    "  delay, \(days), n = \(d.n), censored \(d.censored): "
                        + (d.n == 0 ? "no samples" : quantiles.joined(separator: ", ")))
            }
        }
        lines.append("")
        lines.append("not identified by the records (the simulated OS keeps the platforms' documented rules):")
        for item in Self.notIdentified { lines.append("  - " + item) }
        return lines.joined(separator: "\n")
    }
}

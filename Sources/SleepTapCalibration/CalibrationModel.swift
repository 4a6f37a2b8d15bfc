// SPDX-License-Identifier: Apache-2.0
public import Foundation
public import SleepTapCore
public import SleepTapOS

/// The model `sleeptap-calibrate` writes (schemaVersion 1, every field in docs/calibration.md):
/// what a fleet's run records say about its OS, per group.
public struct CalibrationModel: Equatable, Sendable {
    /// The model file's format version.
    public static let schemaVersion = 1

    /// What the records cannot identify: the model keeps the platforms' documented rules there.
    public static let notIdentified = [
        "Doze and its maintenance windows: records carry no Doze state; the built-in rules stay (Android, Optimize for Doze and App Standby)",
        "standby quotas and their windows: records show quota stops, not the quota; the built-in per-bucket limits stay (Android, App Standby Buckets)",
        "conditions (network, charging, Low Power Mode, Background App Refresh off): a request the OS held for a condition looks like a late one",
        "why iOS chose a moment: the delay is what the system did, not its rule; Apple documents only that the wait can be many hours",
        "the run's start: a background record's `at` is the run's end, so delays include the run (seconds, within its budget)",
    ]

    /// An input file that was skipped, and why.
    public struct Skipped: Equatable, Sendable {
        /// The file's name in `metrics/bg_runs`.
        public var file: String
        /// Why it was skipped (the strict reader's first problem).
        public var reason: String
    }

    /// One group's fit.
    public struct Group: Equatable, Sendable {
        /// `all`, `ios`, `android`, `android, rare`, `version 1.1`, `ios, version 1.1`, ...
        public var name: String
        /// The group's selectors; nil where the group spans every value.
        public var platform: Platform?
        public var bucket: StandbyBucket?
        public var appVersion: String?
        /// Devices with any record in the group.
        public var devices = 0
        /// `submitted` records (requests) in the group, and how they ended: answered by a
        /// `background` run, by a `dropped` launch, replaced by a later submit before any launch,
        /// or still pending at the end of the records.
        public var submitted = 0
        public var answeredByRun = 0
        public var answeredByDrop = 0
        public var replaced = 0
        public var pendingAtEnd = 0
        /// (replaced + pendingAtEnd) ÷ submitted; nil without requests.
        public var neverAnsweredShare: Double?
        /// Launches: background runs (handler entered), of them successful, expired and stopped
        /// past the standby quota; dropped launches (no handler registered in time); and launches
        /// whose request has no `submitted` record in the input.
        public var background = 0
        public var succeeded = 0
        public var expired = 0
        public var quotaStops = 0
        public var dropped = 0
        public var unmatchedLaunches = 0
        /// dropped ÷ (background + dropped); expired ÷ background; quotaStops ÷ background;
        /// succeeded ÷ submitted (the weekly report's execution rate); nil on a zero denominator.
        public var dropRate: Double?
        public var expirationRate: Double?
        public var quotaStopRate: Double?
        public var executionRate: Double?
        /// Seconds from a request's eligibility (its earliestBeginDate, or its submit when later)
        /// to the launch that answered it.
        public var delay = EmpiricalDistribution([], confidence: 0.95)
        /// Seconds between a device's consecutive background runs.
        public var spacing = EmpiricalDistribution([], confidence: 0.95)

        /// An empty group called `name`.
        public init(name: String) { self.name = name }
    }

    /// Two-sided coverage of the quantiles' intervals.
    public var confidence: Double
    /// Input: devices, records, good files, skipped files, the first and last record's `at`.
    public var devices = 0
    public var records = 0
    public var files = 0
    public var skipped: [Skipped] = []
    public var firstRecordAt: Date?
    public var lastRecordAt: Date?
    /// Groups in order: all, platforms, Android buckets, app versions, platform and app version.
    public var groups: [Group] = []

    /// An empty model at `confidence`.
    public init(confidence: Double) { self.confidence = confidence }

    /// The group called `name`, if any.
    public func group(_ name: String) -> Group? { groups.first { $0.name == name } }

    /// The model as a JSON object (for `JSONSerialization`; absent values are `NSNull`).
    public func jsonObject() -> [String: Any] {
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
                [
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
            },
        ]
    }

    /// The model file's bytes: `jsonObject()` with sorted keys and a final newline.
    public func json() -> Data {
        var data =
            (try? JSONSerialization.data(
                withJSONObject: jsonObject(), options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        data.append(0x0A)
        return data
    }

    /// The readable summary: per group n, the delay's quantiles with their intervals (hours), the
    /// never-answered share and the launch rates; then what the records cannot identify.
    public func summary() -> String {
        func hours(_ x: Double?) -> String { x.map { String(format: "%.2f", $0 / 3_600) } ?? "open" }
        func percent(_ x: Double?) -> String { x.map { String(format: "%.1f %%", $0 * 100) } ?? "n/a" }
        var lines = [
            "calibration: \(devices) devices, \(records) records in \(files) files"
                + (skipped.isEmpty ? "" : ", \(skipped.count) skipped"),
            "delay = hours from a request's earliestBeginDate (or its submit, when later) to the launch that answered it;",
            "  Kaplan-Meier: a request replaced, or pending at the end, is censored there, not dropped;",
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
        }
        lines.append("")
        lines.append("not identified by the records (the simulated OS keeps the platforms' documented rules):")
        for item in Self.notIdentified { lines.append("  - " + item) }
        return lines.joined(separator: "\n")
    }
}

// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCalibration
import SleepTapCore
import SleepTapOS

/// The comparison's outputs from its tallies (`sleeptap-compare`, docs/fleet.md): the table on
/// stdout, the same data as one JSON object, a Markdown file and an SVG bar chart.
package struct CompareReport: Sendable {
    /// The fleet compared (its shard, seed and days).
    package var options: FleetOptions
    /// The strategies' settings.
    package var settings: CompareSettings
    /// One tally per strategy, in the order asked.
    package var tallies: [StrategyTally]

    /// The report of `tallies`; each parameter sets the property of its name.
    package init(options: FleetOptions, settings: CompareSettings, tallies: [StrategyTally]) {
        self.options = options
        self.settings = settings
        self.tallies = tallies
    }

    /// `200 devices x 28 days from 2026-11-02, seed 1`, or for a shard `shard 1/4: 50 of 200
    /// devices x …`.
    package var fleetLine: String {
        let devices = tallies.first?.devices ?? 0
        let fleet =
            options.shardCount == 1
            ? "\(devices) devices"
            : "shard \(options.shardIndex)/\(options.shardCount): \(devices) of \(options.devices) devices"
        var line = "\(fleet) x \(options.days) days from \(options.start), seed \(options.seed)"
        if options.osSeedSalt != 0 { line += ", OS seed \(options.osSeedSalt)" }
        line += String(format: ", iOS share %.2f", options.iosShare)
        if options.lateRegistration > 0 {
            line += String(format: ", late registration %.2f", options.lateRegistration)
            if let from = options.lateRegistrationFrom { line += " from \(from)" }
        }
        // The users' habits and the OS, so that two runs can be told apart from their outputs.
        line += String(
            format: ", opens %.2f a day, low power %.2f, nightstand %.2f", options.opens, options.lowPower,
            options.nightstand)
        if options.buckets != FleetOptions.defaultBuckets { line += ", buckets " + Self.bucketText(options.buckets) }
        // The default (usage) goes unsaid, as the other defaults do.
        if options.opportunityModel != .usage { line += ", opportunity model \(options.opportunityModel.rawValue)" }
        if let model = options.osModelFile {
            // Said unused when no iOS group qualified: the iOS devices kept the built-in draws.
            let used = options.osModel.map { $0.delay(platform: .ios, appVersion: FleetOptions.appVersion) != nil }
            line +=
                ", os model \(model)" + (used == false ? " (unused: no iOS group with enough answered requests)" : "")
        }
        return line
    }

    /// `text` in lines of at most `columns` characters, broken after its commas (a part longer
    /// than a line stands alone).
    static func wrapped(_ text: String, columns: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for part in text.components(separatedBy: ", ") {
            let candidate = line.isEmpty ? part : line + ", " + part
            if candidate.count > columns && !line.isEmpty {
                lines.append(line + ",")
                line = part
            } else {
                line = candidate
            }
        }
        lines.append(line)
        return lines
    }

    /// `active=0.30,working_set=0.30,…` in `StandbyBucket.all` order.
    static func bucketText(_ buckets: [StandbyBucket: Double]) -> String {
        StandbyBucket.all.map { "\($0.name)=" + String(format: "%.2f", buckets[$0] ?? 0) }.joined(separator: ",")
    }

    /// Any wrong or missed alarm under any strategy.
    package var alarmsFailed: Bool { tallies.contains { $0.alarmFailures > 0 } }

    static func number(_ value: Double?, _ decimals: Int = 1) -> String {
        value.map { String(format: "%.\(decimals)f", $0) } ?? "n/a"
    }

    static func staleness(_ value: Staleness?, open: String = "n/a") -> String { value.map(\.description) ?? open }

    /// The table's rows as strings: strategy, manual per 1,000 [interval], manual/nights,
    /// alarms failed, p50 [interval], p90 [interval], launches/device-day [interval],
    /// bytes/device-day [interval].
    var rows: [[String]] {
        tallies.map { tally in
            func pair(_ interval: (low: Double, high: Double)?, _ decimals: Int) -> String {
                interval.map { " [\(Self.number($0.low, decimals)), \(Self.number($0.high, decimals))]" } ?? ""
            }
            func staleness(_ value: Staleness?, _ interval: StalenessInterval?) -> String {
                Self.staleness(value)
                    + (interval.map { " [\(Self.staleness($0.low, open: "…")), \(Self.staleness($0.high, open: "…"))]" }
                        ?? "")
            }
            return [
                tally.strategy.rawValue, Self.number(tally.manualPer1000) + pair(tally.manualInterval, 1),
                "\(tally.manualNights)/\(tally.nights)", "\(tally.alarmFailures)",
                staleness(tally.p50, tally.p50Interval), staleness(tally.p90, tally.p90Interval),
                Self.number(tally.launchesPerDeviceDay, 2) + pair(tally.launchesInterval, 2),
                String(format: "%.0f", tally.bytesPerDeviceDay) + pair(tally.bytesInterval, 0),
            ]
        }
    }

    static let headers = [
        "strategy", "manual/1000 nights [95% Wilson]", "manual/nights", "alarms wrong+missed", "p50 h [95%]",
        "p90 h [95%]", "launches/dev-day [95%]", "bytes/dev-day [95%]",
    ]

    /// The human-readable table: the fleet, one aligned row per strategy, and the strategies'
    /// options.
    package var text: String {
        let table = [Self.headers] + rows
        let widths = Self.headers.indices.map { column in table.map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                column == 0
                    ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - cell.count) + cell
            }.joined(separator: "  ")
        }
        var lines = ["compare: " + fleetLine, line(Self.headers)]
        lines += rows.map(line)
        for tally in tallies { lines.append("  \(tally.strategy.rawValue): \(tally.strategy.summary(settings))") }
        if let neverNote { lines.append("  " + neverNote) }
        if alarmsFailed { lines.append("⚠ wrong or missed alarms: see the night records (docs/fleet.md)") }
        return lines.joined(separator: "\n")
    }

    /// Why a strategy's p90 reads `never`, nil when none does: per such strategy, how many app
    /// opens came before their device's first successful background run (as the weekly report
    /// says it, `FreshnessReport.neverNote`); on a run of a week or less the opens of the first
    /// days weigh alone.
    package var neverNote: String? {
        let never = tallies.filter { $0.p90 == .never }
        guard !never.isEmpty else { return nil }
        let counts = never.map { tally in
            let samples = tally.stalenessSamples.count + tally.neverRefreshed
            return "\(tally.strategy.rawValue) \(tally.neverRefreshed) of \(samples)"
        }
        var note =
            "p90 never: app opens before their device's first successful background run reach the p90's rank "
            + "(the stalest tenth): " + counts.joined(separator: ", ") + "."
        if options.days <= 7 {
            note +=
                " A run of \(options.days) days holds the opens of the devices' first days, before any background run could answer."
        }
        return note
    }

    /// The fleet's parameters and the strategies' settings as one JSON object: what every shard
    /// of one comparison shares (`fleetFingerprint`), and the top of `json`.
    var fleetObject: [String: Any] {
        [
            "fleetDevices": options.devices, "days": options.days, "start": options.start.description,
            "seed": options.seed, "osSeed": options.osSeedSalt, "iosShare": options.iosShare,
            "lateRegistration": options.lateRegistration,
            "lateRegistrationFrom": options.lateRegistrationFrom?.description ?? NSNull(),
            "opens": options.opens, "lowPower": options.lowPower, "nightstand": options.nightstand,
            "buckets": Dictionary(uniqueKeysWithValues: StandbyBucket.all.map { ($0.name, options.buckets[$0] ?? 0) }),
            "opportunityModel": options.opportunityModel.rawValue, "osModel": options.osModelFile ?? NSNull(),
            "osModelDigest": options.osModelDigest ?? NSNull(),
            "horizonDays": settings.horizonDays, "warnNights": settings.warnNights, "interval": "wilson95",
            "intervals": [
                "manual": "95 % Wilson score", "staleness": "95 % order statistic (binomial)",
                "perDeviceDay": "95 % normal, across devices",
            ],
        ]
    }

    /// `fleetObject` as JSON text (keys sorted) without the model file's path: two shards belong
    /// to one comparison when theirs are equal, so the same model under another path (another
    /// machine's) matches, and another model under the same path does not (`osModelDigest`).
    package var fleetFingerprint: String {
        var object = fleetObject
        object["osModel"] = nil
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The same data as one JSON object (keys sorted); nothing in it depends on the machine or
    /// the wall clock, so the same options give the same bytes.
    package var json: String {
        func staleness(_ value: Staleness?) -> Any {
            guard let value else { return NSNull() }
            return value.hours.map { ($0 * 1_000).rounded() / 1_000 } ?? "never"
        }
        func rounded(_ value: Double?, _ scale: Double = 1_000) -> Any {
            value.map { ($0 * scale).rounded() / scale } ?? NSNull()
        }
        let strategies: [[String: Any]] = tallies.map { tally in
            [
                "strategy": tally.strategy.rawValue, "summary": tally.strategy.summary(settings),
                "devices": tally.devices, "deviceDays": tally.deviceDays, "nights": tally.nights,
                "manualNights": tally.manualNights, "manualPer1000": rounded(tally.manualPer1000),
                "manualPer1000Low": rounded(tally.manualInterval?.low),
                "manualPer1000High": rounded(tally.manualInterval?.high),
                "alarmsRight": tally.alarmsRight, "alarmsWrong": tally.alarmsWrong,
                "alarmsMissed": tally.alarmsMissed, "alarmsAfterEnd": tally.alarmsAfterEnd,
                "stalenessSamples": tally.stalenessSamples.count + tally.neverRefreshed,
                "neverRefreshed": tally.neverRefreshed, "p50Hours": staleness(tally.p50),
                "p50HoursLow": staleness(tally.p50Interval?.low), "p50HoursHigh": staleness(tally.p50Interval?.high),
                "p90Hours": staleness(tally.p90), "p90HoursLow": staleness(tally.p90Interval?.low),
                "p90HoursHigh": staleness(tally.p90Interval?.high), "launches": tally.launches,
                "launchesPerDeviceDay": rounded(tally.launchesPerDeviceDay),
                "launchesPerDeviceDayLow": rounded(tally.launchesInterval?.low),
                "launchesPerDeviceDayHigh": rounded(tally.launchesInterval?.high), "linkBytes": tally.linkBytes,
                "bytesPerDeviceDay": rounded(tally.bytesPerDeviceDay, 10),
                "bytesPerDeviceDayLow": rounded(tally.bytesInterval?.low, 10),
                "bytesPerDeviceDayHigh": rounded(tally.bytesInterval?.high, 10),
            ]
        }
        var object = fleetObject
        object["event"] = "compare.summary"
        object["devices"] = tallies.first?.devices ?? 0
        object["shard"] = "\(options.shardIndex)/\(options.shardCount)"
        object["strategies"] = strategies
        object["neverNote"] = neverNote ?? NSNull()
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The Markdown file: the fleet, the table, the chart (`chartName`) and the definitions.
    package func markdown(chartName: String) -> String {
        let alignment = ["---"] + Array(repeating: "---:", count: Self.headers.count - 1)
        var lines = [
            "# Refresh strategies compared", "",
            "Fleet: \(fleetLine) (`sleeptap-compare`, docs/fleet.md).", "",
            "| " + Self.headers.joined(separator: " | ") + " |",
            "| " + alignment.joined(separator: " | ") + " |",
        ]
        lines += rows.map { "| " + $0.joined(separator: " | ") + " |" }
        lines += [
            "",
            "![Manual-entry nights per 1,000 device-nights, per strategy, with 95 % Wilson intervals](\(chartName))",
            "",
        ]
        lines.append("Strategies:")
        lines += tallies.map { "- `\($0.strategy.rawValue)`: \($0.strategy.summary(settings))" }
        lines += [
            "",
            "- **manual/1000 nights**: bed taps the watch answered with a manual entry (no cached date covered "
                + "the night), per 1,000 device-nights, with the 95 % Wilson score interval (nights treated as "
                + "independent; one device's nights are not, so read it as a lower bound on the uncertainty).",
            "- **alarms wrong+missed**: nights whose alarm did not first ring at the night's wake-up, or whose cached "
                + "wake-up is not the schedule's; must be 0.",
            "- **p50 h, p90 h**: staleness at the app opens (hours since the last successful background run, the task's or a server push's; "
                + "each device's first launch, its install at the start, left out), "
                + "the weekly report's percentiles over every simulated day (`never`: the rank fell on devices "
                + "without a background run yet), with the 95 % order-statistic (binomial) interval (W. J. "
                + "Conover, Practical Nonparametric Statistics, §3.2; `…`: too few opens for that end). It treats "
                + "the opens as independent; one device's are not, so read it as a lower bound on the uncertainty.",
            "- **launches/dev-day**: the OS's background launches of the app (refresh task, handler entered or "
                + "not, wakes for a watch REQUEST, pushes the app got) per device-day; **bytes/dev-day**: the wire "
                + "frames phone "
                + "and watch sent each other. Each with the 95 % normal interval of the mean across devices "
                + "(mean ± 1.96·s/√devices; each device is independent).",
        ]
        if let neverNote { lines += ["", neverNote] }
        if alarmsFailed { lines += ["", "⚠ Wrong or missed alarms: see the night records."] }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The SVG bar chart: one bar per strategy, manual-entry nights per 1,000 device-nights, with
    /// its 95 % Wilson interval as a whisker; the value above each bar.
    package var svg: String {
        let width = 720.0
        // The fleet's line, wrapped at its commas to fit the width (12 px text, about 7 px a character).
        let subtitle = Self.wrapped(fleetLine, columns: Int(width / 7.5))
        let extra = 15.0 * Double(subtitle.count - 1)
        let height = 420.0 + extra
        let left = 80.0
        let right = 30.0
        let top = 76.0 + extra
        let bottom = 90.0
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let highest = tallies.compactMap { $0.manualInterval?.high ?? $0.manualPer1000 }.max() ?? 0
        let step = Self.niceStep(max(highest, 1) / 5)
        let axisMax = max(step, (max(highest, 1) / step).rounded(.up) * step)
        func y(_ value: Double) -> Double { top + plotHeight * (1 - value / axisMax) }
        func f(_ value: Double) -> String { String(format: "%.1f", value) }
        var out = [
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" "
                + "viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"DejaVu Sans, Arial, sans-serif\">",
            "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>",
            "<text x=\"\(f(width / 2))\" y=\"26\" text-anchor=\"middle\" font-size=\"17\" font-weight=\"bold\">"
                + "Manual-entry nights per 1,000 device-nights</text>",
        ]
        for (index, text) in subtitle.enumerated() {
            out.append(
                "<text x=\"\(f(width / 2))\" y=\"\(f(46 + 15 * Double(index)))\" text-anchor=\"middle\" "
                    + "font-size=\"12\" fill=\"#444\">" + Self.escaped(text) + "</text>")
        }
        out.append(
            "<text x=\"\(f(width / 2))\" y=\"\(f(63 + extra))\" text-anchor=\"middle\" font-size=\"12\" fill=\"#444\">"
                + "bars: the rate; whiskers: its 95 % Wilson score interval</text>")
        var tick = 0.0
        while tick <= axisMax + step / 2 {
            out.append(
                "<line x1=\"\(f(left))\" y1=\"\(f(y(tick)))\" x2=\"\(f(width - right))\" y2=\"\(f(y(tick)))\" "
                    + "stroke=\"#ddd\"/>")
            out.append(
                "<text x=\"\(f(left - 8))\" y=\"\(f(y(tick) + 4))\" text-anchor=\"end\" font-size=\"12\">"
                    + (step < 1 ? String(format: "%.1f", tick) : String(format: "%.0f", tick)) + "</text>")
            tick += step
        }
        out.append(
            "<line x1=\"\(f(left))\" y1=\"\(f(top))\" x2=\"\(f(left))\" y2=\"\(f(top + plotHeight))\" stroke=\"#333\"/>"
        )
        out.append(
            "<line x1=\"\(f(left))\" y1=\"\(f(top + plotHeight))\" x2=\"\(f(width - right))\" "
                + "y2=\"\(f(top + plotHeight))\" stroke=\"#333\"/>")
        out.append(
            "<text x=\"18\" y=\"\(f(top + plotHeight / 2))\" text-anchor=\"middle\" font-size=\"12\" "
                + "transform=\"rotate(-90 18 \(f(top + plotHeight / 2)))\">manual entries / 1,000 nights</text>")
        let slot = plotWidth / Double(max(1, tallies.count))
        let barWidth = min(90, slot * 0.55)
        let colors = ["#c0392b", "#2e86c1", "#28b463", "#8e44ad", "#d68910"]
        for (index, tally) in tallies.enumerated() {
            let center = left + slot * (Double(index) + 0.5)
            let value = tally.manualPer1000 ?? 0
            out.append(
                "<rect x=\"\(f(center - barWidth / 2))\" y=\"\(f(y(value)))\" width=\"\(f(barWidth))\" "
                    + "height=\"\(f(top + plotHeight - y(value)))\" fill=\"\(colors[index % colors.count])\"/>")
            var labelY = y(value) - 6
            if let (low, high) = tally.manualInterval {
                out.append(
                    "<line x1=\"\(f(center))\" y1=\"\(f(y(low)))\" x2=\"\(f(center))\" y2=\"\(f(y(high)))\" "
                        + "stroke=\"black\" stroke-width=\"1.5\"/>")
                for end in [low, high] {
                    out.append(
                        "<line x1=\"\(f(center - 10))\" y1=\"\(f(y(end)))\" x2=\"\(f(center + 10))\" "
                            + "y2=\"\(f(y(end)))\" stroke=\"black\" stroke-width=\"1.5\"/>")
                }
                labelY = min(labelY, y(high) - 6)
            }
            out.append(
                "<text x=\"\(f(center + barWidth / 2 + 4))\" y=\"\(f(max(top + 12, labelY + 6)))\" "
                    + "font-size=\"12\" font-weight=\"bold\">\(Self.number(tally.manualPer1000))</text>")
            out.append(
                "<text x=\"\(f(center))\" y=\"\(f(top + plotHeight + 20))\" text-anchor=\"middle\" font-size=\"13\" "
                    + "font-weight=\"bold\">\(Self.escaped(tally.strategy.rawValue))</text>")
            out.append(
                "<text x=\"\(f(center))\" y=\"\(f(top + plotHeight + 38))\" text-anchor=\"middle\" font-size=\"11\" "
                    + "fill=\"#444\">\(tally.manualNights) of \(tally.nights) nights</text>")
            out.append(
                "<text x=\"\(f(center))\" y=\"\(f(top + plotHeight + 54))\" text-anchor=\"middle\" font-size=\"11\" "
                    + "fill=\"#444\">alarms wrong+missed: \(tally.alarmFailures)</text>")
        }
        out.append("</svg>")
        return out.joined(separator: "\n") + "\n"
    }

    /// 1, 2 or 5 times a power of ten, at least `raw`.
    static func niceStep(_ raw: Double) -> Double {
        let power = pow(10, (log10(max(raw, 1e-9))).rounded(.down))
        for factor in [1.0, 2, 5, 10] where factor * power >= raw { return factor * power }
        return 10 * power
    }

    /// `text` with `&`, `<`, `>` and `"` escaped for XML.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

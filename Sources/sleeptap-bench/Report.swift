// SPDX-License-Identifier: Apache-2.0
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One row of the targets table, as `--json` writes it.
struct CaseResult: Encodable {
    /// The figure, e.g. `wrapper RTT ÷ raw C RTT, 1 KB ipc`.
    var name: String
    /// The measured value in `unit` (the median), nil when it could not be measured.
    var value: Double?
    var unit: String
    /// The same figure of the baseline in the same run, in `unit`; nil when there is none.
    var baseline: Double?
    /// value ÷ baseline, when the target is a ratio.
    var ratio: Double?
    /// The target in words, e.g. `ratio <= 1.05`.
    var target: String
    /// Whether the target was met; nil when not measured.
    var met: Bool?
    /// What limits it, or why it is missing.
    var note: String?
    /// The number `met` compares with (the ratio's or the value's bound), for `verdict`.
    var threshold: Double? = nil
    /// The spread of the rounds behind the figure, in percent (`Summary.spreadPercent`).
    var spreadPercent: Double? = nil
    /// `Verdict.text` for this row, set by the bench once the mode is known.
    var verdict: String? = nil

    enum CodingKeys: String, CodingKey {
        case name, value, unit, baseline, ratio, target, met, note, spreadPercent, verdict
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(value.flatMap(Self.finite), forKey: .value)
        try container.encode(unit, forKey: .unit)
        try container.encode(baseline.flatMap(Self.finite), forKey: .baseline)
        try container.encode(ratio.flatMap(Self.finite), forKey: .ratio)
        try container.encode(target, forKey: .target)
        try container.encode(met, forKey: .met)
        try container.encode(note, forKey: .note)
        try container.encode(spreadPercent.flatMap(Self.finite), forKey: .spreadPercent)
        try container.encode(verdict, forKey: .verdict)
    }

    static func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }
}

/// What a row's figure can say about its target.
enum Verdict {
    /// `yes`, `NO`, or `n/a` when not measured; in quick mode, `n/a (quick: spread 37 %, margin
    /// 4 %)` when the rounds' spread is larger than the distance between the figure and its
    /// threshold (both in percent of the threshold): so few samples cannot tell which side of the
    /// target the figure is on.
    /// - Parameters:
    ///   - met: whether the figure met its target; nil when not measured.
    ///   - figure: what `met` compared (the ratio, else the value).
    ///   - threshold: the target's bound.
    ///   - spreadPercent: the spread of the rounds, in percent.
    ///   - quick: a `--quick` run.
    static func text(met: Bool?, figure: Double?, threshold: Double?, spreadPercent: Double?, quick: Bool) -> String {
        guard let met else { return "n/a" }
        if quick, let margin = marginPercent(figure: figure, threshold: threshold), let spreadPercent,
            spreadPercent > margin
        {
            return String(format: "n/a (quick: spread %.0f %%, margin %.0f %%)", spreadPercent, margin)
        }
        return met ? "yes" : "NO"
    }

    /// |figure − threshold| in percent of the threshold; nil when either is missing or zero.
    static func marginPercent(figure: Double?, threshold: Double?) -> Double? {
        guard let figure, let threshold, threshold != 0, figure.isFinite else { return nil }
        return abs(figure - threshold) / abs(threshold) * 100
    }
}

/// One measurement behind the rows: a Swift side and, where there is one, its C baseline.
struct Measurement: Encodable {
    var name: String
    var unit: String
    var samples: Int
    var median: Double
    var p90: Double
    var p99: Double
    var spreadPercent: Double
    var baselineMedian: Double?
    var baselineP90: Double?
    var baselineP99: Double?
    var baselineSpreadPercent: Double?
    var ratio: Double?

    /// - Parameter scale: multiplies every value (e.g. 1e-3 for nanoseconds to microseconds).
    init(name: String, unit: String, swift: Summary, baseline: Summary?, scale: Double = 1) {
        self.name = name
        self.unit = unit
        samples = swift.samples.count
        median = swift.median * scale
        p90 = swift.p90 * scale
        p99 = swift.p99 * scale
        spreadPercent = swift.spreadPercent
        if let baseline {
            baselineMedian = baseline.median * scale
            baselineP90 = baseline.p90 * scale
            baselineP99 = baseline.p99 * scale
            baselineSpreadPercent = baseline.spreadPercent
            ratio = swift.median / baseline.median
        }
    }
}

/// The machine the run was on.
struct Machine: Encodable {
    var cpu: String
    var cores: Int
    var kernel: String
    /// /proc/loadavg's 1-minute load at the start and the end of the run.
    var loadAtStart: Double
    var loadAtEnd: Double
    var libzmq: String
    /// The file system of the state dirs (`df -T`'s type), e.g. ext4.
    var stateFileSystem: String
    /// The version of the tz database in use (`2026f`).
    var tzdata: String

    static func loadAverage() -> Double {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").first.flatMap { Double($0) } ?? .nan
    }

    static func cpuModel() -> String {
        let text = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").first { $0.hasPrefix("model name") }
        return line.flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
    }

    static func kernelRelease() -> String {
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let machine = withUnsafeBytes(of: &name.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return "Linux \(release) \(machine)"
    }

    /// The file system type of `path`: the longest mount point above it in /proc/mounts.
    static func fileSystem(_ path: String) -> String {
        let text = (try? String(contentsOfFile: "/proc/mounts", encoding: .utf8)) ?? ""
        var best: (point: String, type: String) = ("", "unknown")
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count > 2 else { continue }
            let point = String(fields[1])
            let inside = point == "/" || path == point || path.hasPrefix(point + "/")
            if inside && point.count >= best.point.count { best = (point, String(fields[2])) }
        }
        return best.type
    }
}

/// The whole `--json` document.
struct BenchReport: Encodable {
    var machine: Machine
    var mode: String
    var command: String
    var cases: [CaseResult]
    var measurements: [Measurement]
}

/// Formatting for the readable table.
enum Format {
    static func number(_ value: Double?, digits: Int = 2) -> String {
        guard let value, value.isFinite else { return "-" }
        if abs(value) >= 10_000 { return String(format: "%.0f", value) }
        return String(format: "%.\(digits)f", value)
    }

    static func pad(_ text: String, _ width: Int) -> String {
        let count = text.count
        return count >= width ? text : text + String(repeating: " ", count: width - count)
    }

    static func padLeft(_ text: String, _ width: Int) -> String {
        let count = text.count
        return count >= width ? text : String(repeating: " ", count: width - count) + text
    }

    static func measurements(_ rows: [Measurement]) -> [String] {
        var lines = [
            pad("measurement", 58) + pad("unit", 8) + padLeft("median", 10) + padLeft("p90", 10) + padLeft("p99", 10)
                + padLeft("spread", 8) + padLeft("C median", 10) + padLeft("C p99", 10) + padLeft("ratio", 7)
        ]
        for row in rows {
            lines.append(
                pad(row.name, 58) + pad(row.unit, 8) + padLeft(number(row.median), 10) + padLeft(number(row.p90), 10)
                    + padLeft(number(row.p99), 10) + padLeft(number(row.spreadPercent, digits: 0) + "%", 8)
                    + padLeft(number(row.baselineMedian), 10) + padLeft(number(row.baselineP99), 10)
                    + padLeft(number(row.ratio), 7))
        }
        return lines
    }

    static func cases(_ rows: [CaseResult]) -> [String] {
        var lines = [
            pad("target", 44) + padLeft("value", 12) + pad(" unit", 16) + padLeft("baseline", 10) + padLeft("ratio", 7)
                + pad("  target", 24) + "met"
        ]
        for row in rows {
            let met = row.verdict ?? row.met.map { $0 ? "yes" : "NO" } ?? "n/a"
            lines.append(
                pad(row.name, 44) + padLeft(number(row.value), 12) + pad(" " + row.unit, 16)
                    + padLeft(number(row.baseline), 10) + padLeft(number(row.ratio), 7) + pad("  " + row.target, 24)
                    + met)
            if let note = row.note { lines.append("    " + note) }
        }
        return lines
    }
}

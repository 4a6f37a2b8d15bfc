public import Foundation
public import SleepTapCore
public import SleepTapEmbedded

/// One night of a run: the watch's bed tap and what it gave.
public struct ScenarioNight: Equatable, Sendable {
    public enum Outcome: String, Sendable {
        case cachedWakeUp = "cached wake-up"
        /// A cached wake-up on a night the watch warned that its dates run low (`coverage.low`).
        case warned
        case manualEntry = "manual entry"
    }

    /// The tap's local date and time in the zone the watch lives in.
    public var localDate: String
    public var tapTime: String
    public var outcome: Outcome
    /// Cached wake-ups ahead of the tap, this one included (0 on a manual entry).
    public var nightsLeft: Int
    /// The phone's background runs (`handler.entered`) since the previous tap.
    public var backgroundRuns: Int
}

/// An expectation checked against a run: whether it holds and what was observed.
public struct ScenarioCheck: Sendable {
    public var expectation: ScenarioExpectation
    public var passed: Bool
    /// What was asked, e.g. `fallback.manual_entry from 2026-08-04T00:00:00Z count 0`.
    public var asked: String
    /// What was seen, e.g. `count 2` or `first 2026-08-03T15:00:00Z` or `first none`.
    public var observed: String
}

/// A scenario run in the embedded twin.
public struct ScenarioRun: Sendable {
    /// Virtual seconds per wall second the twin's transport timings are scaled by (the demo's
    /// default: 12 virtual hours per wall second).
    public static let speed = 43_200.0

    /// An event of the run at its virtual instant.
    struct LogEntry {
        var at: Date
        var source: EventSource
        var event: Event
    }

    public var scenario: ScenarioFile
    public var nights: [ScenarioNight]
    public var checks: [ScenarioCheck]
    public var passed: Bool { checks.allSatisfy(\.passed) }

    /// Builds the twin from the scenario's flags (through the executables' own parsers), runs its
    /// steps from `start` to `end`, and checks its expectations.
    /// - Throws: `ScenarioError` when the flags are refused or the twin cannot model them.
    public static func twin(_ scenario: ScenarioFile) throws(ScenarioError) -> ScenarioRun {
        let clock = ["--clock-start", ISO8601.string(scenario.start), "--clock-speed", String(Int(speed))]
        let transport = ["--endpoint", "ipc:///nonexistent/sleeptap-scenario.sock"]
        var phone = scenario.phone + clock + transport + ["--state-dir", "/nonexistent/phone"]
        if !scenario.phone.contains(where: { $0 == "--device-seed" || $0.hasPrefix("--device-seed=") }) {
            phone += ["--device-seed", "1"]
        }
        if let path = scenario.schedulePath { phone += ["--schedule", path] }
        let watch = scenario.watch + clock + transport + ["--state-dir", "/nonexistent/watch"]
        var twin: Twin
        do {
            twin = try TwinBuilder.make(
                phone: phone, watch: watch, machineZone: scenario.timeZone, schedule: scenario.schedule)
        } catch {
            throw ScenarioError(
                file: scenario.path, field: "phone/watch", value: "", reason: "\(error)")
        }
        twin.boot()
        for step in scenario.steps { twin.schedule(step.step, at: step.at) }
        twin.run(until: scenario.end.addingTimeInterval(-0.001))
        let log = twin.log.map { LogEntry(at: $0.at, source: $0.source, event: $0.event) }
        return ScenarioRun(
            scenario: scenario, nights: nights(of: log), checks: scenario.expectations.map { check($0, against: log) })
    }

    /// The nights of a log: one per bed tap (`bed.wake_time` or `fallback.manual_entry`); a
    /// cached night is `warned` when the watch's `coverage.low` came with its tap or since the
    /// previous one.
    static func nights(of log: [LogEntry]) -> [ScenarioNight] {
        var nights: [ScenarioNight] = []
        var runs = 0
        var lastTap: Date?
        var warning = false
        for entry in log {
            switch entry.event.name {
            case .handlerEntered:
                runs += 1
            case .coverageLow where entry.source == .watch:
                // A warning the tap itself raised (same instant) belongs to that night; any
                // other to the next one.
                if let lastTap, second(lastTap) == second(entry.at), let last = nights.indices.last {
                    if nights[last].outcome == .cachedWakeUp { nights[last].outcome = .warned }
                } else {
                    warning = true
                }
            case .bedWakeTime, .fallbackManualEntry:
                let cached = entry.event.name == .bedWakeTime
                var left = 0
                if case .int(let remaining)? = entry.event["remaining"] { left = Int(remaining) }
                nights.append(
                    ScenarioNight(
                        localDate: text(entry.event["tapLocalDate"]),
                        tapTime: text(entry.event["tapLocalTime"]),
                        outcome: cached ? (warning ? .warned : .cachedWakeUp) : .manualEntry,
                        nightsLeft: cached ? left : 0, backgroundRuns: runs))
                runs = 0
                warning = false
                lastTap = entry.at
            default:
                continue
            }
        }
        return nights
    }

    static func text(_ value: EventValue?) -> String {
        if case .string(let text)? = value { return text }
        return "?"
    }

    /// An instant floored to the second: times are compared to the second.
    static func second(_ date: Date) -> Double { date.timeIntervalSince1970.rounded(.down) }

    /// A field's value as JSON text, as the expectation's `fields` are written.
    static func json(_ value: EventValue) -> String? {
        switch value {
        case .string(let text): return ScenarioFile.render(text)
        case .int(let number): return String(number)
        case .double(let number): return ScenarioFile.render(NSNumber(value: number))
        case .bool(let flag): return flag ? "true" : "false"
        case .date(let date): return ScenarioFile.render(ISO8601.string(date))
        case .null: return "null"
        case .object: return nil
        }
    }

    /// Checks one expectation against the log.
    static func check(_ expectation: ScenarioExpectation, against log: [LogEntry]) -> ScenarioCheck {
        let matches = log.filter { entry in
            guard entry.event.name == expectation.event else { return false }
            if let source = expectation.source, entry.source != source { return false }
            if let from = expectation.from, second(entry.at) < second(from) { return false }
            if let to = expectation.to, second(entry.at) >= second(to) { return false }
            return expectation.fields.allSatisfy { field in
                entry.event[field.key].flatMap(json) == field.json
            }
        }
        var asked = [expectation.event.rawValue]
        if let source = expectation.source { asked.append("source \(source.rawValue)") }
        for (key, value) in expectation.fields { asked.append("\(key)=\(value)") }
        if let from = expectation.from { asked.append("from \(ISO8601.string(from))") }
        if let to = expectation.to { asked.append("to \(ISO8601.string(to))") }
        var passed = true
        var observed: [String] = []
        if let first = expectation.first {
            asked.append("first \(ISO8601.string(first))")
            let seen = matches.first.map { ISO8601.string($0.at) } ?? "none"
            observed.append("first \(seen)")
            passed = passed && matches.first.map { second($0.at) == second(first) } == true
        }
        var minimum = expectation.min
        if expectation.first == nil, expectation.count == nil, expectation.min == nil, expectation.max == nil {
            minimum = 1
        }
        if let count = expectation.count {
            asked.append("count \(count)")
            passed = passed && matches.count == count
        }
        if let minimum {
            asked.append("min \(minimum)")
            passed = passed && matches.count >= minimum
        }
        if let maximum = expectation.max {
            asked.append("max \(maximum)")
            passed = passed && matches.count <= maximum
        }
        if expectation.first == nil || expectation.count != nil || minimum != nil || expectation.max != nil {
            observed.append("count \(matches.count)")
        }
        if !passed, let first = matches.first, expectation.first == nil {
            observed.append("first \(ISO8601.string(first.at))")
        }
        return ScenarioCheck(
            expectation: expectation, passed: passed, asked: asked.joined(separator: " "),
            observed: observed.joined(separator: ", "))
    }

    /// The night-by-night table and the checks, for a person.
    public var report: String {
        var lines = ["scenario: \(scenario.name) (\(scenario.path))"]
        lines.append("  local date  tap    outcome         nights left  background runs")
        for night in nights {
            lines.append(
                "  \(night.localDate)  \(night.tapTime)  \(night.outcome.rawValue.padding(toLength: 14, withPad: " ", startingAt: 0))  "
                    + "\(String(night.nightsLeft).padding(toLength: 11, withPad: " ", startingAt: 0))  \(night.backgroundRuns)"
            )
        }
        for check in checks {
            lines.append("  \(check.passed ? "PASS" : "FAIL") \(check.asked): observed \(check.observed)")
        }
        lines.append(
            "  \(passed ? "PASS" : "FAIL"): \(checks.filter(\.passed).count) of \(checks.count) expectations hold")
        return lines.joined(separator: "\n")
    }

    /// The same as `report`, as a JSON-ready object.
    public var summary: [String: Any] {
        [
            "file": scenario.path, "name": scenario.name, "mode": "twin", "pass": passed,
            "nights": nights.map {
                [
                    "localDate": $0.localDate, "tapTime": $0.tapTime, "outcome": $0.outcome.rawValue,
                    "nightsLeft": $0.nightsLeft, "backgroundRuns": $0.backgroundRuns,
                ] as [String: Any]
            },
            "expectations": checks.map {
                ["expectation": $0.asked, "pass": $0.passed, "observed": $0.observed] as [String: Any]
            },
        ]
    }
}

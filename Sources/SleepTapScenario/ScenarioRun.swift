// SPDX-License-Identifier: Apache-2.0

package import Foundation
package import SleepTapCore
package import SleepTapEmbedded
import SleepTapOS

/// One night of a run: the watch's bed tap and what it gave.
package struct ScenarioNight: Equatable, Sendable {
    package enum Outcome: String, Sendable {
        case cachedWakeUp = "cached wake-up"
        /// A cached wake-up on a night the watch warned that its dates run low (`coverage.low`).
        case warned
        case manualEntry = "manual entry"
    }

    /// The tap's local date and time in the zone the watch lives in.
    package var localDate: String
    package var tapTime: String
    /// The zone the watch lived in at the tap (`tapTimeZone`): a travel night can show one local
    /// time twice, in two zones.
    package var tapTimeZone: String
    package var outcome: Outcome
    /// Cached wake-ups ahead of the tap, this one included (0 on a manual entry).
    package var nightsLeft: Int
    /// The phone's background runs since the previous tap: the tasks' (`handler.entered`) and
    /// the server pushes' (`push.received`).
    package var backgroundRuns: Int
    /// The phone's staleness at the tap: hours since its last successful background run ended
    /// (`handler.completed` with `success` true, which a push's run says too); nil when none has
    /// yet ("never").
    package var stalenessHours: Double?

    package init(
        localDate: String, tapTime: String, outcome: Outcome, nightsLeft: Int, backgroundRuns: Int,
        stalenessHours: Double? = nil, tapTimeZone: String = ""
    ) {
        self.localDate = localDate
        self.tapTime = tapTime
        self.tapTimeZone = tapTimeZone
        self.outcome = outcome
        self.nightsLeft = nightsLeft
        self.backgroundRuns = backgroundRuns
        self.stalenessHours = stalenessHours
    }

    /// Whether the two nights agree on what the comparison of twin and processes looks at: the
    /// local date, the tap time, the outcome and the nights left (background runs and staleness
    /// follow instants that wall-clock lag moves by virtual minutes).
    package func sameNight(as other: ScenarioNight) -> Bool {
        localDate == other.localDate && tapTime == other.tapTime && outcome == other.outcome
            && nightsLeft == other.nightsLeft
    }

    /// The staleness as the table shows it: whole hours (`14 h`), or `never`.
    package var stalenessText: String {
        stalenessHours.map { "\(Int($0.rounded(.down))) h" } ?? "never"
    }

    /// `2026-08-02 23:00 manual entry, 0 nights left`, for messages.
    package var summaryText: String {
        "\(localDate) \(tapTime) \(outcome.rawValue), \(nightsLeft) nights left"
    }
}

/// An expectation checked against a run: whether it holds and what was observed.
package struct ScenarioCheck: Sendable {
    package var expectation: ScenarioExpectation
    package var passed: Bool
    /// What was asked, e.g. `fallback.manual_entry from 2026-08-04T00:00:00Z count 0`.
    package var asked: String
    /// What was seen, e.g. `count 2` or `first 2026-08-03T15:00:00Z` or `first none`.
    package var observed: String
}

/// A scenario run: in the embedded twin (`twin(_:speed:)`) or as the real `phone` and `watch`
/// processes over ipc (`processes(_:speed:executables:)`, ScenarioProcesses.swift), with its
/// nights, its expectations checked, and its event log.
package struct ScenarioRun: Sendable {
    /// Where a run ran.
    package enum Mode: String, Sendable {
        /// The embedded twin (`SleepTapEmbedded`), on virtual time.
        case twin
        /// The real `phone` and `watch` executables over ipc, in accelerated virtual time.
        case processes
    }

    /// The default virtual seconds per wall second (`--speed`): 2 virtual days per wall second,
    /// so a 3-week scenario runs in about 11 wall seconds as processes. Both modes use the run's
    /// speed: the transport's wall-clock timings (heartbeats, resends, relinks) become this many
    /// virtual seconds per wall second in the twin too, as `--clock-speed` makes them in the
    /// processes.
    package static let defaultSpeed = 172_800.0

    /// An event of the run at its virtual instant.
    package struct LogEntry: Sendable {
        package var at: Date
        package var source: EventSource
        package var event: Event

        package init(at: Date, source: EventSource, event: Event) {
            self.at = at
            self.source = source
            self.event = event
        }
    }

    package var scenario: ScenarioFile
    package var mode: Mode
    /// Virtual seconds per wall second.
    package var speed: Double
    package var nights: [ScenarioNight]
    package var checks: [ScenarioCheck]
    /// Every event of the run before `end`, in time order (the twin's log; the processes' JSON
    /// Lines, merged).
    package var log: [LogEntry]
    /// Processes only: their nights against the twin's on the processes' own instants.
    package var comparison: NightComparison?
    /// Processes only: the virtual instants `phone.started`, `watch.started` and the first
    /// `link.up` (nil: never) came at. Wall-clock start-up time is virtual time at speed: a night
    /// before the first link up has no batch in the processes.
    package var startUp: (phone: Date, watch: Date, linkUp: Date?)?
    /// Processes only: the phone's and the watch's resident set size at the start and at the end.
    package var memory: ProcessMemory?
    /// Processes only: the twin's nights on the processes' instants (what `comparison` compared).
    package var twinNights: [ScenarioNight]?
    /// Processes only: the log of that twin (`TwinReplay`), in time order.
    package var twinLog: [LogEntry]?
    /// Processes only: how far behind virtual time the phone fell, from its last `clock.behind`
    /// (launches handled more than its threshold after their planned instant, and the largest
    /// lateness, virtual seconds); zero counts when it never did.
    package var behind: ProcessBehind?
    /// Processes only: the earlier runs of this scenario that failed while the phone fell behind
    /// virtual time, and so could not be judged (`slowerSpeed(after:attempt:)`), oldest first:
    /// the speed each ran at and what it said.
    package var slowerReruns: [(speed: Double, reason: String)] = []
    /// Processes only: the outside inputs at the virtual instants the processes handled them
    /// (what the twin replay was given), in order.
    package var handledInputs: [(at: Date, step: TwinStep)]?
    /// The versions of the tz databases the phone and the watch ran on (`2026f`), as their
    /// `phone.started` and `watch.started` say (`tzdata`, the first start of each); nil for a
    /// side whose start is not in the log.
    package var tzdata: (phone: String?, watch: String?) {
        func version(_ name: EventName) -> String? {
            guard let started = log.first(where: { $0.event.name == name }),
                case .string(let version)? = started.event["tzdata"]
            else { return nil }
            return version
        }
        return (version(.phoneStarted), version(.watchStarted))
    }

    /// Every expectation holds (and, for processes, the twin agrees night by night).
    package var passed: Bool { checks.allSatisfy(\.passed) && comparison?.equal != false }

    package init(
        scenario: ScenarioFile, mode: Mode = .twin, speed: Double = ScenarioRun.defaultSpeed,
        nights: [ScenarioNight], checks: [ScenarioCheck], log: [LogEntry] = [], comparison: NightComparison? = nil
    ) {
        self.scenario = scenario
        self.mode = mode
        self.speed = speed
        self.nights = nights
        self.checks = checks
        self.log = log
        self.comparison = comparison
    }

    /// The `phone` and `watch` command lines of a run: the scenario's flags plus the clock
    /// (`--clock-start` = `start`, `--clock-speed`, and `--clock-anchor` when given), the
    /// transport, the state dirs, the schedule and `--device-seed 1` unless the scenario gives one.
    static func commandLines(
        _ scenario: ScenarioFile, speed: Double, anchor: Date? = nil, phoneEndpoint: String, watchEndpoint: String,
        directory: String, schedulePath: String?
    ) -> (phone: [String], watch: [String]) {
        var clock = ["--clock-start", ISO8601.string(scenario.start), "--clock-speed", String(format: "%.0f", speed)]
        if let anchor { clock += ["--clock-anchor", String(format: "%.3f", anchor.timeIntervalSince1970)] }
        var phone =
            scenario.phone + clock + ["--endpoint", phoneEndpoint, "--state-dir", directory + "/phone"]
        if !scenario.phone.contains(where: { $0 == "--device-seed" || $0.hasPrefix("--device-seed=") }) {
            phone += ["--device-seed", "1"]
        }
        if let schedulePath { phone += ["--schedule", schedulePath] }
        let watch = scenario.watch + clock + ["--endpoint", watchEndpoint, "--state-dir", directory + "/watch"]
        return (phone, watch)
    }

    /// The twin built from these command lines, not booted.
    static func makeTwin(
        _ scenario: ScenarioFile, phone: [String], watch: [String]
    ) throws(ScenarioError) -> Twin {
        do {
            return try TwinBuilder.make(
                phone: phone, watch: watch, machineZone: scenario.timeZone, schedule: scenario.schedule)
        } catch let error as TwinBuilder.SideError {
            throw ScenarioError(file: scenario.path, field: error.side, value: "", reason: "\(error)")
        } catch {
            throw ScenarioError(file: scenario.path, field: "phone/watch", value: "", reason: "\(error)")
        }
    }

    /// Builds the twin from the scenario's flags (through the executables' own parsers), runs its
    /// steps from `start` to `end`, and checks its expectations.
    /// - Parameter speed: virtual seconds per wall second for the transport's timings
    ///   (`--clock-speed`), > 0.
    /// - Throws: `ScenarioError` when the flags are refused or the twin cannot model them.
    package static func twin(_ scenario: ScenarioFile, speed: Double = defaultSpeed) throws(ScenarioError)
        -> ScenarioRun
    {
        let (phone, watch) = commandLines(
            scenario, speed: speed, phoneEndpoint: "ipc:///nonexistent/sleeptap-scenario.sock",
            watchEndpoint: "ipc:///nonexistent/sleeptap-scenario.sock", directory: "/nonexistent",
            schedulePath: scenario.schedulePath)
        var twin = try makeTwin(scenario, phone: phone, watch: watch)
        twin.boot()
        for step in scenario.steps { twin.schedule(step.step, at: step.at) }
        twin.run(until: scenario.end.addingTimeInterval(-0.001))
        // Every step of the scenario was performed, in order: `performed[i]` is `steps[i]`.
        if let wrong = twin.misdirected.first, wrong.index < scenario.steps.count {
            let step = scenario.steps[wrong.index]
            throw ScenarioError(
                file: scenario.path, field: "steps[\(wrong.index)]", value: step.text,
                reason: wrong.running
                    ? "the \(wrong.process.rawValue) was running in the twin at \(ISO8601.string(step.at))"
                    : "the \(wrong.process.rawValue) was not running in the twin at \(ISO8601.string(step.at)); the step would do nothing"
            )
        }
        let log = twin.log.map { LogEntry(at: $0.at, source: $0.source, event: $0.event) }
        return ScenarioRun(
            scenario: scenario, mode: .twin, speed: speed, nights: nights(of: log),
            checks: checks(scenario.expectations, against: log), log: log)
    }

    /// The nights of a log: one per bed tap (`bed.wake_time` or `fallback.manual_entry`); a
    /// cached night is `warned` when the watch's `coverage.low` came with its tap or since the
    /// previous one.
    static func nights(of log: [LogEntry]) -> [ScenarioNight] {
        var nights: [ScenarioNight] = []
        var runs = 0
        var lastTap: Date?
        var warning = false
        var lastSuccess: Date?
        for entry in log {
            switch entry.event.name {
            case .handlerEntered, .pushReceived:
                runs += 1
            case .handlerCompleted where entry.event["success"] == .bool(true):
                lastSuccess = entry.at
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
                        nightsLeft: cached ? left : 0, backgroundRuns: runs,
                        stalenessHours: lastSuccess.map { max(0, entry.at.timeIntervalSince($0)) / 3_600 },
                        tapTimeZone: text(entry.event["tapTimeZone"])))
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

    /// Checks every expectation against the log in one pass over it: the entries are grouped by
    /// event name (in time order) once, and each expectation reads only its event's entries inside
    /// its window, found by binary search.
    /// - Complexity: O(n log n + e log n + m) for n entries, e expectations and m matches.
    static func checks(_ expectations: [ScenarioExpectation], against log: [LogEntry]) -> [ScenarioCheck] {
        var byName: [EventName: [LogEntry]] = [:]
        for entry in log { byName[entry.event.name, default: []].append(entry) }
        // The field names each event carries, per source: a field no such event has fails.
        var keys: [EventName: [EventSource: Set<String>]] = [:]
        for (name, entries) in byName {
            byName[name] = entries.sorted { $0.at < $1.at }
            for entry in entries {
                keys[name, default: [:]][entry.source, default: []].formUnion(entry.event.fields.map(\.key))
            }
        }
        return expectations.map { expectation in
            let bySource = keys[expectation.event] ?? [:]
            let carried =
                expectation.source.map { bySource[$0] }
                ?? bySource.values.reduce(Set<String>?.none) {
                    ($0 ?? []).union($1)
                }
            return check(expectation, named: byName[expectation.event] ?? [], carried: carried)
        }
    }

    /// Checks one expectation against the log.
    static func check(_ expectation: ScenarioExpectation, against log: [LogEntry]) -> ScenarioCheck {
        checks([expectation], against: log)[0]
    }

    /// The first index in `entries` (in time order) whose second is not before `instant`'s.
    private static func lowerBound(_ entries: [LogEntry], _ instant: Date) -> Int {
        var (low, high) = (0, entries.count)
        while low < high {
            let middle = (low + high) / 2
            if second(entries[middle].at) < second(instant) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Checks one expectation against the entries of its event, in time order.
    /// - Parameter carried: the field names the events of its name (and source) carry; nil when
    ///   there are none.
    private static func check(
        _ expectation: ScenarioExpectation, named all: [LogEntry], carried: Set<String>?
    ) -> ScenarioCheck {
        let start = expectation.from.map { lowerBound(all, $0) } ?? 0
        let end = expectation.to.map { lowerBound(all, $0) } ?? all.count
        let window = start < end ? all[start..<end] : []
        let matches = window.filter { entry in
            if let source = expectation.source, entry.source != source { return false }
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
        // A field name that no event of this name (and source) in the run carries is most likely
        // misspelt: it fails, so that `"count": 0` cannot pass vacuously on a typo.
        if let carried {
            for field in expectation.fields where !carried.contains(field.key) {
                passed = false
                observed.append("no \(expectation.event.rawValue) event has a field \(field.key)")
            }
        }
        if !passed, let first = matches.first, expectation.first == nil {
            observed.append("first \(ISO8601.string(first.at))")
        }
        return ScenarioCheck(
            expectation: expectation, passed: passed, asked: asked.joined(separator: " "),
            observed: observed.joined(separator: ", "))
    }

    /// The night-by-night table and the checks, for a person.
    package var report: String {
        func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
        var lines = ["scenario: \(scenario.name) (\(scenario.path)) in the \(mode == .twin ? "twin" : "processes")"]
        let zoneWidth = max(4, nights.map(\.tapTimeZone.count).max() ?? 0)
        lines.append(
            "  local date  tap    \(pad("zone", zoneWidth))  outcome         nights left  background runs  staleness")
        for night in nights {
            lines.append(
                "  \(night.localDate)  \(night.tapTime)  \(pad(night.tapTimeZone, zoneWidth))  "
                    + "\(pad(night.outcome.rawValue, 14))  "
                    + "\(pad(String(night.nightsLeft), 11))  \(pad(String(night.backgroundRuns), 15))  \(night.stalenessText)"
            )
        }
        for check in checks {
            lines.append("  \(check.passed ? "PASS" : "FAIL") \(check.asked): observed \(check.observed)")
        }
        if let startUp {
            func hours(_ date: Date) -> String {
                String(format: "+%.1f h", date.timeIntervalSince(scenario.start) / 3_600)
            }
            lines.append(
                "  start-up (virtual, after start): phone \(hours(startUp.phone)), watch \(hours(startUp.watch)), "
                    + "link up \(startUp.linkUp.map(hours) ?? "never")")
        }
        if let comparison { lines.append("  \(comparison.equal ? "PASS" : "FAIL") \(comparison.description)") }
        for rerun in slowerReruns {
            lines.append("  earlier run at \(Self.speedText(rerun.speed))x not judged: \(rerun.reason)")
        }
        if let behind, behind.count > 0 {
            lines.append(
                "  the phone fell behind virtual time: \(behind.count) launches handled more than 10 min late, "
                    + "at most \(String(format: "%.1f", behind.maxLateSeconds / 3_600)) h (clock.behind)")
        }
        lines.append("  tz database: phone \(tzdata.phone ?? "?"), watch \(tzdata.watch ?? "?")")
        lines.append(
            "  \(passed ? "PASS" : "FAIL"): \(checks.filter(\.passed).count) of \(checks.count) expectations hold"
                + (comparison.map { $0.equal ? "; the twin agrees" : "; the twin disagrees" } ?? ""))
        return lines.joined(separator: "\n")
    }

    /// The same as `report`, as a JSON-ready object: `file`, `name`, `mode`, `speed`, `pass`,
    /// `nights`, `expectations`, `tzdata` (`{"phone", "watch"}`: the versions of their tz
    /// databases, null when not known) and, for processes, `comparison`.
    package var summary: [String: Any] {
        var object: [String: Any] = [
            "file": scenario.path, "name": scenario.name, "mode": mode.rawValue, "speed": speed, "pass": passed,
            "nights": nights.map(\.summary),
            "expectations": checks.map {
                ["expectation": $0.asked, "pass": $0.passed, "observed": $0.observed] as [String: Any]
            },
        ]
        if let comparison { object["comparison"] = comparison.summary }
        if let behind { object["behind"] = ["count": behind.count, "maxLateSeconds": behind.maxLateSeconds] }
        if !slowerReruns.isEmpty {
            object["slowerReruns"] = slowerReruns.map { ["speed": $0.speed, "reason": $0.reason] as [String: Any] }
        }
        object["tzdata"] = [
            "phone": tzdata.phone.map { $0 as Any } ?? NSNull(), "watch": tzdata.watch.map { $0 as Any } ?? NSNull(),
        ]
        if let startUp {
            object["startUp"] = [
                "phoneStarted": ISO8601.string(startUp.phone), "watchStarted": ISO8601.string(startUp.watch),
                "linkUp": startUp.linkUp.map { ISO8601.string($0) as Any } ?? NSNull(),
            ]
        }
        return object
    }
}

extension ScenarioNight {
    /// The night as a JSON-ready object (`stalenessHours` null for never).
    package var summary: [String: Any] {
        [
            // Named as the watch's events name them (`bed.wake_time`, `fallback.manual_entry`).
            "tapLocalDate": localDate, "tapLocalTime": tapTime, "tapTimeZone": tapTimeZone,
            "outcome": outcome.rawValue, "nightsLeft": nightsLeft,
            "backgroundRuns": backgroundRuns,
            "stalenessHours": stalenessHours.map { ($0 * 10).rounded() / 10 as Any } ?? NSNull(),
        ]
    }
}

extension ScenarioRun {
    /// How many times a failed processes run is run again, each at half the speed, when its
    /// phone fell behind virtual time (`slowerSpeed(after:attempt:)`).
    package static let slowerRerunLimit = 2

    /// The speed to run a processes run again at, and why, or nil when its verdict stands.
    ///
    /// A run whose phone fell behind virtual time (`clock.behind`: OS launches handled more than
    /// 600 virtual seconds after their planned instant, docs/protocol.md) tested the machine's
    /// load as much as the code: at 172,800x a wall stall of 4 ms is 10 virtual minutes. Such a
    /// run that failed is not judged; it is run again at half the speed, at most
    /// `slowerRerunLimit` times. A run that passed, or that failed without falling behind, stands.
    /// - Parameters:
    ///   - passed: whether the run held (every expectation, and the twin agreed).
    ///   - behind: its phone's `clock.behind` totals (nil or a zero count: never behind).
    ///   - speed: the speed it ran at (virtual seconds per wall second).
    ///   - attempt: how many slower runs came before it (0 for the first run).
    package static func slowerSpeed(passed: Bool, behind: ProcessBehind?, speed: Double, attempt: Int) -> (
        speed: Double, reason: String
    )? {
        guard !passed, let behind, behind.count > 0, attempt < slowerRerunLimit, speed >= 2 else { return nil }
        let hours = String(format: "%.1f", behind.maxLateSeconds / 3_600)
        return (
            speed / 2,
            "it failed while the phone fell behind virtual time (\(behind.count) launches handled more than "
                + "10 min late, at most \(hours) h): run again at \(speedText(speed / 2))x"
        )
    }

    /// A speed as people write it: `172800`, `86400`, `1.5`.
    static func speedText(_ speed: Double) -> String {
        speed == speed.rounded() && abs(speed) < 1e15 ? String(Int64(speed)) : String(speed)
    }
}

/// How far behind virtual time a process fell in a run: its last `clock.behind`.
package struct ProcessBehind: Equatable, Sendable {
    /// Launches handled more than the threshold after their planned instant.
    package var count: Int
    /// The largest such lateness, virtual seconds.
    package var maxLateSeconds: Double

    /// Counts `count` and `maxLateSeconds` (virtual seconds).
    package init(count: Int = 0, maxLateSeconds: Double = 0) {
        self.count = count
        self.maxLateSeconds = maxLateSeconds
    }

    /// The totals of the last `clock.behind` among `events` (each carries the totals so far).
    package init(events: [Event]) {
        self.init()
        for event in events where event.name == .clockBehind {
            if case .int(let count)? = event["count"] { self.count = max(self.count, Int(count)) }
            switch event["maxLateSeconds"] {
            case .double(let value)?: maxLateSeconds = max(maxLateSeconds, value)
            case .int(let value)?: maxLateSeconds = max(maxLateSeconds, Double(value))
            default: break
            }
        }
    }
}

// SPDX-License-Identifier: Apache-2.0

package import Foundation
package import SleepTapCore
package import SleepTapEmbedded
import SleepTapOS
import SleepTapRuntime

#if canImport(Glibc)
    import Glibc
#endif

/// A scenario file that cannot be used: the file, the field (a JSON path such as
/// `steps[2].at`), the value found and what is wrong. Exit 65.
package struct ScenarioError: Error, Equatable, Sendable, CustomStringConvertible {
    package var file: String
    package var field: String
    package var value: String
    package var reason: String

    package init(file: String, field: String, value: String, reason: String) {
        self.file = file
        self.field = field
        self.value = value
        self.reason = reason
    }

    package var description: String {
        var text = file
        if !field.isEmpty { text += ": \(field)" }
        if !value.isEmpty { text += " \(value)" }
        return text + ": " + reason
    }
}

/// One expectation on the run's event log: the events named `event` (from `source`, at instants
/// in the half-open window `from..<to`), checked by `first`, `count`, `min` and `max`. Without
/// any of those four, at least one match is expected (`min` 1).
package struct ScenarioExpectation: Sendable {
    package var event: EventName
    package var source: EventSource?
    package var from: Date?
    package var to: Date?
    package var first: Date?
    package var count: Int?
    package var min: Int?
    package var max: Int?
    /// Field values every match must have, as JSON text (`"manual"`, `7`, `true`).
    package var fields: [(key: String, json: String)]
}

/// A step of a scenario: at `at`, a stdin line for the phone or the watch, the link, or a start,
/// restart or kill of one of the two processes.
package struct ScenarioStep: Sendable {
    package var at: Date
    package var step: TwinStep
    /// The step as written (`phone: open`).
    package var text: String
}

/// A scenario file (docs/scenarios.md): a timeline for a phone and a watch, and what must happen.
package struct ScenarioFile: Sendable {
    /// The only schema version this build reads.
    package static let schemaVersion = 1
    /// Largest scenario file read, in bytes (1 MiB).
    package static let maxBytes = 1 << 20
    /// The longest span from `start` to `end`, in calendar years (10 years: 3,652 or 3,653 nights).
    package static let maxYears = 10
    /// The latest `end`, 2199-12-29T23:59:59Z: two virtual days before the virtual clock's last
    /// moment (`ClockOptions.lastMoment`, 2199-12-31T23:59:59.999Z), where the processes stop,
    /// to the whole second. The
    /// runner says `quit` at the wall instant of `end`, and at the default speed a wall second
    /// late is two virtual days, so an end nearer the limit let the processes reach it first.
    package static let latestEnd = Date(
        timeIntervalSince1970: ClockOptions.lastMoment.addingTimeInterval(-2 * 86_400).timeIntervalSince1970.rounded(
            .down))
    /// The Gregorian calendar in UTC (the span's years are counted in it).
    static let utc = WakeCalendar.calendar(in: TimeZone(identifier: "UTC") ?? .gmt)

    package var path: String
    package var name: String
    package var start: Date
    package var end: Date
    /// The zone both devices' systems are set to (the processes' TZ).
    package var timeZone: TimeZone
    package var schedule: WakeSchedule
    /// The schedule file, resolved against the scenario file's directory, when one is named.
    package var schedulePath: String?
    /// The inline schedule as a schedule file's JSON (what a process run gives the phone as its
    /// `--schedule` file); nil with `schedulePath`.
    package var scheduleData: Data?
    package var phone: [String]
    package var watch: [String]
    package var steps: [ScenarioStep]
    package var expectations: [ScenarioExpectation]

    static let keys = [
        "schemaVersion", "name", "start", "end", "timeZone", "schedule", "scheduleFile", "phone", "watch", "steps",
        "expect",
    ]
    static let stepKeys = ["at", "phone", "watch", "link", "start", "restart", "kill", "fresh"]
    /// The step kinds that start, restart or kill a process (their value names it: `phone` or
    /// `watch`).
    static let lifecycleKinds = ["start", "restart", "kill"]
    static let expectKeys = ["event", "source", "from", "to", "first", "count", "min", "max", "fields"]
    /// Flags the scenario itself sets: the runner gives them from `start`, `schedule` and its own
    /// transport, so a scenario's flag arrays must leave them out.
    /// The pairing flags (`watch --id`, `phone --watch-id`): the twin links its one phone and
    /// one watch whatever ids they give, so a scenario may not set them (they would part the
    /// twin from the processes).
    static let pairingFlags = ["--id", "--watch-id"]
    static let reservedFlags = [
        "--clock-start", "--clock-speed", "--clock-anchor", "--schedule", "--endpoint", "--state-dir", "--keys",
        "--metrics-dir",
    ]

    /// Reads and validates the scenario file at `path`.
    /// - Throws: `ScenarioError` naming the file, the field and the value.
    package static func load(_ path: String) throws(ScenarioError) -> ScenarioFile {
        let data: Data
        do {
            data = try BoundedFile.read(path, limit: maxBytes)
        } catch {
            throw ScenarioError(file: path, field: "", value: "", reason: error.description)
        }
        return try decode(data, path: path)
    }

    /// Decodes and validates a scenario file's bytes; `path` names it in errors and anchors a
    /// relative `scheduleFile`.
    /// - Throws: `ScenarioError` naming the file, the field and the value.
    package static func decode(_ data: Data, path: String) throws(ScenarioError) -> ScenarioFile {
        func fail(_ field: String, _ value: Any?, _ reason: String) -> ScenarioError {
            ScenarioError(file: path, field: field, value: value.map(render) ?? "", reason: reason)
        }
        guard data.count <= maxBytes else {
            throw fail("", nil, "\(data.count) bytes; a scenario file is at most \(maxBytes) bytes")
        }
        let object: [String: Any]
        do {
            object = try JSONDiagnosis.object(from: data)
        } catch {
            throw fail("", nil, error.description)
        }
        try checkKeys(object, keys, at: "", fail)
        guard let version = object["schemaVersion"] else {
            throw fail("schemaVersion", "(missing)", "required; use \(schemaVersion)")
        }
        guard let number = version as? NSNumber, !isBool(number), JSONNumber(number).isInteger else {
            throw fail(
                "schemaVersion", version,
                "must be the whole number \(schemaVersion), written without a fraction or quotes")
        }
        guard number.doubleValue == Double(schemaVersion) else {
            throw fail("schemaVersion", version, "unsupported; this build reads schemaVersion \(schemaVersion)")
        }
        guard let name = object["name"] as? String, !name.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw fail("name", object["name"] ?? "(missing)", "required: a string with a character other than a space")
        }
        // The name is printed on the terminal (the runner's table, the chart's title): no control
        // or format character (an escape sequence, a newline, U+202E) may reach it.
        if let scalar = name.unicodeScalars.first(where: {
            $0.properties.generalCategory == .control || $0.properties.generalCategory == .format
        }) {
            throw fail(
                "name", name,
                "holds U+\(String(format: "%04X", scalar.value)), a control or format character: a name is printed "
                    + "on the terminal")
        }
        let start = try instant(object["start"], "start", fail)
        let end = try instant(object["end"], "end", fail)
        guard start < end else { throw fail("end", object["end"], "must be after start \(ISO8601.string(start))") }
        // The processes' virtual clock starts from 1970 to 2199 (`--clock-start`), and a run's
        // memory and time grow with its nights: a scenario spans at most `maxYears` years.
        guard start >= ClockOptions.earliest, start <= ClockOptions.latest else {
            throw fail("start", object["start"], "must be from 1970-01-01 to 2199-12-31 (the virtual clock's range)")
        }
        guard end <= Self.latestEnd else {
            throw fail(
                "end", object["end"],
                "must be at most \(ISO8601.string(Self.latestEnd)), two virtual days before the virtual clock's end "
                    + "(2199-12-31T23:59:59Z), where the processes stop")
        }
        guard let latestEnd = utc.date(byAdding: .year, value: maxYears, to: start), end <= latestEnd
        else {
            throw fail(
                "end", object["end"],
                "more than \(maxYears) years after start \(ISO8601.string(start)); a scenario spans at most \(maxYears) years"
            )
        }
        guard let zoneName = object["timeZone"] as? String, let timeZone = WakeCalendar.zone(named: zoneName) else {
            throw fail(
                "timeZone", object["timeZone"] ?? "(missing)",
                "required: an IANA time zone identifier (e.g. Asia/Tokyo)")
        }
        var schedulePath: String?
        var scheduleData: Data?
        let schedule: WakeSchedule
        switch (object["schedule"], object["scheduleFile"]) {
        case (let inline?, nil):
            guard let inlineObject = inline as? [String: Any],
                let bytes = try? JSONSerialization.data(withJSONObject: inlineObject)
            else {
                throw fail("schedule", inline, "expected an object in the schedule file's format")
            }
            scheduleData = bytes
            do {
                // The object as read (its numbers as written), not the bytes made of it again,
                // in which 1.0 would read as 1: the schedule file's rules, to the letter.
                schedule = try ScheduleFile.decode(object: inlineObject)
            } catch {
                throw ScenarioError(
                    file: path, field: "schedule" + (error.field.isEmpty ? "" : ".\(error.field)"), value: error.value,
                    reason: error.reason)
            }
        case (nil, let file?):
            guard let relative = file as? String, !relative.isEmpty else {
                throw fail("scheduleFile", file, "expected a path relative to the scenario file")
            }
            let base = URL(fileURLWithPath: path).deletingLastPathComponent()
            let resolved =
                relative.hasPrefix("/") ? relative : base.appendingPathComponent(relative).standardizedFileURL.path
            let bytes: Data
            do {
                bytes = try BoundedFile.read(resolved, limit: ScheduleFile.maxBytes)
            } catch {
                throw fail("scheduleFile", relative, "\(resolved): \(error.description)")
            }
            do {
                schedule = try ScheduleFile.decode(bytes)
            } catch {
                throw fail("scheduleFile", relative, "\(resolved): \(error.description)")
            }
            schedulePath = resolved
        case (nil, nil):
            throw fail("schedule", "(missing)", "give schedule (inline) or scheduleFile")
        case (_?, _?):
            throw fail("scheduleFile", object["scheduleFile"], "give schedule or scheduleFile, not both")
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        let phone = resolvingPaths(try flags(object["phone"], "phone", fail), against: directory)
        let watch = resolvingPaths(try flags(object["watch"], "watch", fail), against: directory)
        let platform = try platform(of: phone, fail)
        let steps = try decodeSteps(object["steps"], start: start, end: end, platform: platform, fail)
        let expectations = try decodeExpectations(object["expect"], start: start, end: end, fail)
        let file = ScenarioFile(
            path: path, name: name, start: start, end: end, timeZone: timeZone, schedule: schedule,
            schedulePath: schedulePath, scheduleData: scheduleData, phone: phone, watch: watch, steps: steps,
            expectations: expectations)
        // The executables' own parsers check the flag arrays now, on the command lines a run
        // gives them, so a bad flag is named with its array before anything runs.
        let lines = ScenarioRun.commandLines(
            file, speed: ScenarioRun.defaultSpeed, phoneEndpoint: "ipc:///scenario-check/phone.sock",
            watchEndpoint: "ipc:///scenario-check/phone.sock", directory: "/scenario-check",
            schedulePath: schedulePath)
        let phoneParsed: Bool
        var phoneZones: ZoneDatabase?
        do {
            if case .run(let options) = try CommandLineParser.parsePhone(lines.phone, workingDirectory: "/") {
                phoneZones = options.zoneDatabase
                phoneParsed = true
            } else {
                phoneParsed = false
            }
        } catch {
            throw fail("phone", phone.joined(separator: " "), "refused by phone: \(error.message)")
        }
        guard phoneParsed else {
            throw fail("phone", phone.joined(separator: " "), "-h, --help and --version do not run anything")
        }
        let watchParsed: Bool
        var watchZones: ZoneDatabase?
        do {
            if case .run(let options) = try CommandLineParser.parseWatch(lines.watch, workingDirectory: "/") {
                watchZones = options.zoneDatabase
                watchParsed = true
            } else {
                watchParsed = false
            }
        } catch {
            throw fail("watch", watch.joined(separator: " "), "refused by watch: \(error.message)")
        }
        guard watchParsed else {
            throw fail("watch", watch.joined(separator: " "), "-h, --help and --version do not run anything")
        }
        try requireZone(timeZone, in: phoneZones, field: "phone", flags: phone, fail)
        try requireZone(timeZone, in: watchZones, field: "watch", flags: watch, fail)
        return file
    }

    typealias Fail = (String, Any?, String) -> ScenarioError

    /// The scenario's `timeZone` is the devices' `TZ`: a device's own `--tzdata` must have it, as
    /// the process refuses to start otherwise (and the twin would fall back to Foundation's rules).
    static func requireZone(
        _ zone: TimeZone, in database: ZoneDatabase?, field: String, flags: [String], _ fail: Fail
    ) throws(ScenarioError) {
        guard let database, zone.identifier != "GMT", zone.identifier != "UTC" else { return }
        guard
            let error = ZoneDatabase.$scoped.withValue(
                database, operation: { WakeCalendar.zoneError(named: zone.identifier) })
        else { return }
        throw fail(field, flags.joined(separator: " "), "timeZone \(zone.identifier) (the devices' TZ): \(error)")
    }

    static func checkKeys(_ object: [String: Any], _ known: [String], at prefix: String, _ fail: Fail)
        throws(ScenarioError)
    {
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw fail(
                prefix + clipped(unknown), object[unknown],
                "unknown key (expected \(known.joined(separator: ", ")))")
        }
    }

    static func instant(_ value: Any?, _ field: String, _ fail: Fail) throws(ScenarioError) -> Date {
        guard let text = value as? String, let date = ISO8601.date(text) else {
            throw fail(field, value ?? "(missing)", "expected an ISO 8601 instant such as 2026-07-20T00:00:00Z")
        }
        return date
    }

    static func flags(_ value: Any?, _ field: String, _ fail: Fail) throws(ScenarioError) -> [String] {
        guard let value else { return [] }
        guard let array = value as? [Any] else { throw fail(field, value, "expected an array of strings") }
        var result: [String] = []
        for (index, item) in array.enumerated() {
            guard let text = item as? String else {
                throw fail("\(field)[\(index)]", item, "expected a string (one command-line argument)")
            }
            let flag = String(text.split(separator: "=", maxSplits: 1).first ?? "")
            if reservedFlags.contains(flag) {
                throw fail(
                    "\(field)[\(index)]", text,
                    flag == "--metrics-dir"
                        ? "the twin writes no run records, so a scenario cannot ask for them; use sleeptap-fleet or phone --metrics-dir"
                        : "set by the scenario itself (start, schedule, the runner's transport); leave it out")
            }
            if pairingFlags.contains(flag) {
                throw fail(
                    "\(field)[\(index)]", text,
                    "a scenario pairs its phone and watch by the runner's own ids, in the twin as in the processes: "
                        + "another routing id would pair nothing in the processes and change nothing in the twin; "
                        + "leave it out")
            }
            result.append(text)
        }
        return result
    }

    /// The flags with a relative `--tzdata DIR` or `--os-model FILE` (or `--flag=PATH`) resolved
    /// against the scenario file's directory, as `scheduleFile` is: a scenario names its
    /// databases and models beside it.
    static func resolvingPaths(_ flags: [String], against directory: URL) -> [String] {
        func resolved(_ path: String) -> String {
            path.isEmpty || path.hasPrefix("/") ? path : directory.appendingPathComponent(path).standardizedFileURL.path
        }
        var result = flags
        for index in result.indices {
            for flag in ["--tzdata", "--os-model"] {
                if result[index] == flag, index + 1 < result.count {
                    result[index + 1] = resolved(result[index + 1])
                } else if result[index].hasPrefix(flag + "=") {
                    result[index] = flag + "=" + resolved(String(result[index].dropFirst(flag.count + 1)))
                }
            }
        }
        return result
    }

    /// The phone's `--platform` (iOS without one, as a new device of the `phone` executable): a
    /// phone step is checked against the commands of that platform, as the process checks it.
    static func platform(of flags: [String], _ fail: Fail) throws(ScenarioError) -> Platform {
        for (index, flag) in flags.enumerated() {
            let text: String?
            if flag == "--platform" {
                text = index + 1 < flags.count ? flags[index + 1] : nil
            } else if flag.hasPrefix("--platform=") {
                text = String(flag.dropFirst("--platform=".count))
            } else {
                continue
            }
            guard let text, let platform = Platform(rawValue: text) else {
                throw fail("phone[\(index)]", flag, "--platform takes ios or android")
            }
            return platform
        }
        return .ios
    }

    static func decodeSteps(_ value: Any?, start: Date, end: Date, platform: Platform, _ fail: Fail)
        throws(ScenarioError) -> [ScenarioStep]
    {
        guard let value else { return [] }
        guard let array = value as? [Any] else { throw fail("steps", value, "expected an array of steps") }
        var steps: [ScenarioStep] = []
        // Which processes run, followed through the steps (both start at `start`), and the step
        // that stopped each one: a step for a stopped process would do nothing.
        var stoppedBy: [String: String] = [:]
        for (index, item) in array.enumerated() {
            let field = "steps[\(index)]"
            guard let object = item as? [String: Any] else { throw fail(field, item, "expected an object") }
            try checkKeys(object, stepKeys, at: field + ".", fail)
            let at = try instant(object["at"], field + ".at", fail)
            guard at >= start, at < end else {
                throw fail(
                    field + ".at", object["at"],
                    "outside the scenario (start \(ISO8601.string(start)) inclusive, end \(ISO8601.string(end)) exclusive)"
                )
            }
            if let previous = steps.last, at < previous.at {
                throw fail(field + ".at", object["at"], "before the previous step's \(ISO8601.string(previous.at))")
            }
            let actions = (["phone", "watch", "link"] + lifecycleKinds).filter { object[$0] != nil }
            guard actions.count == 1, let kind = actions.first else {
                throw fail(field, item, "give exactly one of phone, watch, link, start, restart or kill")
            }
            guard let text = object[kind] as? String else {
                throw fail("\(field).\(kind)", object[kind], "expected a string")
            }
            var fresh = false
            if let raw = object["fresh"] {
                guard kind == "start" || kind == "restart" else {
                    throw fail(field + ".fresh", raw, "only a start or restart step takes fresh")
                }
                guard let number = raw as? NSNumber, isBool(number) else {
                    throw fail(field + ".fresh", raw, "expected true (start without the state file) or false")
                }
                fresh = number.boolValue
            }
            // The process the step is for, and whether it must run (every step but start) or
            // be stopped (start).
            let process = lifecycleKinds.contains(kind) ? text : kind
            if lifecycleKinds.contains(kind), process != "phone", process != "watch" {
                throw fail("\(field).\(kind)", text, "expected phone or watch")
            }
            if process != "link" {
                if kind == "start", stoppedBy[process] == nil {
                    throw fail(
                        "\(field).start", text,
                        "the \(process) is running; start is for a \(process) that a quit or kill step stopped (restart stops and starts it)"
                    )
                }
                if kind != "start", let stop = stoppedBy[process] {
                    throw fail(
                        "\(field).\(kind)", text,
                        "the \(process) is not running (\(stop) stopped it); add a start step for the \(process) before this one"
                    )
                }
            }
            let step: TwinStep
            switch kind {
            case "start":
                step = process == "phone" ? .startPhone(keepState: !fresh) : .startWatch(keepState: !fresh)
                stoppedBy[process] = nil
            case "restart":
                step = process == "phone" ? .restartPhone(keepState: !fresh) : .restartWatch(keepState: !fresh)
            case "kill":
                step = process == "phone" ? .killPhone : .killWatch
                stoppedBy[process] = "\(field) (kill: \(process))"
            case "phone":
                let command: PhoneCommand?
                do {
                    command = try PhoneCommand.parse(text, platform: platform)
                } catch {
                    throw fail("\(field).phone", text, error.reason)
                }
                guard let command else { throw fail("\(field).phone", text, "an empty line does nothing") }
                if case .quit = command { stoppedBy["phone"] = "\(field) (phone: \(text))" }
                step = .phone(text)
            case "watch":
                switch WatchCommand(parsing: text) {
                case .empty: throw fail("\(field).watch", text, "an empty line does nothing")
                case .invalid(_, let reason): throw fail("\(field).watch", text, reason)
                case .unrecognized: throw fail("\(field).watch", text, WatchCommand.unknownCommandReason)
                case .quit:
                    stoppedBy["watch"] = "\(field) (watch: \(text))"
                    step = .watch(text)
                default: step = .watch(text)
                }
            default:
                guard text == "up" || text == "down" else { throw fail("\(field).link", text, "expected up or down") }
                step = .link(up: text == "up")
            }
            steps.append(ScenarioStep(at: at, step: step, text: "\(kind): \(text)" + (fresh ? ", fresh" : "")))
        }
        return steps
    }

    static func decodeExpectations(
        _ value: Any?, start: Date, end: Date, _ fail: Fail
    ) throws(ScenarioError) -> [ScenarioExpectation] {
        guard let value else { return [] }
        guard let array = value as? [Any] else { throw fail("expect", value, "expected an array of expectations") }
        var result: [ScenarioExpectation] = []
        for (index, item) in array.enumerated() {
            let field = "expect[\(index)]"
            guard let object = item as? [String: Any] else { throw fail(field, item, "expected an object") }
            try checkKeys(object, expectKeys, at: field + ".", fail)
            guard let name = object["event"] as? String, let event = EventName(rawValue: name) else {
                throw fail(field + ".event", object["event"] ?? "(missing)", "required: an event name of the catalogue")
            }
            var source: EventSource?
            if let text = object["source"] {
                guard let name = text as? String, let value = EventSource(rawValue: name) else {
                    throw fail(field + ".source", text, "expected phone, watch or os")
                }
                // A source the event never comes from matches nothing: `count: 0` would pass vacuously.
                if let sources = EventFieldCatalog.sources[event], !sources.contains(value) {
                    let from = sources.map(\.rawValue).sorted().joined(separator: " or ")
                    throw fail(field + ".source", text, "\(event.rawValue) comes from \(from) only")
                }
                source = value
            }
            func optionalInstant(_ key: String) throws(ScenarioError) -> Date? {
                guard let raw = object[key] else { return nil }
                return try instant(raw, "\(field).\(key)", fail)
            }
            func optionalCount(_ key: String) throws(ScenarioError) -> Int? {
                guard let raw = object[key] else { return nil }
                guard let number = raw as? NSNumber, !isBool(number), let count = Int(exactly: number.doubleValue),
                    count >= 0
                else { throw fail("\(field).\(key)", raw, "expected a whole number, 0 or more") }
                guard JSONNumber(number).isInteger else {
                    throw fail(
                        "\(field).\(key)", raw, "a whole number written without a fraction or exponent, e.g. \(count)")
                }
                // A count is exact in every JSON reader up to 2^53 − 1 (RFC 7493 §2.2); above it
                // 9007199254740993 reads as 2^53, a count the file did not give.
                guard count <= 9_007_199_254_740_991 else {
                    throw fail("\(field).\(key)", raw, "expected a whole number from 0 to 2^53 - 1")
                }
                return count
            }
            let from = try optionalInstant("from")
            let to = try optionalInstant("to")
            // The run matches a window to the whole second (`ScenarioRun.second`), so it is
            // checked so here: a window inside one second holds no second.
            let second = ScenarioRun.second
            if let from, let to, second(from) >= second(to) {
                throw fail(
                    field + ".to", object["to"],
                    "must be after from \(ISO8601.string(from)), by a whole second (windows are matched to the second)")
            }
            // A window with no instant of the run matches nothing.
            if let from, from >= end {
                throw fail(field + ".from", object["from"], "at or after the scenario's end \(ISO8601.string(end))")
            }
            if let to, second(to) <= second(start) {
                throw fail(
                    field + ".to", object["to"],
                    "at or before the scenario's start \(ISO8601.string(start)) (windows are matched to the second)")
            }
            let count = try optionalCount("count")
            let min = try optionalCount("min")
            let max = try optionalCount("max")
            if count != nil, min != nil || max != nil {
                throw fail(field + ".count", object["count"], "give count, or min and max, not both")
            }
            if let min, let max, min > max {
                throw fail(field + ".max", object["max"], "less than min \(min)")
            }
            var fields: [(key: String, json: String)] = []
            if let raw = object["fields"] {
                guard let values = raw as? [String: Any] else {
                    throw fail(field + ".fields", raw, "expected an object of field values")
                }
                for key in values.keys.sorted() {
                    guard let value = values[key], !(value is [Any]), !(value is [String: Any]) else {
                        throw fail("\(field).fields.\(key)", values[key], "expected a string, number, boolean or null")
                    }
                    // Checked against the event catalogue now: a wrong type or a field the event
                    // never has would otherwise match nothing, and `count: 0` would pass vacuously.
                    if let problem = EventFieldCatalog.problem(event: event, key: key, value: value) {
                        throw fail("\(field).fields.\(key)", value, problem)
                    }
                    fields.append((key, render(value)))
                }
            }
            // The first match lies in the run and in the window: a `first` outside both can only fail.
            let first = try optionalInstant("first")
            if let first,
                second(first) < second(from ?? start) || (to.map { second(first) >= second($0) } ?? (first >= end))
            {
                throw fail(
                    field + ".first", object["first"],
                    "outside the window it is looked for in (\(ISO8601.string(from ?? start)) to "
                        + "\(ISO8601.string(to ?? end)), the scenario's start and end where from and to are not given)")
            }
            result.append(
                ScenarioExpectation(
                    event: event, source: source, from: from, to: to, first: first, count: count, min: min, max: max,
                    fields: fields))
        }
        return result
    }

    /// JSON booleans arrive as NSNumber; tells them from numbers.
    static func isBool(_ number: NSNumber) -> Bool {
        JSONNumber(number).isBool
    }

    /// A JSON value as JSON text, at most 120 characters, for messages and field matching.
    static func render(_ value: Any) -> String {
        if let text = value as? String, text == "(missing)" { return text }
        if value is NSNull { return "null" }
        if let number = value as? NSNumber, isBool(number) { return number.boolValue ? "true" : "false" }
        if let number = value as? NSNumber {
            // A whole number as given, also above 2^53 where its Double would differ.
            switch JSONNumber(number) {
            case .integer(let whole): return String(whole)
            case .unsignedInteger(let whole): return String(whole)
            case .bool, .fraction: break
            }
            let double = number.doubleValue
            if let whole = Int64(exactly: double) { return String(whole) }
            return String(double)
        }
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes]),
            let text = String(data: data, encoding: .utf8)
        else { return "(unprintable)" }
        // JSON escapes only U+0000 to U+001F: DEL, the C1 controls and the format characters
        // (U+202E) are escaped too, as the events write them, so a value echoed on stderr cannot
        // move the cursor or reverse the line.
        let escaped = Event.escapingAbove(text)
        return clipped(escaped)
    }
}

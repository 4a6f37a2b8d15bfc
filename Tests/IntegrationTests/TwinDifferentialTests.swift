// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapEmbedded
import SleepTapOS
import SleepTapProcess
import SleepTapRuntime
import SleepTapScenario
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One scenario run both ways: the real `phone` and `watch` over ipc on a shared accelerated
/// virtual clock, and the embedded twin built from the same command lines (`TwinBuilder`).
///
/// What the processes are given from outside (their starts, stdin lines, a phone's exit) and
/// when the transport brings the link up (libzmq connects and reconnects on its own wall-clock
/// intervals) happens at wall instants, so at virtual instants known only once they happened:
/// each is read back from the event it causes (`phone.started`, `watch.started`,
/// `handler.registered`, `os.low_power`, `phone.stopping`, the watch's `link.up`) and given to
/// the twin at that instant. Everything else (the OS's launches, the jobs, the batches, the
/// nightly taps) both sides decide alone.
struct TwinScenario: CustomStringConvertible, Sendable {
    enum Step: String, Sendable {
        /// The user opens the app (stdin `open`).
        case open
        /// Low Power Mode (Battery Saver) goes on and stays on (stdin `low-power on`).
        case lowPower = "low-power on"
        /// The phone process quits and starts again on the same state dir.
        case restartPhone = "restart"
        /// Android: the screen goes off (unplugged and still, the phone heads into Doze).
        case screenOff = "screen off"
        /// Android: the screen goes on (Doze ends).
        case screenOn = "screen on"
    }

    /// Virtual seconds per wall second: 32 virtual hours, so 10 nights take about 8 wall seconds
    /// (`DifferentialRun.judged` runs a differing scenario again at half of it).
    var speed: Double = 115_200
    static let day: TimeInterval = 86_400
    /// Zones and (for those with daylight saving time) their 2026 clock changes, from the IANA tz
    /// database: the scenario's days cross one.
    static let zones: [(zone: String, changes: [String])] = [
        ("America/New_York", ["2026-03-08", "2026-11-01"]), ("Europe/Berlin", ["2026-03-29", "2026-10-25"]),
        ("Australia/Sydney", ["2026-04-05", "2026-10-04"]), ("Pacific/Auckland", ["2026-04-05", "2026-09-27"]),
        ("America/Los_Angeles", ["2026-03-08", "2026-11-01"]), ("Asia/Tokyo", []), ("Asia/Kolkata", []),
    ]

    var seed: UInt64 = 0
    var zone = "Europe/Berlin"
    /// `--clock-start`: 11:00 local on the first day, after every wake-up of that day.
    var start = Date(timeIntervalSince1970: 0)
    var nights = 10
    /// The phone learns its zone from the schedule file instead of `--time-zone`.
    var zoneInScheduleFile = false
    /// The watch gets `--time-zone` (else it lives in the batch's zone).
    var watchZoneFlag = true
    var platform = "ios"
    var registration: RegistrationMode = .early
    /// Android's App Standby bucket (`--bucket`), nil on iOS.
    var bucket: String?
    var osSeed: UInt64 = 1
    var deviceSeed: UInt64 = 1
    /// `--horizon-days`: a short batch makes the nights depend on every background run.
    var horizonDays = 7
    /// Wake-up per weekday, Sunday first; nil = off.
    var wake: [LocalTime?] = Array(repeating: LocalTime(hour: 7, minute: 0), count: 7)
    /// `watch --request-dates`: the watch asks for dates with a REQUEST while they run low.
    var requestDates = false
    var bedAt = LocalTime(hour: 22, minute: 30)!
    var manualWake = LocalTime(hour: 7, minute: 0)!
    /// Steps at virtual instants, in order.
    var steps: [(at: Date, step: Step)] = []
    /// More phone flags (e.g. `--android-api 34 --interval 900`), given to both sides.
    var extraPhone: [String] = []

    var end: Date { start.addingTimeInterval(Double(nights) * Self.day) }
    /// When the watch is spawned: 14 virtual hours after the phone, past the first evening's bed
    /// time, so the link is up and the first batch across (the writes take milliseconds of wall
    /// time, hours of virtual time) long before the first tap.
    var watchSpawn: Date { start.addingTimeInterval(14 * 3_600) }
    var calendar: Calendar { WakeCalendar.calendar(in: TimeZone(identifier: zone) ?? .gmt) }

    init() {}

    /// A scenario drawn from `seed` (SplitMix64).
    init(seed: UInt64) {
        self.seed = seed
        var random = SplitMix64(state: seed)
        func pick(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
        let (zone, changes) = Self.zones[pick(Self.zones.count)]
        self.zone = zone
        let calendar = self.calendar
        let firstDay: Date
        if changes.isEmpty {
            firstDay = calendar.date(
                byAdding: .day, value: pick(330), to: calendar.date(from: DateComponents(year: 2026, month: 1, day: 5))!
            )!
        } else {
            // Two to six days before the change, so it falls inside the run.
            let change = changes[pick(changes.count)].split(separator: "-").compactMap { Int($0) }
            let changeDay = calendar.date(from: DateComponents(year: change[0], month: change[1], day: change[2]))!
            firstDay = calendar.date(byAdding: .day, value: -(2 + pick(5)), to: changeDay)!
        }
        start = calendar.date(bySettingHour: 11, minute: 0, second: 0, of: firstDay)!
        zoneInScheduleFile = pick(3) == 0
        watchZoneFlag = pick(4) != 0
        if pick(3) == 0 {
            platform = "android"
            bucket = ["active", "working_set", "frequent", "rare"][pick(4)]
        } else {
            registration = pick(3) == 0 ? .lateSilent : .early
        }
        osSeed = random.next() % 1_000 + 1
        deviceSeed = random.next() % 1_000
        horizonDays = 3 + pick(5)
        wake = (0..<7).map { _ in pick(7) == 0 ? nil : LocalTime(hour: 5 + pick(5), minute: 15 * pick(4)) }
        bedAt = LocalTime(hour: 21 + pick(3), minute: 15 * pick(4))!
        manualWake = LocalTime(hour: 6 + pick(3), minute: 5 * pick(12))!
        var days = Set<Int>()
        for _ in 0..<pick(3) { days.insert(1 + pick(nights - 2)) }
        let kinds: [Step] = [.open, .lowPower, .restartPhone]
        steps = days.sorted().map { day in
            let dayStart = calendar.date(byAdding: .day, value: day, to: firstDay)!
            let at = calendar.date(bySettingHour: 12 + pick(4), minute: pick(60), second: 0, of: dayStart)!
            return (at, kinds[pick(kinds.count)])
        }
    }

    var description: String {
        let names = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
        let week = zip(names, wake).map { "\($0)=\($1.map(\.description) ?? "off")" }.joined(separator: " ")
        let os = platform == "android" ? "android bucket \(bucket ?? "-")" : "ios \(registration.rawValue)"
        let steps = self.steps.map { "\($0.step.rawValue)@\(ISO8601.string($0.at))" }.joined(separator: ", ")
        return "seed \(seed): \(zone) (phone's via \(zoneInScheduleFile ? "schedule file" : "--time-zone"), "
            + "watch's via \(watchZoneFlag ? "--time-zone" : "the batch")), start \(ISO8601.string(start)), "
            + "\(nights) nights, \(os), --os-seed \(osSeed), --device-seed \(deviceSeed), --horizon-days \(horizonDays), wake \(week), "
            + "bed \(bedAt), manual wake \(manualWake)\(requestDates ? ", --request-dates" : ""), steps [\(steps)]"
    }

    /// The schedule file (docs/schedule-format.md).
    func scheduleFile() -> Data {
        let names = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
        let week = zip(names, wake).map { "\"\($0)\": \"\($1.map(\.description) ?? "off")\"" }
        let zoneField = zoneInScheduleFile ? "\"timeZone\": \"\(zone)\", " : ""
        return Data("{\"schemaVersion\": 1, \(zoneField)\"wake\": {\(week.joined(separator: ", "))}}".utf8)
    }

    func clock(anchor: Date) -> [String] {
        [
            "--clock-start", ISO8601.string(start), "--clock-speed", String(Int(speed)), "--clock-anchor",
            String(format: "%.3f", anchor.timeIntervalSince1970),
        ]
    }

    func phoneArguments(dir: String, anchor: Date) -> [String] {
        var arguments = [
            "--endpoint", "ipc://\(dir)/phone.sock", "--state-dir", "\(dir)/phone", "--schedule",
            "\(dir)/schedule.json",
            "--platform", platform, "--os-seed", String(osSeed), "--device-seed", String(deviceSeed),
            "--horizon-days", String(horizonDays),
        ]
        if !zoneInScheduleFile { arguments += ["--time-zone", zone] }
        if let bucket {
            arguments += ["--bucket", bucket]
        } else {
            arguments += ["--registration", registration.rawValue]
        }
        return arguments + extraPhone + clock(anchor: anchor)
    }

    func watchArguments(dir: String, anchor: Date) -> [String] {
        var arguments = [
            "--endpoint", "ipc://\(dir)/phone.sock", "--state-dir", "\(dir)/watch", "--bed-at", bedAt.description,
            "--manual-wake", manualWake.description,
        ]
        if watchZoneFlag { arguments += ["--time-zone", zone] }
        if requestDates { arguments.append("--request-dates") }
        return arguments + clock(anchor: anchor)
    }
}

/// One night's tap and what the watch made of it.
struct NightOutcome: Equatable, CustomStringConvertible {
    var at: Date
    /// `wake <instant>` (the cached wake time given) or `fallback` (manual entry asked for).
    var outcome: String

    /// Equal to the second: the processes print whole seconds.
    func matches(_ other: NightOutcome) -> Bool { abs(at.timeIntervalSince(other.at)) < 1 && outcome == other.outcome }
    var description: String { "\(ISO8601.string(at)) \(outcome)" }
}

/// What the processes did, and the outside inputs at the virtual instants they happened.
struct ObservedRun {
    /// The twin built from the processes' command lines and files, not booted.
    var twin: Twin
    var phoneStarted: Date
    var watchStarted: Date
    var inputs: [(at: Date, step: TwinStep)]
    var phoneEvents: [ChildEvent]
    var watchEvents: [ChildEvent]
    /// `osState` of each `phone.started`.
    var osStates: [String]
    /// The last phone's `phone.stopping` instant (its clean quit at the end).
    var stoppedAt: Date?
    /// What the last phone left in its state dir: os.json, and phone.json with phone-app.json
    /// over it, nil when missing.
    var storedOS: SimulatedOS?
    var storedPhone: PhoneSyncState?

    /// The outside inputs as the twin got them, for failure messages.
    var inputsDescription: String {
        let steps = inputs.map { "\($0.step)@\(ISO8601.string($0.at))" }.joined(separator: ", ")
        return "phone started \(ISO8601.string(phoneStarted)), watch started \(ISO8601.string(watchStarted)), "
            + "inputs [\(steps)]"
    }

    func nights(before end: Date) -> [NightOutcome] {
        watchEvents.compactMap { event in
            guard let at = event.string("time").flatMap(ISO8601.date), at < end else { return nil }
            switch event.name {
            case .bedWakeTime: return NightOutcome(at: at, outcome: "wake \(event.string("wakeTime") ?? "?")")
            case .fallbackManualEntry: return NightOutcome(at: at, outcome: "fallback")
            default: return nil
            }
        }
    }

    /// The instants of the background runs the phone's handler was entered for.
    func launches(before end: Date) -> [Date] {
        phoneEvents.filter { $0.name == .handlerEntered }.compactMap { $0.string("time").flatMap(ISO8601.date) }
            .filter { $0 < end }
    }
}

/// A failure of a scenario's process run (no issue can be recorded off the test's task).
struct RunFailure: Error, CustomStringConvertible {
    let description: String
}

enum DifferentialRun {
    /// The night findings every differential test shares: too few nights ran in the processes,
    /// or their nights differ from the twin's (`difference`).
    static func nightFindings(_ scenario: TwinScenario, _ observed: ObservedRun, _ twin: Twin) -> [String] {
        var found: [String] = []
        let processNights = observed.nights(before: scenario.end)
        if processNights.count < scenario.nights - 2 {
            found.append("\(scenario): only \(processNights.count) nights ran")
        }
        let twinNights = nights(twin, before: scenario.end)
        if let differing = difference(scenario, observed, process: processNights, twin: twinNights) {
            found.append(differing)
        }
        return found
    }

    /// The differences `check` finds between a scenario's processes and its twin, from a run at
    /// the scenario's speed and, when that one differs, from runs at half and then a quarter of it.
    ///
    /// The processes lag virtual time by what the machine's load makes them lag (at 115,200x a
    /// 5 ms stall is 10 virtual minutes: a batch lands after a tap, a launch slips), while the
    /// twin's logic is the same at every speed. A difference that does not come back at a lower
    /// speed was lag; one that comes back at every speed is the twin's or the processes', and
    /// fails the test with every run's findings. (With other builds on the two cores, a run at
    /// half the speed was seen to lag by virtual hours too, hence the third.)
    static func judged(
        _ scenario: TwinScenario, _ check: @escaping @Sendable (TwinScenario, ObservedRun, Twin) -> [String]
    ) async throws -> [String] {
        var slower = scenario
        var earlier: [String] = []
        for attempt in 0..<3 {
            let observed = try await onThread { [slower] in try processes(slower) }
            let found = check(slower, observed, twin(slower, observed))
            if found.isEmpty { return [] }
            earlier.append("(at \(Int(slower.speed))x: " + found.joined(separator: "; ") + ")")
            if attempt == 2 { return found + earlier.dropLast() }
            slower.speed /= 2
        }
        return earlier
    }

    /// At most this many scenarios run their processes at once (each mostly waits in poll).
    private static let slots = DispatchSemaphore(value: 6)

    /// Runs `body` on its own thread (the process run blocks while it waits for events), at most
    /// `slots` at a time, without holding a thread of the test runner's pool.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                slots.wait()
                defer { slots.signal() }
                continuation.resume(with: Result { try body() })
            }
        }
    }

    /// Waits for `name` from `child` after index `from`. - Returns: the event and its virtual instant.
    private static func event(
        _ child: ChildProcess, _ name: EventName, from: Int = 0
    ) throws -> (event: ChildEvent, index: Int, at: Date) {
        guard let found = child.waitFor(name, from: from, timeout: Scenario.deadline),
            let at = found.event.time
        else {
            let seen = child.events.suffix(8).map(\.line).joined(separator: "\n")
            throw RunFailure(
                description: "no \(name) from \(child.name) within \(Scenario.deadline) s; last events:\n\(seen)\n"
                    + "stderr:\n\(child.standardError)")
        }
        return (found.event, found.index, at)
    }

    /// Runs `scenario` with the real processes.
    /// - Throws: `RunFailure` when a process does not do what a step needs.
    static func processes(_ scenario: TwinScenario) throws -> ObservedRun {
        let harness = try Scenario()
        defer { harness.close() }
        try scenario.scheduleFile().write(to: URL(fileURLWithPath: harness.dir + "/schedule.json"))
        // Virtual time starts at --clock-start as the phone is spawned.
        let anchor = Date()
        func wall(_ instant: Date) -> Date {
            anchor.addingTimeInterval(instant.timeIntervalSince(scenario.start) / scenario.speed)
        }
        let phoneArguments = scenario.phoneArguments(dir: harness.dir, anchor: anchor)
        let watchArguments = scenario.watchArguments(dir: harness.dir, anchor: anchor)
        var phones = [try harness.spawn("phone", phoneArguments)]
        let phoneStarted = try event(phones[0], .phoneStarted).at
        Thread.sleep(until: wall(scenario.watchSpawn))
        let watch = try harness.spawn("watch", watchArguments)
        let watchStarted = try event(watch, .watchStarted).at
        var inputs: [(at: Date, step: TwinStep)] = []
        for (at, step) in scenario.steps {
            Thread.sleep(until: wall(at))
            let phone = phones[phones.count - 1]
            let from = phone.events.count
            switch step {
            case .open:
                phone.send(line: "open")
                inputs.append((try event(phone, .handlerRegistered, from: from).at, .phone("open")))
            case .lowPower:
                phone.send(line: "low-power on")
                inputs.append((try event(phone, .osLowPower, from: from).at, .phone("low-power on")))
            case .screenOff, .screenOn:
                phone.send(line: step.rawValue)
                inputs.append((try event(phone, .osDoze, from: from).at, .phone(step.rawValue)))
            case .restartPhone:
                phone.send(line: "quit")
                let stopped = try event(phone, .phoneStopping, from: from).at
                guard phone.waitForExit(timeout: Scenario.deadline), phone.exitStatus == 0 else {
                    throw RunFailure(description: "phone did not exit 0 on quit: \(phone.standardError)")
                }
                let next = try harness.spawn("phone", phoneArguments)
                phones.append(next)
                let started = try event(next, .phoneStarted).at
                // The link drops with the phone and comes back at the watch's next link.up.
                inputs += [
                    (stopped, .link(up: false)), (stopped, .phone("quit")), (started, .startPhone(keepState: true)),
                ]
            }
        }
        Thread.sleep(until: wall(scenario.end).addingTimeInterval(0.2))
        let children = [phones[phones.count - 1], watch]
        for child in children { child.send(line: "quit") }
        for child in children {
            guard child.waitForExit(timeout: Scenario.deadline) else {
                throw RunFailure(description: "\(child.name) did not exit on quit")
            }
            child.waitForOutputEnd(timeout: 5)
        }
        let phoneEvents = phones.flatMap(\.events)
        let stoppedAt = phones[phones.count - 1].events.last { $0.name == .phoneStopping }?.time
        let storedOS = try StateFile<SimulatedOS>(
            path: harness.dir + "/phone/os.json", dateFormat: .secondsSince1970
        ).load()
        var storedPhone = try StateFile<PhoneSyncState>(path: harness.dir + "/phone/phone.json").load()
        if let app = try StateFile<PhoneAppState>(path: harness.dir + "/phone/phone-app.json").load() {
            storedPhone?.app = app
        }
        // The link is down until the transport brings it up, at each of the watch's link.up.
        inputs.append((scenario.start, .link(up: false)))
        for event in watch.events where event.name == .linkUp {
            guard let at = event.string("time").flatMap(ISO8601.date) else { continue }
            inputs.append((at, .link(up: true)))
        }
        // In time order; at the same instant, in the order taken (a stable sort).
        inputs = inputs.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element)
        return ObservedRun(
            twin: try TwinBuilder.make(phone: phoneArguments, watch: watchArguments), phoneStarted: phoneStarted,
            watchStarted: watchStarted, inputs: inputs, phoneEvents: phoneEvents, watchEvents: watch.events,
            osStates: phoneEvents.filter { $0.name == .phoneStarted }.compactMap { $0.string("osState") },
            stoppedAt: stoppedAt, storedOS: storedOS, storedPhone: storedPhone)
    }

    /// The twin built from the run's command lines, given the run's outside inputs at their
    /// instants, run to the scenario's end.
    static func twin(_ scenario: TwinScenario, _ observed: ObservedRun) -> Twin {
        TwinReplay.run(
            observed.twin, start: scenario.start, end: scenario.end, phoneStarted: observed.phoneStarted,
            watchStarted: observed.watchStarted, inputs: observed.inputs)
    }

    /// The differences between what the processes' phone left on disk (os.json, phone.json) at
    /// its quit and what the twin's phone stores, given the same inputs and the same quit: each
    /// as `os.json <path>: processes X; twin Y`. Numbers that are not whole (instants and
    /// durations on the processes' wall-driven clock) match within `tolerance` seconds; the sync
    /// epoch, drawn from each host's own randomness, is not compared.
    static func storedStateFindings(
        _ scenario: TwinScenario, _ observed: ObservedRun, tolerance: Double = 2
    ) -> [String] {
        guard let stoppedAt = observed.stoppedAt, let processOS = observed.storedOS,
            let processPhone = observed.storedPhone
        else { return ["\(scenario): the processes' phone left no state to compare (no clean quit)"] }
        let twin = TwinReplay.run(
            observed.twin, start: scenario.start, end: stoppedAt.addingTimeInterval(1),
            phoneStarted: observed.phoneStarted, watchStarted: observed.watchStarted,
            inputs: observed.inputs + [(stoppedAt, .phone("quit"))])
        guard let twinOS = twin.osStore.held, let twinPhone = twin.phoneStore.held else {
            return ["\(scenario): the twin's phone stored nothing"]
        }
        var found = StoredState.differences(
            "os.json", StoredState.tree(processOS), StoredState.tree(twinOS), tolerance: tolerance)
        found += StoredState.differences(
            "phone.json", StoredState.tree(processPhone), StoredState.tree(twinPhone), tolerance: tolerance,
            ignoring: ["epoch"])
        guard !found.isEmpty else { return [] }
        return [
            "stored state differs, \(scenario)\n" + found.prefix(12).joined(separator: "\n")
                + "\n\(observed.inputsDescription)"
        ]
    }

    /// Deep Doze's maintenance windows of a night on AOSP `DeviceIdleController`'s default
    /// timings (`DozeSettings()`): idle from `screenOff` + inactive + sensing, then idle periods
    /// growing by the idle factor and windows by the maintenance factor, up to `until`.
    static func maintenanceWindows(screenOff: Date, until: Date) -> (idleFrom: Date, windows: [Range<Date>]) {
        let settings = DozeSettings()
        let idleFrom = screenOff.addingTimeInterval(settings.inactiveTimeout + settings.sensingTimeout)
        var windows: [Range<Date>] = []
        var t = idleFrom
        var idle = settings.idleTimeout
        var window = settings.minMaintenance
        while t < until {
            t = t.addingTimeInterval(idle)
            windows.append(t..<t.addingTimeInterval(window))
            t = t.addingTimeInterval(window)
            idle = min(idle * settings.idleFactor, settings.maxIdleTimeout)
            window = min(window * settings.maintenanceFactor, settings.maxMaintenance)
        }
        return (idleFrom, windows)
    }

    static func nights(_ twin: Twin, before end: Date) -> [NightOutcome] {
        twin.log.compactMap { entry in
            guard entry.source == .watch, entry.at < end else { return nil }
            switch entry.event.name {
            case .bedWakeTime:
                guard case .date(let wake)? = entry.event["wakeTime"] else { return nil }
                return NightOutcome(at: entry.at, outcome: "wake \(ISO8601.string(wake))")
            case .fallbackManualEntry: return NightOutcome(at: entry.at, outcome: "fallback")
            default: return nil
            }
        }
    }

    static func launches(_ twin: Twin, before end: Date) -> [Date] {
        twin.events(.handlerEntered, from: .phone).map(\.at).filter { $0 < end }
    }

    /// Nil when both sides give the same night outcomes at the same instants, else a report
    /// with the scenario and the first night that differs.
    static func difference(
        _ scenario: TwinScenario, _ observed: ObservedRun, process: [NightOutcome], twin: [NightOutcome]
    ) -> String? {
        firstDifference(scenario, observed, "night", process, twin, matches: { $0.matches($1) })
    }

    /// `launchDifference` of the processes' background launches and the twin's before the
    /// scenario's end, as a list of findings (empty when they agree).
    static func launchFindings(_ scenario: TwinScenario, _ observed: ObservedRun, _ twin: Twin) -> [String] {
        launchDifference(
            scenario, observed, process: observed.launches(before: scenario.end),
            twin: launches(twin, before: scenario.end)
        ).map { [$0] } ?? []
    }

    /// Nil when both sides ran the background job at the same instants (to the second), else a
    /// report with the scenario and the first run that differs.
    static func launchDifference(
        _ scenario: TwinScenario, _ observed: ObservedRun, process: [Date], twin: [Date]
    ) -> String? {
        firstDifference(
            scenario, observed, "background launch", process.map(ISO8601.string), twin.map(ISO8601.string),
            matches: {
                abs((ISO8601.date($0) ?? .distantPast).timeIntervalSince(ISO8601.date($1) ?? .distantFuture)) < 1
            })
    }

    private static func firstDifference<T: CustomStringConvertible>(
        _ scenario: TwinScenario, _ observed: ObservedRun, _ what: String, _ process: [T], _ twin: [T],
        matches: (T, T) -> Bool
    ) -> String? {
        let first = zip(process, twin).enumerated().first { !matches($0.element.0, $0.element.1) }?.offset
        guard first != nil || process.count != twin.count else { return nil }
        let index = first ?? min(process.count, twin.count)
        let show = { (items: [T]) in index < items.count ? items[index].description : "none" }
        return """
            twin and processes differ, \(scenario)
            first differing \(what) (\(index + 1)): processes \(show(process)); twin \(show(twin))
            processes: \(process.map(\.description).joined(separator: "; "))
            twin:      \(twin.map(\.description).joined(separator: "; "))
            \(observed.inputsDescription)
            """
    }
}

/// A stored value as a JSON tree (one encoder for both sides), and the paths where two differ.
enum StoredState {
    static func tree<T: Encodable>(_ value: T) -> Any {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .secondsSince1970
        guard let data = try? encoder.encode(value), let tree = try? JSONSerialization.jsonObject(with: data) else {
            return "unencodable"
        }
        return tree
    }

    /// Every path at which `process` and `twin` differ; numbers that are not whole match within
    /// `tolerance`.
    static func differences(
        _ path: String, _ process: Any, _ twin: Any, tolerance: Double, ignoring: Set<String> = []
    ) -> [String] {
        switch (process, twin) {
        case (let left as [String: Any], let right as [String: Any]):
            return Set(left.keys).union(right.keys).subtracting(ignoring).sorted().flatMap { key in
                differences(
                    "\(path).\(key)", left[key] ?? "missing", right[key] ?? "missing", tolerance: tolerance,
                    ignoring: ignoring)
            }
        case (let left as [Any], let right as [Any]):
            guard left.count == right.count else {
                return ["\(path): processes \(left.count) items; twin \(right.count) items: \(left) / \(right)"]
            }
            return zip(left, right).enumerated().flatMap { index, pair in
                differences("\(path)[\(index)]", pair.0, pair.1, tolerance: tolerance, ignoring: ignoring)
            }
        case (let left as NSNumber, let right as NSNumber):
            let (a, b) = (left.doubleValue, right.doubleValue)
            // Counts, seeds and RNG states are exact; instants (around 1.8e9 s) and durations
            // on the processes' wall-driven clock match within the tolerance.
            let exact = a.rounded() == a && b.rounded() == b && (abs(a) < 1e8 || abs(a) >= 1e12)
            let same = exact ? left == right : abs(a - b) <= tolerance
            return same ? [] : ["\(path): processes \(left); twin \(right)"]
        default:
            return "\(process)" == "\(twin)" ? [] : ["\(path): processes \(process); twin \(twin)"]
        }
    }
}

@Suite("The embedded twin against the real processes over ipc")
struct TwinDifferentialTests {
    @Test(
        "20 seeded scenarios (zones across clock changes, iOS early and late-silent, Android buckets, opens, Low Power, phone restarts): the twin's night outcomes and background launches equal the processes', to the second",
        arguments: Array(UInt64(1)...20))
    func sameNights(seed: UInt64) async throws {
        let findings = try await DifferentialRun.judged(TwinScenario(seed: seed)) { scenario, observed, twin in
            var found = DifferentialRun.nightFindings(scenario, observed, twin)
            found += DifferentialRun.launchFindings(scenario, observed, twin)
            return found + DifferentialRun.storedStateFindings(scenario, observed)
        }
        #expect(findings.isEmpty, "\(findings.joined(separator: "\n"))")
    }

    @Test(
        "late-silent with watch --request-dates, iOS and Android: the REQUESTs the watch sends on its low nights are served in both, and the nights are the same, none by hand",
        arguments: ["ios", "android"])
    func requestDates(platform: String) async throws {
        var scenario = TwinScenario()
        scenario.seed = 0
        scenario.zone = "Europe/Berlin"
        scenario.start = ISO8601.date("2026-05-04T09:00:00Z")!  // Mon 11:00 CEST
        scenario.osSeed = 12
        scenario.deviceSeed = 3
        scenario.horizonDays = 4
        scenario.requestDates = true
        scenario.platform = platform
        if platform == "android" {
            // Battery Saver from the first afternoon: no Worker runs at all, only the listener service.
            scenario.bucket = "active"
            scenario.steps = [(ISO8601.date("2026-05-04T12:00:00Z")!, .lowPower)]
        } else {
            scenario.registration = .lateSilent
        }
        let findings = try await DifferentialRun.judged(scenario) { scenario, observed, twin in
            var found = DifferentialRun.nightFindings(scenario, observed, twin)
            let processNights = observed.nights(before: scenario.end)
            if processNights.contains(where: { $0.outcome == "fallback" }) { found.append("\(processNights)") }
            let served = observed.phoneEvents.filter { $0.name == .requestServed }.count
            let twinServed = twin.events(.requestServed, from: .phone).count
            if served < 1 || twinServed < 1 || abs(served - twinServed) > 1 {
                found.append("processes served \(served), the twin \(twinServed)")
            }
            return found
        }
        #expect(findings.isEmpty, "\(findings.joined(separator: "\n"))")
    }

    @Test(
        "Android Doze nights: the screen off from 23:00 to 07:30 with the phone unplugged and still; the processes and the twin run the same background launches (deferred to maintenance windows), nights and stored state"
    )
    func dozeNights() async throws {
        var scenario = TwinScenario()
        scenario.seed = 0
        scenario.zone = "Europe/Berlin"
        scenario.start = ISO8601.date("2026-05-04T09:00:00Z")!  // Mon 11:00 CEST
        scenario.nights = 6
        scenario.platform = "android"
        scenario.bucket = "active"
        scenario.osSeed = 21
        scenario.deviceSeed = 4
        scenario.horizonDays = 3
        scenario.steps = (0..<5).flatMap { day -> [(at: Date, step: TwinScenario.Step)] in
            let night = scenario.start.addingTimeInterval(Double(day) * TwinScenario.day)
            return [
                (night.addingTimeInterval(12 * 3_600), .screenOff),  // 23:00 CEST
                (night.addingTimeInterval(20.5 * 3_600), .screenOn),  // 07:30 CEST
            ]
        }
        let findings = try await DifferentialRun.judged(scenario) { scenario, observed, twin in
            var found = DifferentialRun.nightFindings(scenario, observed, twin)
            found += DifferentialRun.launchFindings(scenario, observed, twin)
            // In deep idle a launch waits for a maintenance window: every launch of a night
            // after the screen has been off for inactive + sensing (1 h) lies in one of the
            // windows of AOSP's default timings, at most one per window, on both sides.
            let offs = observed.inputs.filter { if case .phone("screen off") = $0.step { true } else { false } }
            let ons = observed.inputs.filter { if case .phone("screen on") = $0.step { true } else { false } }
            var inWindows = 0
            for (off, on) in zip(offs.map(\.at), ons.map(\.at)) {
                let windows = DifferentialRun.maintenanceWindows(screenOff: off, until: on)
                for (side, launches) in [
                    ("processes", observed.launches(before: scenario.end)),
                    ("twin", DifferentialRun.launches(twin, before: scenario.end)),
                ] {
                    let night = launches.filter { $0 >= windows.idleFrom && $0 < on }
                    let outside = night.filter { launch in !windows.windows.contains { $0.contains(launch) } }
                    let perWindow = windows.windows.map { window in night.filter { window.contains($0) }.count }
                    if !outside.isEmpty || perWindow.contains(where: { $0 > 1 }) {
                        found.append(
                            "\(side): launches in deep idle outside its maintenance windows, or two in one: "
                                + "\(night.map(ISO8601.string)), windows \(windows.windows)")
                    }
                    if side == "twin" { inWindows += night.count }
                }
            }
            if inWindows == 0 { found.append("no launch fell in a night: the scenario proves nothing") }
            return found + DifferentialRun.storedStateFindings(scenario, observed)
        }
        #expect(findings.isEmpty, "\(findings.joined(separator: "\n"))")
    }

    @Test(
        "Android's job quotas (API 34, a 15-minute interval): the processes and the twin both keep to the bucket's sessions per window (frequent: 8 per 8 h; rare: 3 per 24 h), run as many launches, and give the same nights",
        arguments: [("frequent", 8.0 * 3_600, 8), ("rare", 24.0 * 3_600, 3)])
    func quotaNights(bucket: String, window: TimeInterval, sessions: Int) async throws {
        var scenario = TwinScenario()
        scenario.zone = "Europe/Berlin"
        scenario.start = ISO8601.date("2026-05-04T09:00:00Z")!  // Mon 11:00 CEST
        scenario.nights = 4
        scenario.platform = "android"
        scenario.bucket = bucket
        scenario.osSeed = 3
        scenario.deviceSeed = 4
        scenario.horizonDays = 2
        scenario.extraPhone = ["--android-api", "34", "--interval", "900"]
        let findings = try await DifferentialRun.judged(scenario) { scenario, observed, twin in
            // Not the launch instants: periodic work is planned again from the end of each run,
            // which the processes reach later by the wall time their writes take times the clock
            // speed (at 115,200x a 10 ms write is 19 virtual minutes), so at a 15-minute interval
            // their launches drift from the twin's within a window. What the quota decides is
            // compared: how many launches each window holds, and the nights.
            var found = DifferentialRun.nightFindings(scenario, observed, twin)
            let sides = [
                ("processes", observed.launches(before: scenario.end)),
                ("twin", DifferentialRun.launches(twin, before: scenario.end)),
            ]
            for (side, launches) in sides {
                for (index, launch) in launches.enumerated() {
                    let inWindow = launches[index...].prefix { $0 < launch.addingTimeInterval(window) }.count
                    if inWindow > sessions {
                        found.append(
                            "\(side): \(inWindow) launches in the \(window / 3_600) h from \(ISO8601.string(launch))")
                        break
                    }
                }
                if launches.isEmpty || launches.count >= 96 * scenario.nights {
                    found.append("\(side): \(launches.count) launches: the quota did not limit a 15-minute interval")
                }
            }
            // The last window may be cut by the end on one side and not on the other.
            if abs(sides[0].1.count - sides[1].1.count) > sessions {
                found.append("launches: processes \(sides[0].1.count), twin \(sides[1].1.count)")
            }
            return found
        }
        #expect(findings.isEmpty, "\(findings.joined(separator: "\n"))")
    }

    @Test(
        "The usage opportunity model (iOS early and late-silent, an open on the 6th day): the twin's night outcomes, background runs and launches that never reached the handler equal the processes', to the second",
        arguments: [RegistrationMode.early, .lateSilent])
    func usageNights(registration: RegistrationMode) async throws {
        var scenario = TwinScenario()
        scenario.seed = 0
        scenario.zone = "Asia/Shanghai"
        scenario.start = ISO8601.date("2026-07-20T03:00:00Z")!  // Mon 11:00 CST
        scenario.registration = registration
        scenario.osSeed = 1
        scenario.deviceSeed = 2
        scenario.extraPhone = ["--opportunity-model", "usage"]
        scenario.steps = [(ISO8601.date("2026-07-25T05:00:00Z")!, .open)]  // Sat 13:00 CST
        let findings = try await DifferentialRun.judged(scenario) { scenario, observed, twin in
            var found = DifferentialRun.nightFindings(scenario, observed, twin)
            found += DifferentialRun.launchFindings(scenario, observed, twin)
            let dropped = observed.phoneEvents.filter { $0.name == .osLaunchDropped }
                .compactMap { $0.string("time").flatMap(ISO8601.date) }.filter { $0 < scenario.end }
            let twinDropped = twin.events(.osLaunchDropped, from: .os).map(\.at).filter { $0 < scenario.end }
            if let difference = DifferentialRun.launchDifference(
                scenario, observed, process: dropped, twin: twinDropped)
            {
                found.append("launches that never reached the handler: \(difference)")
            }
            // The scenario proves something only when the OS launched the app on both models'
            // terms: runs for early registration, launches that never reach the handler for late.
            let launched = registration == .early ? DifferentialRun.launches(twin, before: scenario.end) : twinDropped
            if launched.isEmpty { found.append("no background launch in \(scenario.nights) nights: nothing compared") }
            return found + DifferentialRun.storedStateFindings(scenario, observed)
        }
        #expect(findings.isEmpty, "\(findings.joined(separator: "\n"))")
    }

    @Test(
        "The OS outlives the phone: a run with a phone restart in the middle and the twin's run with the same restart give the same background launches and nights"
    )
    func restartKeepsTheOS() async throws {
        var scenario = TwinScenario()
        scenario.seed = 0
        scenario.zone = "Europe/Berlin"
        scenario.start = ISO8601.date("2026-03-25T10:00:00Z")!  // Wed 11:00 CET; summer time from Sun 29
        scenario.osSeed = 77
        scenario.deviceSeed = 5
        scenario.wake =
            [LocalTime(hour: 8, minute: 30)] + Array(repeating: LocalTime(hour: 6, minute: 45), count: 5)
            + [LocalTime(hour: 8, minute: 0)]
        scenario.steps = [(ISO8601.date("2026-03-29T12:20:00Z")!, .restartPhone)]  // Sun 14:20 CEST
        let observed = try await DifferentialRun.onThread { [scenario] in try DifferentialRun.processes(scenario) }
        #expect(observed.osStates == ["new", "stored"])
        let twin = DifferentialRun.twin(scenario, observed)
        let restart = try #require(observed.inputs.first { if case .startPhone = $0.step { true } else { false } }).at
        let processLaunches = observed.launches(before: scenario.end)
        #expect(processLaunches.contains { $0 < restart } && processLaunches.contains { $0 > restart })
        let launches = DifferentialRun.launchDifference(
            scenario, observed, process: processLaunches, twin: DifferentialRun.launches(twin, before: scenario.end))
        #expect(launches == nil, "\(launches ?? "")")
        let nights = DifferentialRun.difference(
            scenario, observed, process: observed.nights(before: scenario.end),
            twin: DifferentialRun.nights(twin, before: scenario.end))
        #expect(nights == nil, "\(nights ?? "")")
    }
}

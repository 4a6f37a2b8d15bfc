// SPDX-License-Identifier: Apache-2.0
package import Foundation
import SleepTapCore
import SleepTapEmbedded
import SleepTapOS

/// A broken invariant of the date-exhaustion soak: which one, on which night, what was seen,
/// the log lines that show it, and the expectation a scenario file can carry to reproduce it.
package struct SoakViolation: Error, Sendable, CustomStringConvertible {
    /// 1 fallback iff uncovered, 2 right wake time, 3 twin = processes, 4 foreseeable fallback
    /// warned 24 h ahead.
    package var invariant: Int
    /// The night (1-based bed tap of the scenario), 0 when the broken rule is not a night's.
    package var night: Int
    /// The tap's local date in the zone the watch lives in ("" when not a night's).
    package var localDate: String
    package var message: String
    /// Event lines (JSON Lines, as the processes write them) that show it.
    package var evidence: [String]
    /// An expectation (docs/scenarios.md) that fails on this run: added to the repro file, so
    /// `sleeptap-scenario` shows the same failure.
    package var expectation: [String: String]

    package var description: String {
        "invariant \(invariant) broken" + (night > 0 ? " on night \(night) (\(localDate))" : "") + ": \(message)"
    }
}

/// What a scenario run of the soak held: the nights (as `sleeptap-scenario` shows them) and counts.
package struct SoakTally: Sendable, Equatable {
    package var nights: [ScenarioNight] = []
    /// Nights with a cached wake-up, and with a manual entry.
    package var cached = 0
    package var fallbacks = 0
    /// Fallbacks the watch could foresee (docs/scenarios.md, "Soak"), all of them warned 24 h ahead.
    package var foreseeable = 0
    /// Fallbacks of a watch that had never held a batch.
    package var neverHeld = 0
    package var warnings = 0
    package var batchesGenerated = 0
    package var batchesApplied = 0
    package var backgroundRuns = 0
    /// Alarms that rang at an answered wake-up (`alarm.fired`, first rings only), and answered
    /// wake-ups whose alarm was lost with a restarted watch process: answered before a start that
    /// did not restore them (`watch.started` `alarms`: a fresh start has none), so not checked.
    package var alarmsFired = 0
    package var alarmsLostWithRestart = 0

    package init() {}

    package static func += (lhs: inout SoakTally, rhs: SoakTally) {
        lhs.cached += rhs.cached
        lhs.fallbacks += rhs.fallbacks
        lhs.foreseeable += rhs.foreseeable
        lhs.neverHeld += rhs.neverHeld
        lhs.warnings += rhs.warnings
        lhs.batchesGenerated += rhs.batchesGenerated
        lhs.batchesApplied += rhs.batchesApplied
        lhs.backgroundRuns += rhs.backgroundRuns
        lhs.alarmsFired += rhs.alarmsFired
        lhs.alarmsLostWithRestart += rhs.alarmsLostWithRestart
    }
}

/// A fault the soak can plant in a run's log before checking it, to show that the checker
/// catches it (`sleeptap-soak exhaustion --inject-fault`).
package enum SoakFault: String, Sendable, CaseIterable {
    /// The first cached wake-up is reported one hour late.
    case wrongWake = "wrong-wake"
    /// The first cached wake-up is reported as a manual entry instead.
    case earlyFallback = "early-fallback"
}

/// Runs a scenario in the twin and checks the soak's invariants night by night
/// (docs/scenarios.md, "Soak").
package enum SoakCheck {
    /// Invariant 4's lead: a foreseeable fallback is warned at least this long before.
    package static let warningLead: TimeInterval = 24 * 3600

    /// Runs `scenario` in the twin (as `ScenarioRun.twin` does) and checks it.
    /// - Parameter fault: planted in the log before the check (the checker must catch it).
    /// - Throws: `SoakViolation`, or `ScenarioError` when the twin cannot be built from the flags.
    package static func twin(_ scenario: ScenarioFile, fault: SoakFault? = nil) throws -> SoakTally {
        var log = try twinLog(scenario)
        if let fault { log = plant(fault, in: log) }
        return try check(scenario, log: log)
    }

    /// Checks a process run (`ScenarioRun.processes`): invariants 1, 2, 4 and 5 on the processes'
    /// own events, then 3: their nights against the twin's on the processes' instants, night by
    /// night. A night may differ only when it is *raced*: the two taps are the same (local date
    /// and time), the batch the twin's watch held at its tap was not yet held by the processes'
    /// watch at theirs, and the processes' watch applied a batch with those very dates (the same
    /// digest) after the tap, at most `raceWindow(speed:)` virtual seconds after the twin's
    /// watch had applied it. That is the one way wall-clock lag changes a night: over ipc a batch
    /// takes wall milliseconds from the phone's decision to the watch's write (the phone's own
    /// writes, the socket, the watch's loop), which are virtual minutes at speed, where the twin
    /// delivers at once. The processes' night is still checked against the batch their watch
    /// held (invariants 1 and 2 on their events), so a raced night is counted, not excused
    /// unchecked. Any other difference (another tap, the same batch held with another outcome,
    /// dates the processes' watch never got or got later than the window) is a violation.
    /// - Returns: the tally of the processes' events, and the raced nights (0-based) that differed.
    /// - Throws: `SoakViolation` at the first broken invariant.
    package static func processes(_ run: ScenarioRun) throws(SoakViolation) -> (tally: SoakTally, raced: [Int]) {
        let tally = try check(run.scenario, log: run.log, handled: run.handledInputs)
        guard let twin = run.twinNights else { return (tally, []) }
        let nights = run.nights
        guard let twinLog = run.twinLog else {
            // Nothing to tell a raced night by: night by night, as sleeptap-scenario compares.
            for index in 0..<max(twin.count, nights.count)
            where index >= twin.count || index >= nights.count || !twin[index].sameNight(as: nights[index]) {
                throw difference(index, nights: nights, twin: twin, why: "no twin log to explain it")
            }
            return (tally, [])
        }
        let window = raceWindow(speed: run.speed)
        let processes = heldAtTaps(run.log)
        let replay = heldAtTaps(twinLog)
        let outages = linkDown(run.log)
        /// How long the processes' watch took beyond the twin's to hold dates, not counting the
        /// time its link was down (nothing is delivered then, in the twin either: a batch the
        /// twin delivered just before a cut was still on its way in the processes and is resent
        /// when the link is back).
        func lag(from twinInstant: Date, to instant: Date) -> TimeInterval {
            var lag = instant.timeIntervalSince(twinInstant)
            for (down, up) in outages {
                let overlap = min(up, instant).timeIntervalSince(max(down, twinInstant))
                if overlap > 0 { lag -= overlap }
            }
            return lag
        }
        /// The digest of a batch that moved both watches to its zone, the twin's at or before
        /// `tap` and the processes' after it, within the window: a tap planned in one zone on one
        /// side only.
        func movedLate(around tap: Date) -> String? {
            for (digest, moves) in replay.zoneMoves {
                for twinMove in moves where twinMove <= tap {
                    if let move = processes.zoneMoves[digest]?.first(where: { $0 >= twinMove }), move > tap,
                        lag(from: twinMove, to: move) <= window
                    {
                        return digest
                    }
                }
            }
            return nil
        }
        let cuts = linkDown(twinLog).map(\.down)
        /// Whether the batch `digest`, which the twin's watch held, was lost in the processes at
        /// a link cut that came within the window after the phone generated it: the phone
        /// generated it at `g`, never sent it (no `batch.sent` of it), its next send failed
        /// (`send.failed`) before it generated another batch, the scenario cut the link (the
        /// twin's `link.down`, at the step's instant) at most the window after `g`, and the
        /// processes' watch held nothing applied after `g`. The twin delivers at once, before a
        /// cut; the processes' phone was still writing the batch (its fsync'd state) when the
        /// relay dropped the link, and after the outage it sends its newest batch instead.
        func lostAtCut(_ digest: String, processesHeld held: String?, at tap: Date) -> Bool {
            guard
                let generated = run.log.first(where: {
                    $0.source == .phone && $0.event.name == .batchGenerated && $0.event["digest"] == .string(digest)
                })?.at,
                !run.log.contains(where: {
                    $0.source == .phone && $0.event.name == .batchSent && $0.event["digest"] == .string(digest)
                }),
                cuts.contains(where: { $0 >= generated && $0.timeIntervalSince(generated) <= window && $0 <= tap })
            else { return false }
            let after = run.log.filter { $0.source == .phone && $0.at >= generated }
            let nextGenerated =
                after.first(where: { $0.event.name == .batchGenerated && $0.event["digest"] != .string(digest) })?.at
                ?? .distantFuture
            guard after.contains(where: { $0.event.name == .sendFailed && $0.at < nextGenerated }) else { return false }
            if let held, processes.applied[held]?.contains(where: { $0 > generated && $0 <= tap }) == true {
                return false
            }
            return true
        }
        var raced: [Int] = []
        var index = 0
        var twinIndex = 0
        while index < nights.count || twinIndex < twin.count {
            let tap = index < processes.taps.count ? processes.taps[index].at : nil
            let twinTap = twinIndex < replay.taps.count ? replay.taps[twinIndex].at : nil
            // A tap on one side only (the other side's next tap is later, or there is none).
            if let twinTap, tap.map({ ScenarioRun.second($0) > ScenarioRun.second(twinTap) }) ?? true {
                guard movedLate(around: twinTap) != nil else {
                    throw difference(
                        index, nights: nights, twin: twin, twinIndex: twinIndex,
                        why: "a tap at \(ISO8601.string(twinTap)) in the twin only")
                }
                raced.append(index)
                twinIndex += 1
                continue
            }
            if let tap, twinTap.map({ ScenarioRun.second($0) > ScenarioRun.second(tap) }) ?? true {
                guard movedLate(around: tap) != nil else {
                    throw difference(
                        index, nights: nights, twin: twin, twinIndex: twinIndex,
                        why: "a tap at \(ISO8601.string(tap)) in the processes only")
                }
                raced.append(index)
                index += 1
                continue
            }
            guard let tap, let twinTap, index < nights.count, twinIndex < twin.count else {
                throw difference(
                    index, nights: nights, twin: twin, twinIndex: twinIndex, why: "a night without its tap")
            }
            defer {
                index += 1
                twinIndex += 1
            }
            guard !twin[twinIndex].sameNight(as: nights[index]) else { continue }
            var why = "the taps differ"
            if twin[twinIndex].localDate == nights[index].localDate, twin[twinIndex].tapTime == nights[index].tapTime {
                let held = processes.taps[index].held
                let twinHeld = replay.taps[twinIndex].held
                if let twinHeld, twinHeld != held,
                    let twinApplied = replay.applied[twinHeld]?.last(where: { $0 <= twinTap }),
                    let applied = processes.applied[twinHeld]?.first(where: { $0 > tap && $0 >= twinApplied })
                {
                    let late = lag(from: twinApplied, to: applied)
                    if late <= window {
                        raced.append(index)
                        continue
                    }
                    why =
                        "the processes' watch applied the twin's batch (digest \(twinHeld)) "
                        + "\(Int(late / 60)) virtual minutes after the twin's watch (the link up), "
                        + "more than the \(Int(window / 60)) minutes a message's wall-clock lag can take"
                } else if let twinHeld, twinHeld != held, lostAtCut(twinHeld, processesHeld: held, at: tap) {
                    raced.append(index)
                    continue
                } else {
                    why = "the watches held the same batch, or the processes' watch never got the twin's"
                }
            }
            throw difference(index, nights: nights, twin: twin, twinIndex: twinIndex, why: why)
        }
        return (tally, raced)
    }

    /// The intervals the processes' watch had no link: from each `link.down` to the next
    /// `link.up` (or the end of the log).
    static func linkDown(_ log: [ScenarioRun.LogEntry]) -> [(down: Date, up: Date)] {
        var intervals: [(down: Date, up: Date)] = []
        var down: Date?
        for entry in log where entry.source == .watch {
            if entry.event.name == .linkDown, down == nil { down = entry.at }
            if entry.event.name == .linkUp, let start = down {
                intervals.append((start, entry.at))
                down = nil
            }
        }
        if let down { intervals.append((down, .distantFuture)) }
        return intervals
    }

    /// Invariant 3's violation at the processes' night `index` (0-based) and the twin's
    /// `twinIndex` (the same unless given).
    static func difference(
        _ index: Int, nights: [ScenarioNight], twin: [ScenarioNight], twinIndex: Int? = nil, why: String
    ) -> SoakViolation {
        let twinIndex = twinIndex ?? index
        let night = index < nights.count ? nights[index] : nil
        let twinNight = twinIndex < twin.count ? twin[twinIndex] : nil
        return SoakViolation(
            invariant: 3, night: index + 1, localDate: (night ?? twinNight)?.localDate ?? "",
            message: "twin and processes differ: processes "
                + (night?.summaryText ?? "no such night (\(nights.count) nights)") + "; twin "
                + (twinNight?.summaryText ?? "no such night (\(twin.count) nights)") + " (\(why))",
            evidence: [
                "twin:      \(twinNight.map { "\($0)" } ?? "none")", "processes: \(night.map { "\($0)" } ?? "none")",
            ], expectation: [:])
    }

    /// The longest a batch may reach the processes' watch after the twin's and still count as
    /// wall-clock lag, in virtual seconds: 0.2 wall seconds at `speed` (9.6 virtual hours at the
    /// default 172,800), at least 10 virtual minutes. 0.2 s is ten times the lag seen on a loaded
    /// 2-core machine (the phone's writes with fsync, the socket, the watch's write) and below
    /// the phone's first resend (`ResendPolicy`, 0.25 s): a batch that had to be sent again was
    /// lost, which the twin would have to show too, so it is not counted as lag.
    package static func raceWindow(speed: Double) -> TimeInterval {
        max(600, speed * 0.2)
    }

    /// What a log says of the batches the watch held: for each bed tap (in order) its instant and
    /// the digest of the batch held then (nil before the first); per digest, the instants the
    /// watch applied a batch with those dates, and those at which such a batch moved the watch to
    /// its zone (`timezone.changed` from `batch` at the instant of the apply). A batch is known by
    /// the digest the phone gave it in `batch.generated` (the epoch is random per phone process,
    /// so the twin's and the processes' differ).
    static func heldAtTaps(
        _ log: [ScenarioRun.LogEntry]
    ) -> (taps: [(at: Date, held: String?)], applied: [String: [Date]], zoneMoves: [String: [Date]]) {
        var digests: [BatchKey: String] = [:]
        var held: String?
        var heldSince: Date?
        var taps: [(at: Date, held: String?)] = []
        var applied: [String: [Date]] = [:]
        var zoneMoves: [String: [Date]] = [:]
        for entry in log {
            switch (entry.event.name, entry.source) {
            case (.batchGenerated, .phone):
                guard let key = batchKey(entry.event), case .string(let digest)? = entry.event["digest"] else {
                    continue
                }
                digests[key] = digest
            case (.batchApplied, .watch):
                guard let key = batchKey(entry.event), let digest = digests[key] else { continue }
                held = digest
                heldSince = entry.at
                applied[digest, default: []].append(entry.at)
            case (.timezoneChanged, .watch):
                guard entry.event["timeZoneSource"] == .string("batch"), let held, entry.at == heldSince else {
                    continue
                }
                zoneMoves[held, default: []].append(entry.at)
            case (.bedWakeTime, .watch), (.fallbackManualEntry, .watch):
                taps.append((entry.at, held))
            default:
                continue
            }
        }
        return (taps, applied, zoneMoves)
    }

    /// A batch's identity on the wire from an event's `epoch` and `seq`.
    static func batchKey(_ event: Event) -> BatchKey? {
        guard case .string(let epoch)? = event["epoch"], case .int(let seq)? = event["seq"] else { return nil }
        return BatchKey(epoch: epoch, seq: seq)
    }

    /// The twin's log for a scenario (`ScenarioRun.twin`): built from the scenario's flags
    /// through the executables' parsers, booted at `start`, its steps run until just before `end`.
    static func twinLog(_ scenario: ScenarioFile) throws(ScenarioError) -> [ScenarioRun.LogEntry] {
        try ScenarioRun.twin(scenario).log
    }

    /// The value of `--name V` or `--name=V` in a flag array, the last one given.
    static func flag(_ name: String, in flags: [String]) -> String? {
        var value: String?
        for (index, flag) in flags.enumerated() {
            if flag == name, index + 1 < flags.count {
                value = flags[index + 1]
            } else if flag.hasPrefix(name + "=") {
                value = String(flag.dropFirst(name.count + 1))
            }
        }
        return value
    }

    static func plant(_ fault: SoakFault, in log: [ScenarioRun.LogEntry]) -> [ScenarioRun.LogEntry] {
        var log = log
        guard let index = log.firstIndex(where: { $0.event.name == .bedWakeTime }) else { return log }
        switch fault {
        case .wrongWake:
            if case .date(let wake)? = log[index].event["wakeTime"] {
                // The whole wake-up moves: its instant and its local date and time, so the
                // message does not show one local time for two instants an hour apart.
                let late = wake.addingTimeInterval(3600)
                let zone = TimeZone(identifier: ScenarioRun.text(log[index].event["timeZone"])) ?? .gmt
                for (key, value) in [
                    ("wakeTime", EventValue.date(late)), ("localDate", .string(SoakOracle.localDate(late, zone))),
                    ("localTime", .string(SoakOracle.wall(late, zone))),
                ] {
                    if let field = log[index].event.fields.firstIndex(where: { $0.key == key }) {
                        log[index].event.fields[field].value = value
                    }
                }
            }
        case .earlyFallback:
            let tap = log[index].event.fields.filter { $0.key.hasPrefix("tap") }.map { ($0.key, $0.value) }
            log[index].event = Event(.fallbackManualEntry, [("reason", .string("planted by --inject-fault"))] + tap)
        }
        return log
    }

    /// A batch by its identity on the wire.
    struct BatchKey: Hashable {
        var epoch: String
        var seq: Int64
    }

    /// A generated batch: its line, and what the oracle says it holds.
    struct Generated {
        var line: String
        var wakes: [SoakOracle.Wake]
    }

    /// A number field, whole or not, as the twin logs it or a process wrote it.
    static func number(_ value: EventValue?) -> Double? {
        switch value {
        case .int(let whole)?: Double(whole)
        case .double(let fraction)?: fraction
        default: nil
        }
    }

    /// An instant field as the twin logs it (a date) or as a process wrote it (ISO-8601 text).
    static func instant(_ value: EventValue?) -> Date? {
        switch value {
        case .date(let date)?: date
        case .string(let text)?: ISO8601.date(text)
        default: nil
        }
    }

    /// Checks invariants 1, 2, 4 and 5 over a run's log, night by night.
    /// - Parameter handled: a process run's inputs at the virtual instants the processes handled
    ///   them (`ScenarioRun.handledInputs`): the phone's zone changes at its `time-zone` lines as
    ///   handled, not at the scenario's instants (a phone behind virtual time handles a line
    ///   later, and its launches before then are still in the old zone). nil: the scenario's.
    /// - Throws: `SoakViolation` at the first broken one.
    static func check(
        _ scenario: ScenarioFile, log: [ScenarioRun.LogEntry], handled: [(at: Date, step: TwinStep)]? = nil
    ) throws(SoakViolation) -> SoakTally {
        var checker = Checker(scenario, handled: handled)
        checker.tally.nights = ScenarioRun.nights(of: log)
        for entry in log { try checker.check(entry) }
        return checker.tally
    }

    /// The walk over one log: what the entries so far established, and one check per invariant.
    struct Checker {
        var oracle: SoakOracle
        let horizon: Int
        let warnNights: Int
        /// The phone's zone at the start: --time-zone, else the schedule's, else the system's.
        let initialZone: TimeZone
        /// The phone's travels (`time-zone` lines), in order.
        var travels: [(at: Date, zone: String)] = []
        var tally = SoakTally()
        var generated: [BatchKey: Generated] = [:]
        var held: (key: BatchKey, batch: Generated, line: String)?
        var spellStart: Date?
        var warnings: [Date] = []
        var night = 0
        /// The evidence: the last lines, without the bedtime notices (many, and beside the point).
        var recent: [String] = []
        /// Invariant 5: the wake-ups the watch answered (a cached one, checked by 1 and 2, or a
        /// typed one) and not yet rung, with the line that answered each.
        var answered: [(wake: Date, line: String)] = []
        /// Between a clean `watch.stopping` and the next `watch.started` no watch runs to ring.
        var watchDown = false

        init(_ scenario: ScenarioFile, handled: [(at: Date, step: TwinStep)]?) {
            oracle = SoakOracle(schedule: scenario.schedule)
            horizon = flag("--horizon-days", in: scenario.phone).flatMap(Int.init) ?? BatchPlanner.defaultHorizonDays
            warnNights =
                flag("--warn-nights", in: scenario.watch).flatMap(Int.init) ?? WatchNode.Configuration.defaultWarnNights
            // The phone's own rule (`PhoneZone`); travel is followed step by step below.
            initialZone =
                PhoneZone(
                    flag: flag("--time-zone", in: scenario.phone).flatMap(WakeCalendar.zone(named:)),
                    machine: scenario.timeZone
                ).resolve(schedule: scenario.schedule).zone
            for step in handled ?? scenario.steps.map({ (at: $0.at, step: $0.step) }) {
                if case .phone(let line) = step.step {
                    let words = PhoneCommand.words(line).words
                    if words.count == 2, words[0] == "time-zone" { travels.append((step.at, words[1])) }
                }
            }
            // In time order: a process's handled instants follow its stdin, the file's its steps.
            travels = travels.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(
                \.element)
        }

        /// Checks one entry of the log, after the ones before it.
        mutating func check(_ entry: ScenarioRun.LogEntry) throws(SoakViolation) {
            let text = entry.event.jsonLine(time: entry.at, process: entry.source)
            if !entry.event.name.rawValue.hasPrefix("notification.") {
                recent.append(text)
                if recent.count > 12 { recent.removeFirst() }
            }
            try noMissedAlarm(before: entry)
            switch (entry.event.name, entry.source) {
            case (.watchStarted, .watch):
                // A watch started on its state file re-arms the alarms it holds (`alarms`); one
                // started fresh has none (docs/protocol.md, "The alarm"). Those not restored are lost.
                watchDown = false
                let restored = Int(SoakCheck.number(entry.event["alarms"]) ?? 0)
                tally.alarmsLostWithRestart += max(0, answered.count - restored)
                answered = Array(answered.suffix(restored))
            case (.manualWakeTime, .watch):
                if let wake = SoakCheck.instant(entry.event["wakeTime"]) { answered.append((wake, text)) }
                answered.sort { $0.wake < $1.wake }
            case (.alarmFired, .watch):
                try alarmAnswered(entry)
            case (.handlerEntered, _):
                tally.backgroundRuns += 1
            case (.batchGenerated, .phone):
                try batchInPhoneZone(entry, line: text)
            case (.batchApplied, .watch):
                try batchGeneratedBeforeApplied(entry, line: text)
            case (.coverageLow, .watch):
                tally.warnings += 1
                warnings.append(entry.at)
            case (.bedWakeTime, .watch):
                night += 1
                try cachedWakeUpIsTheSchedules(entry, line: text)
                checkpoint(at: entry.at)
            case (.fallbackManualEntry, .watch):
                night += 1
                try fallbackOnlyUncoveredAndWarned(entry)
                checkpoint(at: entry.at)
            default:
                break
            }
        }

        /// Invariant 5, a missed alarm: every answered wake-up before `entry` has rung at its
        /// instant, unless no watch process ran then (a watch started on its state file rings it
        /// at start, late).
        mutating func noMissedAlarm(before entry: ScenarioRun.LogEntry) throws(SoakViolation) {
            if entry.event.name == .watchStopping, entry.source == .watch { watchDown = true }
            // A start and the late rings right after it (stamped at the start) come first.
            let starting =
                entry.source == .watch
                && (entry.event.name == .watchStarted
                    || (entry.event.name == .alarmFired && (SoakCheck.number(entry.event["late"]) ?? 0) > 0))
            guard !watchDown, !starting, let due = answered.first, due.wake < entry.at else { return }
            let (from, to) = Self.window(due.wake)
            throw SoakViolation(
                invariant: 5, night: night, localDate: "",
                message: "a missed alarm: the watch answered \(ISO8601.string(due.wake)), and no alarm.fired came then",
                evidence: recent + [due.line],
                expectation: ["event": "alarm.fired", "source": "watch", "from": from, "to": to, "min": "1"])
        }

        /// Invariant 5, a wrong alarm: an `alarm.fired` (not a snooze) rings a wake-up the watch
        /// answered.
        mutating func alarmAnswered(_ entry: ScenarioRun.LogEntry) throws(SoakViolation) {
            guard case .int(0)? = entry.event["snoozes"] else { return }
            // A ring at start for an instant that passed while no watch ran is stamped late.
            let late = SoakCheck.number(entry.event["late"]) ?? 0
            let rang = late > 0 ? SoakCheck.instant(entry.event["alarmTime"]) ?? entry.at : entry.at
            guard let index = answered.firstIndex(where: { $0.wake == rang }) else {
                let (from, to) = Self.window(entry.at)
                throw SoakViolation(
                    invariant: 5, night: night, localDate: "",
                    message: "a wrong alarm: it rang at \(ISO8601.string(entry.at)), which is no wake-up the "
                        + "watch answered (\(answered.map { ISO8601.string($0.wake) }.joined(separator: ", ")))",
                    evidence: recent,
                    expectation: ["event": "alarm.fired", "source": "watch", "from": from, "to": to, "count": "0"])
            }
            answered.remove(at: index)
            tally.alarmsFired += 1
        }

        /// Invariant 2, the zone: a batch is generated in the phone's zone at that instant (just
        /// before or just after the steps at it), and the oracle's batch is made in it.
        mutating func batchInPhoneZone(_ entry: ScenarioRun.LogEntry, line text: String) throws(SoakViolation) {
            tally.batchesGenerated += 1
            guard let key = Self.key(entry.event), case .string(let zoneName)? = entry.event["timeZone"] else { return }
            let expected = zones(at: entry.at)
            // Names differ for one zone (`UTC`, `Etc/UTC`, `GMT`): the same offsets now and
            // through the coming year make the same zone for this batch.
            func same(_ zone: TimeZone, _ name: String) -> Bool {
                guard let other = WakeCalendar.zone(named: name) else { return false }
                return zone.identifier == other.identifier
                    || stride(from: 0, to: 366, by: 61).allSatisfy { days in
                        let at = entry.at.addingTimeInterval(TimeInterval(days) * 86_400)
                        return WakeCalendar.utcOffset(of: zone, at: at) == WakeCalendar.utcOffset(of: other, at: at)
                    }
            }
            guard let zone = WakeCalendar.zone(named: zoneName), expected.contains(where: { same(zone, $0) }) else {
                let (from, to) = Self.window(entry.at)
                throw SoakViolation(
                    invariant: 2, night: 0, localDate: "",
                    message: "batch \(key.seq) was generated in \(zoneName), but the phone's zone was \(expected[1])",
                    evidence: recent,
                    expectation: [
                        "event": "batch.generated", "from": from, "to": to, "min": "1", "fields.timeZone": expected[1],
                    ])
            }
            generated[key] = Generated(
                line: text, wakes: oracle.batch(generatedAt: entry.at, in: zone, horizonDays: horizon))
        }

        /// Invariant 2, the batch: the watch applies only a batch the phone generated, which it
        /// then holds.
        mutating func batchGeneratedBeforeApplied(
            _ entry: ScenarioRun.LogEntry, line text: String
        ) throws(SoakViolation) {
            tally.batchesApplied += 1
            guard let key = Self.key(entry.event), let batch = generated[key] else {
                let (from, to) = Self.window(entry.at)
                throw SoakViolation(
                    invariant: 2, night: 0, localDate: "",
                    message: "the watch applied a batch the phone never generated", evidence: recent,
                    expectation: ["event": "batch.applied", "from": from, "to": to, "count": "0"])
            }
            held = (key, batch, text)
            checkpoint(at: entry.at)
        }

        /// Invariants 1 and 2 at a cached wake-up: a batch the watch holds covers the night, and
        /// the wake-up given is the schedule's for it.
        mutating func cachedWakeUpIsTheSchedules(
            _ entry: ScenarioRun.LogEntry, line text: String
        ) throws(SoakViolation) {
            let tap = entry.at
            let localDate = ScenarioRun.text(entry.event["tapLocalDate"])
            let expected = held?.batch.wakes.first { $0.instant > tap }
            let (from, to) = Self.window(tap)
            tally.cached += 1
            guard let expected else {
                throw SoakViolation(
                    invariant: 1, night: night, localDate: localDate,
                    message: "a cached wake-up, but no batch the watch holds covers this night (a missed fallback)",
                    evidence: recent + heldEvidence(),
                    expectation: ["event": "bed.wake_time", "source": "watch", "from": from, "to": to, "count": "0"])
            }
            var given = "?"
            switch entry.event["wakeTime"] {
            case .date(let wake)?: given = ISO8601.string(wake)
            case .string(let text)?: given = ISO8601.date(text).map(ISO8601.string) ?? text
            default: break
            }
            let localTime = ScenarioRun.text(entry.event["localTime"])
            let wakeDate = ScenarioRun.text(entry.event["localDate"])
            guard given == ISO8601.string(expected.instant), localTime == expected.localTime,
                wakeDate == expected.localDate
            else {
                throw SoakViolation(
                    invariant: 2, night: night, localDate: localDate,
                    message: "the watch gave \(given) (\(wakeDate) \(localTime)); the schedule's wake-up for "
                        + "this night, as of batch \(held?.key.seq ?? 0), is \(ISO8601.string(expected.instant)) "
                        + "(\(expected.localDate) \(expected.localTime))",
                    evidence: recent + heldEvidence(),
                    expectation: [
                        "event": "bed.wake_time", "source": "watch", "from": from, "to": to, "count": "1",
                        "fields.wakeTime": ISO8601.string(expected.instant),
                    ])
            }
            if !answered.contains(where: { $0.wake == expected.instant }) {
                answered.append((expected.instant, text))
                answered.sort { $0.wake < $1.wake }
            }
        }

        /// Invariants 1 and 4 at a manual entry: no batch the watch holds covers the night, and a
        /// foreseeable fallback was warned (`coverage.low`) at least `warningLead` before the tap.
        mutating func fallbackOnlyUncoveredAndWarned(_ entry: ScenarioRun.LogEntry) throws(SoakViolation) {
            let tap = entry.at
            let localDate = ScenarioRun.text(entry.event["tapLocalDate"])
            let expected = held?.batch.wakes.first { $0.instant > tap }
            let (from, to) = Self.window(tap)
            tally.fallbacks += 1
            if let expected {
                throw SoakViolation(
                    invariant: 1, night: night, localDate: localDate,
                    message: "a manual entry, but batch \(held?.key.seq ?? 0) the watch holds covers this "
                        + "night's wake-up \(ISO8601.string(expected.instant)) (an early fallback)",
                    evidence: recent + heldEvidence(),
                    expectation: [
                        "event": "fallback.manual_entry", "source": "watch", "from": from, "to": to, "count": "0",
                    ])
            }
            if held == nil { tally.neverHeld += 1 }
            let latest = tap.addingTimeInterval(-warningLead)
            guard let spellStart, spellStart <= latest else { return }
            tally.foreseeable += 1
            guard warnings.contains(where: { $0 >= spellStart && $0 <= latest }) else {
                let (from, _) = Self.window(spellStart)
                let (_, to) = Self.window(latest)
                throw SoakViolation(
                    invariant: 4, night: night, localDate: localDate,
                    message: "a foreseeable fallback: the nights left were at or below --warn-nights "
                        + "\(warnNights) from \(ISO8601.string(spellStart)) on, but no coverage.low came "
                        + "between then and 24 h before the tap",
                    evidence: recent + heldEvidence(),
                    expectation: ["event": "coverage.low", "source": "watch", "from": from, "to": to, "min": "1"])
            }
        }

        /// The watch checks its nights left after an applied batch and a bed tap: a spell at or
        /// below --warn-nights starts then, or ends.
        mutating func checkpoint(at instant: Date) {
            guard let held else { return }
            let left = held.batch.wakes.count { $0.instant > instant }
            if warnNights > 0, left <= warnNights {
                if spellStart == nil { spellStart = instant }
            } else {
                spellStart = nil
            }
        }

        /// The phone's zone just before `instant` and just after the steps at it.
        /// (Names as the tz database resolves them: `UTC` is `Etc/UTC`.)
        func zones(at instant: Date) -> [String] {
            let before = travels.last { $0.at < instant }?.zone ?? initialZone.identifier
            let after = travels.last { $0.at <= instant }?.zone ?? initialZone.identifier
            return [before, after].map { WakeCalendar.zone(named: $0)?.identifier ?? $0 }
        }

        /// The batch the watch holds, as evidence.
        func heldEvidence() -> [String] {
            guard let held else { return ["the watch holds no batch"] }
            return [held.batch.line, held.line]
                + [
                    "oracle for that batch: "
                        + held.batch.wakes.map { ISO8601.string($0.instant) }.joined(separator: " ")
                ]
        }

        static func key(_ event: Event) -> BatchKey? {
            guard case .string(let epoch)? = event["epoch"], case .int(let seq)? = event["seq"] else { return nil }
            return BatchKey(epoch: epoch, seq: seq)
        }

        /// The whole second around `instant`, as an expectation's `from` and `to`.
        static func window(_ instant: Date) -> (from: String, to: String) {
            let second = Date(timeIntervalSince1970: instant.timeIntervalSince1970.rounded(.down))
            return (ISO8601.string(second), ISO8601.string(second.addingTimeInterval(1)))
        }
    }

    /// A violation's expectation as a scenario file's JSON object (`fields.X` keys go into
    /// `fields`; counts become numbers).
    package static func expectationObject(_ expectation: [String: String]) -> [String: Any] {
        var object: [String: Any] = [:]
        var fields: [String: Any] = [:]
        for (key, value) in expectation {
            if key.hasPrefix("fields.") {
                fields[String(key.dropFirst("fields.".count))] = value
            } else if ["count", "min", "max"].contains(key) {
                object[key] = Int(value) ?? 0
            } else {
                object[key] = value
            }
        }
        if !fields.isEmpty { object["fields"] = fields }
        return object
    }
}

// SPDX-License-Identifier: Apache-2.0
package import Foundation
import SleepTapCore
package import SleepTapEmbedded
import SleepTapOS

/// A random timeline for the date-exhaustion soak, as a scenario file (docs/scenarios.md): the
/// JSON object that is written to disk when an invariant breaks, and the `ScenarioFile` decoded
/// from it, so what runs is exactly what `sleeptap-scenario` reads back.
package struct SoakTimeline: Sendable {
    /// The scenario's position in the run (0-based) and its own seed (derived from the run's).
    package var index: Int
    package var seed: UInt64
    /// The scenario file's JSON text (pretty-printed, sorted keys).
    package var json: Data
    package var scenario: ScenarioFile

    /// Zones the timelines live and travel in: ones with daylight saving time (some changing at
    /// midnight, by 30 minutes, by 2 hours, or with negative DST in the tz database) and ones
    /// without (whole, half and quarter hours, and both ends of the offsets).
    package static let zones = [
        "America/New_York", "America/Los_Angeles", "America/Santiago", "America/Havana", "America/St_Johns",
        "Europe/Berlin", "Europe/London", "Europe/Dublin", "Australia/Sydney", "Australia/Lord_Howe",
        "Pacific/Auckland", "Pacific/Chatham", "Asia/Jerusalem", "Africa/Cairo", "Antarctica/Troll",
        "Asia/Shanghai", "Asia/Tokyo", "Asia/Kolkata", "Asia/Kathmandu", "UTC", "Pacific/Kiritimati",
        "Pacific/Pago_Pago", "Asia/Tehran",
    ].filter { WakeCalendar.zone(named: $0) != nil }

    /// The seed of scenario `index` of a run seeded `seed`.
    package static func seed(run seed: UInt64, index: Int) -> UInt64 {
        var mixer = SplitMix64(state: seed ^ (UInt64(index) &* 0xd1b5_4a32_d192_ed03))
        return mixer.next()
    }

    /// Makes scenario `index` of a run seeded `runSeed`, `nights` nights long.
    /// - Parameter directory: where the scenario file would be written (it names it in errors).
    /// - Throws: `ScenarioError` if the file it wrote does not decode (a bug of the generator).
    package static func make(runSeed: UInt64, index: Int, nights: Int, directory: String = ".")
        throws(ScenarioError) -> SoakTimeline
    {
        let seed = seed(run: runSeed, index: index)
        var generator = Generator(random: SplitMix64(state: seed), nights: max(1, nights))
        let object = generator.make(name: "soak seed \(runSeed) scenario \(index) (scenario seed \(seed))")
        let data: Data
        do {
            data = try JSONSerialization.data(
                withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        } catch {
            throw ScenarioError(file: "scenario \(index)", field: "", value: "", reason: "cannot encode: \(error)")
        }
        let path = (directory as NSString).appendingPathComponent(fileName(runSeed: runSeed, index: index))
        let scenario = try ScenarioFile.decode(data, path: path)
        return SoakTimeline(index: index, seed: seed, json: data, scenario: scenario)
    }

    /// `soak-<run seed>-<index>.json`.
    package static func fileName(runSeed: UInt64, index: Int) -> String {
        "soak-\(runSeed)-\(index).json"
    }

    /// The JSON text with `expectations` added to its `expect` array (what a repro file asks).
    package func adding(expectations: [[String: Any]]) -> Data {
        guard var object = (try? JSONSerialization.jsonObject(with: json)) as? [String: Any] else { return json }
        object["expect"] = ((object["expect"] as? [Any]) ?? []) + expectations
        return
            (try? JSONSerialization.data(
                withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? json
    }

    /// The JSON text with its phone and watch steps at the instants the processes handled them
    /// (`handled`: the inputs of a process run, `ScenarioRun.handledInputs`, in the file's step
    /// order, to the millisecond; link steps keep their instants), and a name that says so: a
    /// process run's repro file replays the processes' inputs as they were handled, but not how
    /// late the processes handled their own timers (`clock.behind`) or started, which the twin
    /// does on time. The event logs written beside the file are the record of those.
    package func asHandled(_ handled: [(at: Date, step: TwinStep)]) -> Data {
        guard var object = (try? JSONSerialization.jsonObject(with: json)) as? [String: Any],
            var steps = object["steps"] as? [[String: Any]]
        else { return json }
        // The instants of the lines, in order; a `restart` step's own `quit` (followed by the
        // start) is no line of the file.
        var instants: ArraySlice<Date> = []
        for (index, input) in handled.enumerated() {
            let restarts: Bool
            switch index + 1 < handled.count ? handled[index + 1].step : nil {
            case .startPhone?, .startWatch?: restarts = true
            default: restarts = false
            }
            switch input.step {
            case .phone(let line), .watch(let line):
                if !(restarts && line == "quit") { instants.append(input.at) }
            default: break
            }
        }
        for index in steps.indices where steps[index]["phone"] != nil || steps[index]["watch"] != nil {
            guard let at = instants.popFirst() else { break }
            steps[index]["at"] = ISO8601.millisecondString(at)
        }
        let end = (object["end"] as? String).flatMap(ISO8601.date) ?? .distantFuture
        steps = steps.filter { ((($0["at"] as? String).flatMap(ISO8601.date)) ?? end) < end }
        steps = steps.enumerated().sorted { first, second in
            let a = (first.element["at"] as? String).flatMap(ISO8601.date) ?? .distantPast
            let b = (second.element["at"] as? String).flatMap(ISO8601.date) ?? .distantPast
            return (a, first.offset) < (b, second.offset)
        }.map(\.element)
        object["steps"] = steps
        object["name"] =
            "\(object["name"] as? String ?? "soak"), as the processes handled it: its phone and watch steps "
            + "at the virtual instants the processes acted on them; how late the processes handled their own "
            + "timers (clock.behind) and started does not replay (the twin is on time): the event logs beside "
            + "this file are the record"
        return
            (try? JSONSerialization.data(
                withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? json
    }

    /// The choices, from one SplitMix64.
    struct Generator {
        var random: SplitMix64
        let nights: Int

        mutating func chance(_ probability: Double) -> Bool {
            Double(random.next() >> 11) / Double(1 << 53) < probability
        }

        mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }

        mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

        mutating func time(_ minutes: ClosedRange<Int>, step: Int = 5) -> String {
            let minute = (int(minutes) / step) * step
            return String(format: "%02d:%02d", (minute / 60) % 24, minute % 60)
        }

        static let utc: Calendar = {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? .gmt
            return calendar
        }()

        /// The start: a random hour of a random day in 2026-2027; for half of them the run
        /// crosses one of the zone's daylight-saving transitions.
        mutating func start(zone: TimeZone) -> Date {
            let first =
                Self.utc.date(from: DateComponents(year: 2026, month: 1, day: 1)) ?? Date(timeIntervalSince1970: 0)
            var day = Self.utc.date(byAdding: .day, value: int(0...700), to: first) ?? first
            if chance(0.5), let transition = zone.nextDaylightSavingTimeTransition(after: day) {
                let before = Self.utc.startOfDay(for: transition)
                day = Self.utc.date(byAdding: .day, value: -int(0...max(0, nights - 1)), to: before) ?? day
            }
            return Self.utc.date(byAdding: .hour, value: int(0...23), to: Self.utc.startOfDay(for: day)) ?? day
        }

        mutating func schedule(zone: String) -> [String: Any] {
            let base = int(5 * 60...9 * 60 + 55)
            var wake: [String: Any] = [:]
            for day in Weekday.allCases {
                if chance(0.12) {
                    wake[day.description] = "off"
                } else if chance(0.08) {
                    // Small hours: on the DST days these fall into the gap or the repeated hour.
                    wake[day.description] = time(0...3 * 60 + 55)
                } else {
                    wake[day.description] = time(max(0, base - 90)...min(23 * 60 + 55, base + 90))
                }
            }
            var schedule: [String: Any] = ["schemaVersion": 1, "wake": wake]
            if chance(0.75) { schedule["timeZone"] = chance(0.8) ? zone : pick(SoakTimeline.zones) }
            return schedule
        }

        mutating func make(name: String) -> [String: Any] {
            let zoneName = pick(SoakTimeline.zones)
            let zone = WakeCalendar.zone(named: zoneName) ?? .gmt
            let start = start(zone: zone)
            let end = Self.utc.date(byAdding: .day, value: nights, to: start) ?? start
            var schedule = schedule(zone: zoneName)
            var overrides: [String: Any] = [:]
            for _ in 0..<int(0...3) {
                if let date = Self.utc.date(byAdding: .day, value: int(-2...nights + 2), to: start) {
                    overrides[LocalDate(date, in: Self.utc).description] = chance(0.5) ? "off" : time(4 * 60...11 * 60)
                }
            }
            if !overrides.isEmpty { schedule["overrides"] = overrides }

            let android = chance(0.35)
            var phone = ["--platform", android ? "android" : "ios", "--os-seed", String(int(1...1_000_000))]
            phone += ["--device-seed", String(int(1...1_000_000))]
            if android {
                phone += ["--bucket", pick(["active", "working_set", "frequent", "frequent", "rare", "restricted"])]
                phone += ["--interval", pick(["900", "3600", "21600", "21600", "43200"])]
            } else {
                phone += ["--registration", chance(0.8) ? "early" : pick(["late-silent", "late-crash"])]
            }
            if chance(0.3) { phone += ["--horizon-days", String(int(1...14))] }
            if chance(0.05) { phone += ["--low-power"] }
            if chance(0.05) { phone += ["--refresh-off"] }
            if chance(0.1) { phone += ["--time-zone", pick(SoakTimeline.zones)] }

            var watch = ["--bed-at", time(20 * 60...26 * 60 + 30), "--manual-wake", time(5 * 60...9 * 60)]
            if chance(0.3) { watch += ["--warn-nights", String(int(0...5))] }
            if chance(0.1) { watch += ["--time-zone", pick(SoakTimeline.zones)] }

            let steps = steps(start: start, end: end, android: android)
            return [
                "schemaVersion": 1, "name": name, "start": ISO8601.string(start), "end": ISO8601.string(end),
                "timeZone": zoneName, "schedule": schedule, "phone": phone, "watch": watch, "steps": steps,
            ]
        }

        /// The day's events, at random seconds of the day.
        mutating func steps(start: Date, end: Date, android: Bool) -> [[String: Any]] {
            var steps: [(at: Date, order: Int, kind: String, line: String)] = []
            var linkDownUntil: Date?
            var lowPower = false
            var refresh = true
            var charging = false
            func add(_ at: Date, _ kind: String, _ line: String) {
                guard at >= start, at < end else { return }
                steps.append((at, steps.count, kind, line))
            }
            for night in 0..<nights {
                guard let day = Self.utc.date(byAdding: .day, value: night, to: start) else { continue }
                func at() -> Date { day.addingTimeInterval(TimeInterval(int(0...86_399))) }
                if chance(0.12) { add(at(), "phone", "open") }
                if chance(0.04) {
                    lowPower.toggle()
                    add(at(), "phone", "low-power \(lowPower ? "on" : "off")")
                }
                if chance(0.02) {
                    refresh.toggle()
                    add(at(), "phone", "background-refresh \(refresh ? "on" : "off")")
                }
                if android {
                    if chance(0.05) {
                        add(
                            at(), "phone", "bucket \(pick(["active", "working_set", "frequent", "rare", "restricted"]))"
                        )
                    }
                    if chance(0.03) {
                        charging.toggle()
                        add(at(), "phone", "charging \(charging ? "on" : "off")")
                    }
                } else if chance(0.03) {
                    add(at(), "phone", "registration \(pick(["early", "early", "late-silent", "late-crash"]))")
                }
                let down = at()
                if chance(0.04), linkDownUntil.map({ down > $0 }) ?? true {
                    let up = down.addingTimeInterval(TimeInterval(int(3600...10 * 86_400)))
                    add(down, "link", "down")
                    add(up, "link", "up")
                    linkDownUntil = up
                }
                if chance(0.02) { add(at(), "phone", "time-zone \(pick(SoakTimeline.zones))") }
                if chance(0.02) { add(at(), "watch", "time-zone \(pick(SoakTimeline.zones))") }
                if chance(0.02) {
                    // Both travel: the phone first, the watch within three hours.
                    let zone = pick(SoakTimeline.zones)
                    let phoneAt = at()
                    add(phoneAt, "phone", "time-zone \(zone)")
                    add(phoneAt.addingTimeInterval(TimeInterval(int(0...3 * 3600))), "watch", "time-zone \(zone)")
                }
                if chance(0.02) { add(at(), "phone", "reboot") }
                if chance(0.03) { add(at(), "phone", "force-quit") }
                if chance(0.01) { add(at(), "phone", "simulate-launch") }
            }
            steps.sort { ($0.at, $0.order) < ($1.at, $1.order) }
            return steps.map { ["at": ISO8601.string($0.at), $0.kind: $0.line] }
        }
    }
}

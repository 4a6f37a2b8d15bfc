// SPDX-License-Identifier: Apache-2.0
public import Foundation
public import SleepTapCommandLine
public import SleepTapCore
import SleepTapOS

/// `sleeptap-fleet`'s command line.
public enum FleetCommand: Equatable, Sendable {
    /// Simulate `options`' fleet and write its run records under `out`.
    case run(FleetOptions, out: String, jobs: Int, json: Bool)
    /// The twin's speed workload (docs/performance.md): no files.
    case bench(devices: Int, days: Int, jobs: Int, speed: Double)

    /// The fleet's options and texts; `--help` is generated from them.
    public static let command = CommandSpec(
        program: "sleeptap-fleet",
        otherUsages: ["sleeptap-fleet --bench [--devices N] [--days D] [--jobs J] [--speed S]"],
        summary: """
            Simulates N devices for D days on the embedded twin (the real phone and watch cores in
            virtual time), one device per task on all cores, each with a seeded random user (app
            opens, nightly bed taps, Low Power Mode, travel), and writes their run records to
            DIR/metrics/bg_runs/<device>-<YYYY-MM-DD>.json (docs/metrics.md, docs/fleet.md). The same
            options give byte-identical files. Progress on stderr when it is a terminal; a summary at
            the end.
            """,
        sections: [.init("options:", options)],
        footer: """
            exit status: 0 done; 64 a bad command line; 65 the --os-model file cannot be read or is not
            a model; 73 DIR or a file in it cannot be written.
            """)

    static let options: [OptionSpec] = [
        OptionSpec(
            "--devices", value: "N", synopsis: .required, example: "10", help: "devices in the fleet, 1 to 10000000"),
        OptionSpec("--days", value: "D", synopsis: .required, example: "7", help: "simulated UTC days, 1 to 366"),
        OptionSpec(
            "--out", value: "DIR", synopsis: .required, example: "/tmp/fleet",
            help: "output root (created if missing), what sleeptap-report reads"),
        OptionSpec(
            "--start", value: "DATE", example: "2026-01-01",
            help: """
                the first simulated UTC day, 1970-01-01 to 2199-12-31 with the days after it (default: D
                days before today, UTC)
                """),
        OptionSpec("--seed", value: "S", example: "42", help: "seeds every device (default 0)"),
        OptionSpec(
            "--mix", value: "SHARES", example: "ios=0.5,android=0.5",
            help: "platform shares, summing to 1 (default ios=0.6,android=0.4)"),
        OptionSpec(
            "--late-registration", value: "F", example: "0.5",
            help: """
                share of iOS devices whose app registers its refresh handler too late (submit succeeds,
                the handler never runs), 0 to 1 (default 0)
                """),
        OptionSpec(
            "--late-registration-from", value: "DATE", example: "2026-01-03",
            needs: ["--start", "2026-01-01", "--late-registration", "0.5"],
            help: """
                the UTC day the app update that registers late reaches those devices (default: late from
                the start); within the simulated days
                """),
        OptionSpec(
            "--opens", value: "F", example: "2",
            help: """
                app opens per user per day on average, 0 to 10 (default 1.5); each open writes a
                foreground record (docs/fleet.md)
                """),
        OptionSpec(
            "--low-power", value: "F", example: "0.2",
            help: """
                share of days with Low Power Mode (Battery Saver) on for some hours, 0 to 1 (default 0.1)
                """),
        OptionSpec(
            "--nightstand", value: "F", example: "0.3",
            help: """
                share of Android nights on which the phone lies unplugged, screen off and still from the
                bed tap to the wake-up, so Doze defers its background work to maintenance windows; on the
                other nights it is on its charger. 0 to 1 (default 0.5, this model's assumption)
                """),
        OptionSpec(
            "--buckets", value: "SHARES", example: "active=0.5,rare=0.5",
            help: """
                Android standby bucket shares, summing to 1 (default
                active=0.3,working_set=0.3,frequent=0.2,rare=0.15,restricted=0.05)
                """),
        OptionSpec(
            "--os-model", value: "FILE", example: "model.json",
            help: """
                run the iOS devices' OS on a model sleeptap-calibrate wrote: each launch delay is drawn
                from the fitted delay of the model's most specific iOS group for the app version with 20
                or more answered requests (default: the built-in draws); Android, Doze, quotas and
                conditions keep the built-in rules (docs/calibration.md)
                """),
        OptionSpec(
            "--shard", value: "I/N", example: "0/4",
            help: """
                run only the devices whose index is I modulo N (0 <= I < N); the shards' files merge by
                copying them into one directory. Without it, the shard of a batch job: a Slurm job array
                (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN/STEP), or a Kubernetes
                Indexed Job (JOB_COMPLETION_INDEX, with SLEEPTAP_SHARD_COUNT set to the Job's
                completions); docs/fleet.md
                """),
        OptionSpec(
            "--jobs", value: "J", example: "2", help: "devices simulated at once (default: the number of cores)"),
        OptionSpec("--json", help: "print the summary as one JSON object"),
        OptionSpec(
            "--bench", synopsis: .hidden, alone: true,
            help: "the twin's speed workload instead (docs/performance.md): no --out"),
        OptionSpec(
            "--speed", value: "S", synopsis: .hidden, example: "7200", needs: ["--bench"], alone: true,
            help: "with --bench: virtual seconds per wall second (default 3600)"),
        .versionOption("print the version and exit"), .helpOption("print this help and exit"),
    ]

    /// Parses the arguments (without the program name).
    /// - Parameters:
    ///   - today: the UTC date `--start` counts back from.
    ///   - cores: the default of `--jobs`.
    ///   - environment: the process's environment, for the shard of a batch job when `--shard`
    ///     is not given (`shard(in:)`).
    /// - Throws: `UsageError` naming the option or variable and what is wrong.
    public static func parse(
        _ arguments: [String], today: LocalDate, cores: Int, environment: [String: String] = [:]
    ) throws(UsageError) -> Parsed<FleetCommand> {
        if let request = Parsed<FleetCommand>.informationRequest(in: arguments) { return request }
        var reader = ArgumentReader(arguments, command: command)
        var devices: Int?
        var days: Int?
        var out: String?
        var start: LocalDate?
        var seed: UInt64 = 0
        var mix: [String: Double]?
        var late = 0.0
        var lateFrom: LocalDate?
        var lowPower: Double?
        var nightstand: Double?
        var opens: Double?
        var buckets: [StandbyBucket: Double]?
        var shard: (Int, Int)?
        var jobs = max(1, cores)
        var json = false
        var bench = false
        var speed: Double?
        var osModel: String?
        func share(_ flag: String) throws(UsageError) -> Double {
            let text = try reader.value(flag)
            guard let value = ArgumentReader.decimal(text), (0...1).contains(value) else {
                throw UsageError("\(flag) \"\(ArgumentReader.clip(text))\": expected a share from 0 to 1")
            }
            return value
        }
        func date(_ flag: String) throws(UsageError) -> LocalDate {
            let text = try reader.value(flag)
            guard let date = LocalDate(parsing: text) else {
                throw UsageError("\(flag) \"\(ArgumentReader.clip(text))\": expected a date YYYY-MM-DD")
            }
            return date
        }
        while let flag = try reader.nextFlag() {
            switch flag {
            case "--devices": devices = try reader.integer(flag, in: 1...10_000_000)
            case "--days": days = try reader.integer(flag, in: 1...366)
            case "--out": out = try reader.nonEmpty(flag)
            case "--start": start = try date(flag)
            case "--seed": seed = try reader.unsignedInteger(flag)
            case "--mix":
                mix = try shares(flag, try reader.value(flag), names: ["ios", "android"])
            case "--late-registration": late = try share(flag)
            case "--late-registration-from": lateFrom = try date(flag)
            case "--low-power": lowPower = try share(flag)
            case "--nightstand": nightstand = try share(flag)
            case "--opens":
                let text = try reader.value(flag)
                guard let value = ArgumentReader.decimal(text), (0...10).contains(value) else {
                    throw UsageError("--opens \"\(ArgumentReader.clip(text))\": expected opens a day from 0 to 10")
                }
                opens = value
            case "--buckets":
                let named = try shares(flag, try reader.value(flag), names: StandbyBucket.all.map(\.name))
                buckets = Dictionary(
                    uniqueKeysWithValues: named.compactMap { key, value in StandbyBucket(name: key).map { ($0, value) }
                    })
            case "--shard":
                let text = try reader.value(flag)
                let parts = text.split(separator: "/", omittingEmptySubsequences: false)
                guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1,
                    count <= 1_000_000, index >= 0, index < count
                else {
                    throw UsageError(
                        "--shard \"\(ArgumentReader.clip(text))\": expected I/N with 0 <= I < N (e.g. 0/4)")
                }
                shard = (index, count)
            case "--os-model": osModel = try reader.nonEmpty(flag)
            case "--jobs": jobs = try reader.integer(flag, in: 1...1_024)
            case "--json": json = true
            case "--bench": bench = true
            case "--speed": speed = try reader.seconds(flag, in: 1...1e9)
            default: throw ArgumentReader.unknown(flag)
            }
        }
        if bench {
            let fleetOnly: [(String, Bool)] = [
                ("--out", out != nil), ("--start", start != nil), ("--mix", mix != nil),
                ("--late-registration", late != 0), ("--late-registration-from", lateFrom != nil),
                ("--low-power", lowPower != nil), ("--nightstand", nightstand != nil), ("--opens", opens != nil),
                ("--buckets", buckets != nil), ("--os-model", osModel != nil),
                ("--shard", shard != nil),
                ("--json", json),
            ]
            if let (flag, _) = fleetOnly.first(where: \.1) { throw UsageError("\(flag) is not a --bench option") }
            return .run(.bench(devices: devices ?? 100, days: days ?? 28, jobs: jobs, speed: speed ?? 3_600))
        }
        if speed != nil { throw UsageError("--speed is a --bench option") }
        guard let devices else { throw UsageError("--devices N is required") }
        guard let days else { throw UsageError("--days D is required") }
        guard let out else { throw UsageError("--out DIR is required") }
        let utc = FleetOptions.utc
        let first =
            start
            ?? LocalDate(
                utc.date(byAdding: .day, value: -days, to: FleetOptions.midnightUTC(today)) ?? Date(), in: utc)
        var options = FleetOptions(devices: devices, days: days, start: first)
        // The simulated days lie in the range of the phone's virtual clock (`--clock-start`,
        // 1970-2199): run records carry instants after them (a request's earliestBeginDate), and
        // their ISO-8601 form and file names hold four-digit years only.
        guard options.startInstant >= Date(timeIntervalSince1970: 0),
            let lastDay = utc.date(byAdding: .day, value: -1, to: options.endInstant),
            utc.component(.year, from: lastDay) <= 2199
        else {
            throw UsageError(
                "--start \(first) with --days \(days): the simulated days must lie from 1970-01-01 to 2199-12-31")
        }
        options.seed = seed
        if let mix { options.iosShare = mix["ios"] ?? 0 }
        options.lateRegistration = late
        if let lateFrom {
            let from = FleetOptions.midnightUTC(lateFrom)
            guard from >= options.startInstant, from < options.endInstant else {
                throw UsageError(
                    "--late-registration-from \(lateFrom): not one of the simulated days (\(first) and the "
                        + "\(days - 1) after it)")
            }
            guard late > 0 else {
                throw UsageError("--late-registration-from needs --late-registration F above 0 (the share it reaches)")
            }
            options.lateRegistrationFrom = lateFrom
        }
        if let lowPower { options.lowPower = lowPower }
        if let nightstand { options.nightstand = nightstand }
        if let opens { options.opens = opens }
        if let buckets { options.buckets = buckets }
        options.osModelFile = osModel
        if shard == nil { shard = try Self.shard(in: environment) }
        if let (index, count) = shard {
            options.shardIndex = index
            options.shardCount = count
        }
        return .run(.run(options, out: out, jobs: jobs, json: json))
    }

    /// The shard a batch system gives this process, when `--shard` is not given: a Slurm job
    /// array's task (https://slurm.schedmd.com/job_array.html: `SLURM_ARRAY_TASK_ID` among
    /// `SLURM_ARRAY_TASK_COUNT` tasks, numbered from `SLURM_ARRAY_TASK_MIN` by
    /// `SLURM_ARRAY_TASK_STEP`), else a Kubernetes Indexed Job's completion index
    /// (https://kubernetes.io/docs/tasks/job/indexed-parallel-processing-static/:
    /// `JOB_COMPLETION_INDEX`, 0-based). Kubernetes does not pass the completion count, so the
    /// Job's manifest sets `SLEEPTAP_SHARD_COUNT` to its `completions`.
    /// - Returns: (index, count), or nil when neither is set.
    /// - Throws: `UsageError` naming the variable and what is wrong.
    public static func shard(in environment: [String: String]) throws(UsageError) -> (Int, Int)? {
        func number(_ name: String, atLeast minimum: Int) throws(UsageError) -> Int? {
            guard let text = environment[name] else { return nil }
            guard let value = Int(text.trimmingCharacters(in: .whitespaces)), value >= minimum else {
                throw UsageError(
                    "environment \(name)=\"\(ArgumentReader.clip(text))\": expected a whole number >= \(minimum)")
            }
            return value
        }
        if let id = try number("SLURM_ARRAY_TASK_ID", atLeast: 0) {
            guard let count = try number("SLURM_ARRAY_TASK_COUNT", atLeast: 1) else {
                throw UsageError("environment SLURM_ARRAY_TASK_ID is set without SLURM_ARRAY_TASK_COUNT")
            }
            let minimum = try number("SLURM_ARRAY_TASK_MIN", atLeast: 0) ?? 0
            let step = try number("SLURM_ARRAY_TASK_STEP", atLeast: 1) ?? 1
            let index = (id - minimum) / step
            guard id >= minimum, (id - minimum) % step == 0, index < count, count <= 1_000_000 else {
                throw UsageError(
                    "environment SLURM_ARRAY_TASK_ID=\(id) is not one of \(count) tasks from \(minimum) by \(step)")
            }
            return (index, count)
        }
        if let index = try number("JOB_COMPLETION_INDEX", atLeast: 0) {
            guard let count = try number("SLEEPTAP_SHARD_COUNT", atLeast: 1) else {
                throw UsageError(
                    "environment JOB_COMPLETION_INDEX is set without SLEEPTAP_SHARD_COUNT (the Job's completions)")
            }
            guard index < count, count <= 1_000_000 else {
                throw UsageError("environment JOB_COMPLETION_INDEX=\(index) is not below SLEEPTAP_SHARD_COUNT=\(count)")
            }
            return (index, count)
        }
        return nil
    }

    /// `name=share,name=share`: known names, each once, shares from 0 to 1 summing to 1.
    static func shares(_ flag: String, _ text: String, names: [String]) throws(UsageError) -> [String: Double] {
        var result: [String: Double] = [:]
        let expected = names.map { "\($0)=F" }.joined(separator: ",")
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2 else {
                throw UsageError("\(flag) \"\(ArgumentReader.clip(text))\": expected \(expected)")
            }
            let name = String(pair[0])
            guard names.contains(name) else {
                throw UsageError(
                    "\(flag): unknown name \"\(ArgumentReader.clip(name))\"; expected \(names.joined(separator: ", "))")
            }
            guard result[name] == nil else { throw UsageError("\(flag): \(name) is given twice") }
            guard let value = ArgumentReader.decimal(String(pair[1])), (0...1).contains(value) else {
                throw UsageError(
                    "\(flag): \(name)=\"\(ArgumentReader.clip(String(pair[1])))\": expected a share from 0 to 1")
            }
            result[name] = value
        }
        let sum = result.values.reduce(0, +)
        guard abs(sum - 1) < 1e-9 else {
            throw UsageError("\(flag) \"\(ArgumentReader.clip(text))\": the shares sum to \(sum), not 1")
        }
        return result
    }
}

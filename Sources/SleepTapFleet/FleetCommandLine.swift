// SPDX-License-Identifier: Apache-2.0
import Foundation
package import SleepTapCommandLine
package import SleepTapCore
import SleepTapOS

/// `sleeptap-fleet`'s command line.
package enum FleetCommand: Equatable, Sendable {
    /// Simulate `options`' fleet and write its run records under `out`.
    case run(FleetOptions, out: String, jobs: Int, json: Bool)
    /// The twin's speed workload (docs/performance.md): no files.
    case bench(devices: Int, days: Int, jobs: Int, speed: Double)

    /// The fleet's options and texts; `--help` is generated from them.
    package static let command = CommandSpec(
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
            a model; 73 DIR or a file in it cannot be written, or DIR holds another fleet's records
            (docs/fleet.md, "Output"); 74 stdout closed or not writable.
            """)

    static let options: [OptionSpec] =
        Array(FleetPopulationFlags.options.prefix(2)) + [
            OptionSpec(
                "--out", value: "DIR", synopsis: .required, example: "/tmp/fleet",
                help: "output root (created if missing), what sleeptap-report reads")
        ] + Array(FleetPopulationFlags.options.dropFirst(2)) + [
            OptionSpec(
                "--watch-nights",
                help: """
                    also write the watch's night records, one per bed tap, to
                    DIR/metrics/watch_nights/<device>-<YYYY-MM-DD>.json (docs/fleet.md)
                    """)
        ] + [
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
    package static func parse(
        _ arguments: [String], today: LocalDate, cores: Int, environment: [String: String] = [:]
    ) throws(UsageError) -> Parsed<FleetCommand> {
        if let request = Parsed<FleetCommand>.informationRequest(in: arguments) { return request }
        var reader = ArgumentReader(arguments, command: command)
        var population = FleetPopulationFlags()
        var out: String?
        var jobs = max(1, cores)
        var json = false
        var bench = false
        var speed: Double?
        var watchNights = false
        while let flag = try reader.nextFlag() {
            if try population.read(flag, from: &reader) { continue }
            switch flag {
            case "--out": out = try reader.nonEmpty(flag)
            case "--jobs": jobs = try reader.integer(flag, in: 1...1_024)
            case "--json": json = true
            case "--bench": bench = true
            case "--speed": speed = try reader.seconds(flag, in: 1...1e9)
            case "--watch-nights": watchNights = true
            default: throw ArgumentReader.unknown(flag)
            }
        }
        if bench {
            let fleetOnly: [(String, Bool)] =
                [("--out", out != nil)] + population.fleetOnlyGiven + [
                    ("--json", json), ("--watch-nights", watchNights),
                ]
            if let (flag, _) = fleetOnly.first(where: \.1) { throw UsageError("\(flag) is not a --bench option") }
            return .run(
                .bench(
                    devices: population.devices ?? 100, days: population.days ?? 28, jobs: jobs,
                    speed: speed ?? 3_600))
        }
        if speed != nil { throw UsageError("--speed is a --bench option") }
        guard population.devices != nil else { throw UsageError("--devices N is required") }
        guard population.days != nil else { throw UsageError("--days D is required") }
        guard let out else { throw UsageError("--out DIR is required") }
        var options = try population.options(today: today, environment: environment)
        options.watchNights = watchNights
        return .run(.run(options, out: out, jobs: jobs, json: json))
    }

    /// The most shards a fleet is split into (`--shard I/N`, the batch systems' variables).
    package static let maxShards = 1_000_000

    /// The shard a batch system gives this process, when `--shard` is not given: a Slurm job
    /// array's task (https://slurm.schedmd.com/job_array.html: `SLURM_ARRAY_TASK_ID` among
    /// `SLURM_ARRAY_TASK_COUNT` tasks, numbered from `SLURM_ARRAY_TASK_MIN` by
    /// `SLURM_ARRAY_TASK_STEP`), else a Kubernetes Indexed Job's completion index
    /// (https://kubernetes.io/docs/tasks/job/indexed-parallel-processing-static/:
    /// `JOB_COMPLETION_INDEX`, 0-based). Kubernetes does not pass the completion count, so the
    /// Job's manifest sets `SLEEPTAP_SHARD_COUNT` to its `completions`.
    /// Slurm's variables win over Kubernetes' when both are set.
    /// - Returns: (index, count), or nil when neither is set.
    /// - Throws: `UsageError` naming the variable and what is wrong.
    package static func shard(in environment: [String: String]) throws(UsageError) -> (Int, Int)? {
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
            guard count <= Self.maxShards else {
                throw UsageError(
                    "environment SLURM_ARRAY_TASK_COUNT=\(count): at most \(Self.maxShards) shards (as --shard)")
            }
            guard id >= minimum, (id - minimum) % step == 0, index < count else {
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
            guard count <= Self.maxShards else {
                throw UsageError(
                    "environment SLEEPTAP_SHARD_COUNT=\(count): at most \(Self.maxShards) shards (as --shard)")
            }
            guard index < count else {
                throw UsageError("environment JOB_COMPLETION_INDEX=\(index) is not below SLEEPTAP_SHARD_COUNT=\(count)")
            }
            return (index, count)
        }
        // The count alone: a job whose tasks lack their index would each simulate the whole fleet.
        if environment["SLURM_ARRAY_TASK_COUNT"] != nil {
            throw UsageError(
                "environment SLURM_ARRAY_TASK_COUNT is set without SLURM_ARRAY_TASK_ID (a job array's task gets "
                    + "both); give --shard I/N, or unset it")
        }
        if environment["SLEEPTAP_SHARD_COUNT"] != nil {
            throw UsageError(
                "environment SLEEPTAP_SHARD_COUNT is set without JOB_COMPLETION_INDEX (an Indexed Job's "
                    + "completionMode: Indexed gives each pod its index); give --shard I/N, or unset it")
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

// SPDX-License-Identifier: Apache-2.0
import Foundation
package import SleepTapCommandLine
package import SleepTapCore

/// `sleeptap-compare`'s command line: the fleet's population flags (`FleetPopulationFlags`), the
/// strategies and their settings, and where the outputs go.
package struct CompareCommand: Equatable, Sendable {
    /// The fleet (population, seed, shard).
    package var options: FleetOptions
    /// The strategies, in the order given, each once.
    package var strategies: [RefreshStrategy]
    /// `--horizon-days`, `--warn-nights`.
    package var settings: CompareSettings
    /// `--out DIR`: the Markdown file, the chart and each strategy's tally; nil: stdout only.
    package var out: String?
    /// `--records`: also each strategy's run and night records under `--out`.
    package var records: Bool = false
    /// `--jobs J`: (strategy, device) simulations at once.
    package var jobs: Int
    /// `--json`: the table as one JSON object.
    package var json: Bool
    /// `--merge DIR`: no simulation; the table of the shard tallies under DIR
    /// (`CompareMerge`); nil: run the fleet.
    package var merge: String? = nil

    /// The compare's options and texts; `--help` is generated from them.
    package static let command = CommandSpec(
        program: "sleeptap-compare",
        summary: """
            Runs the same seeded fleet users (sleeptap-fleet's, docs/fleet.md) under several refresh
            strategies on the embedded twin and prints one table, one row per strategy: manual-entry
            nights per 1,000 device-nights with a 95 % Wilson score interval, wrong or missed alarms
            (must be 0), p50 and p90 staleness at the app opens (the weekly report's percentiles),
            background launches and link bytes per device-day, each with its 95 % interval. Progress
            on stderr when it is a terminal. The same options give the same numbers.

            strategies:
              refresh     the app's refresh task only (today's app)
              request     + the watch asks for dates when they run low (the watch's REQUEST, with
                          --warn-nights; sent while the watch app is active, at the bed tap)
              horizon     a longer batch (the phone's batch of --horizon-days)
              processing  + a nightly BGProcessingTask on the charger (iOS: phone --processing-task
                          on; the users put the phone on its charger at bed time on the nights
                          --nightstand does not leave it unplugged)
              push        + a server push each night at 04:00 local: silent on iOS (throttled, not
                          after a force-quit), high-priority FCM on Android (delivered in Doze)
              push-normal as push with normal-priority FCM on Android (Doze defers it to its next
                          maintenance window)
            """,
        sections: [
            .init("options:", options),
            .init("the fleet's population and shard (as sleeptap-fleet's):", populationOptions),
        ],
        footer: """
            exit status: 0 done; 1 a strategy had a wrong or missed alarm; 64 a bad command line (also
            an unknown strategy); 65 the --os-model file cannot be read or is
            not a model, or --merge finds a bad, foreign or duplicate shard tally or a shard missing;
            73 DIR or a file in it cannot be written (the table is still printed), or a strategy's
            directory in DIR holds another run's records (nothing is run); 74 stdout closed or not
            writable.
            """)

    /// The fleet's population flags, declared once (`FleetPopulationFlags.options`), with the
    /// help of `--shard` as a comparison's shards go together: by `--merge`, not by copying.
    static let populationOptions: [OptionSpec] = FleetPopulationFlags.options.map { option in
        guard option.name == "--shard" else { return option }
        var shard = option
        shard.help = """
            run only the devices whose index is I modulo N (0 <= I < N), each shard with its own --out; the
            shards' tallies add up with --merge DIR (each shard's DIR/<strategy>/tally/ copied into one DIR).
            Without it, the shard of a batch job: a Slurm job array (SLURM_ARRAY_TASK_ID,
            SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN/STEP), or a Kubernetes Indexed Job
            (JOB_COMPLETION_INDEX, with SLEEPTAP_SHARD_COUNT set to the Job's completions); docs/fleet.md
            """
        return shard
    }

    static let options: [OptionSpec] = [
        OptionSpec(
            "--strategies", value: "LIST", example: "refresh,horizon",
            help: "comma-separated, each once (default refresh,request,horizon,processing,push); see strategies above"),
        OptionSpec(
            "--horizon-days", value: "H", example: "21",
            help: "the horizon strategy's batch, 1 to 28 local days (default 14)"),
        OptionSpec(
            "--warn-nights", value: "W", example: "3",
            help: "the request strategy's watch --warn-nights, 1 to 28 (default 2)"),
        OptionSpec(
            "--out", value: "DIR", example: "/tmp/compare",
            help: """
                write DIR/compare.md (the table), DIR/compare.svg (the chart) and each strategy's tally
                under DIR/<strategy>/tally/ (what --merge adds up)
                """),
        OptionSpec(
            "--records", needs: ["--out", "/tmp/compare"],
            help: """
                with --out, also write each strategy's run and night records under
                DIR/<strategy>/metrics/ (bg_runs, what sleeptap-report reads; watch_nights): two files per
                device per day and strategy, about 1.1 GB for 1,000 devices x 28 days
                """),
        OptionSpec(
            "--merge", value: "DIR", example: "/tmp/compare",
            help: """
                simulate nothing: add up the shards' tallies under DIR (each shard's --out directory,
                copied into DIR) and write the whole fleet's table, DIR/compare.md and DIR/compare.svg;
                give the shards' fleet flags, without --shard and --out
                """),
        OptionSpec("--json", help: "print the table as one JSON object"),
        OptionSpec("--jobs", value: "J", example: "2", help: "simulations at once (default: the number of cores)"),
        .versionOption("print the version and exit"), .helpOption("print this help and exit"),
    ]

    /// Parses the arguments (without the program name).
    /// - Parameters:
    ///   - today: the UTC date `--start` counts back from.
    ///   - cores: the default of `--jobs`.
    ///   - environment: the process's environment, for the shard of a batch job when `--shard`
    ///     is not given (`FleetCommand.shard(in:)`).
    /// - Throws: `UsageError` naming the flag and what is wrong.
    package static func parse(
        _ arguments: [String], today: LocalDate, cores: Int, environment: [String: String] = [:]
    ) throws(UsageError) -> Parsed<CompareCommand> {
        if let request = Parsed<CompareCommand>.informationRequest(in: arguments) { return request }
        var reader = ArgumentReader(arguments, command: command)
        var population = FleetPopulationFlags()
        var strategies = RefreshStrategy.defaults
        var settings = CompareSettings()
        var out: String?
        var jobs = max(1, cores)
        var json = false
        var records = false
        var merge: String?
        var shardGiven = false
        var horizonGiven = false
        while let flag = try reader.nextFlag() {
            if flag == "--shard" { shardGiven = true }
            if flag == "--horizon-days" { horizonGiven = true }
            if try population.read(flag, from: &reader) { continue }
            switch flag {
            case "--strategies": strategies = try Self.strategies(try reader.value(flag))
            case "--horizon-days": settings.horizonDays = try reader.integer(flag, in: 1...28)
            case "--warn-nights": settings.warnNights = try reader.integer(flag, in: 1...28)
            case "--out": out = try reader.nonEmpty(flag)
            case "--jobs": jobs = try reader.integer(flag, in: 1...1_024)
            case "--json": json = true
            case "--records": records = true
            case "--merge": merge = try reader.nonEmpty(flag)
            default: throw ArgumentReader.unknown(flag)
            }
        }
        if merge != nil {
            if out != nil {
                throw UsageError("--merge DIR writes DIR/compare.md and DIR/compare.svg itself: leave out --out")
            }
            if shardGiven { throw UsageError("--merge DIR adds up every shard's tallies: leave out --shard") }
        }
        if records && (out == nil || merge != nil) {
            throw UsageError(
                merge != nil
                    ? "--records writes a run's records, and --merge runs nothing: leave out --records"
                    : "--records writes the records under --out DIR: give --out DIR, or leave out --records")
        }
        if horizonGiven && !strategies.contains(.horizon) {
            // A flag that means nothing here is an error rather than a silent choice.
            throw UsageError(
                "--horizon-days sets the batch of the horizon strategy, which --strategies leaves out: add horizon, "
                    + "or leave --horizon-days out")
        }
        guard population.devices != nil else { throw UsageError("--devices N is required") }
        guard population.days != nil else { throw UsageError("--days D is required") }
        // A merge is the whole fleet's: a batch job's shard in the environment does not apply.
        let options = try population.options(today: today, environment: merge == nil ? environment : [:])
        return .run(
            CompareCommand(
                options: options, strategies: strategies, settings: settings, out: out, records: records, jobs: jobs,
                json: json, merge: merge))
    }

    /// `--strategies`: known names, each once, all modelled.
    static func strategies(_ text: String) throws(UsageError) -> [RefreshStrategy] {
        var result: [RefreshStrategy] = []
        let known = RefreshStrategy.allCases.map(\.rawValue).joined(separator: ", ")
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let name = String(part)
            guard !name.isEmpty else {
                throw UsageError(
                    "--strategies \"\(ArgumentReader.clip(text))\": an empty name (a comma too many, or nothing given); "
                        + "expected names from \(known), separated by commas")
            }
            guard let strategy = RefreshStrategy(rawValue: name) else {
                throw UsageError("--strategies: unknown strategy \"\(ArgumentReader.clip(name))\"; expected \(known)")
            }
            guard !result.contains(strategy) else { throw UsageError("--strategies: \(name) is given twice") }
            result.append(strategy)
        }
        return result
    }
}

// SPDX-License-Identifier: Apache-2.0
import SleepTapCommandLine
import SleepTapScenario

/// `sleeptap-soak exhaustion`'s command line, parsed.
struct ExhaustionOptions: Equatable, Sendable {
    static let scenarioCounts: ClosedRange<Int> = 1...1_000_000
    static let nightCounts: ClosedRange<Int> = 1...3_650

    /// Random timelines to run (`--scenarios`).
    var scenarios = 100
    /// Nights per timeline (`--nights`).
    var nights = 60
    /// How many of them also run as real processes (`--processes`).
    var processes = 0
    /// Virtual seconds per wall second of the process runs (`--speed`).
    var speed = ScenarioRun.defaultSpeed
    /// Seed of the timelines (`--seed`); nil: a random one, printed.
    var seed: UInt64?
    /// Where a failing timeline's scenario file is written (`--out`).
    var outDirectory = "."
    /// A fault planted in the first scenario's log (`--inject-fault`).
    var fault: SoakFault?
    /// Print the summary as one JSON object (`--json`).
    var json = false

    /// `sleeptap-soak exhaustion`'s options and texts; `--help` is generated from them.
    static let command = CommandSpec(
        program: "sleeptap-soak exhaustion",
        summary: """
            The date-exhaustion soak (docs/scenarios.md, "Soak"). Makes K seeded random timelines of
            N nights as scenario files: a random schedule (days off, small-hour wake times, one-off
            overrides) in a random IANA zone, half of them crossing a daylight-saving change; iOS or
            Android with random flags; app updates flipping the registration, opens, low power,
            background refresh, Android buckets and charging, link outages of an hour to ten days,
            travel of the phone, the watch or both, reboots, force-quits. Runs each in the embedded
            twin and checks every night:
              (1) the watch falls back to manual entry if and only if the batch it holds has no
                  wake-up after the tap (never early, never missed);
              (2) a cached wake-up is the schedule's wake instant for that night as of the batch the
                  watch holds (an oracle computes it from the schedule, the batch's generation time
                  and the phone's zone), and every batch is generated in the phone's zone;
              (3) twin and processes agree night by night (--processes);
              (4) a foreseeable fallback (the watch held dates whose nights left were at or below
                  --warn-nights at a bed tap or applied batch 24 h or more before it, and stayed
                  so) comes after a coverage.low at least 24 h before it;
              (5) memory stays flat: the processes' RSS at the start and at the end (--processes).
            """,
        sections: [
            .init(
                nil,
                [
                    OptionSpec(
                        "--seed", value: "N", example: "42",
                        help: "seed of the timelines, 0 to 18446744073709551615 (default: random, printed)"),
                    OptionSpec(
                        "--scenarios", value: "K", example: "10", help: "timelines, 1 to 1000000 (default 100)"),
                    OptionSpec(
                        "--nights", value: "N", example: "14", help: "nights per timeline, 1 to 3650 (default 60)"),
                    OptionSpec(
                        "--processes", value: "M", example: "1",
                        help: """
                            also run the first M timelines as real phone and watch processes over ipc
                            (sleeptap-scenario --processes): invariants 1, 2, 4, 5 on their events, 3 against
                            the twin, and their RSS (default 0)
                            """),
                    OptionSpec(
                        "--speed", value: "N", example: "3600",
                        help: """
                            virtual seconds per wall second of those runs, 1 to 10000000 (default 172800: two
                            virtual days per wall second)
                            """),
                    OptionSpec(
                        "--out", value: "DIR", example: "/tmp",
                        help: """
                            where the scenario file of a failing timeline is written (default .); checked
                            before the run, made only when a file goes there
                            """),
                    OptionSpec("--json", help: "print the summary as one JSON object (event soak.summary)"),
                    OptionSpec(
                        "--inject-fault", value: "KIND", example: "wrong-wake",
                        help: """
                            plant a fault in the first timeline's twin log before the check, to see a broken
                            invariant reported: wrong-wake (a cached wake-up an hour late) or early-fallback (a
                            covered night as a manual entry); its scenario file does not reproduce it, the run
                            does
                            """),
                    .helpOption("this text"),
                ])
        ],
        footer: """
            The default run (100 timelines of 60 nights, twin only) takes 30 to 60 s in a debug
            build on two cores (about 110 to 200 nights/s), a few seconds in release.
            Progress (timelines done, nights per second, ETA) goes to stderr when it is a terminal.
            A broken invariant prints the seeds, the scenario file that reproduces it (written to
            --out; `sleeptap-scenario FILE --twin` fails on the expectation it carries), the night and
            the evidence, and exits 1. Ctrl-C, SIGTERM or SIGHUP print the summary so far and exit
            128 + N.

            Exit: 0 every invariant held, 1 an invariant broke, 64 bad arguments, 69 phone or watch
            not built (--processes), 70 a timeline could not run, 73 --out (at start), the scenario
            file or a temp dir cannot be written, 74 stdout closed or not writable, 128 + N on
            signal N.
            """)

    /// Parses the arguments after `exhaustion`; `-h`/`--help` wins wherever it stands.
    /// - Throws: `UsageError` naming the option and, for a bad value, the value.
    static func parse(_ arguments: [String]) throws(UsageError) -> Parsed<ExhaustionOptions> {
        if let request = Parsed<ExhaustionOptions>.informationRequest(in: arguments) { return request }
        var options = ExhaustionOptions()
        var reader = ArgumentReader(arguments, command: command)
        while let flag = try reader.nextFlag() {
            switch flag {
            case "--json": options.json = true
            case "--scenarios": options.scenarios = try reader.integer(flag, in: scenarioCounts)
            case "--nights": options.nights = try reader.integer(flag, in: nightCounts)
            case "--processes": options.processes = try reader.integer(flag, in: 0...scenarioCounts.upperBound)
            case "--seed": options.seed = try reader.unsignedInteger(flag)
            case "--speed": options.speed = try reader.seconds(flag, in: 1...10_000_000)
            case "--out": options.outDirectory = try reader.nonEmpty(flag)
            case "--inject-fault":
                let text = try reader.value(flag)
                guard let fault = SoakFault(rawValue: text) else {
                    let kinds = SoakFault.allCases.map(\.rawValue).joined(separator: " or ")
                    throw UsageError("--inject-fault \(ArgumentReader.clip(text)): expected \(kinds)")
                }
                options.fault = fault
            default: throw ArgumentReader.unknown(flag)
            }
        }
        guard options.processes <= options.scenarios else {
            throw UsageError(
                "--processes \(options.processes) is more than --scenarios \(options.scenarios)")
        }
        return .run(options)
    }
}

// SPDX-License-Identifier: Apache-2.0
import SleepTapCommandLine

/// How long and how often each case runs.
enum BenchMode: String, Sendable, Equatable {
    /// The full run recorded in docs/performance.md (several minutes).
    case full
    /// About a minute: fewer rounds and samples, the same cases.
    case quick
    /// Each case once with tiny counts, for the test that keeps the bench from rotting (seconds).
    case smoke
}

/// The cases, by the names `--only` takes.
enum BenchCase: String, CaseIterable, Sendable, Hashable {
    case wrapper, durable, restart, idle, twin, report
}

/// The bench's command line, parsed.
struct BenchOptions: Equatable, Sendable {
    var mode = BenchMode.full
    /// Where to write the JSON report (`--json FILE`), nil for none.
    var jsonPath: String?
    /// The cases to run (`--only`); all by default.
    var only: Set<BenchCase> = Set(BenchCase.allCases)

    /// The bench's options and texts; `--help` is generated from them.
    static let command = CommandSpec(
        program: "sleeptap-bench",
        summary: """
            Measures SleepTap against its floor, on this machine, in one run: each Swift case runs
            interleaved with the same work in plain C (sleeptap-bench-baseline, built with it), round
            by round (A B A B ...), and every figure is a ratio to the baseline of the same run.
              1. the ZeroMQ wrapper: DEALER -> ROUTER echo of 1 KB over ipc, tcp and tcp with CURVE
                 (round trip), and with 100 messages in flight (throughput)
              2. the durable round trip: the phone's BATCH, the watch's fsync'd store and ACK, the
                 phone's fsync'd record of the ACK (real phone and watch processes over ipc), against
                 its physical limit: the same round trip between two C processes, with two atomic
                 writes (write, fsync, rename, fsync the directory) on the same file system
              3. watch restart (kill -9, then a new watch) to batch.applied of the newest batch
              4. the twin (SleepTapEmbedded) in virtual device-days per second, 1 thread and one per core
              5. sleeptap-report over 1,000,000 run records (100,000 with --quick), and over a tenth
                 of them for its memory (when the package has it)
              6. idle CPU and RSS of phone and watch over 10 s (/proc/PID/stat and status)
            Build with `swift run -c release sleeptap-bench`: a debug build measures the debugger's
            code, not the product's.
            """,
        sections: [
            .init(
                nil,
                [
                    OptionSpec("--quick", help: "about a minute: 3 rounds and fewer samples"),
                    OptionSpec(
                        "--smoke", synopsis: .orPrevious,
                        help: "every case once with tiny counts (seconds; the figures mean nothing)"),
                    OptionSpec(
                        "--only", value: "CASE,...", example: "wrapper,twin",
                        help: """
                            run only these, comma-separated: wrapper, durable, restart, idle, twin, report (the
                            JSON then has their rows only)
                            """),
                    OptionSpec(
                        "--json", value: "FILE", example: "bench.json",
                        help: """
                            also write {"machine": ..., "cases": [...]} to FILE: one case per target (name,
                            value, unit, baseline, ratio, target, met, note), and the measurements behind them
                            """),
                    .helpOption(), .versionOption(),
                ])
        ],
        footer: """
            Ctrl-C, SIGTERM, SIGHUP or a closed stdout stop phone and watch and remove the temp dir.
            Exit: 0 the run finished (met or not: see the table), 64 bad arguments, 70 a case could
            not run (a message says which), 73 the JSON file cannot be written, 74 stdout closed or
            not writable, 128 + N on signal N.
            """)

    /// Parses the arguments (without the program name); `-h`, `--help` and `--version` win.
    /// - Throws: `UsageError` naming the option.
    static func parse(_ arguments: [String]) throws(UsageError) -> Parsed<BenchOptions> {
        if let request = Parsed<BenchOptions>.informationRequest(in: arguments) { return request }
        var options = BenchOptions()
        var reader = ArgumentReader(arguments, command: command)
        while let flag = try reader.nextFlag() {
            switch flag {
            case "--quick", "--smoke":
                guard options.mode == .full else { throw UsageError("--quick and --smoke exclude each other") }
                options.mode = flag == "--quick" ? .quick : .smoke
            case "--json": options.jsonPath = try reader.nonEmpty(flag)
            case "--only":
                let text = try reader.nonEmpty(flag)
                var chosen: Set<BenchCase> = []
                for name in text.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let one = BenchCase(rawValue: String(name)) else {
                        throw UsageError(
                            "--only: unknown case \"\(ArgumentReader.clip(String(name)))\" (expected "
                                + BenchCase.allCases.map(\.rawValue).joined(separator: ", ") + ")")
                    }
                    chosen.insert(one)
                }
                options.only = chosen
            default: throw ArgumentReader.unknown(flag)
            }
        }
        return .run(options)
    }
}

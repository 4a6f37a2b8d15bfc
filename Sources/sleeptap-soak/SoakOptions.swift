// SPDX-License-Identifier: Apache-2.0

import SleepTapCommandLine

/// The soak's command line, parsed.
struct SoakOptions: Equatable, Sendable {
    /// The step counts `--steps` accepts.
    static let stepCounts: ClosedRange<Int> = 1...100_000

    /// Fault steps to run (`--steps`).
    var steps = 200
    /// Seed of the choices (`--seed`); nil: a random one, printed.
    var seed: UInt64?
    /// Print each step as it runs (`--verbose`).
    var verbose = false
    /// Print the summary as one JSON object (`--json`).
    var json = false

    /// The soak's options and texts; `--help` is generated from them.
    static let command = CommandSpec(
        program: "sleeptap-soak", operands: "[faults]",
        otherUsages: ["sleeptap-soak exhaustion [...]   the date-exhaustion soak (sleeptap-soak exhaustion --help)"],
        summary: """
            faults (the default): runs the built phone and watch over an ipc socket in a temp dir and, for N seeded steps,
            injects one fault per step:
              open          the phone makes a new batch (stdin `open`)
              kill-phone    kill -9 the phone at a random point (idle, right after `open`, on
                            batch.generated, on batch.sent before the ACK, when the watch applied the
                            batch, after a random delay) and restart it with the same state dir
              kill-watch    kill -9 the watch (idle, on receiving the BATCH, on batch.applied before
                            ack.sent, after a random delay) and restart it with the same state dir
              pause         SIGSTOP the phone or the watch for 20 ms to 1 s (one in four: 3 to 4.5 s,
                            past the heartbeat timeout), sometimes `open` meanwhile, then SIGCONT
              restart-both  stop both (SIGTERM or kill -9), start them again in either order
              handover      SIGSTOP the watch, start a replacement with the same routing id and a copy
                            of its state (ROUTER_HANDOVER), then kill -9 the old one
            After each step it waits until the system is quiet (the watch heard from the phone, its
            watch.json holds the phone.json lastSeq and the phone says acked; deadline 30 s) and checks
            the invariants:
              (a) the watch holds the newest batch: the phone's outbox, entry for entry;
              (b) no batch applied twice (batch.applied across every watch process);
              (c) never older over newer (applied seqs across the run strictly increasing);
              (d) the phone never issues a seq twice (batch.generated across every phone process).
            """,
        sections: [
            .init(
                nil,
                [
                    OptionSpec("--steps", value: "N", example: "10", help: "fault steps, 1 to 100000 (default 200)"),
                    OptionSpec(
                        "--seed", value: "N", example: "42",
                        help: "seed of the choices, 0 to 18446744073709551615 (default: random, printed)"),
                    OptionSpec("--verbose", help: "print each step as it runs"),
                    OptionSpec(
                        "--json", help: "print the summary as one JSON object (event soak.summary) instead of text"),
                    .helpOption(), .versionOption(),
                ])
        ],
        footer: """
            The choices replay from the seed; the timing of the races they set up does not.
            Ctrl-C, SIGTERM, SIGHUP or a closed stdout stop phone and watch and remove the temp dir;
            phone and watch also stop by themselves if this process is killed (SIGKILL).

            Exit: 0 every invariant held (or stdout was closed), 1 an invariant broke (seed, step and
            evidence on stderr), 64 bad arguments, 70 the matrix could not run (phone/watch not built,
            no temp dir), 74 stdout closed (>&-) or not writable (> /dev/full), 128 + N on signal N
            (SIGINT 130, SIGTERM 143, SIGHUP 129).
            """)

    /// Parses the soak's arguments (without the program name); `-h`, `--help` and `--version`
    /// win wherever they stand.
    /// - Throws: `UsageError` naming the option and, for a bad value, the value.
    static func parse(_ arguments: [String]) throws(UsageError) -> Parsed<SoakOptions> {
        if let request = Parsed<SoakOptions>.informationRequest(in: arguments) { return request }
        var options = SoakOptions()
        var reader = ArgumentReader(arguments, command: command)
        while let flag = try reader.nextFlag() {
            switch flag {
            case "--verbose": options.verbose = true
            case "--json": options.json = true
            case "--steps": options.steps = try reader.integer(flag, in: stepCounts)
            case "--seed": options.seed = try reader.unsignedInteger(flag)
            default: throw ArgumentReader.unknown(flag)
            }
        }
        return .run(options)
    }
}

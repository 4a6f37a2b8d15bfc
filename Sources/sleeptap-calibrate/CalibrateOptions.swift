// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCommandLine
import SleepTapCore

/// `sleeptap-calibrate`'s command line.
struct CalibrateOptions: Equatable, Sendable {
    var root: String
    /// Where to write the model file; nil: none written.
    var out: String?
    var json = false

    /// The calibration's options and texts; `--help` is generated from them.
    static let command = CommandSpec(
        program: "sleeptap-calibrate",
        summary: """
            Fits the simulated OS to a fleet's run records (docs/calibration.md). Reads only
            DIR/metrics/bg_runs/*.json, the weekly report's input, with the report's checks (a file
            that is not a valid run-record file is skipped and named on stderr), and changes no
            input. Per group (all, each platform, each Android standby bucket, each app version) it
            gives the delay from a request's earliestBeginDate (or its submit, when later) to the
            launch that answered it as an empirical distribution (p10, p25, p50, p75, p90, p99 of a
            Kaplan-Meier fit in which a request replaced or still pending is censored, each with a
            95 % Brookmeyer-Crowley interval, and a histogram; for iOS also by the days since the
            device's last user open), the share of requests never
            answered, the rates of dropped launches, expirations and quota stops, and the spacing
            of background runs (quantiles with order-statistic (binomial) intervals). Doze, standby quotas and conditions are not
            identified by the records; the simulated OS keeps the platforms' documented rules there.
            """,
        sections: [
            .init(
                "options:",
                [
                    OptionSpec(
                        "--root", value: "DIR", synopsis: .required, example: "/tmp/sleeptap",
                        help: "the metrics root (the directory holding metrics/bg_runs)"),
                    OptionSpec(
                        "--out", value: "MODEL.json", example: "model.json",
                        help: "also write the model there, atomically (schemaVersion 1)"),
                    OptionSpec("--json", help: "print the model as JSON instead of the text summary"),
                    .versionOption("print the version and exit"), .helpOption("print this help and exit"),
                ])
        ],
        footer: """
            exit status: 0 fitted (also with files skipped, as long as one was good); 64 a bad
            command line; 65 no input (no metrics/bg_runs, no *.json file in it, or no file that is
            a run-record file); 73 the model file cannot be written; 74 stdout cannot be written.
            """)

    /// Parses the arguments (without the program name).
    /// - Throws: `UsageError` naming the option and the value.
    static func parse(_ arguments: [String]) throws(UsageError) -> Parsed<CalibrateOptions> {
        if let request = Parsed<CalibrateOptions>.informationRequest(in: arguments) { return request }
        var reader = ArgumentReader(arguments, command: command)
        var root: String?
        var out: String?
        var json = false
        while let flag = try reader.nextFlag() {
            switch flag {
            case "--root": root = try reader.nonEmpty(flag)
            case "--out": out = try reader.nonEmpty(flag)
            case "--json": json = true
            case let operand where !operand.hasPrefix("-") && root == nil:
                // A directory given alone, as most tools take one: say which option takes it.
                throw UsageError(
                    "unknown argument \(ArgumentReader.clip(operand)): the records' directory is given as --root \(ArgumentReader.clip(operand))"
                )
            default: throw ArgumentReader.unknown(flag)
            }
        }
        guard let root else { throw UsageError("--root is required") }
        var options = CalibrateOptions(root: root)
        options.out = out
        options.json = json
        return .run(options)
    }
}

// SPDX-License-Identifier: Apache-2.0
import Foundation
package import SleepTapCommandLine
package import SleepTapCore
import SleepTapOS

/// The flags that describe a simulated fleet's population and its shard, read the same way by
/// `sleeptap-fleet` and `sleeptap-compare` (docs/fleet.md): `--devices`, `--days`, `--start`,
/// `--seed`, `--os-seed`, `--mix`, `--late-registration`, `--late-registration-from`, `--opens`,
/// `--low-power`, `--nightstand`, `--buckets`, `--os-model`, `--opportunity-model` and `--shard`.
package struct FleetPopulationFlags: Sendable {
    /// `--devices N`, nil when not given.
    package var devices: Int?
    /// `--days D`, nil when not given.
    package var days: Int?
    var start: LocalDate?
    var seed: UInt64 = 0
    /// Whether `--seed` was given (the `--bench` workload has its own seeds).
    private(set) var seedGiven = false
    var osSeed: UInt64?
    var mix: [String: Double]?
    var late = 0.0
    var lateFrom: LocalDate?
    var lowPower: Double?
    var nightstand: Double?
    var opens: Double?
    var buckets: [StandbyBucket: Double]?
    var shard: (Int, Int)?
    var osModel: String?
    var opportunityModel: OpportunityModelKind?

    /// No flag read yet.
    package init() {}

    /// The population's and the shard's options, declared once for both tools' `--help`.
    package static let options: [OptionSpec] = [
        OptionSpec(
            "--devices", value: "N", synopsis: .required, example: "10", help: "devices in the fleet, 1 to 10000000"),
        OptionSpec("--days", value: "D", synopsis: .required, example: "7", help: "simulated UTC days, 1 to 366"),
        OptionSpec(
            "--start", value: "DATE", example: "2026-01-01",
            help: """
                the first simulated UTC day, 1970-01-01 to 2199-12-31 with the days after it (default: D
                days before today, UTC)
                """),
        OptionSpec("--seed", value: "S", example: "42", help: "seeds every device (default 0)"),
        OptionSpec(
            "--os-seed", value: "O", example: "1",
            help: """
                the same users (--seed) with other OS draws: O is mixed into each device's OS seed
                (default 0); for a second fleet on a fitted --os-model (docs/calibration.md)
                """),
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
            "--opportunity-model", value: "legacy|usage", example: "legacy",
            help: """
                how the iOS devices' OS draws app-refresh launches: usage (default) launches before the
                times of day the user opens the app, rarer as days pass without an open, at least 30 min
                apart (docs/scheduler.md, "Usage model"); legacy an exponential wait
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
    ]

    /// Reads `flag` and its value from `reader` when it is one of the population's flags.
    /// - Returns: false, reading nothing, for any other flag.
    /// - Throws: `UsageError` naming the flag and what is wrong with its value.
    package mutating func read(_ flag: String, from reader: inout ArgumentReader) throws(UsageError) -> Bool {
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
        switch flag {
        case "--devices": devices = try reader.integer(flag, in: 1...10_000_000)
        case "--days": days = try reader.integer(flag, in: 1...366)
        case "--start": start = try date(flag)
        case "--seed":
            seed = try reader.unsignedInteger(flag)
            seedGiven = true
        case "--os-seed": osSeed = try reader.unsignedInteger(flag)
        case "--mix":
            mix = try FleetCommand.shares(flag, try reader.value(flag), names: ["ios", "android"])
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
            let named = try FleetCommand.shares(flag, try reader.value(flag), names: StandbyBucket.all.map(\.name))
            buckets = Dictionary(
                uniqueKeysWithValues: named.compactMap { key, value in StandbyBucket(name: key).map { ($0, value) }
                })
        case "--shard":
            let text = try reader.value(flag)
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1,
                count <= FleetCommand.maxShards, index >= 0, index < count
            else {
                throw UsageError(
                    "--shard \"\(ArgumentReader.clip(text))\": expected I/N with 0 <= I < N <= 1000000 (e.g. 0/4)")
            }
            shard = (index, count)
        case "--os-model": osModel = try reader.nonEmpty(flag)
        case "--opportunity-model":
            let text = try reader.value(flag)
            guard let kind = OpportunityModelKind(rawValue: text) else {
                throw UsageError("\(flag) \"\(ArgumentReader.clip(text))\": expected legacy or usage")
            }
            opportunityModel = kind
        default: return false
        }
        return true
    }

    /// The flags given that only a fleet run takes (not `sleeptap-fleet --bench`), in the
    /// fleet's order: (flag, given).
    var fleetOnlyGiven: [(String, Bool)] {
        [
            ("--seed", seedGiven), ("--os-seed", osSeed != nil), ("--start", start != nil), ("--mix", mix != nil),
            ("--late-registration", late != 0), ("--late-registration-from", lateFrom != nil),
            ("--low-power", lowPower != nil), ("--nightstand", nightstand != nil), ("--opens", opens != nil),
            ("--buckets", buckets != nil), ("--os-model", osModel != nil),
            ("--opportunity-model", opportunityModel != nil),
            ("--shard", shard != nil),
        ]
    }

    /// The fleet these flags describe; `--devices` and `--days` must have been given.
    /// - Parameters:
    ///   - today: the UTC date `--start` counts back from.
    ///   - environment: for the shard of a batch job when `--shard` is not given
    ///     (`FleetCommand.shard(in:)`).
    /// - Throws: `UsageError` naming the flag (or variable) and what is wrong.
    package func options(today: LocalDate, environment: [String: String]) throws(UsageError) -> FleetOptions {
        guard let devices else { throw UsageError("--devices N is required") }
        guard let days else { throw UsageError("--days D is required") }
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
        if let osSeed { options.osSeedSalt = osSeed }
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
        if let osModel, options.iosShare == 0 {
            // The model gives iOS's delays only; Android keeps the documented rules
            // (docs/calibration.md), so a fleet without iOS devices would not run on it.
            throw UsageError(
                "--os-model \(printable(osModel)): the fleet has no iOS devices (--mix ios=0), and the model "
                    + "drives only iOS's delays (Android keeps the documented rules); leave it out, or give iOS a share"
            )
        }
        options.osModelFile = osModel
        if let opportunityModel, options.iosShare == 0 {
            // A flag that means nothing here is an error rather than a silent choice.
            throw UsageError(
                "--opportunity-model \(opportunityModel.rawValue): the fleet has no iOS devices (--mix ios=0), and "
                    + "the opportunity model is iOS's (Android keeps the documented rules); leave it out, or give iOS "
                    + "a share")
        }
        if let opportunityModel { options.opportunityModel = opportunityModel }
        var shard = self.shard
        if shard == nil { shard = try FleetCommand.shard(in: environment) }
        if let (index, count) = shard {
            options.shardIndex = index
            options.shardCount = count
        }
        return options
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCommandLine
import SleepTapCore
import SleepTapOS
import SleepTapRuntime

/// Keeps one simulated fleet per output directory: `DIR/metrics/fleet-run.json` names the options
/// of the run whose records `DIR/metrics/bg_runs` holds, and a run with other options is refused
/// there, because the report and the calibration read every file of the directory and would mix
/// the two fleets. Running the same command again (after a stop half-way, docs/fleet.md) is
/// allowed: it writes the same files again; so are the other shards of the same fleet, whose
/// files together make the whole fleet's.
package enum FleetOutput {
    /// The file under `DIR/metrics` naming the run that wrote `DIR/metrics/bg_runs`.
    package static let manifestName = "fleet-run.json"

    /// Why a directory cannot take this run's records.
    package struct Refusal: Error, CustomStringConvertible {
        package var description: String
    }

    /// The options that decide a fleet's records, as one line of text: not `--jobs`, which
    /// changes nothing in them, nor the shard, which picks some of the same fleet's devices,
    /// nor the model file's path (its bytes' digest is). Each part is named after its
    /// `FleetOptions` property (`FleetOutputTests` checks that none is missing).
    package static func signature(of options: FleetOptions) -> String {
        let buckets = StandbyBucket.all.map { "\($0.rawValue):\(options.buckets[$0] ?? 0)" }.joined(separator: ",")
        let model = options.osModelDigest ?? (options.osModel == nil ? "none" : "given")
        return [
            "devices=\(options.devices)", "days=\(options.days)", "start=\(options.start)", "seed=\(options.seed)",
            "osSeedSalt=\(options.osSeedSalt)", "iosShare=\(options.iosShare)",
            "lateRegistration=\(options.lateRegistration)",
            "lateRegistrationFrom=\(options.lateRegistrationFrom?.description ?? "none")", "opens=\(options.opens)",
            "lowPower=\(options.lowPower)", "nightstand=\(options.nightstand)", "buckets=\(buckets)",
            "opportunityModel=\(options.opportunityModel.rawValue)", "osModelDigest=\(model)",
            "horizonDays=\(options.horizonDays)", "requestDates=\(options.requestDates)",
            "processingTask=\(options.processingTask)", "push=\(options.push?.rawValue ?? "none")",
            "warnNights=\(options.warnNights)", "watchNights=\(options.watchNights)",
        ].joined(separator: " ")
    }

    /// Checks that `root` may take the records of a run with `options`, and records that it
    /// does: `check(root:options:)`, then writes `root/metrics/fleet-run.json` (atomically) for
    /// this run.
    /// - Parameters:
    ///   - root: the run's `--out` directory (or a strategy's under it).
    ///   - options: the run's options.
    /// - Throws: `Refusal` naming the directory, what it holds and how to go on; nothing is
    ///   written then.
    package static func claim(root: String, options: FleetOptions) throws(Refusal) {
        try check(root: root, options: options)
        let metrics = root + "/metrics"
        let object: [String: Any] = ["kind": "sleeptap.fleet-run", "options": signature(of: options)]
        do throws(FileError) {
            try AtomicFile.ensureDirectory(metrics)
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            try AtomicFile.write(data + Data("\n".utf8), to: metrics + "/" + manifestName, durable: false)
        } catch {
            throw Refusal(description: "\(error)")
        }
    }

    /// The options two signatures differ in, as `seed 2, not 1; days 14, not 7` (theirs, then
    /// ours), or the whole of theirs when they do not split into `name=value` parts.
    static func difference(_ theirs: String, _ ours: String) -> String {
        func parts(_ text: String) -> [String: String] {
            var result: [String: String] = [:]
            for part in text.split(separator: " ") {
                let pair = part.split(separator: "=", maxSplits: 1)
                if pair.count == 2 { result[String(pair[0])] = String(pair[1]) }
            }
            return result
        }
        let a = parts(theirs)
        guard !a.isEmpty, let differing = differing(a, parts(ours)) else { return theirs }
        return differing
    }

    /// The parameters whose values differ between `theirs` and `ours` (values as text, a missing
    /// one `none`): `seed 2, not 1; days 14, not 7`, in name order; nil when none does. The one
    /// wording of every "another run" refusal (`FleetOutput`, `CompareMerge`).
    static func differing(_ theirs: [String: String], _ ours: [String: String]) -> String? {
        let names = Set(theirs.keys).union(ours.keys).sorted().filter { (theirs[$0] ?? "none") != (ours[$0] ?? "none") }
        guard !names.isEmpty else { return nil }
        return names.map { "\($0) \(theirs[$0] ?? "none"), not \(ours[$0] ?? "none")" }.joined(separator: "; ")
    }

    /// Checks, writing nothing, that `root` holds no records of another run: when
    /// `root/metrics/bg_runs` holds `.json` files, `root/metrics/fleet-run.json` must name
    /// `options`. A run that writes no records beside them still checks, so that a directory
    /// never holds a table of one run beside the records of another.
    /// - Throws: `Refusal` naming the directory, what it holds and how to go on.
    package static func check(root: String, options: FleetOptions) throws(Refusal) {
        let records = root + "/" + RunRecordFile.directory
        let manifest = root + "/metrics/" + manifestName
        let signature = signature(of: options)
        let held =
            (try? FileManager.default.contentsOfDirectory(atPath: records))?.filter { $0.hasSuffix(".json") } ?? []
        guard !held.isEmpty else { return }
        let bytes = try? BoundedFile.read(manifest, limit: 64 << 10)
        let written = bytes.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        let earlier = written?["options"] as? String
        guard earlier == signature else {
            let whose =
                earlier.map { "a fleet of other options (\(Self.difference($0, signature)))" }
                ?? (bytes == nil
                    ? "records of no known run (no readable \(manifestName) beside them)"
                    : "records of no known run (\(manifestName) beside them names no fleet's options: not this "
                        + "tool's JSON)")
            throw Refusal(
                description:
                    "\(printable(records)) already holds \(held.count) file\(held.count == 1 ? "" : "s"), \(whose); this run's would mix "
                    + "with them in every report and calibration. Give an empty --out directory, or remove "
                    + "\(printable(records)) first")
        }
    }
}

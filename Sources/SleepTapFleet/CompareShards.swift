// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
package import SleepTapRuntime

/// One shard's tally of one strategy on disk, `DIR/<strategy>/tally/shard-I-of-N.json`: written
/// by `sleeptap-compare --out DIR`, read by `sleeptap-compare --merge DIR` (docs/fleet.md,
/// "Comparing refresh strategies"), which adds the shards up to the whole fleet's table.
package struct CompareShardFile: Codable, Equatable, Sendable {
    /// What the file is: `sleeptap.compare.shard`.
    package var kind = Self.kindName
    /// The format's version: 1.
    package var schemaVersion = 1
    /// The comparison it belongs to (`CompareReport.fleetFingerprint`).
    package var fleet: String
    /// The shard: devices whose index ≡ `shardIndex` (mod `shardCount`), 0-based.
    package var shardIndex: Int
    /// The number of shards.
    package var shardCount: Int
    /// The shard's tally of the strategy (its staleness samples sorted).
    package var tally: StrategyTally

    /// `sleeptap.compare.shard`.
    package static let kindName = "sleeptap.compare.shard"

    /// The file's path under `root` (a `--out` or `--merge` directory).
    package static func path(root: String, strategy: RefreshStrategy, shardIndex: Int, shardCount: Int) -> String {
        "\(root)/\(strategy.rawValue)/tally/shard-\(shardIndex)-of-\(shardCount).json"
    }

    /// Writes one file per strategy of `report` under `root`, each atomically.
    /// - Throws: `FileError` naming the directory or file that could not be written.
    package static func write(_ report: CompareReport, root: String) throws(FileError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for tally in report.tallies {
            let file = CompareShardFile(
                fleet: report.fleetFingerprint, shardIndex: report.options.shardIndex,
                shardCount: report.options.shardCount, tally: tally)
            let path = Self.path(
                root: root, strategy: tally.strategy, shardIndex: file.shardIndex, shardCount: file.shardCount)
            try AtomicFile.ensureDirectory(FilePaths.parent(of: path))
            // Encoding plain numbers and strings cannot fail.
            let data = (try? encoder.encode(file)) ?? Data()
            try AtomicFile.write(data, to: path, durable: false)
        }
    }
}

/// Why `--merge DIR` cannot make a table, in words naming the file or the shards.
package struct CompareMergeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The message.
    package var description: String
    init(_ description: String) { self.description = description }
}

/// `sleeptap-compare --merge DIR`: the shards' tallies added up (`CompareShardFile`).
package enum CompareMerge {
    /// The whole fleet's tallies from the shard files under `root`, one per strategy, in order.
    ///
    /// Every file under `root/<strategy>/tally/` must be a shard of this comparison (the same
    /// `CompareReport.fleetFingerprint` as `report`'s options and settings) with the devices and
    /// device-days of its shard of that fleet, and together they must be shards 0 to N − 1 of
    /// one N, each once.
    /// - Parameters:
    ///   - report: the comparison asked for (its options' shard is ignored; its tallies unused).
    ///   - root: the directory the shards' `--out` directories were copied into.
    /// - Throws: `CompareMergeError` naming the file (unreadable, not a shard file, another
    ///   comparison: the parameters that differ) or the shards missing or given twice.
    package static func tallies(for report: CompareReport, root: String) throws(CompareMergeError) -> [StrategyTally] {
        let strategies = report.tallies.map(\.strategy)
        let fingerprint = report.fleetFingerprint
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory) else {
            throw CompareMergeError("\(root): no such directory")
        }
        guard isDirectory.boolValue else {
            throw CompareMergeError("\(root): not a directory (give the directory the shards' --out were copied into)")
        }
        /// A strategy's tally files under `root`, in name order.
        func tallyNames(_ strategy: RefreshStrategy) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: "\(root)/\(strategy.rawValue)/tally")) ?? [])
                .filter { $0.hasSuffix(".json") }.sorted()
        }
        // A directory with no strategy's tallies at all is named itself, not its first strategy's.
        guard strategies.contains(where: { !tallyNames($0).isEmpty }) else {
            throw CompareMergeError(
                "\(root): no shard tallies of sleeptap-compare (none of \(strategies.map { "\($0.rawValue)/tally/" }.joined(separator: ", ")) "
                    + "holds one; each shard's run writes them with --out; copy the shards' --out directories into one)"
            )
        }
        var result: [StrategyTally] = []
        for strategy in strategies {
            let directory = "\(root)/\(strategy.rawValue)/tally"
            let names = tallyNames(strategy)
            guard !names.isEmpty else {
                // Shards run with --strategies: the merge must name the same ones.
                let held = RefreshStrategy.allCases.filter { !tallyNames($0).isEmpty }
                let hint =
                    held.isEmpty
                    ? ""
                    : "; \(root) holds the tallies of \(held.map(\.rawValue).joined(separator: ", ")): give the "
                        + "shards' own --strategies (--strategies \(held.map(\.rawValue).joined(separator: ",")))"
                throw CompareMergeError(
                    "\(directory): no shard tallies (each shard's run writes them with --out; copy the shards' "
                        + "--out directories into one)\(hint)")
            }
            var shards: [Int: String] = [:]
            var count: (Int, String)?
            var total = StrategyTally(strategy: strategy)
            for name in names {
                let path = directory + "/" + name
                let file = try Self.read(path)
                guard file.tally.strategy == strategy else {
                    throw CompareMergeError(
                        "\(path): a tally of \(file.tally.strategy.rawValue), not \(strategy.rawValue)")
                }
                guard file.fleet == fingerprint else {
                    throw CompareMergeError(
                        "\(path): a shard of another comparison (\(Self.difference(file.fleet, fingerprint))); give "
                            + "--merge the shards' own fleet flags")
                }
                if let (n, first) = count, n != file.shardCount {
                    throw CompareMergeError("\(path): shard of \(file.shardCount), but \(first) is a shard of \(n)")
                }
                count = count ?? (file.shardCount, path)
                if let other = shards[file.shardIndex] {
                    throw CompareMergeError(
                        "\(path): shard \(file.shardIndex)/\(file.shardCount) is also in \(other)")
                }
                // The fingerprint gives the fleet's devices and days, so each shard's counts.
                var shard = report.options
                shard.shardIndex = file.shardIndex
                shard.shardCount = file.shardCount
                let devices = shard.shardDeviceCount
                let (deviceDays, overflow) = devices.multipliedReportingOverflow(by: report.options.days)
                guard file.tally.devices == devices, !overflow, file.tally.deviceDays == deviceDays else {
                    throw CompareMergeError(
                        "\(path): tally: devices \(file.tally.devices) and deviceDays \(file.tally.deviceDays), but shard "
                            + "\(file.shardIndex)/\(file.shardCount) of \(report.options.devices) devices × "
                            + "\(report.options.days) days has \(devices) and \(deviceDays)")
                }
                shards[file.shardIndex] = path
                if let overflow = total.merge(file.tally) { throw CompareMergeError("\(path): tally: \(overflow)") }
            }
            let n = count?.0 ?? 1
            let missing = (0..<n).filter { shards[$0] == nil }
            guard missing.isEmpty else {
                throw CompareMergeError(
                    "\(directory): shards " + missing.map { "\($0)/\(n)" }.joined(separator: ", ")
                        + " missing (the table needs every shard)")
            }
            result.append(total)
        }
        return result
    }

    /// One shard file, checked.
    static func read(_ path: String) throws(CompareMergeError) -> CompareShardFile {
        let data: Data
        do {
            data = try BoundedFile.read(path, limit: 256 << 20)
        } catch {
            throw CompareMergeError("\(path): \(error)")
        }
        // Strict JSON first (a key given twice, a number out of range: where, by line and column).
        if let problem = JSONDiagnosis.problem(in: data) {
            throw CompareMergeError("\(path): not a shard tally of sleeptap-compare (\(problem))")
        }
        let file: CompareShardFile
        let decoder = JSONDecoder()
        do {
            file = try decoder.decode(CompareShardFile.self, from: data)
        } catch {
            let why = JSONDiagnosis.describe(error, decoding: CompareShardFile.self, from: data, with: decoder)
            throw CompareMergeError("\(path): not a shard tally of sleeptap-compare (\(why))")
        }
        guard file.kind == CompareShardFile.kindName else {
            throw CompareMergeError("\(path): kind \"\(file.kind)\": expected \"\(CompareShardFile.kindName)\"")
        }
        guard file.schemaVersion == 1 else {
            throw CompareMergeError("\(path): schemaVersion \(file.schemaVersion): this build reads 1")
        }
        guard file.shardCount >= 1, (0..<file.shardCount).contains(file.shardIndex) else {
            throw CompareMergeError("\(path): shard \(file.shardIndex)/\(file.shardCount): expected 0 <= I < N")
        }
        if let problem = file.tally.problem { throw CompareMergeError("\(path): tally: \(problem)") }
        return file
    }

    /// The parameters that differ between two fingerprints: `seed 2, not 1`.
    static func difference(_ theirs: String, _ ours: String) -> String {
        func object(_ text: String) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
        }
        func text(_ value: Any) -> String {
            guard !(value is NSNull) else { return "none" }
            if let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
            {
                return String(decoding: data, as: UTF8.self)
            }
            return "\(value)"
        }
        return FleetOutput.differing(object(theirs).mapValues(text), object(ours).mapValues(text))
            ?? "its parameters differ"
    }
}

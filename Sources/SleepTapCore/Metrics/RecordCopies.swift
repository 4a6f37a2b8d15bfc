// SPDX-License-Identifier: Apache-2.0
import Foundation

/// The records of a device's files that a copy of an earlier file repeats (docs/metrics.md, "Bad
/// input"): over one run of a device's files read one after the other, a record counts as often
/// as the file that held it most often; the rest are a copy's. The report and
/// `sleeptap-calibrate` read each file through one.
///
/// Each record gets a cheap key (its instant in milliseconds and its kind); records are compared
/// in full only once a key comes again, which a copy's do and one device's own records seldom do.
package struct RecordCopies: Sendable {
    /// The device of the current run of files (its first file's first record's).
    private var device: String?
    private var keys: Set<Int64> = []
    /// The earlier files' records, while no key came again.
    private var records: [RunRecord] = []
    /// Where each earlier file's records start in `records`.
    private var fileStarts: [Int] = []
    /// Once a key came again: each record's most copies in one earlier file.
    private var counts: [RunRecord: Int]?

    package init() {}

    /// The records of one file that are not a copy's, in order: all of them, unless the file
    /// repeats records of an earlier file of the same device's run (each only as often as that
    /// file held it).
    package mutating func fresh(_ file: [RunRecord]) -> [RunRecord] {
        if file.first?.device != device {
            keys.removeAll(keepingCapacity: true)
            records.removeAll(keepingCapacity: true)
            fileStarts.removeAll(keepingCapacity: true)
            counts = nil
            device = file.first?.device
        }
        // No key of an earlier file (no copy, the usual case): only cheap keys are kept.
        if counts == nil, !file.contains(where: { keys.contains(Self.key($0)) }) {
            fileStarts.append(records.count)
            records += file
            for record in file { keys.insert(Self.key(record)) }
            return file
        }
        // A key came again: from now on, each record's most copies in one file (a multiset).
        var most = counts ?? [:]
        if counts == nil {
            for (index, start) in fileStarts.enumerated() {
                let end = index + 1 < fileStarts.count ? fileStarts[index + 1] : records.count
                var held: [RunRecord: Int] = [:]
                for record in records[start..<end] { held[record, default: 0] += 1 }
                most.merge(held) { max($0, $1) }
            }
            records.removeAll(keepingCapacity: true)
            fileStarts.removeAll(keepingCapacity: true)
        }
        var held: [RunRecord: Int] = [:]
        var fresh: [RunRecord] = []
        for record in file {
            let here = held[record, default: 0]
            held[record] = here + 1
            if here >= most[record, default: 0] { fresh.append(record) }
        }
        most.merge(held) { max($0, $1) }
        counts = most
        return fresh
    }

    /// A record's instant in milliseconds and its kind, as one number: equal records have equal
    /// keys, and one device's records seldom share one.
    private static func key(_ record: RunRecord) -> Int64 {
        let milliseconds = Int64((record.at.timeIntervalSince1970 * 1_000).rounded())
        let kind: Int64 =
            switch record.kind {
            case .submitted: 0
            case .submitFailed: 1
            case .background: 2
            case .dropped: 3
            case .foreground: 4
            case .push: 5
            }
        return milliseconds &* 8 &+ kind
    }
}

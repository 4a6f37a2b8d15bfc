// SPDX-License-Identifier: Apache-2.0
import Foundation
package import SleepTapCore

/// Writes run records (docs/metrics.md) under a metrics root `DIR`:
/// `DIR/metrics/bg_runs/<device>-<YYYY-MM-DD>.json`, one file per device per UTC day, each a JSON
/// array in `RunRecordFile`'s format, every write atomic (`AtomicFile`: a temp file, fsync,
/// rename), so a reader never sees half a file.
///
/// `phone --metrics-dir DIR` appends each record as it comes; a simulation that holds a device's
/// records (`sleeptap-fleet`) writes each file once with `write(_:)`.
package struct RunRecordWriter: Sendable {
    /// The metrics root `DIR`.
    package let root: String

    /// - Parameter root: the metrics root; files go under `root/metrics/bg_runs`.
    package init(root: String) { self.root = root }

    /// `root/metrics/bg_runs`.
    package var directory: String { root + "/" + RunRecordFile.directory }

    /// The file that holds `record`.
    package func path(for record: RunRecord) -> String {
        directory + "/" + RunRecordFile.fileName(device: record.device, day: record.at)
    }

    /// Creates `root/metrics/bg_runs` (mode 0700, with parents) if missing.
    /// - Throws: `FileError` naming the directory that cannot be created or written.
    package func prepare() throws(FileError) {
        try AtomicFile.ensureDirectory(directory)
    }

    /// Appends `records` to their files, in order: each file is read (strictly), the new records
    /// are added at its end and it is written back atomically. A file that is not a valid
    /// run-record file is never overwritten.
    /// - Throws: `FileError` naming the file: unreadable, not a run-record file (with the
    ///   problem), or not writable.
    package func append(_ records: [RunRecord]) throws(FileError) {
        for (path, group) in grouped(records) {
            var existing: [RunRecord] = []
            let data: Data?
            do throws(BoundedFile.Failure) {
                data = try BoundedFile.read(path, limit: FreshnessReportFiles.maxFileBytes)
            } catch .cannotOpen(Errno(ENOENT)) {
                data = nil
            } catch {
                throw FileError(path: path, reason: "\(error); not overwritten", errno: error.errno)
            }
            if let data {
                do {
                    existing = try RunRecordFile.decode(data)
                } catch {
                    throw FileError(path: path, reason: "not a run-record file (\(error)); not overwritten")
                }
            }
            try AtomicFile.write(RunRecordFile.encode(existing + group), to: path)
        }
    }

    /// Writes `records` to their files, replacing what they held: one write per file, the
    /// records of a file in the order given. Creates the directory first.
    /// - Parameter durable: false writes each file atomically but without fsync
    ///   (`AtomicFile.write(_:to:durable:)`): `sleeptap-fleet`, which makes its files again
    ///   rather than recovering them, writes hundreds of thousands.
    /// - Throws: `FileError` naming the file or directory that cannot be written.
    package func write(_ records: [RunRecord], durable: Bool = true) throws(FileError) {
        try prepare()
        for (path, group) in grouped(records) {
            try AtomicFile.write(RunRecordFile.encode(group), to: path, durable: durable)
        }
    }

    /// The records by file, files in name order, records in the order given.
    private func grouped(_ records: [RunRecord]) -> [(String, [RunRecord])] {
        var byPath: [String: [RunRecord]] = [:]
        for record in records { byPath[path(for: record), default: []].append(record) }
        return byPath.sorted { $0.key < $1.key }
    }
}

// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Foundation
public import SleepTapCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The files of `sleeptap-report` (docs/metrics.md): reads only `ROOT/metrics/bg_runs/*.json`,
/// on every core, each thread one file at a time (a file's records are decoded, added and dropped
/// before that thread reads its next file), and writes only `ROOT/reports/bg_freshness_<date>.md`, atomically (`AtomicFile`). It
/// never writes, moves or changes an input.
public enum FreshnessReportFiles {
    /// Why no report was written.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// No usable input: no directory, no `*.json` file, or every file bad (exit 65).
        case noInput(String)
        /// The reports directory or the report cannot be written (exit 73).
        case cannotWrite(FileError)

        public var description: String {
            switch self {
            case .noInput(let why): why
            case .cannotWrite(let error): "cannot write the report: \(error)"
            }
        }

        /// 65 or 73.
        public var exitCode: ExitCode {
            switch self {
            case .noInput: .dataError
            case .cannotWrite: .cantCreate
            }
        }
    }

    /// A file larger than this is skipped unread (256 MiB; one device's day is a few kilobytes).
    public static let maxFileBytes = 256 << 20

    /// Reads the records under `root` into a report for `date` (no writing).
    /// - Throws: `Failure.noInput` when no file could be used, naming the directory and each
    ///   skipped file's reason.
    public static func read(root: String, date: LocalDate) throws(Failure) -> FreshnessReport {
        let directory = root + "/" + RunRecordFile.directory
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw .noInput("no input: \(directory) is not a directory")
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }
                .sorted()
        } catch {
            throw .noInput("no input: \(directory) cannot be listed (\(error.localizedDescription))")
        }
        guard !names.isEmpty else { throw .noInput("no input: no *.json file in \(directory)") }
        // Files are read on every core: contiguous runs of files, each into its own report,
        // merged in file order (`FreshnessReport.merge`), so the report does not depend on which
        // thread ran first. Each thread holds one file's records at a time.
        let runs = min(names.count, max(1, ProcessInfo.processInfo.activeProcessorCount) * 8)
        let partial = Mutex<[Int: FreshnessReport]>([:])
        DispatchQueue.concurrentPerform(iterations: runs) { run in
            var part = FreshnessReport(date: date)
            for name in names[(run * names.count / runs)..<((run + 1) * names.count / runs)] {
                add(file: name, in: directory, to: &part)
            }
            partial.withLock { $0[run] = part }
        }
        var report = FreshnessReport(date: date)
        partial.withLock { parts in
            for run in 0..<runs { if let part = parts[run] { report.merge(part) } }
        }
        guard report.files > 0 else {
            let reasons = report.skipped.map { "  \($0.file): \($0.reason)" }.joined(separator: "\n")
            throw .noInput("no input: no file in \(directory) is a run-record file:\n\(reasons)")
        }
        return report
    }

    /// The whole file at `path` (about `size` bytes; a file that grew is read to its end), nil on
    /// an error (errno set).
    private static func readAll(_ path: String, size: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: max(size, 4_096))
        var count = 0
        while true {
            if count == bytes.count { bytes += [UInt8](repeating: 0, count: bytes.count) }
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { break }
            count += n
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }

    /// Reads one file into `report`, or records in it why the file was skipped.
    private static func add(file name: String, in directory: String, to report: inout FreshnessReport) {
        let path = directory + "/" + name
        var info = stat()
        guard stat(path, &info) == 0 else {
            report.skip(file: name, reason: "cannot be read: \(String(cString: strerror(errno)))")
            return
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            report.skip(file: name, reason: "not a regular file")
            return
        }
        guard Int(info.st_size) <= maxFileBytes else {
            report.skip(file: name, reason: "\(info.st_size) bytes; at most \(maxFileBytes) bytes are read")
            return
        }
        guard let bytes = readAll(path, size: Int(info.st_size)) else {
            report.skip(file: name, reason: "cannot be read: \(String(cString: strerror(errno)))")
            return
        }
        do {
            report.add(file: try RunRecordFile.decode(bytes: bytes))
        } catch {
            report.skip(file: name, reason: error.description)
        }
    }

    /// Writes `report` to `root/reports/bg_freshness_<date>.md` atomically (a re-run on the same
    /// date replaces it); creates `root/reports` (mode 0700) if missing.
    /// - Returns: the report's path.
    /// - Throws: `Failure.cannotWrite` naming the directory or file.
    @discardableResult
    public static func write(_ report: FreshnessReport, root: String) throws(Failure) -> String {
        let directory = root + "/reports"
        let path = directory + "/" + report.fileName
        do throws(FileError) {
            try AtomicFile.ensureDirectory(directory)
            try AtomicFile.write(Data(report.markdown().utf8), to: path)
        } catch {
            throw .cannotWrite(error)
        }
        return path
    }
}

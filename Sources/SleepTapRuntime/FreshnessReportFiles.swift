// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Foundation
import SleepTapCommandLine
package import SleepTapCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The files of `sleeptap-report` (docs/metrics.md): reads only `ROOT/metrics/bg_runs/*.json`,
/// on every core, each thread one file at a time (a file's records are decoded, added and dropped
/// before that thread reads its next file), and writes only `ROOT/reports/bg_freshness_<date>.md`, atomically (`AtomicFile`). It
/// never writes, moves or changes an input.
package enum FreshnessReportFiles {
    /// Why no report was written.
    package enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// No usable input: no directory, no `*.json` file, or every file bad (exit 65).
        case noInput(String)
        /// The reports directory or the report cannot be written (exit 73).
        case cannotWrite(FileError)

        package var description: String {
            switch self {
            case .noInput(let why): why
            case .cannotWrite(let error): "cannot write the report: \(error)"
            }
        }

        /// 65 or 73.
        package var exitCode: ExitCode {
            switch self {
            case .noInput: .dataError
            case .cannotWrite: .cantCreate
            }
        }
    }

    /// A file larger than this is skipped unread (16 MiB, about 60,000 records; one device's day
    /// is a few kilobytes). Each reading thread holds one file and its decoded records at a time,
    /// so this bounds the report's memory.
    package static let maxFileBytes = 16 << 20

    /// The last UTC day that has run records under `root`: `sleeptap-report`'s default `--date`,
    /// so that a fleet that ends yesterday, or a phone on a virtual clock, gets its last full two
    /// weeks. The files' names give the candidates (`<device>-<YYYY-MM-DD>.json`, the day of every
    /// record in the file), latest first; a day counts once one of its files reads as records
    /// (`RunRecordFile.decode`) with at least one of that UTC day, so an empty, bad or misnamed
    /// file does not move the report to its day. Nil when the directory cannot be listed or no
    /// file qualifies.
    package static func lastRecordDay(root: String) -> LocalDate? {
        let directory = root + "/" + RunRecordFile.directory
        guard let names = try? Names(jsonFilesIn: directory) else { return nil }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { return nil }
        defer { close(directoryFD) }
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC") ?? .gmt
        // The day in each name's last 15 bytes (`YYYY-MM-DD.json`) as the number YYYYMMDD, read
        // from the listing's bytes (no `String` per file); latest day first, then the latest name.
        let candidates = names.bytes.withUnsafeBufferPointer { text in
            (0..<names.count).compactMap { index -> (day: Int, index: Int)? in
                let start = names.starts[index]
                let end = (index + 1 < names.count ? names.starts[index + 1] : text.count) - 1
                guard end - start >= 16 else { return nil }
                var day = 0
                for (offset, at) in ((end - 15)..<(end - 5)).enumerated() {
                    let byte = UInt8(bitPattern: text[at])
                    if offset == 4 || offset == 7 {
                        guard byte == UInt8(ascii: "-") else { return nil }
                    } else {
                        guard byte >= 0x30, byte <= 0x39 else { return nil }
                        day = day * 10 + Int(byte - 0x30)
                    }
                }
                return (day, index)
            }.sorted { ($0.day, $0.index) > ($1.day, $1.index) }
        }
        var buffer = Data()
        for candidate in candidates {
            // Only a real calendar date counts.
            let text = String(
                format: "%04d-%02d-%02d", candidate.day / 10_000, candidate.day / 100 % 100, candidate.day % 100)
            guard let day = LocalDate(parsing: text),
                case .success(let loaded) = names.bytes.withUnsafeBufferPointer({ text in
                    load(file: text.baseAddress! + names.starts[candidate.index], in: directoryFD, buffer: &buffer)
                })
            else { continue }
            if loaded.records.contains(where: { LocalDate($0.at, in: utc) == day }) { return day }
        }
        return nil
    }

    /// A hint for a `--root` with no `metrics/bg_runs` under it that holds records nearby: the
    /// `metrics` or `bg_runs` directory itself (the root is above it), or the directories of
    /// `sleeptap-compare --out` (one root per strategy); empty when none applies.
    package static func rootHint(_ root: String) -> String {
        let trimmed = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        let parts = RunRecordFile.directory.split(separator: "/").map(String.init)  // metrics, bg_runs
        func isDirectory(_ path: String) -> Bool {
            var flag: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &flag) && flag.boolValue
        }
        let name = trimmed.split(separator: "/").last.map(String.init) ?? trimmed
        if name == parts[1], isDirectory(trimmed) {
            let above = FilePaths.directory(of: FilePaths.directory(of: trimmed))
            return " (--root is the directory that holds \(RunRecordFile.directory): try --root \(above))"
        }
        if name == parts[0], isDirectory(trimmed + "/" + parts[1]) {
            return
                " (--root is the directory that holds \(RunRecordFile.directory): try --root \(FilePaths.directory(of: trimmed)))"
        }
        if name != parts[0], isDirectory(trimmed + "/tally"),
            FileManager.default.fileExists(atPath: FilePaths.directory(of: trimmed) + "/compare.md")
        {
            return
                " (a sleeptap-compare strategy directory without records: its run gives them with --out DIR --records)"
        }
        let holders = ((try? FileManager.default.contentsOfDirectory(atPath: trimmed)) ?? []).sorted().filter {
            isDirectory(trimmed + "/" + $0 + "/" + RunRecordFile.directory)
        }
        guard let first = holders.first else {
            let strategies = ((try? FileManager.default.contentsOfDirectory(atPath: trimmed)) ?? []).filter {
                isDirectory(trimmed + "/" + $0 + "/tally")
            }
            guard !strategies.isEmpty, FileManager.default.fileExists(atPath: trimmed + "/compare.md") else {
                return ""
            }
            return " (a sleeptap-compare --out directory without records: its run gives them with --records)"
        }
        return " (records lie one level down, in \(holders.joined(separator: ", ")): give one of them as --root, "
            + "e.g. --root \(trimmed)/\(first); sleeptap-compare --out writes one per strategy)"
    }

    /// Reads the records under `root` into a report for `date` (no writing).
    /// - Throws: `Failure.noInput` when no file could be used, naming the directory and each
    ///   skipped file's reason.
    package static func read(root: String, date: LocalDate) throws(Failure) -> FreshnessReport {
        let directory = root + "/" + RunRecordFile.directory
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw .noInput("no input: \(directory) is not a directory" + rootHint(root))
        }
        let names = try Names(jsonFilesIn: directory)
        guard names.count > 0 else { throw .noInput("no input: no *.json file in \(directory)") }
        // Names are looked up in the open directory (fstatat, openat), not from the root each time.
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else {
            throw .noInput("no input: \(directory) cannot be opened (\(Errno.current)))")
        }
        defer { close(directoryFD) }
        // Files are read on every core: contiguous runs of files, each into its own report,
        // merged in file order (`FreshnessReport.merge`), so the report does not depend on which
        // thread ran first. Each thread holds one file's records at a time, and reads every file
        // into the same buffer. A finished run is merged as soon as the runs before it are, so
        // few runs' reports are held at once.
        let first = readAll(names, in: directoryFD, date: date)
        var bytes = first.bytes
        // Copies of a file (the same bytes under another name) are found once every file is
        // read; when there are any, the files are read again without them (the first name in
        // name order is read), which costs a second pass only on such input.
        let copies = Self.copies(&bytes)
        let report = copies.isEmpty ? first.report : readAll(names, in: directoryFD, date: date, copies: copies).report
        guard report.files > 0 else {
            let reasons = report.skipped.map { "  \($0.file): \($0.reason)" }.joined(separator: "\n")
            throw .noInput("no input: no file in \(directory) is a run-record file:\n\(reasons)")
        }
        // Files of `[]` only: nothing to report on (sleeptap-calibrate says the same).
        guard report.records > 0 else {
            let good =
                report.files == 1
                ? "the 1 good file in \(directory) holds" : "the \(report.files) good files in \(directory) hold"
            let reasons = report.skipped.map { "\n  \($0.file): \($0.reason)" }.joined()
            throw .noInput("no input: \(good) no record" + (reasons.isEmpty ? "" : "; skipped:" + reasons))
        }
        return report
    }

    /// Reads every file of `names` into a report for `date`, on every core: contiguous runs of
    /// files, each into its own report, merged in file order (`FreshnessReport.merge`), so the
    /// report does not depend on which thread ran first. Each thread holds one file's records at
    /// a time, and reads every file into the same buffer. A finished run is merged as soon as
    /// the runs before it are, so few runs' reports are held at once.
    /// - Parameter copies: file index -> the index of the file it is a copy of; skipped.
    /// - Returns: the report, and the bytes of each good file with a record (by index).
    private static func readAll(
        _ names: Names, in directoryFD: Int32, date: LocalDate, copies: [Int: Int] = [:]
    ) -> (report: FreshnessReport, bytes: [(index: Int, bytes: Bytes)]) {
        let bounds = names.runBounds(min(names.count, Names.runs))
        let runs = bounds.count - 1
        let merging = Mutex(Merging(report: FreshnessReport(date: date)))
        let found = Mutex<[(index: Int, bytes: Bytes)]>([])
        found.withLock { $0.reserveCapacity(names.count) }
        DispatchQueue.concurrentPerform(iterations: runs) { run in
            var part = FreshnessReport(date: date)
            var buffer = Data()
            var partBytes: [(index: Int, bytes: Bytes)] = []
            names.bytes.withUnsafeBufferPointer { text in
                for index in bounds[run]..<bounds[run + 1] {
                    let name = text.baseAddress! + names.starts[index]
                    switch names.load(index, name, in: directoryFD, buffer: &buffer, copies: copies) {
                    case .success(let loaded):
                        part.add(file: loaded.records)
                        if !loaded.records.isEmpty { partBytes.append((index, loaded.bytes)) }
                    case .failure(let skip):
                        part.skip(file: String(cString: name), reason: skip.reason, sameFile: skip.sameFile)
                    }
                }
            }
            part.sortSamples()
            merging.withLock { $0.finished(run, part) }
            found.withLock { $0 += partBytes }
        }
        return (merging.withLock { $0.report }, found.withLock { $0 })
    }

    /// The copies among files read (`Bytes`): file index -> the first file in name order with
    /// the same bytes. Sorted in place and scanned, not put in a dictionary: a dictionary of
    /// 100,000 files was the report's peak heap.
    private static func copies(_ bytes: inout [(index: Int, bytes: Bytes)]) -> [Int: Int] {
        bytes.sort { ($0.bytes.count, $0.bytes.hash, $0.index) < ($1.bytes.count, $1.bytes.hash, $1.index) }
        var copies: [Int: Int] = [:]
        var run = 0
        for position in bytes.indices {
            if bytes[position].bytes != bytes[run].bytes { run = position }
            if position != run { copies[bytes[position].index] = bytes[run].index }
        }
        return copies
    }

    /// File names in one buffer, NUL-terminated UTF-8 (a few bytes each, not a `String` apiece).
    private struct Names: Sendable {
        var bytes: [CChar] = []
        /// Where each name starts in `bytes`.
        var starts: [Int] = []
        var count: Int { starts.count }

        /// The bounds of `runs` contiguous runs of names (`runs + 1` indexes, the first 0 and the
        /// last `count`), none splitting one device's files: a bound moves on past the names that
        /// begin with the device of the name before them (`device(_:)`: its dated files, and a
        /// copy named after it such as `D-backup.json`), so that the report sees each device's
        /// files in one run and reads a record repeated in a copy of a file once
        /// (`FreshnessReport.repeatedRecords`). The same names give the same bounds on every
        /// machine.
        func runBounds(_ runs: Int) -> [Int] {
            var bounds = (0...runs).map { $0 * count / max(runs, 1) }
            for run in 1..<max(runs, 1) {
                var bound = max(bounds[run], bounds[run - 1])
                while bound > 0, bound < count, name(bound).starts(with: device(bound - 1)) { bound += 1 }
                bounds[run] = bound
            }
            return bounds
        }

        /// The bytes of name `index`.
        func name(_ index: Int) -> ArraySlice<CChar> {
            let end = index + 1 < count ? starts[index + 1] - 1 : bytes.count - 1
            return bytes[starts[index]..<max(starts[index], end)]
        }

        /// How many runs the files are read in: a fixed number, so that which files share a run
        /// (and so which copies are found) does not depend on the machine's cores.
        static let runs = 64

        /// The device part of name `index`: the bytes before its last `-YYYY-MM-DD`
        /// (`RunRecordFile.fileName`), the whole name without one.
        func device(_ index: Int) -> ArraySlice<CChar> {
            let name = name(index)
            let start = name.startIndex
            func isDigit(_ byte: CChar) -> Bool { byte >= 0x30 && byte <= 0x39 }
            var position = name.endIndex - 11
            while position >= name.startIndex {
                let dashes = [0, 5, 8].allSatisfy { name[position + $0] == 0x2D }
                let digits = [1, 2, 3, 4, 6, 7, 9, 10].allSatisfy { isDigit(name[position + $0]) }
                if dashes && digits { return name[start..<position] }
                position -= 1
            }
            return name
        }

        /// The `*.json` names in `directory`, as readdir(3) gives them, in the order of their
        /// bytes (for UTF-8, the order of their code points): a name that is not UTF-8 is opened
        /// by its own bytes, where a `String` of it (`FileManager`'s listing) holds U+FFFD and
        /// names no file.
        /// - Throws: `Failure.noInput` when the directory cannot be listed.
        init(jsonFilesIn directory: String) throws(Failure) {
            guard let stream = opendir(directory) else {
                throw .noInput("no input: \(directory) cannot be listed (\(Errno.current))")
            }
            defer { closedir(stream) }
            // Every name's bytes in one buffer as read, then sorted by index: a listing of
            // 100,000 files holds no `String` or array per name (it was the report's peak heap).
            var read: [CChar] = []
            var readStarts: [Int] = []
            var links: [Bool] = []
            var inodes: [UInt64] = []
            while let entry = readdir(stream) {
                let length = withUnsafeBytes(of: entry.pointee.d_name) { raw in raw.firstIndex(of: 0) ?? raw.count }
                guard length > 5 else { continue }
                let isJSON = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    raw[(length - 5)..<length].elementsEqual(".json".utf8)
                }
                guard isJSON else { continue }
                readStarts.append(read.count)
                withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    for byte in raw[0..<length] { read.append(CChar(bitPattern: byte)) }
                }
                read.append(0)
                links.append(entry.pointee.d_type == UInt8(DT_LNK))
                inodes.append(UInt64(entry.pointee.d_ino))
            }
            // Byte order, which for UTF-8 is the order of the names' code points.
            let order = read.withUnsafeBufferPointer { text in
                readStarts.indices.sorted {
                    strcmp(text.baseAddress! + readStarts[$0], text.baseAddress! + readStarts[$1]) < 0
                }
            }
            bytes.reserveCapacity(read.count)
            starts.reserveCapacity(order.count)
            read.withUnsafeBufferPointer { text in
                for index in order {
                    starts.append(bytes.count)
                    var at = readStarts[index]
                    while text[at] != 0 {
                        bytes.append(text[at])
                        at += 1
                    }
                    bytes.append(0)
                }
            }
            var status = stat()
            let device = stat(directory, &status) == 0 ? UInt64(status.st_dev) : 0
            findSameFiles(in: directory, entries: order.map { (links[$0], inodes[$0]) }, device: device)
        }

        /// Name `index` as text, for messages (bytes that are not UTF-8 as U+FFFD).
        func text(_ index: Int) -> String {
            bytes.withUnsafeBufferPointer { String(cString: $0.baseAddress! + starts[index]) }
        }

        /// Name index -> the index of the name read in its place: a symbolic or hard link to a file
        /// the directory also holds under another name, or to a file an earlier link named, is
        /// the same records again, which the report and the fit would count twice.
        var sameFileAs: [Int: Int] = [:]

        /// Finds the links of `sameFileAs` (a `stat(2)` of each symbolic link; other entries give
        /// their file by `readdir(3)`, so a directory without links costs no system call more).
        mutating func findSameFiles(in directory: String, entries: [(isLink: Bool, inode: UInt64)], device: UInt64) {
            // The files by inode (a sorted list, not a dictionary: 16 bytes a file, where a
            // dictionary of 100,000 files was the report's largest allocation); a run of one
            // inode is hard links, read under the first name.
            var files = entries.indices.filter { !entries[$0].isLink }.map { (inode: entries[$0].inode, index: $0) }
            files.sort { ($0.inode, $0.index) < ($1.inode, $1.index) }
            var run = 0
            for position in files.indices {
                if files[position].inode != files[run].inode { run = position }
                if position != run { sameFileAs[files[position].index] = files[run].index }
            }
            /// The first file (in name order) with `inode`, nil when none has it.
            func file(_ inode: UInt64) -> Int? {
                var low = 0
                var high = files.count
                while low < high {
                    let middle = (low + high) / 2
                    if files[middle].inode < inode { low = middle + 1 } else { high = middle }
                }
                return low < files.count && files[low].inode == inode ? files[low].index : nil
            }
            var linked: [FileKey: Int] = [:]
            for index in entries.indices where entries[index].isLink {
                var status = stat()
                let found = bytes.withUnsafeBufferPointer { text in
                    fstatat(AT_FDCWD, directory + "/" + String(cString: text.baseAddress! + starts[index]), &status, 0)
                }
                guard found == 0, status.st_mode & S_IFMT == S_IFREG else { continue }
                let key = FileKey(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
                if key.device == device, let first = file(key.inode) {
                    sameFileAs[index] = first
                } else if let first = linked[key] {
                    sameFileAs[index] = first
                } else {
                    linked[key] = index
                }
            }
        }

        /// Reads name `index` (`FreshnessReportFiles.load`), or skips it when it is a link to a
        /// file read under another name.
        func load(
            _ index: Int, _ name: UnsafePointer<CChar>, in directory: Int32, buffer: inout Data,
            copies: [Int: Int] = [:]
        ) -> Result<Loaded, SkipReason> {
            if let first = sameFileAs[index] {
                return .failure(
                    SkipReason(
                        reason: "the same file as \(printable(text(first))) (a link to it): read once", sameFile: true))
            }
            if let first = copies[index] { return .failure(copyReason(of: text(first))) }
            return FreshnessReportFiles.load(file: name, in: directory, buffer: &buffer)
        }

        struct FileKey: Hashable {
            var device: UInt64
            var inode: UInt64
        }
    }

    /// The runs' reports merged in run order: a run that finishes before an earlier one waits.
    private struct Merging: Sendable {
        var report: FreshnessReport
        var next = 0
        var waiting: [Int: FreshnessReport] = [:]

        mutating func finished(_ run: Int, _ part: FreshnessReport) {
            waiting[run] = part
            while let ready = waiting.removeValue(forKey: next) {
                report.merge(ready)
                next += 1
            }
        }
    }

    /// Why a file was skipped.
    struct SkipReason: Error {
        var reason: String
        /// Whether the file is another name of a file read (`Names.sameFileAs`): its records are
        /// in the figures.
        var sameFile = false
    }

    /// One run of files of `eachFile`: its results, once its reading thread signals `ready`.
    private final class Handoff: Sendable {
        let part = Mutex<[Result<Loaded, SkipReason>]>([])
        let ready = DispatchSemaphore(value: 0)
    }

    /// Reads and decodes the file `name` of the directory open at `directory` (a regular file of
    /// at most `maxFileBytes`, strict `RunRecordFile.decode`).
    /// - Returns: its records, or why the file is skipped.
    static func load(
        file name: UnsafePointer<CChar>, in directory: Int32, buffer: inout Data
    ) -> Result<Loaded, SkipReason> {
        let count: Int
        do throws(BoundedFile.Failure) {
            count = try BoundedFile.read(name, in: directory, limit: maxFileBytes, into: &buffer)
        } catch {
            return .failure(SkipReason(reason: error.description))
        }
        let records: [RunRecord]
        do {
            records = try RunRecordFile.decode(buffer.prefix(count))
        } catch {
            return .failure(SkipReason(reason: error.description))
        }
        var hasher = Hasher()
        hasher.combine(count)
        buffer.prefix(count).withUnsafeBytes { hasher.combine(bytes: $0) }
        return .success(Loaded(records: records, bytes: Bytes(count: count, hash: hasher.finalize())))
    }

    /// A good file's records, and what identifies its bytes.
    struct Loaded {
        var records: [RunRecord]
        var bytes: Bytes
    }

    /// A file's size and a hash of its bytes (`Hasher`, this process's seed): two files with the
    /// same `Bytes` and at least one record are one file copied (a sync client's conflict copy,
    /// `device-…-2026-11-29 (1).json`), whose records the report and the fit would count twice.
    /// A record names its device and instant, so two devices' or two days' files never share
    /// their bytes; files without records (`[]`) may, and count nothing either way.
    struct Bytes: Hashable {
        var count: Int
        var hash: Int
    }

    /// The skip reason of a copy of file `first`.
    static func copyReason(of first: String) -> SkipReason {
        SkipReason(
            reason: "the same bytes as \(printable(first)) (one of them a copy): read once, under that name",
            sameFile: true)
    }

    /// Reads every `ROOT/metrics/bg_runs/*.json` file, on every core, with the
    /// report's checks (a regular file of at most `maxFileBytes`, strict `RunRecordFile.decode`),
    /// and hands each good file's records to `body` in name order (`sleeptap-calibrate`,
    /// docs/calibration.md).
    /// Nothing is written.
    /// - Returns: the number of good files and the skipped ones with their reasons, in name order.
    /// - Throws: `Failure.noInput` when there is no directory, no `*.json` file, or no good file
    ///   (naming each skipped file's reason).
    package static func eachFile(
        root: String, _ body: (_ file: String, _ records: [RunRecord]) -> Void
    ) throws(Failure) -> (files: Int, skipped: [(file: String, reason: String)]) {
        let directory = root + "/" + RunRecordFile.directory
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw .noInput("no input: \(directory) is not a directory" + rootHint(root))
        }
        let names = try Names(jsonFilesIn: directory)
        guard names.count > 0 else { throw .noInput("no input: no *.json file in \(directory)") }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else {
            throw .noInput("no input: \(directory) cannot be opened (\(Errno.current)))")
        }
        defer { close(directoryFD) }
        // Read and decoded on every core, in contiguous runs of files, and handed to `body` in
        // name order as each run is done: what `body` sees does not depend on which thread ran
        // first, and `body` works on the first runs while the others are read.
        let bounds = names.runBounds(min(names.count, Names.runs))
        let runs = bounds.count - 1
        let handoffs = (0..<runs).map { _ in Handoff() }
        let reading = DispatchGroup()
        DispatchQueue.global().async(group: reading) {
            DispatchQueue.concurrentPerform(iterations: runs) { run in
                var buffer = Data()
                var part: [Result<Loaded, SkipReason>] = []
                names.bytes.withUnsafeBufferPointer { text in
                    for index in bounds[run]..<bounds[run + 1] {
                        part.append(
                            names.load(index, text.baseAddress! + names.starts[index], in: directoryFD, buffer: &buffer)
                        )
                    }
                }
                handoffs[run].part.withLock { $0 = part }
                handoffs[run].ready.signal()
            }
        }
        var files = 0
        var skipped: [(file: String, reason: String)] = []
        var index = 0
        // Files are handed over in name order, so a copy (`Bytes`) is known when it comes: the
        // first name is read, the later ones skipped.
        var read: [Bytes: Int] = [:]
        for handoff in handoffs {
            handoff.ready.wait()
            let part = handoff.part.withLock { value in
                defer { value = [] }  // the records are `body`'s now
                return value
            }
            for result in part {
                switch result {
                case .success(let loaded) where !loaded.records.isEmpty && read[loaded.bytes] != nil:
                    skipped.append((names.text(index), copyReason(of: names.text(read[loaded.bytes]!)).reason))
                case .success(let loaded):
                    files += 1
                    if !loaded.records.isEmpty { read[loaded.bytes] = index }
                    body(names.text(index), loaded.records)
                case .failure(let skip): skipped.append((names.text(index), skip.reason))
                }
                index += 1
            }
        }
        reading.wait()
        guard files > 0 else {
            let reasons = skipped.map { "  \($0.file): \($0.reason)" }.joined(separator: "\n")
            throw .noInput("no input: no file in \(directory) is a run-record file:\n\(reasons)")
        }
        return (files, skipped)
    }

    /// Writes `report` to `root/reports/bg_freshness_<date>.md` atomically (a re-run on the same
    /// date replaces it); creates `root/reports` (mode 0700) if missing.
    /// - Returns: the report's path.
    /// - Throws: `Failure.cannotWrite` naming the directory or file.
    @discardableResult
    package static func write(_ report: FreshnessReport, root: String) throws(Failure) -> String {
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

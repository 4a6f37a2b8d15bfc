// SPDX-License-Identifier: Apache-2.0

package import Foundation
import SleepTapCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A JSON state file of one Codable value, written with `AtomicFile`.
package struct StateFile<Value: Codable & Sendable>: Sendable {
    package let path: String
    /// How instants are written.
    package let dateFormat: DateFormat

    /// How a state file writes instants.
    package enum DateFormat: Sendable {
        /// ISO 8601 strings to the second, e.g. `2026-06-01T08:00:00Z` (readable; sub-second parts are dropped).
        case iso8601
        /// UNIX seconds as JSON numbers, e.g. `1780300800.25`: exact, so a value read back is the
        /// value written (the simulated OS's planned instants must not move by a rounding). A
        /// number outside `instantRange` (before 1970, or after 9999, where no ISO 8601 instant
        /// with a four-digit year lies) is refused as a bad file.
        case secondsSince1970
    }

    /// The UNIX seconds a `secondsSince1970` file may hold: those of a four-digit year
    /// (`ISO8601.fourDigitYears`). A larger instant is no date a run reaches, and one such as
    /// 1e300 stalls any arithmetic on it (adding a day leaves it unchanged).
    package static var instantRange: Range<Double> { ISO8601.fourDigitYears }

    /// - Parameters:
    ///   - path: the file.
    ///   - dateFormat: how instants are written (default ISO 8601 to the second).
    package init(path: String, dateFormat: DateFormat = .iso8601) {
        self.path = path
        self.dateFormat = dateFormat
    }

    /// The stored value, or nil when the file does not exist yet.
    /// - Throws: `FileError` when it exists but cannot be read or is not a valid state file
    ///   (the file is left in place, never overwritten).
    package func load() throws(FileError) -> Value? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try decode(path)
    }

    /// Where a recovered state comes from; the raw value is the `state.recovered` event's `from`.
    package enum Source: String, Equatable, Sendable {
        /// The last good state, `<path>.prev`.
        case previousCopy = "previous copy"
        /// No state: the process starts as on its first start.
        case cleanStart = "clean start"
    }

    /// What `loadRecovering` did about a bad or missing state file.
    package struct Recovery: Equatable, Sendable {
        /// Why the file was refused, or `missing`.
        package var reason: String
        /// Where the bad file now is (`<path>.corrupt-<UTC time>`), nil if it was missing.
        package var movedTo: String?
        /// Where the state now comes from.
        package var source: Source
        /// Why the previous copy was refused too, when it was (a clean start that discarded it).
        package var previousReason: String? = nil
        /// Where the refused previous copy now is (`<path>.prev.corrupt-<UTC time>`).
        package var previousMovedTo: String? = nil
    }

    /// Loads the state; a corrupt, truncated or invalid file is moved aside (never overwritten
    /// or deleted) and the last good copy (`<path>.prev`) is used, or a clean start when there is
    /// none. A missing file with a previous copy (a crash between the two renames of `save`)
    /// recovers from that copy. A previous copy that is needed but bad is moved aside too, so a
    /// clean start never discards a file without saying so; only a state dir with neither file
    /// starts clean silently (the first start). A symbolic link in the file's place, dangling or
    /// not, is refused and moved aside the same way: a save never writes through a link.
    ///
    /// - Parameters:
    ///   - validate: a meaning check beyond decoding (nil = valid, else the reason).
    ///   - now: the instant in the names of moved files (`<name>.corrupt-<UTC time>[-N]`; `-N`
    ///     when that name is taken, so an earlier copy is never overwritten).
    /// - Returns: the value (nil = start clean) and what was recovered, if anything.
    /// - Throws: `FileError` only when a file cannot even be read or moved (permissions, a
    ///   directory in its place): then nothing is touched.
    package func loadRecovering(
        validate: (Value) -> String?, now: Date = Date()
    ) throws(FileError) -> (value: Value?, recovery: Recovery?) {
        let previous = path + ".prev"
        var reason = "missing"
        var movedTo: String?
        // lstat(2): a symbolic link is there even when it leads nowhere (`decode` refuses it).
        var info = stat()
        if lstat(path, &info) == 0 {
            let kind = info.st_mode & S_IFMT
            guard kind == S_IFLNK || (kind != S_IFDIR && access(path, R_OK) == 0) else {
                throw FileError(path: path, reason: "cannot be read (a directory, or no read permission)")
            }
            do {
                let value = try decode(path)
                guard let problem = validate(value) else { return (value, nil) }
                reason = problem
            } catch {
                reason = error.reason
            }
            movedTo = try Self.moveAside(path, reason: reason, at: now)
        }
        var exists = stat()
        guard lstat(previous, &exists) == 0 else {
            guard movedTo != nil else { return (nil, nil) }  // neither file: the first start
            return (nil, Recovery(reason: reason, movedTo: movedTo, source: .cleanStart))
        }
        let previousReason: String
        do {
            let value = try decode(previous)
            guard let problem = validate(value) else {
                if movedTo == nil { reason = "missing, with a previous copy beside it" }
                return (value, Recovery(reason: reason, movedTo: movedTo, source: .previousCopy))
            }
            previousReason = problem
        } catch {
            previousReason = error.reason
        }
        let previousMovedTo = try Self.moveAside(previous, reason: previousReason, at: now)
        return (
            nil,
            Recovery(
                reason: reason, movedTo: movedTo, source: .cleanStart, previousReason: previousReason,
                previousMovedTo: previousMovedTo)
        )
    }

    /// Renames a refused file to `<file>.corrupt-<UTC time>`, or `...-2`, `-3`, ... when that name
    /// is taken (two refusals within a second). The state dir's lock keeps other processes out
    /// between the check and the rename.
    /// - Returns: the new path.
    /// - Throws: `FileError` naming the file when it cannot be renamed (it stays where it was).
    static func moveAside(_ file: String, reason: String, at now: Date) throws(FileError) -> String {
        let stamp = ISO8601DateFormatter().string(from: now).replacingOccurrences(of: ":", with: "")
        let base = "\(file).corrupt-\(stamp)"
        var aside = base
        var info = stat()
        var number = 1
        while lstat(aside, &info) == 0 {
            number += 1
            aside = "\(base)-\(number)"
        }
        guard rename(file, aside) == 0 else {
            throw FileError(path: file, "\(reason); cannot move it aside", errno: .current)
        }
        return aside
    }

    /// Removes the temp files of saves that a killed process left behind (`<file>.tmp-<pid>` and
    /// `<file>.prev.tmp-<pid>`, e.g. after kill -9 in the middle of a save), but only those whose
    /// pid no longer exists (`kill(pid, 0)` fails with ESRCH, kill(2)); the temp file of a live
    /// process is never touched. Call with the state dir locked.
    /// - Returns: the paths removed.
    @discardableResult
    package func removeStaleTemporaryFiles() -> [String] {
        let directory = FilePaths.parent(of: path)
        let name = (path as NSString).lastPathComponent
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: FilePaths.directory(of: path))
        else { return [] }
        var removed: [String] = []
        for entry in entries.sorted() {
            guard
                let prefix = [name + ".tmp-", name + ".prev.tmp-"].first(where: { entry.hasPrefix($0) }),
                let pid = pid_t(entry.dropFirst(prefix.count)), pid > 0,
                entry.dropFirst(prefix.count).allSatisfy({ ("0"..."9").contains($0) })
            else { continue }
            guard kill(pid, 0) == -1, errno == ESRCH else { continue }
            let file = directory.isEmpty ? entry : directory + "/" + entry
            var info = stat()
            if lstat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, unlink(file) == 0 {
                removed.append(file)
            }
        }
        return removed
    }

    /// Largest state file read, in bytes (16 MiB; the files this package writes are a few
    /// kilobytes). A larger one is refused before it is read, so a huge file cannot stall the
    /// start, and is moved aside like any other bad file.
    package static var maxBytes: Int { 16 << 20 }

    private func decode(_ file: String) throws(FileError) -> Value {
        // A state file is a regular file the process wrote (`AtomicFile`, by rename): a symbolic
        // link, dangling or not, is not read, so no message quotes what it points at; and a save
        // never writes through one, so a link kept in place would leave every save failing.
        var info = stat()
        if lstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: file)) ?? "?"
            var followed = stat()
            let unresolved =
                stat(file, &followed) == 0
                ? ""
                : errno == ELOOP
                    ? ", which loops" : errno == ENOENT ? ", which does not exist" : ", which cannot be followed"
            throw FileError(
                path: file,
                reason:
                    "not a valid state file: it is a symbolic link (to \(String(reflecting: target))\(unresolved)); "
                    + "a save replaces the file itself and never writes through a link")
        }
        let data: Data
        do throws(BoundedFile.Failure) {
            data = try BoundedFile.read(file, limit: Self.maxBytes)
        } catch .tooLarge(let size, let limit) {
            throw FileError(
                path: file, reason: "not a valid state file: \(BoundedFile.Failure.tooLarge(size: size, limit: limit))")
        } catch {
            throw FileError(path: file, reason: error.description, errno: error.errno)
        }
        if let problem = JSONDiagnosis.problem(in: data) {
            throw FileError(path: file, reason: "not a valid state file: \(problem)")
        }
        let decoder = self.decoder
        do {
            return try decoder.decode(Value.self, from: data)
        } catch {
            let why = JSONDiagnosis.describe(error, decoding: Value.self, from: data, with: decoder)
            throw FileError(path: file, reason: "not a valid state file: \(why)")
        }
    }

    /// Writes `value` atomically and durably.
    package func save(_ value: Value) throws(FileError) {
        try write(encode(value))
    }

    /// Writes `value` unless it encodes to the same bytes as `last` (what this process wrote
    /// before), then sets `last` to them: a value that changes rarely is written only when it did.
    /// - Parameters:
    ///   - value: the state.
    ///   - last: the bytes of the previous write, nil when none; updated after a write.
    /// - Returns: whether the file was written.
    /// - Throws: `FileError` when the write failed; `last` is then left as it was, so the next
    ///   call tries again.
    @discardableResult
    package func saveIfChanged(_ value: Value, last: inout Data?) throws(FileError) -> Bool {
        let data = try encode(value)
        guard data != last else { return false }
        try write(data)
        last = data
        return true
    }

    private func encode(_ value: Value) throws(FileError) -> Data {
        do {
            return try encoder.encode(value)
        } catch {
            throw FileError(path: path, reason: "cannot encode state (\(error))")
        }
    }

    private func write(_ data: Data) throws(FileError) {
        // Keep the last good copy beside it: `.prev` becomes a hard link to the current file
        // (atomically, through a temporary name), then the new state replaces the current one.
        let previous = path + ".prev"
        if FileManager.default.fileExists(atPath: path) {
            let staging = previous + ".tmp-\(getpid())"
            unlink(staging)
            if link(path, staging) == 0 {
                // rename(2) does nothing when both names are links to one file (POSIX), which
                // they are after a failed write (`.prev` already is the current file): the
                // staging name would stay. It is removed whatever rename did.
                _ = rename(staging, previous)
                unlink(staging)
            }
        }
        try AtomicFile.write(data, to: path)
    }

    private var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        // Compact, keys sorted (the same value gives the same bytes, which `saveIfChanged`
        // compares): each save is on the path of a round trip (the watch's ACK waits for it), and
        // indentation made phone.json half as large again and its encoding slower
        // (docs/performance.md).
        encoder.outputFormatting = [.sortedKeys]
        switch dateFormat {
        case .iso8601:
            // `ISO8601.string`: the text of `.iso8601` (`StateFileTests.isoText`), without a
            // formatter per instant.
            encoder.dateEncodingStrategy = .custom { date, encoder in
                var container = encoder.singleValueContainer()
                try container.encode(ISO8601.string(date))
            }
        case .secondsSince1970:
            encoder.dateEncodingStrategy = .secondsSince1970
        }
        return encoder
    }

    private var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        switch dateFormat {
        case .iso8601:
            decoder.dateDecodingStrategy = .iso8601
        case .secondsSince1970:
            decoder.dateDecodingStrategy = .custom { decoder in
                let container = try decoder.singleValueContainer()
                let seconds = try container.decode(Double.self)
                guard Self.instantRange.contains(seconds) else {
                    throw DecodingError.dataCorruptedError(
                        in: container,
                        debugDescription: "an instant must be UNIX seconds from 0 (1970) to 253402300799 (9999)")
                }
                return Date(timeIntervalSince1970: seconds)
            }
        }
        return decoder
    }
}

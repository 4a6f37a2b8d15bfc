// SPDX-License-Identifier: Apache-2.0

import Foundation
import Synchronization

/// An IANA tz database: the rules of zones read on demand from TZif files (RFC 8536) through an
/// injected loader, kept once read, and the database's version.
///
/// Every UTC offset SleepTap uses comes from one of these (`WakeCalendar`), never from
/// Foundation's `TimeZone`, whose rules on Linux are the ICU data bundled with the toolchain.
/// The loader is the only I/O: `ZoneDatabase.directory(_:)` reads files, tests inject bytes.
public final class ZoneDatabase: Sendable, Equatable, CustomStringConvertible {
    /// Where the zones come from (a directory path), named in errors.
    public let directory: String
    /// The tz release (`2026f`): the `# version` line of `tzdata.zi`, else `unknown`.
    public let version: String
    /// Tells databases apart in memo keys.
    let id: Int
    private let load: @Sendable (String) -> [UInt8]?
    private let zones = Mutex<[String: Result<ZoneRules, ZoneError>]>([:])

    private static let nextID = Atomic<Int>(1)

    /// - Parameters:
    ///   - directory: where the zones come from, named in errors.
    ///   - version: the tz release; nil reads it from `tzdata.zi` through `load`.
    ///   - load: the bytes of a file under the database (`America/Vancouver`, `tzdata.zi`), nil
    ///     when there is none.
    public init(directory: String, version: String? = nil, load: @escaping @Sendable (String) -> [UInt8]?) {
        self.directory = directory
        self.load = load
        self.version = version ?? Self.version(ofTzdataZi: load("tzdata.zi")) ?? "unknown"
        id = Self.nextID.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    public var description: String { "tz database \(version) at \(directory)" }

    /// The same directory and version (the same files, as far as a run can tell).
    public static func == (lhs: ZoneDatabase, rhs: ZoneDatabase) -> Bool {
        lhs.directory == rhs.directory && lhs.version == rhs.version
    }

    /// The version in the first line of a `tzdata.zi` (`# version 2026f`), nil without one.
    static func version(ofTzdataZi bytes: [UInt8]?) -> String? {
        guard let bytes else { return nil }
        let line = String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        let prefix = "# version "
        guard line.hasPrefix(prefix) else { return nil }
        let version = line.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces)
        return version.isEmpty ? nil : version
    }

    /// The rules of zone `name` (an IANA name: `Area/Location`, `UTC`, `GMT`).
    ///
    /// - Throws: `ZoneError.badName` for a name of another form (never read as a path),
    ///   `.missing` naming the zone and the directory when it has no file, `.corrupt` naming the
    ///   file (`DIR/Area/Location`) and what is wrong when it is empty or not TZif.
    package func rules(for name: String) throws(ZoneError) -> ZoneRules {
        if let known = zones.withLock({ $0[name] }) { return try known.get() }
        let result: Result<ZoneRules, ZoneError>
        if !WakeCalendar.isZoneName(name) && !name.hasPrefix("Etc/") {
            result = .failure(.badName(name))
        } else if let bytes = load(name) {
            // The file is named in the error: `DIR/Area/Location is empty`, or what is wrong.
            let file = directory + "/" + name
            if bytes.isEmpty {
                result = .failure(.corrupt(zone: name, reason: "\(file) is empty (0 bytes)"))
            } else {
                do throws(ZoneError) {
                    result = .success(try ZoneRules(tzif: bytes, name: name))
                } catch {
                    if case .corrupt(_, let reason) = error {
                        result = .failure(.corrupt(zone: name, reason: "\(file): \(reason)"))
                    } else {
                        result = .failure(error)
                    }
                }
            }
        } else if let reason = Self.unreadableReason(directory + "/" + name) {
            result = .failure(.unreadable(zone: name, reason: reason))
        } else {
            result = .failure(.missing(zone: name, directory: directory))
        }
        zones.withLock { $0[name] = result }
        return try result.get()
    }

    /// Whether the database has a readable zone `name`.
    public func contains(_ name: String) -> Bool { (try? rules(for: name)) != nil }

    /// The database in a directory of TZif files (`/usr/share/zoneinfo`, or one built with `zic`).
    public static func directory(_ path: String) -> ZoneDatabase {
        ZoneDatabase(directory: path) { name in
            FileManager.default.contents(atPath: path + "/" + name).map { Array($0) }
        }
    }

    /// The directory the machine's database is in: `TZDIR` when set, else `/usr/share/zoneinfo`
    /// (as glibc and Python's `zoneinfo` look).
    public static var systemDirectory: String {
        let tzdir = ProcessInfo.processInfo.environment["TZDIR"] ?? ""
        return tzdir.isEmpty ? "/usr/share/zoneinfo" : tzdir
    }

    /// What is wrong with `TZDIR` when it is set but cannot be the machine's database: not a
    /// directory, or a directory with none of `tzdata.zi`, `UTC`, `Etc/UTC` (every database `zic`
    /// builds from the IANA release has them); nil when it is unset, empty, or looks right.
    /// - Parameter environment: the process's environment (`TZDIR` is read).
    package static func systemDirectoryProblem(
        in environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String? {
        guard let tzdir = environment["TZDIR"], !tzdir.isEmpty else { return nil }
        var isDirectory: ObjCBool = false
        let fix =
            "the tz database is read from TZDIR; point it at a directory of TZif files, or unset it for /usr/share/zoneinfo"
        guard FileManager.default.fileExists(atPath: tzdir, isDirectory: &isDirectory) else {
            return "TZDIR \"\(tzdir)\": no such directory (\(fix))"
        }
        guard isDirectory.boolValue else { return "TZDIR \"\(tzdir)\": not a directory (\(fix))" }
        let markers = ["tzdata.zi", "UTC", "Etc/UTC"]
        guard markers.contains(where: { FileManager.default.fileExists(atPath: tzdir + "/" + $0) }) else {
            return "TZDIR \"\(tzdir)\": holds no tz database (none of tzdata.zi, UTC, Etc/UTC) (\(fix))"
        }
        return nil
    }

    /// Whether `path` looks like a tz database: a regular file starting with the TZif magic
    /// (RFC 8536, section 3.1) is in it or one directory below (`UTC` and `Etc/UTC` looked at
    /// first, then at most 4,096 entries). A directory `zic` wrote for a single zone passes; an
    /// empty one, or one of other files (a `UTC` that is not TZif), does not.
    /// - Parameter path: a directory.
    package static func holdsTimeZoneFiles(_ path: String) -> Bool {
        let files = FileManager.default
        if ["UTC", "Etc/UTC"].contains(where: { isTZif(path + "/" + $0) }) { return true }
        var looked = 0
        var directories = [(path, 0)]
        while let (directory, depth) = directories.popLast() {
            for name in (try? files.contentsOfDirectory(atPath: directory)) ?? [] {
                looked += 1
                guard looked <= 4_096 else { return false }
                let child = directory + "/" + name
                // stat(2) follows a link; only directories and regular files are opened (a FIFO
                // or a device could block or never end).
                var status = stat()
                guard stat(child, &status) == 0 else { continue }
                let type = status.st_mode & S_IFMT
                if type == S_IFDIR {
                    if depth == 0 { directories.append((child, 1)) }
                } else if type == S_IFREG, isTZif(child) {
                    return true
                }
            }
        }
        return false
    }

    /// Why something at `path` (a zone's file that could not be loaded) cannot be read, nil when
    /// nothing is there (the zone is missing).
    private static func unreadableReason(_ path: String) -> String? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        guard stat(path, &status) == 0 else {
            return "\(path) is a link that cannot be followed (\(Errno.current.message))"
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG:
            return access(path, R_OK) == 0 ? nil : "\(path) cannot be read (\(Errno.current.message))"
        case S_IFDIR: return "\(path) is a directory, not a TZif file"
        default: return "\(path) is not a regular file (a FIFO, a socket or a device)"
        }
    }

    /// Whether `path` is a regular file (a link followed) that starts with the TZif magic.
    private static func isTZif(_ path: String) -> Bool {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
            let handle = FileHandle(forReadingAtPath: path)
        else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: 4)) == Data("TZif".utf8)
    }

    private static let processDefault = Mutex<ZoneDatabase?>(nil)

    /// The database of this process: the one `use(_:)` set (`--tzdata DIR`), else the machine's
    /// (`systemDirectory`, read on first use).
    public static var process: ZoneDatabase {
        processDefault.withLock { current in
            if let current { return current }
            let made = directory(systemDirectory)
            current = made
            return made
        }
    }

    /// Makes `database` the one of this process (`process`).
    package static func use(_ database: ZoneDatabase) {
        processDefault.withLock { $0 = database }
    }

    /// A database for the code running inside `ZoneDatabase.$scoped.withValue(_:)`: the twin runs
    /// a phone and a watch on different databases in one process.
    @TaskLocal package static var scoped: ZoneDatabase?

    /// The database in use here: `scoped`, else `process`.
    public static var current: ZoneDatabase { scoped ?? process }
}

// SPDX-License-Identifier: Apache-2.0

package import Foundation
package import SleepTapCommandLine
package import SleepTapCore

#if canImport(Glibc)
    import Glibc
#endif

/// The machine's zone, as the environment's `TZ` names it, checked against the tz database in
/// use (`ZoneDatabase.current`: `--tzdata`, else `TZDIR`, else `/usr/share/zoneinfo`).
///
/// POSIX lets `TZ` start with a colon, the rest implementation-defined (glibc: a file name under
/// the tz database, `TZ=:America/Vancouver`, or an absolute path to one); Foundation on Linux
/// ignores such a `TZ`, and a path without the colon, so the zone they name is read here. The
/// phone sends its zone to the watch by name, so the machine's zone must be a name the wire
/// carries (`WakeCalendar.isZoneName`: `Area/Location`, `UTC`, `GMT`): a link of the database
/// to such a zone (`Japan`, a link to `Asia/Tokyo`) is read as the zone it links to, and
/// anything else is an error naming `TZ`, never a silent fall-back to Foundation's own rules or
/// to UTC (POSIX.1-2017, 8.3 "Other Environment Variables", TZ; tz database Theory file, "Names
/// of timezones").
package enum MachineZone {
    /// The zone `TZ` names, nil when Foundation's `TimeZone.current` stands (no `TZ`, an empty
    /// one, or a plain zone name the database has, which Foundation reads itself).
    /// - Parameters:
    ///   - environment: the process's environment (`TZ` is read).
    ///   - database: the tz database the zone's rules must come from.
    /// - Throws: `UsageError` naming `TZ` when it names no zone of the database by a name the
    ///   wire carries: a zone the database lacks (or whose file is empty or not TZif, RFC 8536),
    ///   a POSIX rule string (`EST5EDT,M3.2.0,M11.1.0`), a file of the database that is no such
    ///   zone or link to one (`EST5EDT`, `CET`), or a name with spaces.
    package static func named(
        in environment: [String: String], database: ZoneDatabase = .current
    ) throws(UsageError) -> TimeZone? {
        guard let raw = environment["TZ"], !raw.isEmpty else { return nil }
        var name = raw.hasPrefix(":") ? String(raw.dropFirst()) : raw
        if name.hasPrefix("/") {
            // An absolute file inside the database (`TZ=:/usr/share/zoneinfo/Asia/Tokyo`, or
            // `/etc/localtime`, a link into it) names the zone its real path does.
            name = inside(path: name, database: database) ?? name
        } else if !WakeCalendar.isZoneName(name),
            let target = inside(path: database.directory + "/" + name, database: database),
            target != name
        {
            // A link of the database to a zone the wire carries (`Japan` -> `Asia/Tokyo`) is that zone.
            name = target
        }
        guard WakeCalendar.isZoneName(name) else {
            throw UsageError(
                "TZ \"\(ArgumentReader.clip(raw))\": not a time-zone name the phone can send the watch (Area/Location, "
                    + "such as America/New_York; a POSIX rule string, an abbreviation or a name with spaces is not "
                    + "one, nor a zone such as CET whose name has no Area/): set TZ to an Area/Location zone of "
                    + "the \(database), or give --time-zone")
        }
        if let zone = ZoneDatabase.$scoped.withValue(database, operation: { WakeCalendar.zone(named: name) }) {
            // Foundation reads a plain IANA TZ itself (it names `UTC` GMT); the rest need this.
            return name != raw ? zone : nil
        }
        let reason =
            ZoneDatabase.$scoped.withValue(database) { WakeCalendar.zoneError(named: name) }?.description
            ?? "time zone \"\(name)\" is not known"
        throw UsageError(
            "TZ \"\(ArgumentReader.clip(raw))\": \(reason); the machine's zone must be in the \(database) "
                + "(set TZ to one of its zones, or give --tzdata a database that has it)")
    }

    /// The name inside the database of the file at `path`, its links followed and its path made
    /// canonical (`realpath(3)`: `//`, `/./`, `/../` and a trailing slash of the database's own
    /// directory do not matter); nil when there is no such file or it lies outside the database.
    private static func inside(path: String, database: ZoneDatabase) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        guard let root = realpath(database.directory, nil) else { return nil }
        defer { free(root) }
        let prefix = String(cString: root) + "/"
        let target = String(cString: resolved)
        return target.hasPrefix(prefix) ? String(target.dropFirst(prefix.count)) : nil
    }

    /// The machine's zone for a running phone or watch: `named(in:)` of this process's
    /// environment, else Foundation's `TimeZone.current` (the main checked `TZ` before).
    package static var current: TimeZone {
        ((try? named(in: ProcessInfo.processInfo.environment)) ?? nil) ?? TimeZone.current
    }
}

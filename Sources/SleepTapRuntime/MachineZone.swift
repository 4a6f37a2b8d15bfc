// SPDX-License-Identifier: Apache-2.0

package import Foundation
package import SleepTapCommandLine
package import SleepTapCore

/// The machine's zone, as the environment's `TZ` names it, checked against the tz database in
/// use (`ZoneDatabase.current`: `--tzdata`, else `TZDIR`, else `/usr/share/zoneinfo`).
///
/// POSIX lets `TZ` start with a colon, the rest implementation-defined (glibc: a file name under
/// the tz database, `TZ=:America/Vancouver`); Foundation on Linux ignores such a `TZ`, so the
/// name after the colon is read here. A `TZ` that names an IANA zone the database lacks is an
/// error, never a silent fall-back to Foundation's own rules (POSIX.1-2017, 8.3 "Other
/// Environment Variables", TZ; tz database Theory file).
package enum MachineZone {
    /// The zone `TZ` names, nil when Foundation's `TimeZone.current` stands (no `TZ`, an empty
    /// one, or a POSIX rule string such as `EST5EDT` that is not an IANA name).
    /// - Parameters:
    ///   - environment: the process's environment (`TZ` is read).
    ///   - database: the tz database the zone's rules must come from.
    /// - Throws: `UsageError` naming `TZ`, the zone and the database when the database lacks the
    ///   zone or its file is empty or not TZif (RFC 8536).
    package static func named(
        in environment: [String: String], database: ZoneDatabase = .current
    ) throws(UsageError) -> TimeZone? {
        guard let raw = environment["TZ"], !raw.isEmpty else { return nil }
        var name = raw.hasPrefix(":") ? String(raw.dropFirst()) : raw
        // An absolute file inside the database (`TZ=:/usr/share/zoneinfo/Asia/Tokyo`) names its zone.
        if name.hasPrefix(database.directory + "/") { name = String(name.dropFirst(database.directory.count + 1)) }
        guard WakeCalendar.isZoneName(name) else { return nil }
        if let zone = ZoneDatabase.$scoped.withValue(database, operation: { WakeCalendar.zone(named: name) }) {
            // Foundation reads an IANA TZ itself (it names `UTC` GMT); only `:Zone` needs help.
            return raw.hasPrefix(":") ? zone : nil
        }
        let reason =
            ZoneDatabase.$scoped.withValue(database) { WakeCalendar.zoneError(named: name) }?.description
            ?? "time zone \"\(name)\" is not known"
        throw UsageError(
            "TZ \"\(ArgumentReader.clip(raw))\": \(reason); the machine's zone must be in the \(database) "
                + "(set TZ to one of its zones, or give --tzdata a database that has it)")
    }

    /// The machine's zone for a running phone or watch: `named(in:)` of this process's
    /// environment, else Foundation's `TimeZone.current` (the main checked `TZ` before).
    package static var current: TimeZone {
        ((try? named(in: ProcessInfo.processInfo.environment)) ?? nil) ?? TimeZone.current
    }
}

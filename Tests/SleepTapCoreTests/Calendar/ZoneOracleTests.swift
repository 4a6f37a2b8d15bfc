// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import SleepTapCore

/// The TZif reader against an independent reader of the same files: Python's `zoneinfo`
/// (its TZPATH set to the same directory), over every zone of the database.
@Suite("Zone rules against Python's zoneinfo")
struct ZoneOracleTests {
    /// The four local times sampled each day: midnight (zones that change at 00:00), 01:30 (a
    /// repeated hour of most of the northern hemisphere), 02:30 (a gap there), noon.
    static let times = [(0, 0), (1, 30), (2, 30), (12, 0)]

    /// Python's answers: for each zone, the UTC offset that maps each sampled wall time to its
    /// instant (fold=0: a gap time moves forward by the gap, a repeated time is the first),
    /// run-length encoded (`offset*count`), one line a zone.
    static let script = """
        import datetime, itertools, sys, zoneinfo
        zoneinfo.reset_tzpath([sys.argv[1]])
        d0 = datetime.datetime(1970, 1, 1)
        times = [(0, 0), (1, 30), (2, 30), (12, 0)]
        days = (datetime.datetime(2038, 1, 1) - d0).days
        walls = [d0 + datetime.timedelta(days=i, hours=h, minutes=m) for i in range(days) for (h, m) in times]
        for name in sys.argv[2:]:
            runs = itertools.groupby(map(zoneinfo.ZoneInfo(name).utcoffset, walls))
            print(name, " ".join("%d*%d" % (o.total_seconds(), len(list(g))) for o, g in runs))
        """

    /// The zones of `directory`: every file that starts with the TZif magic, outside `posix/`
    /// and `right/` (copies, and leap-second time, which SleepTap does not use).
    static func zones(in directory: String) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: directory)
        var names: [String] = []
        while let path = enumerator?.nextObject() as? String {
            if path.hasPrefix("posix") || path.hasPrefix("right") || !WakeCalendar.isZoneName(path) { continue }
            guard let handle = FileHandle(forReadingAtPath: directory + "/" + path) else { continue }
            let magic = (try? handle.read(upToCount: 4)) ?? nil
            try? handle.close()
            if magic == Data("TZif".utf8) { names.append(path) }
        }
        return names.sorted()
    }

    @Test(
        "Every zone 1970-2037 at 00:00, 01:30, 02:30, 12:00 local (every day near an offset change, every 29th day between): the same instant as zoneinfo"
    )
    func everyZone() throws {
        let directory = ZoneDatabase.systemDirectory
        let zones = Self.zones(in: directory)
        try #require(zones.count > 300, "no tz database at \(directory)")
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", "-c", Self.script, directory] + zones
        let output = Pipe()
        python.standardOutput = output
        try python.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        python.waitUntilExit()
        try #require(python.terminationStatus == 0, "python3 zoneinfo failed")
        let database = ZoneDatabase.directory(directory)
        let days = Int(CivilDate(year: 2038, month: 1, day: 1).daysSince1970)
        var checked = 0
        var zonesChecked = 0
        var failures = 0
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ")
            let name = String(parts[0])
            let rules = try database.rules(for: name)
            // Python's runs, as the day each one starts on.
            var runs: [(offset: Int64, count: Int)] = []
            for run in parts.dropFirst() {
                let pair = run.split(separator: "*")
                guard pair.count == 2, let offset = Int64(pair[0]), let count = Int(pair[1]) else {
                    Issue.record("bad line for \(name)")
                    break
                }
                runs.append((offset, count))
            }
            // Days on which either reader changes offset (its transitions, zoneinfo's run
            // boundaries), 2 days either side, are checked at all four times; every other day's
            // answer is the same as its neighbours' on both sides, so every 29th day stands for it.
            var near = Set<Int64>()
            for transition in Self.transitions(of: rules) {
                for day in floorDiv(transition, 86_400) - 2...floorDiv(transition, 86_400) + 2 { near.insert(day) }
            }
            var sample = 0
            for run in runs {
                let day = Int64(sample / 4)
                for d in day - 2...day + 2 { near.insert(d) }
                sample += run.count
            }
            var chosen = near
            for day in stride(from: Int64(0), to: Int64(days), by: 29) { chosen.insert(day) }
            var runIndex = 0
            var runEnd = runs.first?.count ?? 0
            for day in chosen.sorted() where day >= 0 && day < Int64(days) {
                for index in 0..<4 {
                    let position = Int(day) * 4 + index
                    while position >= runEnd, runIndex + 1 < runs.count {
                        runIndex += 1
                        runEnd += runs[runIndex].count
                    }
                    let (hour, minute) = Self.times[index]
                    let wall = day * 86_400 + Int64(hour * 3600 + minute * 60)
                    let instant = rules.instant(ofWall: wall)
                    let expected = wall - runs[runIndex].offset
                    checked += 1
                    if instant != expected, failures < 20 {
                        failures += 1
                        Issue.record("\(name) day \(day) \(hour):\(minute): \(instant), zoneinfo \(expected)")
                    }
                }
            }
            #expect(sample == days * 4, "\(name): \(sample) samples")
            zonesChecked += 1
        }
        #expect(zonesChecked == zones.count)
        #expect(checked > zones.count * 1_000)
    }

    /// The reader's transitions through day `days`: the file's, then the footer's year by year.
    static func transitions(of rules: ZoneRules) -> [Int64] {
        var all = rules.transitions
        guard let daylight = rules.footer?.daylight else { return all }
        let from = rules.transitions.last.map { CivilDate(days: floorDiv($0, 86_400)).year } ?? 1970
        for year in stride(from: max(1970, from), through: 2038, by: 1) {
            all.append(daylight.start.instant(in: year, offset: Int64(rules.footer!.standardOffset)))
            all.append(daylight.end.instant(in: year, offset: Int64(daylight.offset)))
        }
        return all
    }
}

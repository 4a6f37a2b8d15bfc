// SPDX-License-Identifier: Apache-2.0
package import Foundation
import SleepTapCore
package import SleepTapEmbedded
import SleepTapOS

/// The twin as the speed measurements run it: one device, iOS, early registration, a watch
/// that taps bed at 22:30 every night, no link faults (docs/performance.md, "Twin speed").
package enum TwinWorkload {
    /// Thu 2025-03-06 12:00 EST: a run that crosses the spring-forward change.
    package static let start = Date(timeIntervalSince1970: 1_741_280_400)

    /// The twin of device `index`, not booted.
    /// - Parameters:
    ///   - index: the device's number; it seeds the OS, the weather and the link.
    ///   - speed: virtual seconds per wall second (transport timers scale with it).
    ///   - linkMode: how the link hands messages over (`.messages`, the fleet's, unless given).
    package static func twin(index: Int, speed: Double = 3_600, linkMode: Twin.LinkMode = .messages) -> Twin {
        let zone = TimeZone(identifier: "America/New_York")!
        var ios = IOSBackgroundScheduler.Configuration(permittedIdentifiers: [PhoneAppConfiguration().taskIdentifier])
        ios.registrationMode = .early
        let seed = UInt64(index)
        let phone = PhoneSetup(
            os: SimulatedOS(IOSBackgroundScheduler(configuration: ios, seed: seed &+ 1)),
            weather: OfflineWeatherProvider(seed: seed &+ 3), schedule: .everyDayAtSeven,
            location: Coordinate(latitude: 40.71, longitude: -74.0)!, deviceSeed: seed &+ 5,
            node: PhoneNodeConfiguration(
                watchID: "watch", timeZone: zone, machineZone: zone, statePath: "phone.json",
                osStatePath: "os.json", endpoint: "twin", boundEndpoint: "twin", pid: 1, security: .none,
                osState: .new))
        let watch = WatchNode.Configuration(
            endpoint: "twin", statePath: "watch.json", systemZone: zone, bedAt: LocalTime(hour: 22, minute: 30),
            manualWake: LocalTime(hour: 6, minute: 30)!)
        return Twin(start: start, speed: speed, phone: phone, watch: watch, seed: seed &+ 7, linkMode: linkMode)
    }

    /// Runs device `index` for `days` days and returns the number of log entries.
    package static func run(index: Int, days: Int, speed: Double = 3_600, linkMode: Twin.LinkMode = .messages) -> Int {
        var twin = twin(index: index, speed: speed, linkMode: linkMode)
        twin.boot()
        let calendar = WakeCalendar.calendar(in: TimeZone(identifier: "UTC")!)
        let end = calendar.date(byAdding: .day, value: days, to: start)!
        twin.run(until: end)
        return twin.log.count
    }

    /// Runs devices 0 ..< `devices` for `days` days, `jobs` at a time (1: one after the other on
    /// the calling thread, which valgrind can follow), and returns the number of log entries.
    package static func runAll(devices: Int, days: Int, jobs: Int, speed: Double) async -> Int {
        if jobs <= 1 { return (0..<devices).reduce(0) { $0 + run(index: $1, days: days, speed: speed) } }
        return await withTaskGroup(of: Int.self) { group in
            var next = 0
            var total = 0
            func start() {
                guard next < devices else { return }
                let index = next
                next += 1
                group.addTask { run(index: index, days: days, speed: speed) }
            }
            for _ in 0..<jobs { start() }
            while let count = await group.next() {
                total += count
                start()
            }
            return total
        }
    }
}

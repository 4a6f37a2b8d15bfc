// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import SleepTapEmbedded
import SleepTapOS

/// The twin's speed: whole twins (phone and watch nodes, every timer, virtual time), each run
/// for `days` virtual days, as many as fit in the time given, on 1 thread or on several at once.
enum TwinCase {
    /// Virtual days each twin runs.
    static let days = 30
    /// Thu 2025-03-06 12:00 EST, a week that crosses a DST change.
    static let start = Date(timeIntervalSince1970: 1_741_280_400)

    /// One twin as in the README: an iOS phone registering early, the offline weather, a watch
    /// that taps bed at 22:30, wall durations at 3,600 virtual seconds per second; its link hands
    /// over message values (`Twin.LinkMode.messages`), as `sleeptap-fleet` runs it
    /// (docs/performance.md, "Twin speed").
    static func makeTwin(seed: UInt64) -> Twin {
        let zone = TimeZone(identifier: "America/New_York")!
        var ios = IOSBackgroundScheduler.Configuration(permittedIdentifiers: [PhoneAppConfiguration().taskIdentifier])
        ios.registrationMode = .early
        let phone = PhoneSetup(
            os: SimulatedOS(IOSBackgroundScheduler(configuration: ios, seed: seed)),
            weather: OfflineWeatherProvider(seed: seed), schedule: .everyDayAtSeven,
            location: Coordinate(latitude: 40.71, longitude: -74.0)!, deviceSeed: seed,
            node: PhoneNodeConfiguration(
                watchID: "watch", timeZone: zone, machineZone: zone, statePath: "phone.json",
                osStatePath: "os.json", endpoint: "twin", boundEndpoint: "twin", pid: 1, security: .none,
                osState: .new))
        let watch = WatchNode.Configuration(
            endpoint: "twin", statePath: "watch.json", systemZone: zone, bedAt: LocalTime(hour: 22, minute: 30),
            manualWake: LocalTime(hour: 6, minute: 30)!)
        return Twin(
            start: start, speed: 3_600, phone: phone, watch: watch, faults: .none, seed: seed, linkMode: .messages)
    }

    /// Runs twins on `threads` threads for about `seconds` (each thread at least one twin).
    /// - Returns: virtual device-days per wall second, all threads together.
    static func deviceDaysPerSecond(threads: Int, seconds: Double) -> Double {
        let group = DispatchGroup()
        let total = Counter()
        let begin = DispatchTime.now().uptimeNanoseconds
        let end = begin + UInt64(seconds * 1e9)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "America/New_York")!
        let until = calendar.date(byAdding: .day, value: days, to: start)!
        for thread in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                var seed = UInt64(thread) << 32
                repeat {
                    var twin = makeTwin(seed: seed)
                    twin.boot()
                    twin.run(until: until)
                    total.add(days)
                    seed += 1
                } while DispatchTime.now().uptimeNanoseconds < end
                group.leave()
            }
        }
        group.wait()
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e9
        return Double(total.value) / elapsed
    }

    /// A sum shared by the threads.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var sum = 0
        func add(_ n: Int) {
            lock.lock()
            sum += n
            lock.unlock()
        }
        var value: Int {
            lock.lock()
            defer { lock.unlock() }
            return sum
        }
    }
}

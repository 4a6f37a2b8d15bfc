// SPDX-License-Identifier: Apache-2.0

package import Foundation
package import SleepTapCore
package import SleepTapEmbedded
import SleepTapRuntime

/// Builds the embedded twin from the very command lines the `phone` and `watch` processes get,
/// through the same parsers and the same option-to-value functions the executables use, so the
/// twin and the processes cannot drift apart by a hand-copied setting.
package enum TwinBuilder {
    /// A command line the twin cannot model.
    package struct Unsupported: Error, CustomStringConvertible {
        package let description: String
    }

    /// `body`'s result, or its error labelled with `name` (`SideError`).
    private static func side<T>(_ name: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw SideError(side: name, error: error) }
    }

    /// An error of one side's command line or files: `side` is `phone` or `watch`.
    package struct SideError: Error, CustomStringConvertible {
        package let side: String
        package let error: any Error
        package var description: String { "\(error)" }
    }

    /// - Parameters:
    ///   - phoneArguments: the `phone` arguments (without the program name); `--clock-start`,
    ///     `--clock-speed` and `--device-seed` are required (the twin's time and the weather seed).
    ///   - watchArguments: the `watch` arguments, with the same clock flags.
    ///   - machineZone: the zone both processes get from their environment (TZ).
    ///   - schedule: the schedule to use instead of the phone's `--schedule` file (a scenario's
    ///     inline schedule); nil reads the file, or uses every day at 07:00 without one.
    /// - Returns: the twin, not booted.
    /// - Throws: `UsageError` for a bad command line, `Unsupported` for one the twin cannot run,
    ///   a schedule file error.
    package static func make(
        phone phoneArguments: [String], watch watchArguments: [String], machineZone: TimeZone = .current,
        schedule inlineSchedule: WakeSchedule? = nil
    ) throws -> Twin {
        let phoneLine = try side("phone") { try CommandLineParser.parsePhone(phoneArguments) }
        let watchLine = try side("watch") { try CommandLineParser.parseWatch(watchArguments) }
        guard case .run(let phone) = phoneLine, case .run(let watch) = watchLine
        else { throw Unsupported(description: "help or version asked for") }
        // Each device on its own tz database, as a watch whose OS is behind the phone's: the
        // phone's inputs run with the phone's, the watch's with the watch's (`Twin.watchZones`).
        let zones = phone.zoneDatabase ?? ZoneDatabase.current
        let watchZones = watch.zoneDatabase ?? ZoneDatabase.current
        return try ZoneDatabase.$scoped.withValue(zones) {
            var twin = try make(
                phone: phone, watch: watch, machineZone: machineZone, schedule: inlineSchedule)
            twin.zones = zones
            twin.watchZones = watchZones
            return twin
        }
    }

    private static func make(
        phone: PhoneOptions, watch: WatchOptions, machineZone: TimeZone, schedule inlineSchedule: WakeSchedule?
    ) throws -> Twin {
        var phone = phone
        try side("phone") { try phone.os.loadOSModel() }
        guard phone.clock == watch.clock, let start = phone.clock.start else {
            throw Unsupported(description: "phone and watch need the same --clock-start/--clock-speed/--clock-anchor")
        }
        guard let deviceSeed = phone.deviceSeed else { throw Unsupported(description: "--device-seed is required") }
        guard phone.weather.openMeteoBase == nil, phone.keysDirectory == nil, watch.keysDirectory == nil else {
            throw Unsupported(description: "the twin has the offline weather only and no CURVE")
        }
        var schedule = inlineSchedule ?? WakeSchedule.everyDayAtSeven
        if inlineSchedule == nil, let path = phone.schedulePath {
            let data: Data
            do throws(BoundedFile.Failure) {
                data = try BoundedFile.read(path, limit: ScheduleFile.maxBytes)
            } catch {
                throw FileError(path: path, reason: error.description, errno: error.errno)
            }
            schedule = try ScheduleFile.decode(data)
        }
        var twinPhone = PhoneSetup(
            os: phone.os.makeOS(taskIdentifier: PhoneAppConfiguration().taskIdentifier),
            weather: phone.weather.makeProvider(seed: deviceSeed), schedule: schedule,
            location: phone.location, appConfiguration: phone.os.appConfiguration(horizonDays: phone.horizonDays),
            deviceSeed: deviceSeed,
            node: PhoneNodeConfiguration(
                watchID: phone.watchId, schedulePath: phone.schedulePath, timeZone: phone.timeZone,
                machineZone: machineZone, statePath: phone.stateDirectory + "/phone.json",
                osStatePath: phone.stateDirectory + "/os.json", settings: phone.os.settingCommands,
                endpoint: phone.endpoint.description, boundEndpoint: phone.endpoint.description, pid: 1,
                security: .none, osState: .new))
        twinPhone.node.clockSpeed = phone.clock.speed
        // A restart applies the phone's flags to its stored OS, as the process does at every start.
        twinPhone.storedOSFlags = { [os = phone.os] stored, now in
            (try? os.resolve(stored: stored, taskIdentifier: PhoneAppConfiguration().taskIdentifier, at: now)) ?? stored
        }
        let twinWatch = watch.nodeConfiguration(
            statePath: watch.stateDirectory + "/watch.json", keysDirectory: nil, systemZone: machineZone)
        return Twin(start: start, speed: phone.clock.speed, phone: twinPhone, watch: twinWatch)
    }
}

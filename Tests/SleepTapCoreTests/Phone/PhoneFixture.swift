// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS

@testable import SleepTapCore

/// What the phone tests build a phone node from: a New York phone in Berlin's weather, started
/// on Thu 2025-03-06 12:00 EST, its app on either platform, and its node configuration.
enum PhoneFixture {
    static let zone = TimeZone(identifier: "America/New_York")!
    static let berlin = Coordinate(latitude: 52.52, longitude: 13.405)!
    /// Thu 2025-03-06 12:00 EST: inside the weather window, no forecast cached yet.
    static let start = ISO8601.date("2025-03-06T17:00:00Z")!
    static let watchID = "watch-1"

    static func app(
        platform: Platform = .ios, registration: RegistrationMode = .early, schedule: WakeSchedule = .everyDayAtSeven,
        zone: TimeZone = PhoneFixture.zone
    ) -> PhoneApp {
        let identifier = PhoneAppConfiguration().taskIdentifier
        let os: SimulatedOS
        if platform == .android {
            os = SimulatedOS(AndroidWorkScheduler(configuration: .init(repeatInterval: 3_600)), seed: 4)
        } else {
            var configuration = IOSBackgroundScheduler.Configuration(permittedIdentifiers: [identifier])
            configuration.registrationMode = registration
            os = SimulatedOS(IOSBackgroundScheduler(configuration: configuration, seed: 1))
        }
        return PhoneApp(
            state: PhoneSyncState(deviceSeed: 7), scheduler: os, weather: OfflineWeatherProvider(seed: 9),
            schedule: schedule, zone: zone, location: berlin, randomSeed: 42)
    }

    static func configuration(
        schedulePath: String? = nil, timeZone: TimeZone? = PhoneFixture.zone,
        machineZone: TimeZone = TimeZone(identifier: "UTC")!,
        pairedWatchKey: [UInt8]? = nil, settings: [PhoneCommand] = []
    ) -> PhoneNodeConfiguration {
        PhoneNodeConfiguration(
            watchID: watchID, pairedWatchKey: pairedWatchKey, schedulePath: schedulePath, timeZone: timeZone,
            machineZone: machineZone, statePath: "/state/phone.json", osStatePath: "/state/os.json",
            settings: settings, endpoint: "ipc:///run/p.sock", boundEndpoint: "ipc:///run/p.sock", pid: 1,
            security: .none, osState: .new)
    }
}

// SPDX-License-Identifier: Apache-2.0
// A month of nights in SleepTap's embedded twin, from a package of its own: the phone's refresh
// handler registered too late, then early, and what the watch saw each night.
import Foundation
import SleepTapCore
import SleepTapEmbedded
import SleepTapOS

func monthOfNights(registration: RegistrationMode) -> Twin {
    let zone = TimeZone(identifier: "America/New_York")!
    let start = ISO8601.date("2025-03-06T17:00:00Z")!  // Thursday 12:00 EST

    var ios = IOSBackgroundScheduler.Configuration(
        permittedIdentifiers: [PhoneAppConfiguration().taskIdentifier])
    ios.registrationMode = registration
    let phone = PhoneSetup(
        os: SimulatedOS(IOSBackgroundScheduler(configuration: ios, seed: 1)), schedule: .everyDayAtSeven,
        zone: zone, location: Coordinate(latitude: 40.71, longitude: -74.0)!)
    let watch = WatchNode.Configuration(
        endpoint: "twin", statePath: "watch.json", systemZone: zone,
        bedAt: LocalTime(hour: 22, minute: 30), manualWake: LocalTime(hour: 7, minute: 0))

    var twin = Twin(start: start, speed: 3_600, phone: phone, watch: watch, seed: 42)
    twin.boot()
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = zone
    twin.run(until: calendar.date(byAdding: .day, value: 30, to: start)!)
    return twin
}

for registration in [RegistrationMode.lateSilent, .early] {
    let twin = monthOfNights(registration: registration)
    let cached = twin.events(.bedWakeTime, from: .watch).count
    let manual = twin.events(.fallbackManualEntry, from: .watch).count
    let runs = twin.events(.handlerEntered, from: .phone).count
    print("\(registration.rawValue): \(cached) nights cached, \(manual) asked by hand, \(runs) background runs")
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import SleepTapCore

/// `PhoneZone`: the one statement of where the phone's zone comes from.
@Suite("The phone's zone precedence")
struct PhoneZoneTests {
    static let tokyo = TimeZone(identifier: "Asia/Tokyo")!
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    static let newYork = TimeZone(identifier: "America/New_York")!
    static let utc = TimeZone(identifier: "UTC")!
    static var inBerlin: WakeSchedule {
        var schedule = WakeSchedule.everyDayAtSeven
        schedule.timeZoneIdentifier = "Europe/Berlin"
        return schedule
    }

    @Test("The machine's zone when nothing else is set")
    func machine() {
        #expect(PhoneZone(machine: Self.utc).resolve(schedule: .everyDayAtSeven) == (Self.utc, .machine))
    }

    @Test("The schedule file's zone wins over the machine's")
    func schedule() {
        #expect(PhoneZone(machine: Self.utc).resolve(schedule: Self.inBerlin) == (Self.berlin, .schedule))
    }

    @Test("--time-zone wins over the schedule file's zone")
    func flag() {
        #expect(
            PhoneZone(flag: Self.tokyo, machine: Self.utc).resolve(schedule: Self.inBerlin) == (Self.tokyo, .flag))
    }

    @Test("The device's zone kept in os.json wins over the schedule file when no --time-zone is given")
    func device() {
        #expect(
            PhoneZone(device: Self.newYork, machine: Self.utc).resolve(schedule: Self.inBerlin)
                == (Self.newYork, .device))
    }

    @Test("A --time-zone given at a start replaces the kept zone")
    func flagReplacesDevice() {
        let zones = PhoneZone(flag: Self.tokyo, device: Self.newYork, machine: Self.utc)
        #expect(zones.device == nil)
        #expect(zones.resolve(schedule: Self.inBerlin) == (Self.tokyo, .flag))
    }

    @Test("Travel in this run wins over everything")
    func travel() {
        var zones = PhoneZone(flag: Self.tokyo, machine: Self.utc)
        zones.travel = Self.newYork
        #expect(zones.resolve(schedule: Self.inBerlin) == (Self.newYork, .travel))
    }

    @Test("A schedule zone the tz database does not know falls through to the machine's")
    func unknownScheduleZone() {
        var schedule = WakeSchedule.everyDayAtSeven
        schedule.timeZoneIdentifier = "Mars/Base"
        #expect(PhoneZone(machine: Self.utc).resolve(schedule: schedule) == (Self.utc, .machine))
    }

    @Test("The app's zone follows its schedule and travel without the node keeping a copy")
    func appResolves() {
        var app = PhoneFixture.app()
        app.zones = PhoneZone(machine: Self.utc)
        app.schedule = Self.inBerlin
        #expect(app.zone == Self.berlin && app.zoneSource == .schedule)
        _ = app.travel(to: Self.tokyo, at: PhoneFixture.start)
        #expect(app.zone == Self.tokyo && app.zoneSource == .travel)
        #expect(app.scheduler.timeZoneIdentifier == "Asia/Tokyo")
    }
}

// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import SleepTapEmbedded
import Testing

@testable import SleepTapFleet

/// The fleet runs its twins with the typed link (`Twin.LinkMode.messages`): its devices make the
/// same run records, and their twins the same events, as with frames decoded by the nodes.
@Suite("sleeptap-fleet: the typed link gives the frames' records")
struct FleetLinkModeTests {
    @Test(
        "24 devices of a mixed fleet (travel, Low Power, late registration from an update), 10 days: the same records and log lines in both link modes"
    )
    func sameRecords() {
        var options = FleetOptions(devices: 24, days: 10, start: LocalDate(parsing: "2026-03-02")!)
        options.seed = 31
        options.lowPower = 0.3
        options.lateRegistration = 0.5
        options.lateRegistrationFrom = LocalDate(parsing: "2026-03-06")!
        var records = 0
        for index in 0..<options.devices {
            let device = FleetDevice(index: index, options: options)
            var twins = [Twin.LinkMode.frames, .messages].map { device.twin(start: options.startInstant, linkMode: $0) }
            for i in twins.indices {
                twins[i].boot()
                twins[i].run(until: options.endInstant)
            }
            #expect(twins[0].runRecords == twins[1].runRecords, "device \(index)")
            #expect(twins[0].log.map(\.jsonLine) == twins[1].log.map(\.jsonLine), "device \(index)")
            #expect(
                device.run(options) == device.stamped(twins[1].runRecords),
                "device \(index): the fleet's run is the typed link's")
            records += twins[0].runRecords.count
        }
        #expect(records > 24 * 10)
    }
}

/// The fleet leaves `os.why` out of its twins' logs (`PhoneAppConfiguration.saysWhy`): nothing
/// else may change, or the fleet's records would depend on a log line nobody reads.
@Suite("sleeptap-fleet: os.why left out changes nothing else")
struct FleetWhyTests {
    @Test(
        "16 devices of a mixed fleet (Android Doze nights, Low Power, a processing task), 7 days: with and without os.why, the same records and every other log line"
    )
    func sameWithoutWhy() {
        var options = FleetOptions(devices: 16, days: 7, start: LocalDate(parsing: "2026-11-02")!)
        options.seed = 5
        options.lowPower = 0.3
        options.processingTask = true
        var whyLines = 0
        for index in 0..<options.devices {
            let device = FleetDevice(index: index, options: options)
            var twins = [true, false].map { device.twin(start: options.startInstant, saysWhy: $0) }
            for i in twins.indices {
                twins[i].boot()
                twins[i].run(until: options.endInstant)
            }
            let said = twins[0].log.filter { $0.event.name == .osWhy }
            whyLines += said.count
            #expect(twins[1].log.allSatisfy { $0.event.name != .osWhy }, "device \(index)")
            #expect(twins[0].runRecords == twins[1].runRecords, "device \(index)")
            #expect(
                twins[0].log.filter { $0.event.name != .osWhy }.map(\.jsonLine) == twins[1].log.map(\.jsonLine),
                "device \(index)")
            #expect(device.run(options) == device.stamped(twins[1].runRecords), "device \(index): the fleet's run")
        }
        // The comparison means something only if the devices said why, on both platforms.
        #expect(whyLines > options.devices * options.days)
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import SleepTapCore

@Suite("The watch's zone precedence")
struct WatchZoneTests {
    static let tokyo = TimeZone(identifier: "Asia/Tokyo")!
    static let newYork = TimeZone(identifier: "America/New_York")!
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    static let utc = TimeZone(identifier: "UTC")!

    @Test("Travel beats --time-zone beats the batch's zone beats the machine's")
    func precedence() {
        var zones = WatchZone(system: Self.utc)
        #expect(zones.resolve(batchZone: nil).zone == Self.utc)
        #expect(zones.resolve(batchZone: nil).source == .system)
        #expect(zones.resolve(batchZone: "America/New_York").zone == Self.newYork)
        #expect(zones.resolve(batchZone: "America/New_York").source == .batch)
        zones.flag = Self.berlin
        #expect(zones.resolve(batchZone: "America/New_York").zone == Self.berlin)
        #expect(zones.resolve(batchZone: "America/New_York").source == .flag)
        zones.travel = Self.tokyo
        #expect(zones.resolve(batchZone: "America/New_York").zone == Self.tokyo)
        #expect(zones.resolve(batchZone: "America/New_York").source == .travel)
    }

    @Test("A batch zone this machine does not know falls back to the machine's zone")
    func unknownBatchZone() {
        let zones = WatchZone(system: Self.utc)
        let resolved = zones.resolve(batchZone: "Mars/Olympus_Mons")
        #expect(resolved.zone == Self.utc)
        #expect(resolved.source == .system)
    }
}

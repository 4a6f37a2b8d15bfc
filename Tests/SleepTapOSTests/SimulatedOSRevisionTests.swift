// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOSTestFixtures
import Testing

@testable import SleepTapOS

/// `SimulatedOS.revision`: the stamp a host compares instead of encoding the OS to know that the
/// value it wrote is the value it holds.
@Suite("The OS's revision")
struct SimulatedOSRevisionTests {
    typealias F = SchedulerFixture

    static func launched() throws -> SimulatedOS {
        var os = SimulatedOS(F.ios())
        os.appLaunched(at: F.start, byUser: true)
        _ = try os.register(identifier: F.refreshID, at: F.start)
        os.finishLaunching(at: F.start)
        return os
    }

    @Test("A change to the state gives a new revision; a copy keeps it; questions and an empty drain leave it")
    func changesOnlyWithTheState() throws {
        var os = try Self.launched()
        let copy = os
        #expect(copy.revision == os.revision)
        try os.submit(identifier: F.refreshID, earliestBeginDate: F.start + 3_600, at: F.start)
        #expect(os.revision != copy.revision)
        #expect(os != copy)
        _ = os.drainTrace()
        let drained = os.revision
        _ = os.why(at: F.start)
        _ = os.nextLaunch(after: F.start)
        _ = os.drainTrace()
        #expect(os.revision == drained)
        os.setLowPowerMode(true, at: F.start + 60)
        #expect(os.revision != drained)
        os.setTimeZone(TimeZone(identifier: "Asia/Tokyo")!)
        let zoned = os.revision
        os.setTimeZone(TimeZone(identifier: "Europe/Paris")!)
        #expect(os.revision != zoned)
    }

    @Test("Values of separate lineages never share a revision, and a decoded value gets its own")
    func neverShared() throws {
        let a = SimulatedOS(F.ios())
        let b = SimulatedOS(F.ios())
        #expect(a == b)
        #expect(a.revision != b.revision)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let decoded = try decoder.decode(SimulatedOS.self, from: try encoder.encode(a))
        #expect(decoded == a)
        #expect(decoded.revision != a.revision)
        #expect(decoded.revision != b.revision)
    }

    @Test("Android: Doze, the bucket and a run each give a new revision")
    func android() throws {
        var os = SimulatedOS(F.android(interval: 3_600), seed: 1)
        var seen: Set<UInt64> = [os.revision]
        try os.submit(identifier: F.refreshID, earliestBeginDate: nil, at: F.start)
        #expect(seen.insert(os.revision).inserted)
        os.setStandbyBucket(.rare, at: F.start + 60)
        #expect(seen.insert(os.revision).inserted)
        os.doze(.screen(false), at: F.start + 120)
        #expect(seen.insert(os.revision).inserted)
        let taken = os.simulateLaunch(identifier: F.refreshID, at: F.start + 180)
        let launch = try #require(taken)
        #expect(seen.insert(os.revision).inserted)
        os.complete(launch, outcome: .success, duration: 5, at: F.start + 185)
        #expect(seen.insert(os.revision).inserted)
    }
}

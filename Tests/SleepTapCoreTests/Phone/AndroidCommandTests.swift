// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import SleepTapCore

/// The phone's stdin commands for the simulated Android OS (network, battery, storage, the
/// WorkManager `TestDriver` controls, `stop REASON`), parsed against the platform.
@Suite("Android OS commands")
struct AndroidCommandTests {
    @Test("stdin: the Android commands parse on Android and are refused on iOS, naming the platform")
    func commands() throws {
        #expect(try PhoneCommand.parse("network off", platform: .android) == .network(false))
        #expect(try PhoneCommand.parse("battery-low on", platform: .android) == .batteryLow(true))
        #expect(try PhoneCommand.parse("storage-low on", platform: .android) == .storageLow(true))
        #expect(try PhoneCommand.parse("period-delay-met", platform: .android) == .testDriver(.periodDelayMet))
        #expect(try PhoneCommand.parse("initial-delay-met", platform: .android) == .testDriver(.initialDelayMet))
        #expect(try PhoneCommand.parse("constraints-met", platform: .android) == .testDriver(.constraintsMet))
        #expect(try PhoneCommand.parse("stop 13", platform: .android) == .stop(.user))
        // iOS has a network too (a processing task's requiresNetworkConnectivity), and a charger
        // and a screen (requiresExternalPower, the device idle).
        #expect(try PhoneCommand.parse("network off", platform: .ios) == .network(false))
        #expect(try PhoneCommand.parse("charging on", platform: .ios) == .charging(true))
        #expect(try PhoneCommand.parse("screen off", platform: .ios) == .doze(.screen(false)))
        for line in ["battery-low on", "storage-low off", "period-delay-met", "stop USER", "motion", "idle force"] {
            #expect(throws: PhoneCommand.Rejection.self, "\(line)") { try PhoneCommand.parse(line, platform: .ios) }
            do {
                _ = try PhoneCommand.parse(line, platform: .ios)
            } catch {
                #expect(error.reason.contains("--platform ios"))
            }
        }
        do {
            _ = try PhoneCommand.parse("stop NAP", platform: .android)
            Issue.record("stop NAP accepted")
        } catch {
            #expect(error.reason.contains("\"NAP\""))
        }
        #expect(throws: PhoneCommand.Rejection.self) { try PhoneCommand.parse("network maybe", platform: .android) }
        #expect(throws: PhoneCommand.Rejection.self) { try PhoneCommand.parse("stop", platform: .android) }
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

@testable import SleepTapCore
@testable import SleepTapOS

/// The phone's stdin `battery LEVEL` (iOS): parsed, refused with a reason, and applied to the OS.
@Suite("The battery command")
struct BatteryCommandTests {
    @Test("stdin battery: a percentage or a fraction on iOS; bad levels and Android are refused with a reason")
    func parse() throws {
        #expect(try PhoneCommand.parse("battery 15%", platform: .ios) == .battery(0.15))
        #expect(try PhoneCommand.parse("battery 0.15", platform: .ios) == .battery(0.15))
        #expect(try PhoneCommand.parse("battery 100%", platform: .ios) == .battery(1))
        #expect(try PhoneCommand.parse("battery 0", platform: .ios) == .battery(0))
        #expect(try PhoneCommand.parse("battery 12.5%", platform: .ios) == .battery(0.125))
        for bad in ["101%", "1.5", "-0.1", "15 %", "abc", "%", ".5", "5.", "1e-1", "0x1", "15%%", "nan"] {
            let reason =
                "expected battery LEVEL: a percentage from 0% to 100% (e.g. 15%) or a fraction from 0 to 1 "
                + "(e.g. 0.15); not \"\(bad)\""
            if bad == "15 %" {
                #expect(throws: PhoneCommand.Rejection.self) {
                    try PhoneCommand.parse("battery \(bad)", platform: .ios)
                }
                continue
            }
            #expect(throws: PhoneCommand.Rejection(input: "battery \(bad)", reason: reason), "\(bad)") {
                try PhoneCommand.parse("battery \(bad)", platform: .ios)
            }
        }
        #expect(
            throws: PhoneCommand.Rejection(
                input: "battery", reason: "expected battery LEVEL (a percentage or a fraction, e.g. 15% or 0.15)")
        ) { try PhoneCommand.parse("battery", platform: .ios) }
        do {
            _ = try PhoneCommand.parse("battery 15%", platform: .android)
            Issue.record("battery accepted on Android")
        } catch {
            #expect(error.reason.contains("--platform android"))
            #expect(error.reason.contains("battery-low on|off"))
        }
    }

    @Test("Typed battery 15%: os.battery {level}, and the OS's level is 0.15")
    func applied() throws {
        var node = PhoneMachineTests.started()
        let time = PhoneMachineTests.at(10)
        let actions = node.commandLine("battery 15%", at: time)
        let next = try #require(node.nextLaunch)
        #expect(
            actions == [
                .persistOS(node.app.scheduler),
                PhoneMachineTests.event(.osBattery, [("level", .double(0.15))], at: time),
                .arm(.osLaunch, .at(next)),
            ])
        #expect(node.app.scheduler.batteryLevel(at: time.now) == 0.15)
    }

    @Test("phone.status gives the battery's level as it drains and the usage model's budgets; null on legacy")
    func status() throws {
        var configuration = IOSBackgroundScheduler.Configuration(
            permittedIdentifiers: [PhoneAppConfiguration().taskIdentifier])
        configuration.opportunityModel = .usage
        configuration.battery = BatteryModel(drainPerHour: 0.1)
        let app = PhoneApp(
            state: PhoneSyncState(deviceSeed: 7),
            scheduler: SimulatedOS(IOSBackgroundScheduler(configuration: configuration, seed: 1)),
            weather: OfflineWeatherProvider(seed: 9), schedule: .everyDayAtSeven, zone: PhoneFixture.zone,
            location: PhoneFixture.berlin, randomSeed: 42)
        typealias M = PhoneMachineTests
        var node = PhoneNode(app: app, configuration: PhoneFixture.configuration())
        _ = M.answered(&node, node.start(at: M.at(0)), at: M.at(0))
        _ = M.typed(&node, "battery 50%", at: 0)
        let first = try #require(M.events(.phoneStatus, in: node.commandLine("status", at: M.at(0))).first)
        #expect(first["batteryLevel"] == .double(0.5))
        #expect(
            first["budgets"] == .object(EventObject([("energySeconds", .double(75)), ("dataBytes", .int(500_000))])))
        let later = try #require(M.events(.phoneStatus, in: node.commandLine("status", at: M.at(3 * 3_600))).first)
        #expect(later["batteryLevel"] == .double(0.2))

        var legacy = M.started()
        let status = try #require(M.events(.phoneStatus, in: legacy.commandLine("status", at: M.at(0))).first)
        #expect(status["batteryLevel"] == .null)
        #expect(status["budgets"] == .null)
    }
}

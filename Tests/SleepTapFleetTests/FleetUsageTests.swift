// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCommandLine
import SleepTapCore
import SleepTapOS
import Testing

@testable import SleepTapFleet

/// `--opportunity-model usage` in a fleet (docs/scheduler.md, "Usage model").
@Suite("A fleet on iOS's usage opportunity model")
struct FleetUsageTests {
    @Test(
        "--opportunity-model usage reaches every iOS device: users who never open the app get fewer background runs than on legacy, and fewer in their second week than in their first; users who open it run the job more often in all (background and at the opens)"
    )
    func usageFleet() {
        var options = FleetTests.options(devices: 8, days: 14)
        options.iosShare = 1
        options.lowPower = 0
        // Every night on the charger: the battery never holds launches back here.
        options.nightstand = 0
        func records(_ kind: OpportunityModelKind, opens: Double) -> [RunRecord] {
            options.opportunityModel = kind
            options.opens = opens
            return (0..<8).flatMap { index -> [RunRecord] in
                let device = FleetDevice(index: index, options: options)
                #expect(device.opportunityModel == kind)
                return device.run(options)
            }
        }
        func background(_ records: [RunRecord]) -> [RunRecord] { records.filter { $0.kind == .background } }
        let legacyQuiet = background(records(.legacy, opens: 0))
        let usageQuiet = background(records(.usage, opens: 0))
        let usageDaily = records(.usage, opens: 2).filter { $0.kind == .background || $0.kind == .foreground }
        #expect(
            usageQuiet.count < legacyQuiet.count,
            "no opens: usage \(usageQuiet.count), legacy \(legacyQuiet.count) runs")
        // The usage model's decay: a quiet user's second week has fewer runs than the first.
        let firstRun = usageQuiet.map(\.at).min() ?? .distantPast
        let week1 = usageQuiet.filter { $0.at < firstRun.addingTimeInterval(7 * 86_400) }.count
        #expect(usageQuiet.count - week1 < week1, "no opens on usage: \(week1) runs in week 1 of \(usageQuiet.count)")
        // Seed 12, 8 devices, 14 days: 95 background runs on legacy without opens, 81 on usage
        // without opens; with 2 opens a day the job runs 47 times in the background and more at
        // the opens (the opens' foreground runs put the next request's earliestBeginDate a day on).
        #expect(
            usageDaily.count > usageQuiet.count,
            "usage: \(usageDaily.count) runs with 2 opens a day, \(usageQuiet.count) with none")
    }

    @Test(
        "On the usage model the iOS battery drains by day and charges on the nightstand's charger: never charged, fewer background runs than charged every night; legacy draws no battery"
    )
    func batteryPattern() throws {
        var options = FleetTests.options(devices: 6, days: 7)
        options.iosShare = 1
        options.lowPower = 0
        options.opens = 2
        options.opportunityModel = .usage
        func runs(nightstand: Double) -> Int {
            options.nightstand = nightstand
            return (0..<6).flatMap { index -> [RunRecord] in
                let device = FleetDevice(index: index, options: options)
                #expect(Self.phoneLines(device).contains { $0.hasPrefix("battery ") }, "device \(index)")
                return device.run(options)
            }.filter { $0.kind == .background }.count
        }
        let charged = runs(nightstand: 0)
        let unplugged = runs(nightstand: 1)
        #expect(unplugged < charged, "never charged: \(unplugged) runs, charged every night: \(charged)")
        options.opportunityModel = .legacy
        options.nightstand = 0
        let legacy = FleetDevice(index: 0, options: options)
        #expect(!Self.phoneLines(legacy).contains { $0.hasPrefix("battery ") || $0.hasPrefix("charging ") })
    }

    /// The device's phone stdin lines, in order.
    static func phoneLines(_ device: FleetDevice) -> [String] {
        device.steps.compactMap { entry in
            if case .phone(let line) = entry.step { return line }
            return nil
        }
    }

    @Test(
        "The weekly report of a usage fleet whose users do not open the app says the runs thin out: this week fewer background runs than last week; on legacy the weeks stay alike"
    )
    func reportSaysRunsThinOut() async throws {
        func report(_ kind: OpportunityModelKind) async -> FreshnessReport {
            var options = FleetOptions(devices: 16, days: 21, start: FleetTests.start)
            options.seed = 5
            options.iosShare = 1
            options.lowPower = 0
            options.nightstand = 0
            options.opens = 0
            options.opportunityModel = kind
            // The fleet's last day (2 March + 20): the report's two weeks are the fleet's last two,
            // after the install's week.
            var report = FreshnessReport(date: LocalDate(parsing: "2026-03-22")!)
            for records in await CalibrationTests.records(options) { report.add(file: records) }
            return report
        }
        let usage = await report(.usage)
        let (usageLast, usageThis) = (
            usage.figures(.all, days: FreshnessReport.lastWeek), usage.figures(.all, days: FreshnessReport.thisWeek)
        )
        #expect(
            usageThis.background < usageLast.background, "usage: \(usageLast.background) -> \(usageThis.background)")
        // The report's table says it: this week's runs, then last week's (39 and 73 at seed 5; legacy
        // 110 and 110).
        #expect(
            usage.markdown().contains(
                "| background runs, all outcomes | \(usageThis.background) | \(usageLast.background) |"))
        let legacy = await report(.legacy)
        let (legacyLast, legacyThis) = (
            legacy.figures(.all, days: FreshnessReport.lastWeek), legacy.figures(.all, days: FreshnessReport.thisWeek)
        )
        // Legacy draws a launch a day whatever the opens: the second week loses no more than a tenth.
        #expect(
            Double(legacyThis.background) >= 0.9 * Double(legacyLast.background),
            "legacy: \(legacyLast.background) -> \(legacyThis.background)")
        #expect(
            Double(usageThis.background) / Double(usageLast.background)
                < Double(legacyThis.background) / Double(legacyLast.background))
    }

    @Test("--opportunity-model is read by the fleet's flags; a bad value is refused naming it")
    func flag() throws {
        var flags = FleetPopulationFlags()
        var reader = ArgumentReader(["--opportunity-model", "usage", "--devices", "2", "--days", "1"])
        while let flag = try reader.nextFlag() { #expect(try flags.read(flag, from: &reader)) }
        let options = try flags.options(today: LocalDate(parsing: "2026-01-10")!, environment: [:])
        #expect(options.opportunityModel == .usage)
        var bad = FleetPopulationFlags()
        var badReader = ArgumentReader(["--opportunity-model", "maybe"])
        let flag = try #require(try badReader.nextFlag())
        #expect(throws: UsageError.self) { try bad.read(flag, from: &badReader) }
    }
}

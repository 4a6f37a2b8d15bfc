// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing

/// Every flag an executable's (or subcommand's) `--help` documents has a test of its effect: a flag added to a help
/// text without an entry in `coverage` (and a test behind it) fails the suite, and so does an
/// entry whose test is gone or whose flag left the help.
@Suite("every documented flag has a test of its effect")
struct FlagCoverageTests {
    /// Each help text: the label the table uses, the executable, and the arguments before `--help`.
    static let helpTexts: [(label: String, executable: String, prefix: [String])] = [
        ("phone", "phone", []), ("phone keygen", "phone", ["keygen"]), ("watch", "watch", []),
        ("watch keygen", "watch", ["keygen"]),
        ("sleeptap-demo", "sleeptap-demo", []), ("sleeptap-soak", "sleeptap-soak", []),
        ("sleeptap-scenario", "sleeptap-scenario", []), ("sleeptap-report", "sleeptap-report", []),
        ("sleeptap-fleet", "sleeptap-fleet", []), ("sleeptap-calibrate", "sleeptap-calibrate", []),
    ]

    /// "executable flag" -> "Target/File.swift function": the test that fails when the flag is
    /// parsed and then ignored.
    static let coverage: [String: String] = [
        "phone -h": "IntegrationTests/FlagCoverageTests.swift everyFlagHasATest",
        "phone --help": "IntegrationTests/FlagCoverageTests.swift everyFlagHasATest",
        "phone --endpoint": "IntegrationTests/ExchangeTests.swift phoneFirst",
        "phone --state-dir": "IntegrationTests/BadInputTests.swift corruptState",
        "phone --schedule": "IntegrationTests/ScheduleTests.swift scheduleChanges",
        "phone --time-zone": "IntegrationTests/ScheduleTests.swift travel",
        "phone --tzdata": "IntegrationTests/TzdataTests.swift vancouverBatch",
        "phone --keys": "IntegrationTests/CurveTests.swift paired",
        "phone --insecure": "IntegrationTests/SecurityTests.swift openDirectoryRefused",
        "phone --watch-id": "IntegrationTests/FlagEffectTests.swift routingIds",
        "phone --horizon-days": "IntegrationTests/ScheduleTests.swift horizon",
        "phone --device-seed": "IntegrationTests/FlagEffectTests.swift deviceSeed",
        "phone --platform": "IntegrationTests/FlagEffectTests.swift android",
        "phone --registration": "IntegrationTests/BackgroundTests.swift lateSilentOverIPC",
        "phone --budget": "IntegrationTests/FlagEffectTests.swift budget",
        "phone --low-power": "IntegrationTests/FlagEffectTests.swift lowPower",
        "phone --refresh-off": "IntegrationTests/BackgroundTests.swift refreshOff",
        "phone --charging": "IntegrationTests/FlagEffectTests.swift android",
        "phone --bucket": "IntegrationTests/FlagEffectTests.swift android",
        "phone --interval": "IntegrationTests/FlagEffectTests.swift android",
        "phone --android-api": "SleepTapRuntimeTests/OptionEffectTests.swift androidAPI",
        "phone --phone-alarm": "SleepTapRuntimeTests/OptionEffectTests.swift phoneAlarmAndPermissions",
        "phone --processing-task": "SleepTapRuntimeTests/OptionEffectTests.swift processingTask",
        "phone --exact-alarm-permission": "SleepTapRuntimeTests/OptionEffectTests.swift phoneAlarmAndPermissions",
        "phone --android16-quotas": "SleepTapRuntimeTests/OptionEffectTests.swift androidAPI",
        "phone --constraints": "SleepTapRuntimeTests/OptionEffectTests.swift constraints",
        "phone --notifications": "SleepTapRuntimeTests/OptionEffectTests.swift notifications",
        "phone --os-seed": "IntegrationTests/FlagEffectTests.swift osSeed",
        "phone --step-costs": "IntegrationTests/FlagEffectTests.swift stepCosts",
        "phone --weather": "IntegrationTests/FlagEffectTests.swift weather",
        "phone --weather-cost": "IntegrationTests/FlagEffectTests.swift weatherCost",
        "phone --location": "IntegrationTests/FlagEffectTests.swift location",
        "phone --metrics-dir": "IntegrationTests/MetricsTests.swift metricsDirectory",
        "phone --app-version": "IntegrationTests/MetricsTests.swift metricsDirectory",
        "phone --clock-start": "IntegrationTests/BackgroundTests.swift earlyKeepsDatesAhead",
        "phone --clock-speed": "IntegrationTests/BackgroundTests.swift earlyKeepsDatesAhead",
        "phone --clock-anchor": "IntegrationTests/BackgroundTests.swift earlyKeepsDatesAhead",
        "phone --dir": "IntegrationTests/CurveTests.swift keygenFiles",
        "phone --version": "IntegrationTests/BadInputTests.swift versionAndHelp",
        "phone keygen --dir": "IntegrationTests/CurveTests.swift keygenFiles",
        "phone keygen --keys": "IntegrationTests/CurveTests.swift paired",
        "phone keygen -h": "IntegrationTests/BadInputTests.swift keygenHelp",
        "phone keygen --help": "IntegrationTests/BadInputTests.swift keygenHelp",
        "watch -h": "IntegrationTests/FlagCoverageTests.swift everyFlagHasATest",
        "watch --help": "IntegrationTests/FlagCoverageTests.swift everyFlagHasATest",
        "watch --version": "IntegrationTests/BadInputTests.swift versionAndHelp",
        "watch --endpoint": "IntegrationTests/ExchangeTests.swift watchFirst",
        "watch --state-dir": "IntegrationTests/ExchangeTests.swift restartedWatchCatchesUp",
        "watch --time-zone": "IntegrationTests/FlagEffectTests.swift watchTimeZone",
        "watch --tzdata": "IntegrationTests/WatchTzdataTests.swift typedWakeTime",
        "watch --id": "IntegrationTests/FlagEffectTests.swift routingIds",
        "watch --keys": "IntegrationTests/CurveTests.swift paired",
        "watch --dir": "IntegrationTests/CurveTests.swift keygenFiles",
        "watch keygen --dir": "IntegrationTests/CurveTests.swift keygenFiles",
        "watch keygen --keys": "IntegrationTests/CurveTests.swift paired",
        "watch keygen -h": "IntegrationTests/BadInputTests.swift keygenHelp",
        "watch keygen --help": "IntegrationTests/BadInputTests.swift keygenHelp",
        "watch --insecure": "IntegrationTests/SecurityTests.swift openDirectoryRefused",
        "watch --bed-at": "IntegrationTests/ExchangeTests.swift fallbackOnEighthNight",
        "watch --manual-wake": "IntegrationTests/ExchangeTests.swift fallbackOnEighthNight",
        "watch --warn-nights": "IntegrationTests/FlagEffectTests.swift warnNights",
        "watch --stop-alarm-after": "IntegrationTests/FlagEffectTests.swift stopAlarmAfter",
        "watch --snooze-minutes": "IntegrationTests/FlagEffectTests.swift snoozeMinutes",
        "watch --complication-budget": "IntegrationTests/FlagEffectTests.swift complicationBudget",
        "watch --request-dates": "IntegrationTests/DateRequestIntegrationTests.swift requestOverIPC",
        "watch --clock-start": "IntegrationTests/ExchangeTests.swift fallbackOnEighthNight",
        "watch --clock-speed": "IntegrationTests/ExchangeTests.swift fallbackOnEighthNight",
        "watch --clock-anchor": "IntegrationTests/ExchangeTests.swift fallbackOnEighthNight",
        "sleeptap-demo -h": "IntegrationTests/FlagCoverageTests.swift everyFlagHasATest",
        "sleeptap-demo --help": "IntegrationTests/FlagCoverageTests.swift everyFlagHasATest",
        "sleeptap-demo --version": "IntegrationTests/BadInputTests.swift versionAndHelp",
        "sleeptap-demo --speed": "IntegrationTests/BadInputTests.swift demo",
        "sleeptap-demo --raw": "IntegrationTests/BadInputTests.swift demo",
        "sleeptap-demo --keep": "IntegrationTests/BadInputTests.swift demo",
        "sleeptap-scenario -h": "IntegrationTests/FlagCoverageTests.swift everyFlagHasATest",
        "sleeptap-scenario --help": "IntegrationTests/FlagCoverageTests.swift everyFlagHasATest",
        "sleeptap-scenario --version": "IntegrationTests/BadInputTests.swift versionAndHelp",
        "sleeptap-scenario --twin": "IntegrationTests/ScenarioRunnerTests.swift examplesHold",
        "sleeptap-scenario --json": "IntegrationTests/ScenarioRunnerTests.swift json",
        "sleeptap-scenario --processes": "IntegrationTests/ScenarioProcessTests.swift processesOnly",
        "sleeptap-scenario --both": "IntegrationTests/ScenarioProcessTests.swift wrongExpectation",
        "sleeptap-scenario --speed": "IntegrationTests/ScenarioProcessTests.swift examplesHoldBothWays",
        "sleeptap-scenario --svg": "IntegrationTests/ScenarioRunnerTests.swift svgChart",
        "sleeptap-report -h": "IntegrationTests/FlagCoverageTests.swift everyFlagHasATest",
        "sleeptap-report --help": "IntegrationTests/FlagCoverageTests.swift everyFlagHasATest",
        "sleeptap-report --version": "IntegrationTests/BadInputTests.swift versionAndHelp",
        "sleeptap-report --root": "IntegrationTests/ReportTests.swift garbageAmongGood",
        "sleeptap-report --date": "IntegrationTests/ReportTests.swift garbageAmongGood",
        "sleeptap-report --json": "IntegrationTests/ReportTests.swift garbageAmongGood",
        "sleeptap-calibrate -h": "IntegrationTests/FlagCoverageTests.swift everyFlagHasATest",
        "sleeptap-calibrate --help": "IntegrationTests/FlagCoverageTests.swift everyFlagHasATest",
        "sleeptap-calibrate --version": "IntegrationTests/BadInputTests.swift versionAndHelp",
        "sleeptap-calibrate --root": "IntegrationTests/CalibrateTests.swift garbageAmongGood",
        "sleeptap-calibrate --out": "IntegrationTests/CalibrateTests.swift garbageAmongGood",
        "sleeptap-calibrate --json": "IntegrationTests/CalibrateTests.swift garbageAmongGood",
        "sleeptap-fleet -h": "IntegrationTests/FlagCoverageTests.swift everyFlagHasATest",
        "sleeptap-fleet --help": "IntegrationTests/FlagCoverageTests.swift everyFlagHasATest",
        "sleeptap-fleet --version": "IntegrationTests/BadInputTests.swift versionAndHelp",
        "sleeptap-fleet --devices": "IntegrationTests/FleetReportTests.swift shardsAndJobs",
        "sleeptap-fleet --days": "IntegrationTests/FleetReportTests.swift lateRegistrationRate",
        "sleeptap-fleet --out": "IntegrationTests/FleetReportTests.swift badInput",
        "sleeptap-fleet --start": "IntegrationTests/FleetReportTests.swift lateRegistrationRate",
        "sleeptap-fleet --seed": "SleepTapFleetTests/FleetTests.swift sameSeedSameBytes",
        "sleeptap-fleet --mix": "IntegrationTests/FleetReportTests.swift lateRegistrationRate",
        "sleeptap-fleet --late-registration": "IntegrationTests/FleetReportTests.swift lateRegistrationRate",
        "sleeptap-fleet --late-registration-from": "IntegrationTests/FleetReportTests.swift updateWeekWarns",
        "sleeptap-fleet --opens": "IntegrationTests/FleetReportTests.swift lateRegistrationRate",
        "sleeptap-fleet --low-power": "SleepTapFleetTests/FleetTests.swift habits",
        "sleeptap-fleet --nightstand": "SleepTapFleetTests/FleetTests.swift nightstandDoze",
        "sleeptap-fleet --buckets": "SleepTapFleetTests/FleetTests.swift habits",
        "sleeptap-fleet --shard": "IntegrationTests/FleetReportTests.swift shardsAndJobs",
        "sleeptap-fleet --jobs": "IntegrationTests/FleetReportTests.swift shardsAndJobs",
        "sleeptap-fleet --json": "IntegrationTests/FleetReportTests.swift shardsAndJobs",
        "sleeptap-fleet --bench": "IntegrationTests/FleetReportTests.swift bench",
        "sleeptap-fleet --os-model": "IntegrationTests/CalibrateTests.swift osModel",
        "sleeptap-fleet --speed": "IntegrationTests/FleetReportTests.swift bench",
        "sleeptap-soak -h": "IntegrationTests/FlagCoverageTests.swift everyFlagHasATest",
        "sleeptap-soak --help": "IntegrationTests/FlagCoverageTests.swift everyFlagHasATest",
        "sleeptap-soak --version": "IntegrationTests/BadInputTests.swift versionAndHelp",
        "sleeptap-soak --steps": "IntegrationTests/FlagEffectTests.swift soak",
        "sleeptap-soak --seed": "IntegrationTests/FlagEffectTests.swift soak",
        "sleeptap-soak --verbose": "IntegrationTests/FlagEffectTests.swift soak",
        "sleeptap-soak --json": "IntegrationTests/FaultMatrixTests.swift sixteenSteps",
    ]

    /// The `Tests` directory of this checkout.
    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every `--flag` and `-h` written in `text`.
    static func flags(in text: String) -> Set<String> {
        let wordCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789-")
        let words = text.lowercased().split { !wordCharacters.contains($0) }.map(String.init)
        return Set(
            words.filter { word in
                word == "-h"
                    || (word.hasPrefix("--") && word.dropFirst(2).first.map { $0.isLetter } == true
                        && !word.hasSuffix("-"))
            })
    }

    @Test("Every flag of every --help (and -h) maps to a test of its effect, and every mapped test exists")
    func everyFlagHasATest() throws {
        var documented = Set<String>()
        for (label, executable, prefix) in Self.helpTexts {
            let long = try CapturedRun.run(executable, prefix + ["--help"], timeout: 10)
            let short = try CapturedRun.run(executable, prefix + ["-h"], timeout: 10)
            #expect(long.status == 0 && short.status == 0, "\(label): \(long.standardError)")
            #expect(long.standardOutput.hasPrefix("usage: \(label)"), "\(label): \(long.standardOutput)")
            #expect(short.standardOutput == long.standardOutput, "\(label) -h and --help differ")
            let flags = Self.flags(in: long.standardOutput)
            // A subcommand's usage may leave -h and --help to the executable's.
            #expect(
                !prefix.isEmpty || (flags.contains("--help") && flags.contains("-h")), "\(label): \(flags.sorted())")
            for flag in flags.sorted() {
                let key = "\(label) \(flag)"
                documented.insert(key)
                #expect(Self.coverage[key] != nil, "\(key) is in --help but no test of its effect is in the table")
            }
        }
        for (key, reference) in Self.coverage.sorted(by: { $0.key < $1.key }) {
            #expect(documented.contains(key), "\(key) is in the table but not in its --help")
            let parts = reference.split(separator: " ")
            try #require(parts.count == 2, "\(key): expected \"Target/File.swift function\", got \(reference)")
            let url = Self.testsDirectory.appendingPathComponent(String(parts[0]))
            let source = try #require(try? String(contentsOf: url, encoding: .utf8), "\(key): no file \(url.path)")
            #expect(source.contains("func \(parts[1])("), "\(key): no test \(parts[1]) in \(parts[0])")
        }
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCommandLine
import SleepTapCore
import SleepTapFleet
import SleepTapRuntime
import Testing

@testable import sleeptap_bench
@testable import sleeptap_calibrate
@testable import sleeptap_demo
@testable import sleeptap_report
@testable import sleeptap_scenario
@testable import sleeptap_soak

/// Every option a command declares (its `CommandSpec`, from which its `--help` is generated) has
/// a test of its effect: an option declared without an entry in `coverage` (and a test behind
/// it) fails the suite, and so does an entry whose test is gone or whose option is no longer
/// declared. Each declared option is also handled by the command's parser.
@Suite("every declared option has a test of its effect")
struct FlagCoverageTests {
    /// A command: its declarations, the executable and the arguments before its own (a
    /// subcommand's name), and its parser, reduced to whether it ran.
    struct Command: Sendable {
        var spec: CommandSpec
        var executable: String
        var prefix: [String] = []
        var parse: @Sendable ([String]) throws -> Void
    }

    static let commands: [Command] = [
        Command(spec: CommandLineParser.phoneCommand, executable: "phone") { _ = try CommandLineParser.parsePhone($0) },
        Command(spec: CommandLineParser.keygenCommand(.phone), executable: "phone", prefix: ["keygen"]) {
            _ = try CommandLineParser.parseKeygen($0)
        },
        Command(spec: CommandLineParser.watchCommand, executable: "watch") { _ = try CommandLineParser.parseWatch($0) },
        Command(spec: CommandLineParser.keygenCommand(.watch), executable: "watch", prefix: ["keygen"]) {
            _ = try CommandLineParser.parseKeygen($0)
        },
        Command(spec: DemoOptions.command, executable: "sleeptap-demo") { _ = try DemoOptions.parse($0) },
        Command(spec: SoakOptions.command, executable: "sleeptap-soak") { _ = try SoakOptions.parse($0) },
        Command(spec: ExhaustionOptions.command, executable: "sleeptap-soak", prefix: ["exhaustion"]) {
            _ = try ExhaustionOptions.parse($0)
        },
        Command(spec: ScenarioOptions.command, executable: "sleeptap-scenario") { _ = try ScenarioOptions.parse($0) },
        Command(spec: ReportOptions.command, executable: "sleeptap-report") { _ = try ReportOptions.parse($0) },
        Command(spec: FleetCommand.command, executable: "sleeptap-fleet") {
            _ = try FleetCommand.parse($0, today: LocalDate(parsing: "2026-03-01")!, cores: 2)
        },
        Command(spec: CalibrateOptions.command, executable: "sleeptap-calibrate") {
            _ = try CalibrateOptions.parse($0)
        },
        Command(spec: BenchOptions.command, executable: "sleeptap-bench") { _ = try BenchOptions.parse($0) },
        Command(spec: CompareCommand.command, executable: "sleeptap-compare") {
            _ = try CompareCommand.parse($0, today: LocalDate(parsing: "2026-03-01")!, cores: 2)
        },
    ]

    static let coverage: [String: String] = [
        "phone -h": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "phone --help": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
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
        "phone --opportunity-model": "SleepTapRuntimeTests/OptionEffectTests.swift opportunityModel",
        "phone --background-budgets": "SleepTapRuntimeTests/OptionEffectTests.swift budgetsAndBatteryRates",
        "phone --battery-rates": "SleepTapRuntimeTests/OptionEffectTests.swift budgetsAndBatteryRates",
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
        "phone --os-model": "SleepTapScenarioTests/OSModelOptionTests.swift fittedWait",
        "phone --clock-start": "IntegrationTests/BackgroundTests.swift earlyKeepsDatesAhead",
        "phone --clock-speed": "IntegrationTests/BackgroundTests.swift earlyKeepsDatesAhead",
        "phone --clock-anchor": "IntegrationTests/BackgroundTests.swift earlyKeepsDatesAhead",
        "phone --version": "IntegrationTests/BadInputTests.swift versionAndHelp",
        "phone keygen --dir": "IntegrationTests/CurveTests.swift keygenFiles",
        "phone keygen -h": "IntegrationTests/BadInputTests.swift keygenHelp",
        "phone keygen --help": "IntegrationTests/BadInputTests.swift keygenHelp",
        "watch -h": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "watch --help": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "watch --version": "IntegrationTests/BadInputTests.swift versionAndHelp",
        "watch --endpoint": "IntegrationTests/ExchangeTests.swift watchFirst",
        "watch --state-dir": "IntegrationTests/ExchangeTests.swift restartedWatchCatchesUp",
        "watch --time-zone": "IntegrationTests/FlagEffectTests.swift watchTimeZone",
        "watch --tzdata": "IntegrationTests/WatchTzdataTests.swift typedWakeTime",
        "watch --id": "IntegrationTests/FlagEffectTests.swift routingIds",
        "watch --keys": "IntegrationTests/CurveTests.swift paired",
        "watch keygen --dir": "IntegrationTests/CurveTests.swift keygenFiles",
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
        "watch --active-seconds": "IntegrationTests/FlagEffectTests.swift activeSeconds",
        "watch --clock-start": "IntegrationTests/ExchangeTests.swift fallbackOnEighthNight",
        "watch --clock-speed": "IntegrationTests/ExchangeTests.swift fallbackOnEighthNight",
        "watch --clock-anchor": "IntegrationTests/ExchangeTests.swift fallbackOnEighthNight",
        "sleeptap-demo -h": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "sleeptap-demo --help": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "sleeptap-demo --version": "IntegrationTests/BadInputTests.swift versionAndHelp",
        "sleeptap-demo --speed": "IntegrationTests/BadInputTests.swift demo",
        "sleeptap-demo --raw": "IntegrationTests/BadInputTests.swift demo",
        "sleeptap-demo --keep": "IntegrationTests/BadInputTests.swift demo",
        "sleeptap-scenario -h": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "sleeptap-scenario --help": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "sleeptap-scenario --version": "IntegrationTests/BadInputTests.swift versionAndHelp",
        "sleeptap-scenario --twin": "IntegrationTests/ScenarioRunnerTests.swift examplesHold",
        "sleeptap-scenario --json": "IntegrationTests/ScenarioRunnerTests.swift json",
        "sleeptap-scenario --processes": "IntegrationTests/ScenarioProcessTests.swift processesOnly",
        "sleeptap-scenario --both": "IntegrationTests/ScenarioProcessTests.swift wrongExpectation",
        "sleeptap-scenario --speed": "IntegrationTests/ScenarioProcessTests.swift examplesHoldBothWays",
        "sleeptap-scenario --svg": "IntegrationTests/ScenarioRunnerTests.swift svgChart",
        "sleeptap-report -h": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "sleeptap-report --help": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "sleeptap-report --version": "IntegrationTests/BadInputTests.swift versionAndHelp",
        "sleeptap-report --root": "IntegrationTests/ReportTests.swift garbageAmongGood",
        "sleeptap-report --date": "IntegrationTests/ReportTests.swift garbageAmongGood",
        "sleeptap-report --json": "IntegrationTests/ReportTests.swift garbageAmongGood",
        "sleeptap-calibrate -h": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "sleeptap-calibrate --help": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "sleeptap-calibrate --version": "IntegrationTests/BadInputTests.swift versionAndHelp",
        "sleeptap-calibrate --root": "IntegrationTests/CalibrateTests.swift garbageAmongGood",
        "sleeptap-calibrate --out": "IntegrationTests/CalibrateTests.swift garbageAmongGood",
        "sleeptap-calibrate --json": "IntegrationTests/CalibrateTests.swift garbageAmongGood",
        "sleeptap-fleet -h": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "sleeptap-fleet --help": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "sleeptap-fleet --version": "IntegrationTests/BadInputTests.swift versionAndHelp",
        "sleeptap-fleet --devices": "IntegrationTests/FleetReportTests.swift shardsAndJobs",
        "sleeptap-fleet --days": "IntegrationTests/FleetReportTests.swift lateRegistrationRate",
        "sleeptap-fleet --out": "IntegrationTests/FleetReportTests.swift badInput",
        "sleeptap-fleet --start": "IntegrationTests/FleetReportTests.swift lateRegistrationRate",
        "sleeptap-fleet --seed": "SleepTapFleetTests/FleetTests.swift sameSeedSameBytes",
        "sleeptap-fleet --os-seed": "SleepTapFleetTests/FleetTests.swift osSeed",
        "sleeptap-fleet --mix": "IntegrationTests/FleetReportTests.swift lateRegistrationRate",
        "sleeptap-fleet --late-registration": "IntegrationTests/FleetReportTests.swift lateRegistrationRate",
        "sleeptap-fleet --late-registration-from": "IntegrationTests/FleetReportTests.swift updateWeekWarns",
        "sleeptap-fleet --opens": "IntegrationTests/FleetReportTests.swift lateRegistrationRate",
        "sleeptap-fleet --low-power": "SleepTapFleetTests/FleetTests.swift habits",
        "sleeptap-fleet --nightstand": "SleepTapFleetTests/FleetTests.swift nightstandDoze",
        "sleeptap-fleet --buckets": "SleepTapFleetTests/FleetTests.swift habits",
        "sleeptap-fleet --opportunity-model": "SleepTapFleetTests/FleetUsageTests.swift usageFleet",
        "sleeptap-fleet --shard": "IntegrationTests/FleetReportTests.swift shardsAndJobs",
        "sleeptap-fleet --jobs": "IntegrationTests/FleetReportTests.swift shardsAndJobs",
        "sleeptap-fleet --json": "IntegrationTests/FleetReportTests.swift shardsAndJobs",
        "sleeptap-fleet --bench": "IntegrationTests/FleetReportTests.swift bench",
        "sleeptap-fleet --os-model": "IntegrationTests/CalibrateTests.swift osModel",
        "sleeptap-fleet --speed": "IntegrationTests/FleetReportTests.swift bench",
        "sleeptap-fleet --watch-nights": "SleepTapFleetTests/CompareTests.swift fleetWatchNights",
        "sleeptap-compare -h": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "sleeptap-compare --help": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "sleeptap-compare --version": "IntegrationTests/BadInputTests.swift versionAndHelp",
        "sleeptap-compare --strategies": "SleepTapFleetTests/CompareTests.swift lateRegistrationStrategies",
        "sleeptap-compare --horizon-days": "SleepTapFleetTests/CompareTests.swift strategySettings",
        "sleeptap-compare --warn-nights": "SleepTapFleetTests/CompareTests.swift strategySettings",
        "sleeptap-compare --out": "IntegrationTests/CompareToolTests.swift outputs",
        "sleeptap-compare --json": "IntegrationTests/CompareToolTests.swift outputs",
        "sleeptap-compare --records": "IntegrationTests/CompareToolTests.swift outWithoutRecords",
        "sleeptap-compare --jobs": "SleepTapFleetTests/CompareTests.swift reproducible",
        "sleeptap-compare --shard": "SleepTapFleetTests/CompareTests.swift shardsMerge",
        "sleeptap-compare --merge": "IntegrationTests/CompareToolTests.swift outputs",
        "sleeptap-compare --os-model": "IntegrationTests/CompareToolTests.swift badInput",
        // The population flags are sleeptap-fleet's, read by the same FleetPopulationFlags: the
        // fleet's tests of their effect hold for both (CompareTests.commandLine checks the wiring).
        "sleeptap-compare --devices": "IntegrationTests/CompareToolTests.swift outputs",
        "sleeptap-compare --days": "IntegrationTests/CompareToolTests.swift outputs",
        "sleeptap-compare --start": "IntegrationTests/CompareToolTests.swift outputs",
        "sleeptap-compare --seed": "SleepTapFleetTests/CompareTests.swift reproducible",
        "sleeptap-compare --os-seed": "SleepTapFleetTests/CompareTests.swift reproducible",
        "sleeptap-compare --mix": "SleepTapFleetTests/CompareTests.swift commandLine",
        "sleeptap-compare --late-registration": "SleepTapFleetTests/CompareTests.swift lateRegistrationStrategies",
        "sleeptap-compare --late-registration-from": "IntegrationTests/FleetReportTests.swift updateWeekWarns",
        "sleeptap-compare --opens": "SleepTapFleetTests/CompareTests.swift lateRegistrationStrategies",
        "sleeptap-compare --low-power": "SleepTapFleetTests/FleetTests.swift habits",
        "sleeptap-compare --nightstand": "SleepTapFleetTests/FleetTests.swift nightstandDoze",
        "sleeptap-compare --buckets": "SleepTapFleetTests/FleetTests.swift habits",
        "sleeptap-compare --opportunity-model": "SleepTapFleetTests/FleetUsageTests.swift usageFleet",
        "sleeptap-soak -h": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "sleeptap-soak --help": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "sleeptap-soak --version": "IntegrationTests/BadInputTests.swift versionAndHelp",
        "sleeptap-soak --steps": "IntegrationTests/FlagEffectTests.swift soak",
        "sleeptap-soak --seed": "IntegrationTests/FlagEffectTests.swift soak",
        "sleeptap-soak --verbose": "IntegrationTests/FlagEffectTests.swift soak",
        "sleeptap-soak --json": "IntegrationTests/FaultMatrixTests.swift sixteenSteps",
        "sleeptap-soak exhaustion -h": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "sleeptap-soak exhaustion --help": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "sleeptap-soak exhaustion --seed": "IntegrationTests/SoakExhaustionTests.swift smallRun",
        "sleeptap-soak exhaustion --scenarios": "IntegrationTests/SoakExhaustionTests.swift smallRun",
        "sleeptap-soak exhaustion --nights": "IntegrationTests/SoakExhaustionTests.swift smallRun",
        "sleeptap-soak exhaustion --json": "IntegrationTests/SoakExhaustionTests.swift smallRun",
        "sleeptap-soak exhaustion --out": "IntegrationTests/SoakExhaustionTests.swift brokenInvariant",
        "sleeptap-soak exhaustion --inject-fault": "IntegrationTests/SoakExhaustionTests.swift brokenInvariant",
        "sleeptap-soak exhaustion --processes": "IntegrationTests/FlagCoverageTests.swift parsedIntoOptions",
        "sleeptap-soak exhaustion --speed": "IntegrationTests/FlagCoverageTests.swift parsedIntoOptions",
        "sleeptap-bench -h": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "sleeptap-bench --help": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "sleeptap-bench --version": "IntegrationTests/FlagCoverageTests.swift helpIsGenerated",
        "sleeptap-bench --quick": "IntegrationTests/BenchTests.swift quickVerdicts",
        "sleeptap-bench --smoke": "IntegrationTests/BenchTests.swift smokeWritesTheDocumentedJSON",
        "sleeptap-bench --json": "IntegrationTests/BenchTests.swift smokeWritesTheDocumentedJSON",
        "sleeptap-bench --only": "IntegrationTests/FlagCoverageTests.swift parsedIntoOptions",
    ]

    /// The `Tests` directory of this checkout.
    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test("Every declared option (each of its names) maps to a test of its effect, and every mapped test exists")
    func everyFlagHasATest() throws {
        var declared = Set<String>()
        for command in Self.commands {
            for option in command.spec.options {
                for name in option.names {
                    let key = "\(command.spec.program) \(name)"
                    declared.insert(key)
                    #expect(Self.coverage[key] != nil, "\(key) is declared but no test of its effect is in the table")
                }
            }
        }
        for (key, reference) in Self.coverage.sorted(by: { $0.key < $1.key }) {
            #expect(declared.contains(key), "\(key) is in the table but not declared")
            let parts = reference.split(separator: " ")
            try #require(parts.count == 2, "\(key): expected \"Target/File.swift function\", got \(reference)")
            let url = Self.testsDirectory.appendingPathComponent(String(parts[0]))
            let source = try #require(try? String(contentsOf: url, encoding: .utf8), "\(key): no file \(url.path)")
            #expect(source.contains("func \(parts[1])("), "\(key): no test \(parts[1]) in \(parts[0])")
        }
    }

    @Test("Every declared option, given with its sample value, is handled by its command's parser")
    func everyDeclaredOptionIsParsed() {
        for command in Self.commands {
            for option in command.spec.options {
                for name in option.names {
                    var arguments = command.spec.sampleCommandLine(for: option)
                    if let index = arguments.lastIndex(of: option.name) { arguments[index] = name }
                    #expect(throws: Never.self, "\(command.spec.program) \(arguments)") {
                        try command.parse(arguments)
                    }
                }
            }
            #expect(throws: UsageError("unknown option --no-such-option"), "\(command.spec.program)") {
                try command.parse(command.spec.sampleOperands + ["--no-such-option"])
            }
        }
    }

    @Test("Each executable's --help and -h print the text generated from its declarations, exit 0")
    func helpIsGenerated() throws {
        for command in Self.commands {
            let label = command.spec.program
            let long = try CapturedRun.run(command.executable, command.prefix + ["--help"], timeout: 10)
            let short = try CapturedRun.run(command.executable, command.prefix + ["-h"], timeout: 10)
            #expect(long.status == 0 && short.status == 0, "\(label): \(long.standardError)")
            #expect(long.standardOutput == command.spec.help, "\(label): \(long.standardOutput)")
            #expect(short.standardOutput == long.standardOutput, "\(label) -h and --help differ")
            for line in long.standardOutput.split(separator: "\n") {
                #expect(line.count <= HelpGenerator.width, "\(label): \(line)")
            }
        }
    }

    @Test("The options of the bench and the exhaustion soak without a run of their own here reach the options")
    func parsedIntoOptions() throws {
        #expect(try BenchOptions.parse(["--only", "twin,report"]) == .run(BenchOptions(only: [.twin, .report])))
        guard case .run(let exhaustion) = try ExhaustionOptions.parse(["--processes", "2", "--speed", "3600"]) else {
            Issue.record("expected options")
            return
        }
        #expect(exhaustion.processes == 2 && exhaustion.speed == 3600)
    }
}

// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCommandLine
import SleepTapCore
import SleepTapOS
import SleepTapRuntime
import Testing

@testable import SleepTapFleet

/// The fleet: devices drawn from the seed and their index alone, byte-identical files whatever
/// the task order, shards that merge by copying, and the command line.
@Suite("sleeptap-fleet: the simulated fleet")
struct FleetTests {
    static let start = LocalDate(parsing: "2026-03-02")!

    static func options(devices: Int = 8, days: Int = 5) -> FleetOptions {
        var options = FleetOptions(devices: devices, days: days, start: start)
        options.seed = 12
        options.lowPower = 0.3
        return options
    }

    /// A fresh temp directory.
    static func directory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sleeptap-fleet-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Every file under `root/metrics/bg_runs` with its bytes.
    static func files(_ root: String) throws -> [String: Data] {
        let directory = root + "/" + RunRecordFile.directory
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            result[name] = FileManager.default.contents(atPath: directory + "/" + name)
        }
        return result
    }

    @Test("The same seed gives byte-identical files, one device at a time or four at once; another seed differs")
    func sameSeedSameBytes() async throws {
        let root = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let options = Self.options()
        let one = try await FleetRun.run(options, writer: RunRecordWriter(root: root + "/a"), jobs: 1)
        let four = try await FleetRun.run(options, writer: RunRecordWriter(root: root + "/b"), jobs: 4)
        var other = options
        other.seed = 13
        _ = try await FleetRun.run(other, writer: RunRecordWriter(root: root + "/c"), jobs: 2)
        let a = try Self.files(root + "/a")
        #expect(a.count == one.files && one.files > 0 && one.records > 0)
        #expect(one.devices == 8 && one.deviceDays == 40)
        #expect(a == (try Self.files(root + "/b")))
        #expect(one.records == four.records && one.submitted == four.submitted)
        #expect(a != (try Self.files(root + "/c")))
        // Every file is a valid run-record file of one device and one UTC day.
        for (name, data) in a {
            let records = try RunRecordFile.decode(data)
            #expect(!records.isEmpty)
            #expect(records.allSatisfy { RunRecordFile.fileName(device: $0.device, day: $0.at) == name })
        }
    }

    @Test(
        "--os-seed: the same users (their app opens at the same instants) with other iOS launches; another fingerprint"
    )
    func osSeed() async throws {
        let root = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let parsed = try FleetCommand.parse(
            [
                "--devices", "6", "--days", "5", "--start", "2026-03-02", "--seed", "12", "--os-seed", "5", "--out",
                root,
            ],
            today: Self.start, cores: 1)
        guard case .run(.run(let salted, _, _, _)) = parsed else {
            Issue.record("not a run")
            return
        }
        #expect(salted.osSeedSalt == 5 && salted.seed == 12)
        var options = Self.options(devices: 6, days: 5)
        options.iosShare = 1
        options.lowPower = 0
        var other = options
        other.osSeedSalt = salted.osSeedSalt
        _ = try await FleetRun.run(options, writer: RunRecordWriter(root: root + "/a"), jobs: 2)
        _ = try await FleetRun.run(other, writer: RunRecordWriter(root: root + "/b"), jobs: 2)
        func records(_ name: String, _ kind: RunRecord.Kind) throws -> [RunRecord] {
            try Self.files(root + "/" + name).sorted { $0.key < $1.key }.flatMap { try RunRecordFile.decode($0.value) }
                .filter { $0.kind == kind }
        }
        // An open's record carries the staleness at that moment, which the launches change.
        let opens = try records("a", .foreground).map { "\($0.device) \($0.at)" }
        #expect(!opens.isEmpty)
        #expect(opens == (try records("b", .foreground)).map { "\($0.device) \($0.at)" }, "the users are the same")
        let runs = try records("a", .background)
        #expect(!runs.isEmpty)
        #expect(runs.map(\.at) != (try records("b", .background)).map(\.at), "the OS drew other launches")
        // The fleet's fingerprint holds it: shards of two OS seeds are not one fleet.
        #expect(FleetOutput.signature(of: options) != FleetOutput.signature(of: other))
    }

    @Test("Shards 0/2 and 1/2 merged by copying are byte for byte the unsharded run; 0/3 runs devices 0, 3, 6")
    func shardsMerge() async throws {
        let root = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var options = Self.options(devices: 7, days: 3)
        _ = try await FleetRun.run(options, writer: RunRecordWriter(root: root + "/whole"), jobs: 2)
        var merged: [String: Data] = [:]
        for index in 0..<2 {
            options.shardIndex = index
            options.shardCount = 2
            let summary = try await FleetRun.run(options, writer: RunRecordWriter(root: root + "/\(index)"), jobs: 2)
            #expect(summary.devices == (index == 0 ? 4 : 3))
            let part = try Self.files(root + "/\(index)")
            #expect(Set(part.keys).isDisjoint(with: merged.keys))
            merged.merge(part) { first, _ in first }
        }
        #expect(merged == (try Self.files(root + "/whole")))
        options.shardIndex = 0
        options.shardCount = 3
        #expect(Array(options.shardDevices) == [0, 3, 6])
    }

    @Test("A device is drawn from the seed and its index only: the same in every shard and fleet size")
    func deviceIndependence() {
        var options = Self.options(devices: 100, days: 10)
        let device = FleetDevice(index: 42, options: options)
        options.shardIndex = 2
        options.shardCount = 5
        let again = FleetDevice(index: 42, options: options)
        #expect(device.name == "device-000042")
        #expect(device.schedule == again.schedule && device.platform == again.platform)
        #expect(device.steps.map(\.at) == again.steps.map(\.at))
        #expect(device.osSeed == again.osSeed && device.twinSeed == again.twinSeed)
        #expect(FleetDevice(index: 43, options: options).osSeed != device.osSeed)
        // The user's habits follow the options: no opens, no low power; every open is in the run.
        options.opens = 0
        options.lowPower = 0
        #expect(
            FleetDevice(index: 42, options: options).steps.allSatisfy { step in
                if case .phone(let line) = step.step { return !["open", "low-power on"].contains(line) }
                return true
            })
        #expect(device.steps.allSatisfy { $0.at > options.startInstant && $0.at < options.endInstant })
        #expect(device.steps.contains { if case .phone("open") = $0.step { true } else { false } })
    }

    @Test("--low-power and --buckets reach the records: Low Power Mode on some records or none; every bucket rare")
    func habits() {
        var options = Self.options(devices: 6, days: 4)
        options.iosShare = 0
        options.buckets = [.rare: 1]
        options.lowPower = 1
        let powered = (0..<6).flatMap { FleetDevice(index: $0, options: options).run(options) }
        #expect(powered.contains { $0.lowPower } && powered.allSatisfy { $0.platform == .android })
        #expect(powered.allSatisfy { $0.bucket == .rare })
        options.lowPower = 0
        let plain = (0..<6).flatMap { FleetDevice(index: $0, options: options).run(options) }
        #expect(!plain.isEmpty && plain.allSatisfy { !$0.lowPower })
    }

    @Test(
        "--nightstand: Android phones left unplugged and still at night Doze, so they run their work less often and their users' data is older; phones on the charger do not"
    )
    func nightstandDoze() throws {
        var options = Self.options(devices: 10, days: 10)
        options.iosShare = 0
        options.buckets = [.active: 1]
        options.lowPower = 0
        func fleet(_ share: Double) -> [RunRecord] {
            options.nightstand = share
            return (0..<10).flatMap { FleetDevice(index: $0, options: options).run(options) }
        }
        let charging = fleet(0)
        let dozing = fleet(1)
        let runs = { (records: [RunRecord]) in records.filter { $0.kind == .background }.count }
        #expect(runs(dozing) < runs(charging), "\(runs(dozing)) runs with Doze, \(runs(charging)) on the charger")
        // The staleness users see at their opens: worse, never better, with the phone in Doze.
        func meanStaleness(_ records: [RunRecord]) -> Double {
            let samples = records.filter { $0.kind == .foreground }.compactMap(\.stalenessHours)
            return samples.reduce(0, +) / Double(max(1, samples.count))
        }
        #expect(meanStaleness(dozing) > meanStaleness(charging))
        // Each Android night: the screen off at the bed tap, on at the wake-up; the charger only
        // on the nights that are not on the nightstand. iOS phones get no such steps.
        let device = FleetDevice(index: 0, options: options)
        let lines = device.steps.compactMap { if case .phone(let line) = $0.step { line } else { nil } }
        #expect(lines.filter { $0 == "screen off" }.count >= 9 && !lines.contains("charging on"))
        options.nightstand = 0
        func phoneLines(_ device: FleetDevice) -> [String] {
            device.steps.compactMap { if case .phone(let line) = $0.step { line } else { nil } }
        }
        #expect(phoneLines(FleetDevice(index: 0, options: options)).contains("charging on"))
        options.iosShare = 1
        #expect(!phoneLines(FleetDevice(index: 0, options: options)).contains { $0.hasPrefix("screen") })
    }

    @Test("No record of a device falls on the day after the fleet's last one (seed 7, device 20 ran a job at the end)")
    func nothingAfterTheEnd() {
        var options = FleetOptions(devices: 200, days: 14, start: LocalDate(parsing: "2026-11-18")!)
        options.seed = 7
        let records = FleetDevice(index: 20, options: options).run(options)
        #expect(!records.isEmpty)
        #expect(records.allSatisfy { $0.at < options.endInstant }, "\(records.filter { $0.at >= options.endInstant })")
    }

    @Test("--late-registration-from: the app registers early before the update day and late after it")
    func appUpdate() async throws {
        var options = Self.options(devices: 4, days: 6)
        options.iosShare = 1
        options.lateRegistration = 1
        options.opens = 0
        // Without opens the usage model launches rarely; legacy's daily draw shows the update's day.
        options.opportunityModel = .legacy
        options.lateRegistrationFrom = LocalDate(parsing: "2026-03-05")!
        let update = FleetOptions.midnightUTC(options.lateRegistrationFrom!)
        for index in 0..<4 {
            let device = FleetDevice(index: index, options: options)
            let records = device.run(options)
            #expect(device.registersLate && device.lateFrom! >= update)
            let succeeded = records.filter { $0.kind == .background && $0.success == true }
            #expect(!succeeded.isEmpty && succeeded.allSatisfy { $0.at < device.lateFrom! })
            #expect(records.contains { $0.kind == .dropped && $0.at > device.lateFrom! })
            // The update bumps the app's version in the records from its moment on.
            #expect(records.allSatisfy { $0.appVersion == ($0.at < device.lateFrom! ? "1.0" : "1.1") })
        }
    }

    /// The weekly report (dated the last simulated day) of a 14-day fleet of `devices` iOS
    /// devices, `late` of whose apps register their handler too late from the start.
    static func report(late: Double, devices: Int = 8) -> FreshnessReport {
        var options = FleetOptions(devices: devices, days: 14, start: start)
        options.seed = 1
        options.iosShare = 1
        options.lateRegistration = late
        var report = FreshnessReport(date: LocalDate(parsing: "2026-03-15")!)
        for index in 0..<devices { report.add(file: FleetDevice(index: index, options: options).run(options)) }
        return report
    }

    @Test(
        "The report gets worse when more devices break: p90, the no-run share and ⚠ at late registration 0.0, 0.8, 1.0")
    func reportGetsWorse() throws {
        let reports = [0.0, 0.8, 1.0].map { Self.report(late: $0) }
        let weeks = reports.map { $0.figures(.all, days: FreshnessReport.thisWeek) }
        // Healthy: a p90 in hours, every device ran, no ⚠.
        let healthy = try #require(weeks[0].p90?.hours)
        #expect(healthy > 0 && healthy < 168, "\(weeks[0])")
        #expect(weeks[0].noRunDevices == 0 && reports[0].conditions.isEmpty)
        // 0.8: the broken devices' samples are the stalest of all, never; more devices without a run; ⚠.
        #expect(weeks[1].p90 == .never, "\(weeks[1])")
        #expect(weeks[1].noRunDevices > weeks[0].noRunDevices && weeks[1].noRunDevices < weeks[2].noRunDevices)
        #expect(reports[1].conditions.contains(.p90AboveCacheHorizon(.never)))
        // 1.0: nothing ever runs: every absolute condition.
        #expect(weeks[2].p50 == .never && weeks[2].noRunDevices == weeks[2].devices)
        #expect(
            reports[2].conditions == [
                .p90AboveCacheHorizon(.never), .noneRan(requests: weeks[2].submitted),
                .mostDevicesWithoutRun(noRun: weeks[2].devices, devices: weeks[2].devices),
            ])
        for report in reports.dropFirst() { #expect(report.heading.hasPrefix("# ⚠ ")) }
    }

    @Test("Poisson opens: the mean of many days is near --opens, never more than 10")
    func poisson() {
        var rng = SplitMix64(state: 3)
        for mean in [0.0, 0.5, 1.5, 4.0] {
            let counts = (0..<20_000).map { _ in
                FleetDevice.poisson(mean: mean, Double(rng.next() >> 11) / Double(UInt64(1) << 53))
            }
            let average = Double(counts.reduce(0, +)) / Double(counts.count)
            #expect(abs(average - mean) < 0.05, "mean \(mean): \(average)")
            #expect(counts.allSatisfy { $0 <= 10 })
        }
    }

    static let today = LocalDate(parsing: "2026-11-30")!

    static func parse(_ line: String) throws(UsageError) -> FleetCommand {
        let words = line.split(separator: " ").map(String.init)
        guard case .run(let command) = try FleetCommand.parse(words, today: today, cores: 2) else {
            throw UsageError("not a run")
        }
        return command
    }

    @Test("The command line: every flag reaches the options; --start defaults to --days before today")
    func parsing() throws {
        let command = try Self.parse(
            "--devices 10 --days 14 --out F --seed 9 --mix ios=0.25,android=0.75 --late-registration 0.5 "
                + "--late-registration-from 2026-11-20 --opens 2 --low-power 0.2 --nightstand 0.75 "
                + "--buckets active=0.5,rare=0.5 --shard 1/3 --jobs 3 --json")
        guard case .run(let options, let out, let jobs, let json) = command else {
            Issue.record("\(command)")
            return
        }
        #expect(out == "F" && jobs == 3 && json)
        #expect(options.devices == 10 && options.days == 14 && options.start.description == "2026-11-16")
        #expect(options.seed == 9 && options.iosShare == 0.25 && options.lateRegistration == 0.5)
        #expect(options.lateRegistrationFrom?.description == "2026-11-20" && options.opens == 2)
        #expect(options.lowPower == 0.2 && options.buckets == [.active: 0.5, .rare: 0.5])
        #expect(options.nightstand == 0.75)
        #expect(options.shardIndex == 1 && options.shardCount == 3)
        #expect(try Self.parse("--bench") == .bench(devices: 100, days: 28, jobs: 2, speed: 3_600))
        guard
            case .run(let defaults, _, let cores, false) = try Self.parse(
                "--devices 1 --days 7 --out F --start 2026-01-01")
        else {
            Issue.record("defaults")
            return
        }
        #expect(defaults.start.description == "2026-01-01" && cores == 2 && defaults.iosShare == 0.6)
        #expect(defaults.nightstand == 0.5)
    }

    @Test("Without --shard, the shard of a Slurm job array or a Kubernetes Indexed Job; --shard wins")
    func batchShard() throws {
        #expect(try FleetCommand.shard(in: [:]) == nil)
        let slurm = [
            "SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "1",
            "SLURM_ARRAY_TASK_STEP": "2",
        ]
        #expect(try FleetCommand.shard(in: slurm).map { [$0.0, $0.1] } == [2, 4])
        #expect(
            try FleetCommand.shard(in: ["SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "8"]).map {
                [$0.0, $0.1]
            } == [3, 8])
        let kubernetes = ["JOB_COMPLETION_INDEX": "0", "SLEEPTAP_SHARD_COUNT": "3"]
        #expect(try FleetCommand.shard(in: kubernetes).map { [$0.0, $0.1] } == [0, 3])
        guard
            case .run(.run(let options, _, _, _)) = try FleetCommand.parse(
                ["--devices", "9", "--days", "2", "--out", "F"], today: Self.today, cores: 2, environment: kubernetes)
        else { throw UsageError("not a run") }
        #expect(options.shardIndex == 0 && options.shardCount == 3)
        guard
            case .run(.run(let flagged, _, _, _)) = try FleetCommand.parse(
                ["--devices", "9", "--days", "2", "--out", "F", "--shard", "2/5"], today: Self.today, cores: 2,
                environment: kubernetes)
        else { throw UsageError("not a run") }
        #expect(flagged.shardIndex == 2 && flagged.shardCount == 5)
    }

    @Test(
        "A bad batch-system shard names the variable and what is wrong",
        arguments: [
            (["JOB_COMPLETION_INDEX": "1"], "JOB_COMPLETION_INDEX is set without SLEEPTAP_SHARD_COUNT"),
            (["SLEEPTAP_SHARD_COUNT": "3"], "SLEEPTAP_SHARD_COUNT is set without JOB_COMPLETION_INDEX"),
            (["SLURM_ARRAY_TASK_COUNT": "3"], "SLURM_ARRAY_TASK_COUNT is set without SLURM_ARRAY_TASK_ID"),
            (["JOB_COMPLETION_INDEX": "3", "SLEEPTAP_SHARD_COUNT": "3"], "JOB_COMPLETION_INDEX=3 is not below"),
            (["JOB_COMPLETION_INDEX": "x", "SLEEPTAP_SHARD_COUNT": "3"], "JOB_COMPLETION_INDEX=\"x\""),
            (["SLURM_ARRAY_TASK_ID": "2"], "without SLURM_ARRAY_TASK_COUNT"),
            (["SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "4"], "is not one of 4 tasks"),
            (
                [
                    "SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "1",
                    "SLURM_ARRAY_TASK_STEP": "2",
                ], "is not one of 4 tasks from 1 by 2"
            ),
            (["SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "0"], "SLURM_ARRAY_TASK_COUNT=\"0\""),
            // Past the shard limit: the limit is named, not the index.
            (
                ["JOB_COMPLETION_INDEX": "0", "SLEEPTAP_SHARD_COUNT": "1000001"],
                "SLEEPTAP_SHARD_COUNT=1000001: at most 1000000 shards"
            ),
            (
                ["SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "2000000"],
                "SLURM_ARRAY_TASK_COUNT=2000000: at most 1000000 shards"
            ),
        ])
    func badBatchShard(environment: [String: String], message: String) {
        #expect {
            _ = try FleetCommand.shard(in: environment)
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    @Test(
        "A bad command line names the option and what is wrong",
        arguments: [
            ("--days 3 --out F", "--devices N is required"),
            ("--devices 3 --out F", "--days D is required"),
            ("--devices 3 --days 3", "--out DIR is required"),
            ("--devices 0 --days 3 --out F", "--devices \"0\""),
            ("--devices 3 --days 400 --out F", "--days \"400\""),
            ("--devices 3 --days 3 --out F --mix ios=0.6,android=0.6", "the shares sum to 1.2"),
            ("--devices 3 --days 3 --out F --mix ios=1,windows=0", "unknown name \"windows\""),
            ("--devices 3 --days 3 --out F --mix ios=1,ios=0", "ios is given twice"),
            ("--devices 3 --days 3 --out F --buckets sleepy=1", "unknown name \"sleepy\""),
            ("--devices 3 --days 3 --out F --shard 2/2", "--shard \"2/2\""),
            ("--devices 3 --days 3 --out F --shard x", "--shard \"x\""),
            ("--devices 3 --days 3 --out F --late-registration 1.5", "--late-registration \"1.5\""),
            ("--devices 3 --days 3 --out F --nightstand -0.1", "--nightstand \"-0.1\": expected a share from 0 to 1"),
            ("--bench --nightstand 0.5", "--nightstand is not a --bench option"),
            ("--devices 3 --days 3 --out F --start 2026-02-30", "--start \"2026-02-30\""),
            ("--devices 3 --days 2 --out F --start 2199-12-31", "must lie from 1970-01-01 to 2199-12-31"),
            ("--devices 3 --days 2 --out F --start 9999-12-31", "must lie from 1970-01-01 to 2199-12-31"),
            ("--devices 3 --days 1 --out F --start 1969-12-31", "must lie from 1970-01-01 to 2199-12-31"),
            (
                "--devices 3 --days 3 --out F --start 2026-01-01 --late-registration 1 --late-registration-from 2026-01-04",
                "not one of the simulated days"
            ),
            (
                "--devices 3 --days 3 --out F --start 2026-01-01 --late-registration-from 2026-01-02",
                "needs --late-registration"
            ),
            ("--devices 3 --days 3 --out F --opens 11", "--opens \"11\""),
            ("--devices 3 --days 3 --out F --speed 10", "--speed is a --bench option"),
            ("--bench --out F", "--out is not a --bench option"),
            ("--bench --seed 7", "--seed is not a --bench option"),
            ("--devices 3 --days 3 --out F --frob", "unknown option --frob"),
        ])
    func badCommandLines(_ line: String, _ message: String) {
        #expect {
            _ = try Self.parse(line)
        } throws: { error in
            "\(error)".contains(message)
        }
    }
}

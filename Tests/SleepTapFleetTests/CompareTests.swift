// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCalibration
import SleepTapCommandLine
import SleepTapCore
import SleepTapRuntime
import Testing

@testable import SleepTapFleet

/// `sleeptap-compare`: the same seeded users under several refresh strategies, the watch's night
/// records, the table's figures and the command line.
@Suite("sleeptap-compare: refresh strategies side by side")
struct CompareTests {
    static let start = LocalDate(parsing: "2026-11-02")!

    /// The seed's situation: an iOS fleet whose app registers its refresh handler too late, whose
    /// users seldom open the app (an open runs the refresh job and refills the dates).
    static func lateFleet(devices: Int = 16, days: Int = 21) -> FleetOptions {
        var options = FleetOptions(devices: devices, days: days, start: start)
        options.seed = 1
        options.iosShare = 1
        options.lateRegistration = 1
        options.opens = 0.1
        return options
    }

    static func run(
        _ options: FleetOptions, _ strategies: [RefreshStrategy] = RefreshStrategy.defaults,
        settings: CompareSettings = CompareSettings(), jobs: Int = 2, out: String? = nil
    ) async throws -> [StrategyTally] {
        try await CompareRun.run(options, strategies: strategies, settings: settings, jobs: jobs, out: out).tallies
    }

    @Test(
        "A device's shared runs are its separate runs, record for record: Android's processing is refresh, request is refresh while the watch is never low"
    )
    func sharedRunsAreSeparateRuns() async throws {
        var mixed = FleetOptions(devices: 16, days: 14, start: Self.start)
        mixed.seed = 4
        mixed.iosShare = 0.5
        let settings = CompareSettings()
        let strategies = RefreshStrategy.defaults
        var androidShared = 0
        var requestShared = 0
        var requestOwn = 0
        for options in [mixed, Self.lateFleet(devices: 6, days: 14)] {
            for index in 0..<options.devices {
                let shared = CompareRun.device(index, options, strategies: strategies, settings: settings)
                let platform = FleetDevice(index: index, options: options).platform
                for (s, strategy) in strategies.enumerated() {
                    let variant = strategy.applied(to: options, settings)
                    let own = FleetDevice(index: index, options: variant).simulate(variant, measureBytes: true)
                    let run = shared[s]
                    #expect(
                        run.records == own.records && run.nights == own.nights && run.launches == own.launches
                            && run.linkBytes == own.linkBytes, "device \(index), \(strategy)")
                }
                if platform == .android { androidShared += 1 }
                if shared[0].requestChecksLow == 0 { requestShared += 1 } else { requestOwn += 1 }
            }
        }
        // Both kinds of sharing happened, and a watch that ran low got its own request run.
        #expect(
            androidShared >= 3 && requestShared >= 3 && requestOwn >= 3,
            "\(androidShared) \(requestShared) \(requestOwn)")
        // The rule itself: other options, or a low watch, are not answered.
        let refresh = RefreshStrategy.refresh.applied(to: mixed, settings)
        let request = RefreshStrategy.request.applied(to: mixed, settings)
        let horizon = RefreshStrategy.horizon.applied(to: mixed, settings)
        let quiet = FleetDevice.Outcome(records: [], nights: [], launches: 0, linkBytes: 0, requestChecksLow: 0)
        var low = quiet
        low.requestChecksLow = 1
        #expect(CompareRun.answers((refresh, quiet), request))
        #expect(!CompareRun.answers((refresh, low), request))
        #expect(!CompareRun.answers((refresh, quiet), horizon))
        var otherWarn = request
        otherWarn.warnNights = 3
        #expect(!CompareRun.answers((refresh, quiet), otherWarn))
        // The comparison's tallies are those of separate runs.
        let together = try await Self.run(mixed, [.processing, .refresh, .request], jobs: 2)
        let processingAlone = try await Self.run(mixed, [.processing], jobs: 1)
        let requestAlone = try await Self.run(mixed, [.request], jobs: 1)
        #expect(together[0] == processingAlone[0])
        #expect(together[2] == requestAlone[0])
    }

    @Test("A p90 of never is explained under the table, per strategy, with the opens before a first run")
    func neverExplained() async throws {
        // Every app registers its handler too late: no background run, so every open after the
        // install reads never under the refresh task; a nightly push feeds the app.
        var short = Self.lateFleet(devices: 12, days: 5)
        short.opens = 1.5
        let report = CompareReport(
            options: short, settings: CompareSettings(), tallies: try await Self.run(short, [.refresh, .push]))
        let never = report.tallies.filter { $0.p90 == .never }
        try #require(never.map(\.strategy) == [.refresh], "\(report.tallies.map(\.p90))")
        let note = try #require(report.neverNote)
        for tally in never {
            #expect(
                note.contains(
                    "\(tally.strategy.rawValue) \(tally.neverRefreshed) of \(tally.stalenessSamples.count + tally.neverRefreshed)"
                ), "\(note)")
        }
        #expect(
            note.hasSuffix(
                "A run of 5 days holds the opens of the devices' first days, before any background run could answer."))
        #expect(report.text.contains(note) && report.markdown(chartName: "c.svg").contains(note))
        #expect(report.json.contains("\"neverNote\":\"p90 never:"))
        // No never, no note.
        var numbers = report
        numbers.tallies = report.tallies.map { tally in
            var tally = tally
            tally.neverRefreshed = 0
            return tally
        }
        #expect(numbers.neverNote == nil)
    }

    @Test(
        "Late registration: request, horizon and a server push cut the manual-entry nights of refresh alone, a processing task registered as late does not; no alarm is wrong"
    )
    func lateRegistrationStrategies() async throws {
        let tallies = try await Self.run(Self.lateFleet())
        let (refresh, request, horizon, processing, push) = (tallies[0], tallies[1], tallies[2], tallies[3], tallies[4])
        #expect(tallies.map(\.strategy) == [.refresh, .request, .horizon, .processing, .push])
        // The processing task's handler is registered as late as the refresh task's: the OS
        // launches the app for it and nothing runs, so the watch runs out as with refresh alone.
        #expect(processing.manualNights == refresh.manualNights)
        // The same users and nights under each strategy.
        #expect(Set(tallies.map(\.nights)).count == 1 && refresh.nights >= 16 * 20)
        let refreshInterval = try #require(refresh.manualInterval)
        // The refresh task alone: the watch runs out of dates and asks by hand, night after night.
        #expect(refresh.manualNights > 100, "\(refresh.manualNights) of \(refresh.nights)")
        // The others cut it, beyond the intervals' overlap: a push reaches the app delegate, not
        // the late launch handler, and its job publishes a batch every night.
        for other in [request, horizon, push] {
            let interval = try #require(other.manualInterval)
            #expect(interval.high < refreshInterval.low, "\(other.strategy): \(interval) vs \(refreshInterval)")
        }
        #expect(request.manualNights < horizon.manualNights)
        // Asking costs launches (the watch's REQUEST wakes the app); a longer batch costs bytes.
        #expect(request.launchesPerDeviceDay > refresh.launchesPerDeviceDay)
        // A push a night is about one more launch a device-day (fewer when throttled or refused).
        #expect(push.launchesPerDeviceDay > refresh.launchesPerDeviceDay + 0.8, "\(push.launchesPerDeviceDay)")
        #expect(push.manualNights <= request.manualNights)
        #expect(horizon.linkBytes > refresh.linkBytes)
        for tally in tallies {
            #expect(
                tally.alarmFailures == 0, "\(tally.strategy): \(tally.alarmsWrong) wrong, \(tally.alarmsMissed) missed")
            #expect(tally.alarmsRight + tally.alarmsAfterEnd == tally.nights)
            // No background run ever succeeds: every staleness percentile is `never`, but a push's,
            // whose run ends the staleness (each device's install left out of the samples).
            if tally.strategy == .push {
                #expect(tally.p90?.hours != nil, "\(String(describing: tally.p90))")
            } else {
                #expect(tally.p90 == nil || tally.p90 == .never, "\(tally.strategy)")
            }
            // The per-device-day figures' intervals hold their means.
            let launches = try #require(tally.launchesInterval)
            #expect(launches.low <= tally.launchesPerDeviceDay && tally.launchesPerDeviceDay <= launches.high)
            let bytes = try #require(tally.bytesInterval)
            #expect(bytes.low < tally.bytesPerDeviceDay && tally.bytesPerDeviceDay < bytes.high)
        }
    }

    @Test(
        "The push row gets worse when the OS refuses pushes: Low Power Mode every day takes launches away and leaves the dates staler at the opens"
    )
    func pushRowWorsensWhenRefused() async throws {
        // Late registration: the refresh task never runs, so the nightly push is the only
        // background run, and iOS refuses it while Low Power Mode is on (docs/scheduler.md).
        var options = Self.lateFleet(devices: 8, days: 14)
        options.opens = 1
        options.lowPower = 0
        let delivered = try await Self.run(options, [.push])[0]
        options.lowPower = 1
        let refused = try await Self.run(options, [.push])[0]
        #expect(delivered.nights == refused.nights)
        #expect(
            refused.launchesPerDeviceDay < delivered.launchesPerDeviceDay - 0.1,
            "\(refused.launchesPerDeviceDay) vs \(delivered.launchesPerDeviceDay)")
        let fresh = try #require(delivered.p50?.hours)
        let freshP90 = try #require(delivered.p90?.hours)
        let stale = try #require(refused.p90)
        #expect(stale == .never || (stale.hours ?? 0) > freshP90, "p90 \(stale) vs \(freshP90)")
        #expect((refused.p50?.hours ?? .infinity) > fresh, "p50 \(String(describing: refused.p50)) vs \(fresh)")
        #expect(refused.manualNights >= delivered.manualNights)
    }

    @Test(
        "Early registration, phones on the charger every night: the processing strategy adds a nightly background run to the refresh task's, with no alarm wrong"
    )
    func processingAddsNightlyRuns() async throws {
        var options = FleetOptions(devices: 12, days: 10, start: LocalDate(parsing: "2026-11-02")!)
        options.seed = 3
        options.iosShare = 1
        options.opens = 0.1
        options.nightstand = 0  // on the charger every night
        let tallies = try await Self.run(options, [.refresh, .processing])
        let (refresh, processing) = (tallies[0], tallies[1])
        #expect(Set(tallies.map(\.nights)).count == 1)
        // At most one processing run a night per device, and most nights have one.
        let extra = (processing.launchesPerDeviceDay - refresh.launchesPerDeviceDay) * Double(refresh.deviceDays)
        #expect(extra >= 0.5 * Double(refresh.nights) && extra <= 1.05 * Double(refresh.nights), "\(extra)")
        #expect(processing.manualNights <= refresh.manualNights)
        #expect(tallies.allSatisfy { $0.alarmFailures == 0 })
    }

    @Test(
        "The numbers are the seed's: the same options give the same JSON, with one job or three; another seed differs")
    func reproducible() async throws {
        let options = Self.lateFleet(devices: 6, days: 14)
        let settings = CompareSettings()
        let one = CompareReport(options: options, settings: settings, tallies: try await Self.run(options, jobs: 1))
        let three = CompareReport(options: options, settings: settings, tallies: try await Self.run(options, jobs: 3))
        #expect(one.json == three.json)
        #expect(one.svg == three.svg && one.markdown(chartName: "c.svg") == three.markdown(chartName: "c.svg"))
        var other = options
        other.seed = 2
        let second = CompareReport(options: other, settings: settings, tallies: try await Self.run(other, jobs: 2))
        #expect(second.json != one.json)
        // --os-seed: the same users with other OS draws; the JSON and the heading name it.
        let parsed = try CompareCommand.parse(
            ["--devices", "6", "--days", "14", "--os-seed", "9"], today: Self.start, cores: 1)
        guard case .run(let command) = parsed else {
            Issue.record("not a run")
            return
        }
        other = options
        other.osSeedSalt = command.options.osSeedSalt
        #expect(other.osSeedSalt == 9)
        let salted = CompareReport(options: other, settings: settings, tallies: try await Self.run(other, jobs: 2))
        #expect(salted.json != one.json && salted.json.contains("\"osSeed\":9"))
        #expect(salted.fleetLine.contains(", OS seed 9"), "\(salted.fleetLine)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(one.json.utf8)) as? [String: Any])
        #expect(object["event"] as? String == "compare.summary")
        let rows = try #require(object["strategies"] as? [[String: Any]])
        #expect(rows.map { $0["strategy"] as? String } == ["refresh", "request", "horizon", "processing", "push"])
        #expect(rows.allSatisfy { $0["manualPer1000Low"] is Double && $0["alarmsWrong"] as? Int == 0 })
    }

    @Test("--horizon-days and --warn-nights reach the phone and the watch; a strategy changes no user")
    func strategySettings() async throws {
        let options = Self.lateFleet(devices: 4, days: 21)
        let settings = CompareSettings(horizonDays: 21, warnNights: 3)
        #expect(RefreshStrategy.horizon.applied(to: options, settings).horizonDays == 21)
        // The label says which way the batch differs from the phone's 7 days.
        #expect(RefreshStrategy.horizon.summary(settings) == "longer batch (phone --horizon-days 21)")
        #expect(RefreshStrategy.horizon.summary(CompareSettings(horizonDays: 5)).hasPrefix("shorter batch"))
        #expect(RefreshStrategy.horizon.summary(CompareSettings(horizonDays: 7)).hasPrefix("the default batch"))
        #expect(RefreshStrategy.request.applied(to: options, settings).warnNights == 3)
        #expect(RefreshStrategy.request.applied(to: options, settings).requestDates)
        #expect(!RefreshStrategy.refresh.applied(to: options, settings).requestDates)
        let long = try await Self.run(options, [.horizon], settings: settings)[0]
        let short = try await Self.run(options, [.horizon], settings: CompareSettings(horizonDays: 8))[0]
        // 21 days of dates outlast a 21-day run; 8 days run out.
        #expect(long.manualNights < short.manualNights, "\(long.manualNights) vs \(short.manualNights)")
        // warn-nights 3 asks a night earlier than 1: the REQUESTs come sooner, as many or more.
        let early = try await Self.run(options, [.request], settings: CompareSettings(warnNights: 3))[0]
        let late = try await Self.run(options, [.request], settings: CompareSettings(warnNights: 1))[0]
        #expect(early.launches != late.launches || early.linkBytes != late.linkBytes)
        // The users are the same: device draws ignore the strategy.
        let a = FleetDevice(index: 3, options: RefreshStrategy.refresh.applied(to: options, settings))
        let b = FleetDevice(index: 3, options: RefreshStrategy.horizon.applied(to: options, settings))
        #expect(a.bedAt == b.bedAt && a.steps.count == b.steps.count && a.osSeed == b.osSeed)
    }

    @Test(
        "--shard then --merge: the shards' tally files add up to the whole fleet's report, byte for byte; a missing, foreign, duplicate or corrupt shard is named"
    )
    func shardsMerge() async throws {
        let fleet = Self.lateFleet(devices: 6, days: 10)
        let strategies: [RefreshStrategy] = [.refresh, .request]
        let whole = CompareReport(
            options: fleet, settings: CompareSettings(), tallies: try await Self.run(fleet, strategies))
        let root = NSTemporaryDirectory() + "compare-merge-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        for index in 0..<3 {
            var options = fleet
            options.shardIndex = index
            options.shardCount = 3
            let part = CompareReport(
                options: options, settings: CompareSettings(), tallies: try await Self.run(options, strategies))
            #expect(part.tallies[0].devices == 2)
            try CompareShardFile.write(part, root: root)
        }
        let template = CompareReport(
            options: fleet, settings: CompareSettings(), tallies: strategies.map { StrategyTally(strategy: $0) })
        var merged = template
        merged.tallies = try CompareMerge.tallies(for: template, root: root)
        #expect(merged.json == whole.json)
        #expect(merged.text == whole.text)

        func problem(_ report: CompareReport = template) -> String? {
            do {
                _ = try CompareMerge.tallies(for: report, root: root)
                return nil
            } catch {
                return error.description
            }
        }
        let path = { (strategy: RefreshStrategy, index: Int) in
            CompareShardFile.path(root: root, strategy: strategy, shardIndex: index, shardCount: 3)
        }
        // A file or a missing path in place of the directory.
        func problem(at other: String) -> String? {
            do {
                _ = try CompareMerge.tallies(for: template, root: other)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(problem(at: path(.refresh, 0))?.contains(": not a directory") == true)
        #expect(problem(at: root + "/missing")?.hasSuffix("/missing: no such directory") == true)
        // An empty directory is named itself, not its first strategy's tally directory.
        let empty = root + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        #expect(
            problem(at: empty)?.hasPrefix(empty + ": no shard tallies of sleeptap-compare (none of refresh/tally/")
                == true,
            "\(String(describing: problem(at: empty)))")
        // Another fleet's flags: the parameters that differ are named.
        var other = template
        other.options.seed = 2
        #expect(problem(other)?.contains("a shard of another comparison (seed 1, not 2)") == true)
        // A shard given twice under another name.
        try FileManager.default.copyItem(atPath: path(.refresh, 1), toPath: root + "/refresh/tally/copy.json")
        #expect(problem()?.contains("shard 1/3 is also in") == true)
        try FileManager.default.removeItem(atPath: root + "/refresh/tally/copy.json")
        // A missing shard.
        try FileManager.default.moveItem(atPath: path(.request, 2), toPath: root + "/moved.json")
        #expect(problem()?.hasSuffix("request/tally: shards 2/3 missing (the table needs every shard)") == true)
        try FileManager.default.moveItem(atPath: root + "/moved.json", toPath: path(.request, 2))
        // A corrupt one, and one whose counts cannot be.
        let saved = try Data(contentsOf: URL(fileURLWithPath: path(.refresh, 0)))
        try Data("{\"kind\": 1}".utf8).write(to: URL(fileURLWithPath: path(.refresh, 0)))
        #expect(problem()?.contains("not a shard tally of sleeptap-compare") == true)
        // A key given twice, and a count that is not a whole number: named with where they are.
        let text = String(decoding: saved, as: UTF8.self)
        try Data(
            text.replacingOccurrences(of: "{", with: "{\"schemaVersion\":1,", options: [], range: text.range(of: "{"))
                .utf8
        )
        .write(to: URL(fileURLWithPath: path(.refresh, 0)))
        #expect(problem()?.contains("key schemaVersion appears twice") == true, "\(String(describing: problem()))")
        var fraction = try JSONSerialization.jsonObject(with: saved) as! [String: Any]
        var fractionTally = fraction["tally"] as! [String: Any]
        fractionTally["launches"] = 1.5
        fraction["tally"] = fractionTally
        try JSONSerialization.data(withJSONObject: fraction).write(to: URL(fileURLWithPath: path(.refresh, 0)))
        #expect(problem()?.contains("tally.launches") == true, "\(String(describing: problem()))")
        var bad = try JSONDecoder().decode(CompareShardFile.self, from: saved)
        bad.tally.manualNights = bad.tally.nights + 1
        try JSONEncoder().encode(bad).write(to: URL(fileURLWithPath: path(.refresh, 0)))
        #expect(problem()?.contains("tally: manualNights") == true)
        // Counts no fleet has, and counts whose sum over the shards does not fit in 64 bits.
        for edit in [
            { (tally: inout StrategyTally) in tally.linkBytes = .max },
            { (tally: inout StrategyTally) in tally.alarmsRight = .max },
            { (tally: inout StrategyTally) in tally.devices = 0 },
            { (tally: inout StrategyTally) in tally.byteSquares = .max },
            // Counts another shard size would have: the fleet's devices and days fix each shard's.
            { (tally: inout StrategyTally) in tally.deviceDays = 0 },
            { (tally: inout StrategyTally) in tally.deviceDays += 1 },
            { (tally: inout StrategyTally) in tally.devices = 500_000 },
            // Sums of squares no counts give: (Σx)² ÷ n ≤ Σx² ≤ (Σx)² (2 devices here).
            { (tally: inout StrategyTally) in (tally.launches, tally.launchSquares) = (10, 0) },
            { (tally: inout StrategyTally) in (tally.launches, tally.launchSquares) = (10, 49) },
            { (tally: inout StrategyTally) in (tally.launches, tally.launchSquares) = (10, 101) },
            // More app opens than 10 a day, and samples out of the order a tally writes them in.
            { (tally: inout StrategyTally) in tally.neverRefreshed = 1_000_000 },
            { (tally: inout StrategyTally) in
                tally.stalenessSamples = Array(repeating: 1, count: 10 * (tally.deviceDays + tally.devices) + 1)
            },
            { (tally: inout StrategyTally) in tally.stalenessSamples = [2, 1] },
            // More nights than local days, and a staleness longer than the simulated days.
            { (tally: inout StrategyTally) in
                tally.nights = tally.deviceDays + tally.devices + 1
                tally.alarmsRight = tally.nights - tally.alarmsWrong - tally.alarmsMissed - tally.alarmsAfterEnd
            },
            { (tally: inout StrategyTally) in tally.stalenessSamples = [1, 1e300] },
        ] {
            var edited = try JSONDecoder().decode(CompareShardFile.self, from: saved)
            edit(&edited.tally)
            try JSONEncoder().encode(edited).write(to: URL(fileURLWithPath: path(.refresh, 0)))
            let found = problem()
            #expect(
                found?.contains("refresh/tally/") == true && found?.contains("tally: ") == true,
                "\(String(describing: found))")
        }
        // The bounds themselves are counts a fleet can have: 10 launches on 2 devices, 5 and 5 or 10 and 0.
        for squares in [50, 100] {
            var edges = try JSONDecoder().decode(CompareShardFile.self, from: saved)
            (edges.tally.launches, edges.tally.launchSquares) = (10, squares)
            #expect(edges.tally.problem == nil, "\(String(describing: edges.tally.problem))")
        }
        var halved = try JSONDecoder().decode(CompareShardFile.self, from: saved)
        halved.tally.deviceDays = 0
        try JSONEncoder().encode(halved).write(to: URL(fileURLWithPath: path(.refresh, 0)))
        #expect(
            problem()?.hasSuffix(
                "tally: devices 2 and deviceDays 0, but shard 0/3 of 6 devices × 10 days has 2 and 20") == true,
            "\(String(describing: problem()))")
        try saved.write(to: URL(fileURLWithPath: path(.refresh, 0)))
        #expect(problem() == nil)
        // A model is the same model under another path, and another model under the same path.
        var moved = template
        moved.options.osModelFile = "/elsewhere/model.json"
        #expect(moved.fleetFingerprint == template.fleetFingerprint)
        // --json gives the path as typed, its slashes unescaped.
        #expect(moved.json.contains("\"osModel\":\"/elsewhere/model.json\""), "\(moved.json)")
        var changed = template
        changed.options.osModelDigest = Hex64.string(FNV1a64.hash(Array("{}".utf8)))
        #expect(
            problem(changed)?.contains("a shard of another comparison (osModelDigest") == true,
            "\(String(describing: problem(changed)))")
        // A strategy with no tallies (the merge without the shards' --strategies): the strategies the
        // directory holds are named.
        var more = template
        more.tallies.append(StrategyTally(strategy: .horizon))
        #expect(problem(more)?.contains("horizon/tally: no shard tallies") == true)
        #expect(
            problem(more)?.hasSuffix("give the shards' own --strategies (--strategies refresh,request)") == true,
            "\(String(describing: problem(more)))")
    }

    @Test("--out: each strategy's run records (what the report reads) and night records; the report reads bg_runs only")
    func recordsWritten() async throws {
        let root = try FleetTests.directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let options = Self.lateFleet(devices: 3, days: 10)
        let tallies = try await Self.run(options, [.refresh, .request], out: root)
        for tally in tallies {
            let base = root + "/" + tally.strategy.rawValue
            let nightFiles = try FileManager.default.contentsOfDirectory(atPath: base + "/" + WatchNight.directory)
            #expect(!nightFiles.isEmpty)
            var lines: [String] = []
            for name in nightFiles.sorted() {
                let text = try String(contentsOfFile: base + "/" + WatchNight.directory + "/" + name, encoding: .utf8)
                #expect(text.hasPrefix("[\n") && text.hasSuffix("\n]\n"))
                let array = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
                #expect(array.allSatisfy { $0.count == 12 && $0["alarm"] as? String != "missed" })
                lines += text.split(separator: "\n").filter { $0.hasPrefix("{") }.map(String.init)
            }
            #expect(lines.count == tally.nights)
            #expect(lines.filter { $0.contains("\"source\":\"manual\"") }.count == tally.manualNights)
            // The weekly report reads the same root: the night records are no input of it.
            let report = try FreshnessReportFiles.read(root: base, date: LocalDate(parsing: "2026-11-11")!)
            #expect(report.skipped.isEmpty && report.files > 0)
        }
    }

    @Test("sleeptap-fleet --watch-nights writes the night records beside the run records")
    func fleetWatchNights() async throws {
        let root = try FleetTests.directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var options = Self.lateFleet(devices: 2, days: 9)
        options.watchNights = true
        _ = try await FleetRun.run(options, writer: RunRecordWriter(root: root), jobs: 2)
        let names = try FileManager.default.contentsOfDirectory(atPath: root + "/" + WatchNight.directory)
        #expect(names.count == 2 * 9, "\(names.sorted())")
        #expect(names.contains("device-000000-2026-11-03.json"))
        let parsed = try FleetCommand.parse(
            ["--devices", "2", "--days", "9", "--out", root, "--watch-nights"], today: Self.start, cores: 1)
        guard case .run(.run(let fleet, _, _, _)) = parsed else {
            Issue.record("not a run")
            return
        }
        #expect(fleet.watchNights)
    }

    @Test("The Wilson score interval: textbook values, 0 of n, n of n")
    func wilson() throws {
        let ten = try #require(Wilson.interval(successes: 10, trials: 100))
        #expect(abs(ten.low - 0.0552) < 1e-4 && abs(ten.high - 0.1744) < 1e-4)
        let none = try #require(Wilson.interval(successes: 0, trials: 839))
        #expect(none.low < 1e-12 && abs(none.high * 1_000 - 4.56) < 0.01)
        let all = try #require(Wilson.interval(successes: 20, trials: 20))
        #expect(all.high == 1 && all.low > 0.8)
        #expect(Wilson.interval(successes: 0, trials: 0) == nil)
    }

    @Test(
        "The interval of a mean across devices: mean ± 1.96·s/√n; wider when the devices differ more; none for one device"
    )
    func meanInterval() throws {
        // Devices at 1, 2, 3, 4 launches a day: mean 2.5, s = √(5/3) = 1.2910, half 1.96·s/2 = 1.2652.
        let four = try #require(MeanInterval.interval(mean: 2.5, sumOfSquares: 1 + 4 + 9 + 16, count: 4))
        #expect(abs(four.low - 1.2348) < 1e-4 && abs(four.high - 3.7652) < 1e-4)
        // The same mean from 0, 1, 4, 5: a wider spread, a wider interval.
        let spread = try #require(MeanInterval.interval(mean: 2.5, sumOfSquares: 0 + 1 + 16 + 25, count: 4))
        #expect(spread.high - spread.low > four.high - four.low)
        // Equal devices: no width; below 0 it is clamped.
        #expect(MeanInterval.interval(mean: 2, sumOfSquares: 16, count: 4).map { [$0.low, $0.high] } == [2, 2])
        #expect(MeanInterval.interval(mean: 2, sumOfSquares: 4, count: 1) == nil)
    }

    @Test(
        "A staleness percentile's interval: Conover's ranks 40 and 61 for the median of 100; `never` above the numbers; open for a tiny sample"
    )
    func stalenessInterval() throws {
        let hundred = (1...100).map(Double.init)
        let median = try #require(StalenessInterval(hundred, never: 0, 0.5))
        #expect(median == StalenessInterval(low: .hours(40), high: .hours(61)))
        // Half the opens on never-refreshed devices: the upper rank falls on them.
        let half = try #require(StalenessInterval(Array(hundred.prefix(50)), never: 50, 0.5))
        #expect(half == StalenessInterval(low: .hours(40), high: .never))
        // Staler devices give a worse interval.
        let staler = try #require(StalenessInterval(hundred.map { $0 * 2 }, never: 0, 0.9))
        let fresher = try #require(StalenessInterval(hundred, never: 0, 0.9))
        #expect((staler.low?.hours ?? 0) > (fresher.low?.hours ?? 0))
        // Three opens cannot bound a p90 at 95 % from above.
        #expect(StalenessInterval([1, 2, 3], never: 0, 0.9)?.high == nil)
        #expect(StalenessInterval([], never: 0, 0.5) == nil)
    }

    @Test("The command line: the fleet's population flags, strategies checked, not-modelled ones refused by name")
    func commandLine() throws {
        func parse(_ arguments: [String]) throws(UsageError) -> CompareCommand? {
            if case .run(let command) = try CompareCommand.parse(arguments, today: Self.start, cores: 2) {
                return command
            }
            return nil
        }
        func message(_ arguments: [String]) -> String {
            do {
                _ = try parse(arguments)
                return ""
            } catch {
                return error.message
            }
        }
        let base = ["--devices", "10", "--days", "7"]
        let command = try #require(
            try parse(
                base + [
                    "--seed", "3", "--mix", "ios=1,android=0", "--late-registration", "0.9", "--opens", "0.2",
                    "--strategies", "horizon,refresh", "--horizon-days", "10", "--warn-nights", "3", "--jobs", "3",
                    "--shard", "1/2", "--json", "--out", "x",
                ]))
        #expect(command.strategies == [.horizon, .refresh])
        #expect(command.settings == CompareSettings(horizonDays: 10, warnNights: 3))
        #expect(command.options.seed == 3 && command.options.iosShare == 1 && command.options.lateRegistration == 0.9)
        #expect(command.options.opens == 0.2 && command.options.shardIndex == 1 && command.options.shardCount == 2)
        #expect(command.jobs == 3 && command.json && command.out == "x")
        #expect(try parse(base)?.strategies == [.refresh, .request, .horizon, .processing, .push])
        #expect(try parse(base + ["--strategies", "push-normal,push"])?.strategies == [.pushNormal, .push])
        #expect(message(base + ["--strategies", "nightly"]).hasPrefix("--strategies: unknown strategy \"nightly\""))
        for empty in ["", "refresh,,push", "refresh,"] {
            #expect(message(base + ["--strategies", empty]).contains("an empty name"), "\(empty)")
        }
        #expect(message(base + ["--strategies", "refresh,refresh"]) == "--strategies: refresh is given twice")
        #expect(message(base + ["--horizon-days", "0"]).hasPrefix("--horizon-days"))
        #expect(message(base + ["--warn-nights", "x"]).hasPrefix("--warn-nights"))
        // Flags that would act on nothing: a horizon without the horizon strategy, an iOS model
        // on a fleet with no iOS device.
        #expect(
            message(base + ["--strategies", "refresh,request", "--horizon-days", "14"]).hasPrefix(
                "--horizon-days sets the batch of the horizon strategy, which --strategies leaves out"))
        #expect(try parse(base + ["--strategies", "refresh,horizon", "--horizon-days", "14"]) != nil)
        #expect(
            message(base + ["--mix", "android=1", "--opportunity-model", "legacy"]).hasPrefix(
                "--opportunity-model legacy: the fleet has no iOS devices"))
        #expect(message(["--days", "7"]) == "--devices N is required")
        #expect(message(["--devices", "7"]) == "--days D is required")
        // The fleet's rules, from the fleet's parser.
        #expect(
            message(base + ["--late-registration-from", "2026-11-03", "--start", "2026-11-02"])
                == "--late-registration-from needs --late-registration F above 0 (the share it reaches)")
        #expect(message(base + ["--mix", "ios=2"]).hasPrefix("--mix"))
        #expect(message(base + ["--bench"]).contains("--bench"))
        // A model drives iOS only: on a fleet with no iOS device it would be said used and run nowhere.
        #expect(
            message(base + ["--mix", "android=1", "--os-model", "m.json"]).hasPrefix(
                "--os-model m.json: the fleet has no iOS devices"))
        #expect(try parse(base + ["--mix", "ios=0.1,android=0.9", "--os-model", "m.json"]) != nil)
        // The batch system's shard, as the fleet takes it.
        let slurm = try CompareCommand.parse(
            base, today: Self.start, cores: 1,
            environment: ["SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "4"])
        guard case .run(let sharded) = slurm else { return }
        #expect(sharded.options.shardIndex == 2 && sharded.options.shardCount == 4)
        // --merge adds up every shard: no --shard, no --out, and the batch job's shard ignored.
        #expect(message(base + ["--merge", "/tmp/m", "--shard", "0/2"]).contains("leave out --shard"))
        #expect(message(base + ["--merge", "/tmp/m", "--out", "/tmp/o"]).contains("leave out --out"))
        #expect(message(base + ["--merge", ""]).hasPrefix("--merge"))
        let merging = try CompareCommand.parse(
            base + ["--merge", "/tmp/m"], today: Self.start, cores: 1,
            environment: ["SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "4"])
        guard case .run(let merge) = merging else { return }
        #expect(merge.merge == "/tmp/m" && merge.options.shardIndex == 0 && merge.options.shardCount == 1)
    }

    @Test("The report: an aligned table, a Markdown table with the chart, an SVG with one bar and whisker per strategy")
    func reportOutputs() async throws {
        let options = Self.lateFleet(devices: 4, days: 10)
        let report = CompareReport(
            options: options, settings: CompareSettings(), tallies: try await Self.run(options))
        let lines = report.text.split(separator: "\n")
        #expect(lines[0].hasPrefix("compare: 4 devices x 10 days from 2026-11-02, seed 1"))
        // The users' habits are in the outputs: two runs with other settings can be told apart.
        #expect(lines[0].contains("opens 0.10 a day, low power 0.10, nightstand 0.50"), "\(lines[0])")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [String: Any])
        #expect(json["opens"] as? Double == 0.1 && json["opportunityModel"] as? String == "usage")
        #expect((json["buckets"] as? [String: Double])?["rare"] == 0.15)
        #expect(lines[2].hasPrefix("refresh ") && lines[3].hasPrefix("request ") && lines[4].hasPrefix("horizon "))
        let markdown = report.markdown(chartName: "compare.svg")
        #expect(markdown.contains("| refresh | ") && markdown.contains("![") && markdown.contains("(compare.svg)"))
        #expect(markdown.contains("Wilson"))
        let svg = report.svg
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.components(separatedBy: "<rect x=").count - 1 == RefreshStrategy.defaults.count)
        #expect(svg.contains(">refresh</text>") && svg.contains(">horizon</text>"))
        #expect(svg.components(separatedBy: "<text").count == svg.components(separatedBy: "</text>").count)
        #expect(svg.hasSuffix("</svg>\n"))
    }

    @Test("The table's fleet line names the os model, and says it unused when no iOS group qualified")
    func modelUnusedSaid() {
        var options = FleetOptions(devices: 10, days: 7, start: LocalDate(parsing: "2026-11-02")!)
        options.osModelFile = "m.json"
        options.osModel = CalibratedOS(model: CalibrationModel(confidence: 0.95))
        let report = CompareReport(options: options, settings: CompareSettings(), tallies: [])
        #expect(report.fleetLine.hasSuffix(", os model m.json (unused: no iOS group with enough answered requests)"))
        options.osModel = nil
        #expect(
            CompareReport(options: options, settings: CompareSettings(), tallies: []).fleetLine.hasSuffix(
                ", os model m.json"))
    }
}

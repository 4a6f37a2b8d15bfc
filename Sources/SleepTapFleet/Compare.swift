// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCalibration
package import SleepTapCore
package import SleepTapOS
package import SleepTapRuntime

/// A refresh strategy `sleeptap-compare` runs a fleet under (docs/fleet.md, "Comparing refresh
/// strategies"). Each is a documented option of the phone and the watch, or (`push`,
/// `push-normal`) a server's.
package enum RefreshStrategy: String, CaseIterable, Codable, Sendable {
    /// The app's refresh task alone (BGAppRefreshTask, WorkManager periodic work): today's app.
    case refresh
    /// The refresh task, and the watch asks for dates when they run low (`watch
    /// --request-dates` with `--warn-nights`).
    case request
    /// The refresh task with a longer batch (`phone --horizon-days`, 14 unless given).
    case horizon
    /// The refresh task, and on iOS a nightly BGProcessingTask on the charger (`phone
    /// --processing-task on`): it runs the same job once the phone has been idle on its charger
    /// (docs/scheduler.md, "Processing tasks"). Android phones run the refresh task alone.
    case processing
    /// The refresh task, and a server push to every device each night (04:00 local): a silent
    /// background notification on iOS, a high-priority FCM message on Android, which Doze lets
    /// through (docs/scheduler.md, "A server push"; phone stdin `push high`).
    case push
    /// As `push` with a normal-priority FCM message on Android, which Doze defers to its next
    /// maintenance window (iOS: the same background notification).
    case pushNormal = "push-normal"

    /// The strategies run when `--strategies` is not given.
    package static let defaults: [RefreshStrategy] = [.refresh, .request, .horizon, .processing, .push]

    /// What it is, in a few words, with its options (`phone --horizon-days 14`).
    package func summary(_ settings: CompareSettings) -> String {
        switch self {
        case .refresh: "refresh task only"
        case .request: "+ watch REQUEST (watch --request-dates --warn-nights \(settings.warnNights))"
        case .horizon: "\(settings.horizonComparison) batch (phone --horizon-days \(settings.horizonDays))"
        case .processing: "+ nightly BGProcessingTask on the charger (iOS: phone --processing-task on)"
        case .push: "+ a nightly server push (silent on iOS, high-priority FCM on Android)"
        case .pushNormal: "+ a nightly server push (silent on iOS, normal-priority FCM on Android)"
        }
    }

    /// `options` with this strategy's phone and watch settings; the users' draws are untouched.
    /// `watchNights` is on: a comparison writes its night records beside its run records
    /// (`--records`), so the strategy directory's `fleet-run.json` says so.
    package func applied(to options: FleetOptions, _ settings: CompareSettings) -> FleetOptions {
        var options = options
        options.watchNights = true
        options.horizonDays = BatchPlanner.defaultHorizonDays
        options.requestDates = false
        options.processingTask = false
        options.push = nil
        options.warnNights = WatchNode.Configuration.defaultWarnNights
        switch self {
        case .request:
            options.requestDates = true
            options.warnNights = settings.warnNights
        case .horizon:
            options.horizonDays = settings.horizonDays
        case .processing:
            options.processingTask = true
        case .push:
            options.push = .high
        case .pushNormal:
            options.push = .normal
        case .refresh:
            break
        }
        return options
    }
}

/// The strategies' own settings: `--horizon-days` and `--warn-nights` of `sleeptap-compare`.
package struct CompareSettings: Equatable, Sendable {
    /// The `horizon` strategy's batch, local days of wake-ups (default 14).
    package var horizonDays = 14
    /// The `request` strategy's watch `--warn-nights` (default 2, the watch's).
    package var warnNights = WatchNode.Configuration.defaultWarnNights

    /// "longer", "shorter" or "the default": the horizon strategy's batch against the phone's
    /// default (`BatchPlanner.defaultHorizonDays`).
    package var horizonComparison: String {
        horizonDays > BatchPlanner.defaultHorizonDays
            ? "longer" : horizonDays < BatchPlanner.defaultHorizonDays ? "shorter" : "the default"
    }

    /// The settings; each parameter sets the property of its name.
    package init(horizonDays: Int = 14, warnNights: Int = WatchNode.Configuration.defaultWarnNights) {
        self.horizonDays = horizonDays
        self.warnNights = warnNights
    }
}

/// One strategy's figures over a fleet (or a shard of it): the row of the comparison's table.
package struct StrategyTally: Equatable, Codable, Sendable {
    /// The strategy.
    package var strategy: RefreshStrategy
    /// Devices run.
    package var devices = 0
    /// Their simulated days (device-days).
    package var deviceDays = 0
    /// Bed taps before the end (device-nights).
    package var nights = 0
    /// The bed taps answered by a manual entry.
    package var manualNights = 0
    /// Nights whose alarm rang right (`WatchNight.Alarm.right`).
    package var alarmsRight = 0
    /// Nights whose alarm rang wrong (`WatchNight.Alarm.wrong`).
    package var alarmsWrong = 0
    /// Nights whose alarm did not ring (`WatchNight.Alarm.missed`).
    package var alarmsMissed = 0
    /// Nights whose wake-up lies after the end (`WatchNight.Alarm.afterEnd`), not judged.
    package var alarmsAfterEnd = 0
    /// The `stalenessHours` of the `foreground` records (the user's app opens; each device's
    /// first launch, its install at the fleet's start, left out), sorted at the end.
    package var stalenessSamples: [Double] = []
    /// The app opens of a device with no successful background run yet ("never").
    package var neverRefreshed = 0
    /// Background launches (`FleetDevice.Outcome.launches`), summed.
    package var launches = 0
    /// Link bytes (`FleetDevice.Outcome.linkBytes`), summed.
    package var linkBytes = 0
    /// Σ over devices of (its launches)², for `launchesInterval` (an integer, so that shards
    /// add up to the whole fleet's exactly).
    package var launchSquares = 0
    /// Σ over devices of (its link bytes)², for `bytesInterval`.
    package var byteSquares = 0

    /// An empty tally of `strategy`.
    package init(strategy: RefreshStrategy) { self.strategy = strategy }

    /// Adds one device's outcome.
    mutating func add(_ outcome: FleetDevice.Outcome, days: Int) {
        devices += 1
        deviceDays += days
        nights += outcome.nights.count
        for night in outcome.nights {
            if night.source == .manual { manualNights += 1 }
            switch night.alarm {
            case .right: alarmsRight += 1
            case .wrong: alarmsWrong += 1
            case .missed: alarmsMissed += 1
            case .afterEnd: alarmsAfterEnd += 1
            }
        }
        // The device's first launch is its install, at the fleet's start, before any background
        // run can have come: the same `never` under every strategy, and in a fleet of few opens
        // most of the stalest tenth. A real fleet's installs are spread over its life and few
        // among its opens, so it is left out; the opens are the users' `open`s after it.
        for record in outcome.records.lazy.filter({ $0.kind == .foreground }).dropFirst() {
            if let hours = record.stalenessHours { stalenessSamples.append(hours) } else { neverRefreshed += 1 }
        }
        launches += outcome.launches
        linkBytes += outcome.linkBytes
        launchSquares += outcome.launches * outcome.launches
        byteSquares += outcome.linkBytes * outcome.linkBytes
    }

    /// Adds another shard's tally of the same strategy (counts summed, samples joined and
    /// sorted): the shards of a fleet add up to the tally of one run over all of it.
    /// - Returns: nil, or the count whose sum would not fit in 64 bits (from tally files that were
    ///   edited or corrupt); then this tally is unchanged.
    package mutating func merge(_ other: StrategyTally) -> String? {
        var merged = self
        for (name, key) in Self.counts {
            let (sum, overflow) = self[keyPath: key].addingReportingOverflow(other[keyPath: key])
            if overflow { return "\(name): the shards' sum is too large" }
            merged[keyPath: key] = sum
        }
        merged.stalenessSamples = (stalenessSamples + other.stalenessSamples).sorted()
        self = merged
        return nil
    }

    /// Every count of a tally with its name in the tally file: what a merge sums and `problem` checks.
    static var counts: [(String, WritableKeyPath<StrategyTally, Int>)] {
        [
            ("devices", \.devices), ("deviceDays", \.deviceDays), ("nights", \.nights),
            ("manualNights", \.manualNights), ("alarmsRight", \.alarmsRight), ("alarmsWrong", \.alarmsWrong),
            ("alarmsMissed", \.alarmsMissed), ("alarmsAfterEnd", \.alarmsAfterEnd),
            ("neverRefreshed", \.neverRefreshed), ("launches", \.launches), ("linkBytes", \.linkBytes),
            ("launchSquares", \.launchSquares), ("byteSquares", \.byteSquares),
        ]
    }

    /// What makes a tally read from a file unusable, in words; nil when it is sound.
    package var problem: String? {
        let counts = Self.counts.map { ($0.0, self[keyPath: $0.1]) }
        if let (name, value) = counts.first(where: { $0.1 < 0 }) { return "\(name) = \(value): must be 0 or more" }
        // 2^53: a count no fleet of 10,000,000 devices over 366 days comes near, and far enough
        // below 2^63 that the alarms' sum below cannot overflow (the sums of squares may be
        // larger; a merge checks every sum).
        if let (name, value) = counts.first(where: { !$0.0.hasSuffix("Squares") && $0.1 > 1 << 53 }) {
            return "\(name) = \(value): more than 2^53, no fleet's count"
        }
        if manualNights > nights { return "manualNights \(manualNights) > nights \(nights)" }
        if alarmsRight + alarmsWrong + alarmsMissed + alarmsAfterEnd != nights {
            return "the alarms (right, wrong, missed, after the end) do not add up to nights \(nights)"
        }
        if devices == 0 && (deviceDays > 0 || nights > 0 || launches > 0 || linkBytes > 0) {
            return "devices = 0 with device-days, nights, launches or bytes counted"
        }
        if let bad = stalenessSamples.first(where: { !$0.isFinite || $0 < 0 }) {
            return "stalenessSamples holds \(bad): hours must be finite and 0 or more"
        }
        if zip(stalenessSamples, stalenessSamples.dropFirst()).contains(where: { $0 > $1 }) {
            return "stalenessSamples are not sorted, as a tally writes them"
        }
        // Each app open is one sample or one never-refreshed open; a user opens the app at most
        // `FleetDevice.maxOpensPerDay` times a local day, and a device's UTC days meet one local
        // day more than they hold. Each night is one bed tap, at most one a local day.
        let opens = stalenessSamples.count + neverRefreshed
        let mostOpens = FleetDevice.maxOpensPerDay * (deviceDays + devices)
        if opens > mostOpens {
            return "\(opens) app opens (stalenessSamples and neverRefreshed) on \(devices) devices over \(deviceDays) "
                + "device-days: more than \(mostOpens), \(FleetDevice.maxOpensPerDay) for each local day they meet"
        }
        // (No device-days at all is the shard check's to name: a tally of another shard size.)
        if deviceDays > 0, nights > deviceDays + devices {
            return
                "\(nights) nights on \(devices) devices over \(deviceDays) device-days: more than one bed tap a local day"
        }
        // Staleness counts hours since a run inside the simulated days, so none exceeds them.
        if devices > 0, deviceDays > 0, let stalest = stalenessSamples.last,
            stalest > 24 * Double(deviceDays / devices + 1)
        {
            return "stalenessSamples holds \(stalest) h: longer than the \(deviceDays / devices) simulated days"
        }
        // For counts x ≥ 0 over n devices, (Σx)² ÷ n ≤ Σx² ≤ (Σx)² (Cauchy-Schwarz); compared in
        // Double, whose rounding is far below a whole count here.
        for (name, sum, squares) in [
            ("launches", launches, launchSquares), ("linkBytes", linkBytes, byteSquares),
        ] {
            let total = Double(sum)
            let square = Double(squares)
            if square > total * total * (1 + 1e-9) || square * Double(max(devices, 1)) < total * total * (1 - 1e-9) {
                return
                    "\(name) \(sum) with a sum of squares \(squares) over \(devices) devices: no devices' counts give both"
            }
        }
        return nil
    }

    /// Wrong and missed alarms together: must be 0.
    package var alarmFailures: Int { alarmsWrong + alarmsMissed }

    /// Manual-entry nights per 1,000 device-nights; nil without a night.
    package var manualPer1000: Double? { nights == 0 ? nil : 1_000 * Double(manualNights) / Double(nights) }

    /// The 95 % Wilson score interval of `manualPer1000` (`Wilson.interval`); nil without a night.
    package var manualInterval: (low: Double, high: Double)? {
        Wilson.interval(successes: manualNights, trials: nights).map { (1_000 * $0.low, 1_000 * $0.high) }
    }

    /// The p50 staleness at the app opens, hours, by the weekly report's definition
    /// (`Percentile.staleness`: type 7, never-refreshed samples ranked last); nil without opens.
    package var p50: Staleness? { Percentile.staleness(stalenessSamples, never: neverRefreshed, 0.5) }
    /// The p90 staleness at the app opens, as `p50`.
    package var p90: Staleness? { Percentile.staleness(stalenessSamples, never: neverRefreshed, 0.9) }

    /// The 95 % interval of `p50` (`StalenessInterval`); nil without opens.
    package var p50Interval: StalenessInterval? { StalenessInterval(stalenessSamples, never: neverRefreshed, 0.5) }
    /// The 95 % interval of `p90` (`StalenessInterval`); nil without opens.
    package var p90Interval: StalenessInterval? { StalenessInterval(stalenessSamples, never: neverRefreshed, 0.9) }

    /// Background launches per device-day.
    package var launchesPerDeviceDay: Double { deviceDays == 0 ? 0 : Double(launches) / Double(deviceDays) }
    /// Link bytes per device-day.
    package var bytesPerDeviceDay: Double { deviceDays == 0 ? 0 : Double(linkBytes) / Double(deviceDays) }

    /// The 95 % interval of `launchesPerDeviceDay` across devices (`MeanInterval`); nil below 2 devices.
    package var launchesInterval: (low: Double, high: Double)? {
        MeanInterval.interval(
            mean: launchesPerDeviceDay, sumOfSquares: perDeviceDaySquares(launchSquares), count: devices)
    }
    /// The 95 % interval of `bytesPerDeviceDay` across devices (`MeanInterval`); nil below 2 devices.
    package var bytesInterval: (low: Double, high: Double)? {
        MeanInterval.interval(mean: bytesPerDeviceDay, sumOfSquares: perDeviceDaySquares(byteSquares), count: devices)
    }

    /// Σ (x / days)² from Σ x²: every device of a fleet runs the same days.
    private func perDeviceDaySquares(_ squares: Int) -> Double {
        guard devices > 0, deviceDays > 0 else { return 0 }
        let days = Double(deviceDays) / Double(devices)
        return Double(squares) / (days * days)
    }
}

/// The 95 % interval of a staleness percentile: the order-statistic (binomial) bound of
/// `EmpiricalDistribution.ranks(n:p:alpha:)` (W. J. Conover, Practical Nonparametric Statistics,
/// 3rd ed., 1999, §3.2) over the whole sample, the never-refreshed opens ranked last.
///
/// The bound assumes independent samples; one device's opens are not (a device that is stale
/// at one open tends to be at the next), so read it as a lower bound on the uncertainty, as the
/// Wilson interval of the manual-entry rate.
package struct StalenessInterval: Equatable, Sendable {
    /// An interval of the two ends.
    package init(low: Staleness?, high: Staleness?) {
        self.low = low
        self.high = high
    }

    /// The lower end: a staleness, or nil when the sample is too small for a bound (open).
    package var low: Staleness?
    /// The upper end, as `low`; `.never` when the rank falls on the never-refreshed opens.
    package var high: Staleness?

    /// The interval of the `p` quantile of `sorted` (hours, ascending) and `never` samples.
    /// - Returns: nil for an empty sample.
    package init?(_ sorted: [Double], never: Int, _ p: Double) {
        let n = sorted.count + never
        guard n > 0 else { return nil }
        let (l, u) = EmpiricalDistribution.ranks(n: n, p: p, alpha: 0.05)
        func at(_ rank: Int?) -> Staleness? {
            guard let rank else { return nil }
            return rank <= sorted.count ? .hours(sorted[rank - 1]) : .never
        }
        low = at(l)
        high = at(u)
    }
}

/// The normal-approximation interval of a mean over independent devices: mean ± z·s/√n, s the
/// sample standard deviation (the central limit theorem; for a few dozen devices or more).
/// Each simulated device draws its own seed, so devices are independent; their days are not,
/// which is why the device, not the device-day, is the unit.
package enum MeanInterval {
    /// The 95 % interval of the mean of `count` per-device values whose sum of squares is
    /// `sumOfSquares`, clamped at 0. Every device of a fleet runs the same days, so a rate per
    /// device-day is the mean of the devices' own rates.
    /// - Returns: nil below 2 devices.
    package static func interval(mean: Double, sumOfSquares: Double, count: Int) -> (low: Double, high: Double)? {
        guard count >= 2 else { return nil }
        let n = Double(count)
        let variance = max(0, (sumOfSquares - n * mean * mean) / (n - 1))
        let half = Wilson.z95 * (variance / n).squareRoot()
        return (max(0, mean - half), mean + half)
    }
}

/// The Wilson score interval of a binomial proportion: E. B. Wilson, "Probable inference, the law
/// of succession, and statistical inference", JASA 22 (1927); recommended over the normal (Wald)
/// interval by A. Agresti and B. A. Coull, "Approximate is better than 'exact' for interval
/// estimation of binomial proportions", The American Statistician 52 (1998).
package enum Wilson {
    /// The two-sided 95 % normal quantile.
    package static let z95 = 1.959_963_984_540_054

    /// The interval of the proportion `successes / trials` at `z`: with p̂ the proportion,
    /// (p̂ + z²/2n ± z·√(p̂(1 − p̂)/n + z²/4n²)) / (1 + z²/n), clamped to [0, 1].
    /// - Returns: nil when `trials` is 0.
    package static func interval(successes: Int, trials: Int, z: Double = z95) -> (low: Double, high: Double)? {
        guard trials > 0 else { return nil }
        let n = Double(trials)
        let p = Double(successes) / n
        let z2 = z * z
        let denominator = 1 + z2 / n
        let center = (p + z2 / (2 * n)) / denominator
        let half = z * ((p * (1 - p) / n + z2 / (4 * n * n)).squareRoot()) / denominator
        return (max(0, center - half), min(1, center + half))
    }
}

/// Runs one fleet's devices under several strategies on the embedded twin (`sleeptap-compare`).
package enum CompareRun {
    /// What a comparison found: one tally per strategy, in the order asked, and the wall time.
    package struct Result: Sendable {
        /// One tally per strategy, in the order asked.
        package var tallies: [StrategyTally]
        /// Wall seconds the run took (not in the JSON, which the seed alone determines).
        package var seconds: Double
    }

    /// Simulates this shard's devices under each strategy, one device per task, `jobs` at once
    /// (`device(_:_:strategies:settings:)`); with `out`, writes each strategy's run records and
    /// night records under `out/<strategy>/metrics/` (`bg_runs`, `watch_nights`).
    /// - Parameters:
    ///   - strategies: the strategies, each once.
    ///   - progress: called on the calling task after each device with (done, total), counting
    ///     a (strategy, device) as one.
    /// - Throws: `FileError` naming the file or directory that could not be written.
    package static func run(
        _ options: FleetOptions, strategies: [RefreshStrategy], settings: CompareSettings, jobs: Int,
        out: String? = nil, progress: (Int, Int) -> Void = { _, _ in }
    ) async throws(FileError) -> Result {
        let clock = ContinuousClock()
        let begin = clock.now
        let devices = Array(options.shardDevices)
        let total = devices.count * strategies.count
        typealias Done = Swift.Result<[FleetDevice.Outcome], FileError>
        let outcome: Swift.Result<[StrategyTally], FileError> = await withTaskGroup(of: Done.self) { group in
            var next = 0
            func start() {
                guard next < devices.count else { return }
                let index = devices[next]
                next += 1
                group.addTask {
                    let runs = Self.device(index, options, strategies: strategies, settings: settings)
                    guard let out else { return .success(runs) }
                    for (s, run) in runs.enumerated() {
                        let root = out + "/" + strategies[s].rawValue
                        do throws(FileError) {
                            try RunRecordWriter(root: root).write(run.records, durable: false)
                            try WatchNight.write(run.nights, root: root)
                        } catch {
                            return .failure(error)
                        }
                    }
                    return .success(runs)
                }
            }
            for _ in 0..<max(1, jobs) { start() }
            var tallies = strategies.map { StrategyTally(strategy: $0) }
            var done = 0
            while let result = await group.next() {
                switch result {
                case .success(let runs):
                    for (s, run) in runs.enumerated() { tallies[s].add(run, days: options.days) }
                    done += runs.count
                case .failure(let error):
                    group.cancelAll()
                    return .failure(error)
                }
                progress(done, total)
                start()
            }
            for index in tallies.indices { tallies[index].stalenessSamples.sort() }
            return .success(tallies)
        }
        let tallies = try outcome.get()
        let elapsed = clock.now - begin
        return Result(
            tallies: tallies,
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// Device `index`'s run under each strategy, in the list's order. A run is simulated once
    /// and taken by every later strategy it answers (`answers(_:_:)`): two strategies that set
    /// the device up alike (`processing` on Android is `refresh`: the processing task is an iOS
    /// setting), or that differ only in the watch's `--request-dates` where the run's watch
    /// never found its nights low at a REQUEST check (`FleetDevice.Outcome.requestChecksLow`),
    /// the one thing that flag acts on (`WatchNode.requestChecksLow`).
    /// `CompareTests.sharedRunsAreSeparateRuns` checks each against a run of its own.
    package static func device(
        _ index: Int, _ options: FleetOptions, strategies: [RefreshStrategy], settings: CompareSettings
    ) -> [FleetDevice.Outcome] {
        var simulated: [(options: FleetOptions, outcome: FleetDevice.Outcome)] = []
        // The user's draws, the platform among them, are the same under every strategy.
        let platform = FleetDevice(index: index, options: options).platform
        return strategies.map { strategy in
            var wanted = strategy.applied(to: options, settings)
            if platform == .android { wanted.processingTask = false }
            if let run = simulated.first(where: { answers($0, wanted) }) { return run.outcome }
            let outcome = FleetDevice(index: index, options: wanted).simulate(wanted, measureBytes: true)
            simulated.append((wanted, outcome))
            return outcome
        }
    }

    /// Whether a device's run under `run.options` is its run under `wanted`: the same options,
    /// or options that differ only in `requestDates` where the run's watch never found its
    /// nights low at a REQUEST check with the link up (the REQUEST checks decide the same way
    /// in both runs until one is low, and none was).
    static func answers(_ run: (options: FleetOptions, outcome: FleetDevice.Outcome), _ wanted: FleetOptions) -> Bool {
        if run.options == wanted { return true }
        var other = run.options
        other.requestDates = wanted.requestDates
        return other == wanted && run.outcome.requestChecksLow == 0
    }
}

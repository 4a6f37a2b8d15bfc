// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCalibration
import SleepTapCore
import SleepTapOS
import Testing

@testable import SleepTapFleet

/// `sleeptap-calibrate`'s fit on a fleet with known settings: the recovered iOS delay matches the
/// simulated OS's opportunity model, and a broken app update shows in the fitted shares.
@Suite("sleeptap-calibrate: the fit recovers the fleet's OS model")
struct CalibrationTests {
    static let start = LocalDate(parsing: "2026-03-02")!

    /// The records of `options`' devices, one array per device, run in-process on all cores.
    static func records(_ options: FleetOptions) async -> [[RunRecord]] {
        await withTaskGroup(of: (Int, [RunRecord]).self) { group in
            for index in 0..<options.devices {
                group.addTask { (index, FleetDevice(index: index, options: options).run(options)) }
            }
            var result = [[RunRecord]](repeating: [], count: options.devices)
            for await (index, records) in group { result[index] = records }
            return result
        }
    }

    static func fit(_ options: FleetOptions, confidence: Double = 0.95) async -> CalibrationModel {
        var calibration = Calibration(confidence: confidence)
        for device in await records(options) { calibration.add(device: device) }
        return calibration.model()
    }

    /// An iOS-only fleet without Low Power Mode on legacy's draws, whose delays have a closed
    /// form (`expectedDelay`): only the opportunity model delays a request.
    static func iosFleet(lateRegistration: Double = 0, seed: UInt64 = 24) -> FleetOptions {
        var options = FleetOptions(devices: 40, days: 14, start: start)
        options.seed = seed
        options.iosShare = 1
        options.lowPower = 0
        options.opportunityModel = .legacy
        options.lateRegistration = lateRegistration
        return options
    }

    /// The iOS opportunity model's delay quantile (`IOSBackgroundScheduler.OpportunityModel`,
    /// defaults): each opportunity is `min(Exp(mean 90 min), 12 h)` after the last, and is let pass
    /// with probability 0.1. A geometric (success 0.9) sum of exponentials with mean m is
    /// exponential with mean m / 0.9 = 100 min; below the 12 h cap the cap changes no event
    /// {sum ≤ x}, so for every quantile below 12 h it is exactly −100 min · ln(1 − p)
    /// (p99 = 7.7 h). Opportunities fall on whole minutes and a record's `at` is the run's end,
    /// which adds under a minute per opportunity and a few seconds: `slack` covers that.
    static func expectedDelay(_ p: Double) -> Double {
        let model = IOSBackgroundScheduler.OpportunityModel()
        let mean = model.meanDelay / (1 - model.missProbability)
        return -mean * log1p(-p)
    }
    static let slack = 90.0

    @Test("The recovered iOS delay quantiles p10 … p99 hold the opportunity model's within their intervals")
    func recoversIOSDelay() async throws {
        // Six 95 % intervals at once would miss one in four fleets by chance: at 99.5 % each, all
        // six hold with probability ≥ 97 % (Bonferroni).
        let model = await Self.fit(Self.iosFleet(), confidence: 0.995)
        let ios = try #require(model.group("ios"))
        #expect(ios.devices == 40)
        // One request a day per device (the renewal's earliestBeginDate is the next day's).
        #expect(ios.delay.n > 300, "\(ios.delay.n) answered requests")
        for q in ios.delay.quantiles {
            let expected = Self.expectedDelay(q.p)
            // An open end (too few samples for it at this confidence) bounds nothing on that side.
            let lower = q.lower ?? 0
            let upper = q.upper ?? .infinity
            #expect(lower - Self.slack <= expected && expected <= upper + Self.slack, "p\(q.p): \(q) vs \(expected) s")
            if q.p <= 0.9 {
                #expect(q.lower != nil && q.upper != nil, "p\(q.p): \(q)")
            }
        }
        // The interval is informative: the p50's is narrower than an hour.
        let p50 = try #require(ios.delay.quantiles.first { $0.p == 0.5 })
        #expect(try #require(p50.upper) - (try #require(p50.lower)) < 3_600, "\(p50)")
        // The mean of an exponential with mean 100 min, within 3 standard errors (100 min / √n).
        let mean = try #require(ios.delay.mean)
        #expect(abs(mean - 6_000) < 3 * 6_000 / Double(ios.delay.n).squareRoot(), "mean \(mean) s")
        // Nothing is dropped, expires or stops on quota on iOS here. Every request is answered by
        // a run, replaced (an app open that refreshed submits a later earliestBeginDate) or the
        // device's last, still pending; the replaced ones are censored in the delay's fit.
        #expect(ios.expired == 0 && ios.quotaStops == 0 && ios.dropped == 0)
        #expect(ios.pendingAtEnd == 40)
        #expect(ios.answeredByRun + ios.answeredByDrop + ios.replaced + ios.pendingAtEnd == ios.submitted)
        let share = try #require(ios.neverAnsweredShare)
        #expect(share == Double(ios.replaced + ios.pendingAtEnd) / Double(ios.submitted))
        #expect(ios.delay.censored > 0 && ios.delay.censored <= ios.replaced + ios.pendingAtEnd)
        // Spacing is measured: about a day between runs (one request a day).
        #expect(ios.spacing.n > 200)
        let spacing = try #require(ios.spacing.quantiles.first { $0.p == 0.5 }?.value)
        #expect(spacing > 18 * 3_600 && spacing < 30 * 3_600, "\(spacing)")
        #expect(model.group("android") == nil)
    }

    @Test(
        "One record far after the rest is named as a late end (pending requests are censored there), and it lengthens the fitted delay; a fleet's own end is not"
    )
    func lateEnd() async throws {
        var options = Self.iosFleet()
        options.devices = 12
        options.lateRegistration = 0.5  // requests left pending: censored at the end
        let devices = await Self.records(options)
        var clean = Calibration()
        for device in devices { clean.add(device: device) }
        #expect(clean.lateEnd == nil)
        // One device's clock ten days ahead for its last record.
        var stray = devices
        var last = try #require(stray[0].last)
        last.at = last.at.addingTimeInterval(10 * 24 * 3_600)
        stray[0].append(last)
        var late = Calibration()
        for device in stray { late.add(device: device) }
        let found = try #require(late.lateEnd)
        #expect(found.end == last.at && found.end.timeIntervalSince(found.median) > Calibration.lateEndSlack)
        // Why it is said: the censored waits grow with it, and the fitted iOS delay with them.
        func p75(_ model: CalibrationModel) -> Double {
            let ios = model.groups.first { $0.name == "ios" }
            return ios?.delay.quantiles.first { $0.p == 0.75 }?.value ?? .infinity
        }
        #expect(p75(late.model()) > p75(clean.model()), "\(p75(late.model())) vs \(p75(clean.model()))")
    }

    @Test(
        "A launch recorded before its request's eligibility (a clock that moved) is counted and named; a fleet's own records have none"
    )
    func launchBeforeEligible() async throws {
        var options = Self.iosFleet()
        options.devices = 4
        options.iosShare = 0.5
        let devices = await Self.records(options)
        var clean = Calibration()
        for device in devices { clean.add(device: device) }
        #expect(clean.launchesBeforeEligible == 0 && clean.firstLaunchBeforeEligible == nil)
        // One device's first background run moved three hours before its scheduled time.
        var moved = devices
        let index = try #require(moved[0].firstIndex { $0.kind == .background })
        let begin = try #require(moved[0][index].earliestBeginDate)
        moved[0][index].at = begin.addingTimeInterval(-3 * 3_600)
        moved[0].sort { $0.at < $1.at }
        var early = Calibration()
        for device in moved { early.add(device: device) }
        #expect(early.launchesBeforeEligible == 1)
        #expect(early.firstLaunchBeforeEligible?.device == moved[0][0].device)
        #expect(early.firstLaunchBeforeEligible?.at == begin.addingTimeInterval(-3 * 3_600))
    }

    @Test("A push's run record answers no request and is no launch the OS chose: the model is the same without it")
    func pushRecordsIgnored() async throws {
        var options = Self.iosFleet()
        options.devices = 6
        let devices = await Self.records(options)
        var clean = Calibration()
        for device in devices { clean.add(device: device) }
        var withPush = Calibration()
        for device in devices {
            // A push run at every open, a second after it: between the device's records.
            let pushes = device.filter { $0.kind == .foreground }.map { open in
                RunRecord(
                    device: open.device, platform: open.platform, kind: .push, at: open.at.addingTimeInterval(1),
                    success: true, expired: false, stalenessHours: 0, appVersion: open.appVersion)
            }
            #expect(!pushes.isEmpty)
            withPush.add(device: (device + pushes).sorted { $0.at < $1.at })
        }
        // Only the records read and their extent differ (a dump of two whole models is no help here).
        let (pushed, plain) = (withPush.model(), clean.model())
        #expect(pushed.records > plain.records)
        let sameGroups = pushed.groups == plain.groups
        #expect(sameGroups && pushed.devices == plain.devices)
    }

    @Test("A wrong model is rejected: the intervals exclude a 60-minute mean")
    func rejectsWrongModel() async throws {
        let model = await Self.fit(Self.iosFleet(), confidence: 0.995)
        let p50 = try #require(model.group("ios")?.delay.quantiles.first { $0.p == 0.5 })
        let wrong = -3_600 * log1p(-0.5)
        #expect(try #require(p50.lower) > wrong + Self.slack, "\(p50)")
    }

    @Test("Late registration raises the drop rate and the share of requests not answered by a run")
    func lateRegistrationDirection() async throws {
        let healthy = try #require(await Self.fit(Self.iosFleet()).group("ios"))
        let late = try #require(await Self.fit(Self.iosFleet(lateRegistration: 0.8)).group("ios"))
        let healthyDrop = try #require(healthy.dropRate)
        let lateDrop = try #require(late.dropRate)
        #expect(healthyDrop == 0 && lateDrop > 0.3, "\(healthyDrop) -> \(lateDrop)")
        func lost(_ g: CalibrationModel.Group) -> Double {
            Double(g.submitted - g.answeredByRun) / Double(max(1, g.submitted))
        }
        #expect(lost(late) > lost(healthy) + 0.3, "\(lost(healthy)) -> \(lost(late))")
    }

    @Test("Android groups per bucket carry spacing, and the binomial ranks bracket the quantile")
    func androidAndRanks() async throws {
        var options = Self.iosFleet()
        options.iosShare = 0
        options.devices = 20
        let model = await Self.fit(options)
        let android = try #require(model.group("android"))
        #expect(android.devices == 20)
        let buckets = model.groups.filter { $0.platform == .android && $0.bucket != nil }
        #expect(!buckets.isEmpty && buckets.reduce(0) { $0 + $1.devices } == 20)
        #expect(android.spacing.n > 0 && android.delay.n > 0)
        // Android's periodic work: every run answers a request (WorkManager schedules each next
        // period itself, so the renewals' earliestBeginDate is not the next run's); only each
        // device's last request is left, and nothing is replaced.
        #expect(android.unmatchedLaunches == 0 && android.answeredByRun == android.background)
        #expect(android.replaced == 0 && android.pendingAtEnd <= 20, "\(android.replaced), \(android.pendingAtEnd)")
        #expect(try #require(android.neverAnsweredShare) < 0.05)
        // Ranks for n = 100, p = 0.5, 95 %: the textbook 40 and 61 (Conover, table A3 gives
        // x(40), x(61) with coverage 0.9648).
        let (l, u) = EmpiricalDistribution.ranks(n: 100, p: 0.5, alpha: 0.05)
        #expect(l == 40 && u == 61, "\(String(describing: l)), \(String(describing: u))")
        // Too few samples for a bound: n = 3 at p99 has no upper end.
        #expect(EmpiricalDistribution.ranks(n: 3, p: 0.99, alpha: 0.05).1 == nil)
    }
}

// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import SleepTapOS
import Testing

@testable import SleepTapCalibration
@testable import SleepTapFleet

/// The simulated OS on a fitted model (docs/calibration.md, "Running the OS on the model"): the
/// inverse-CDF draw, the model file's reading, and the round trip of a fleet through
/// `sleeptap-calibrate` and back.
@Suite("The simulated OS runs on a calibrated model")
struct OSModelTests {
    /// Quantiles of an exponential wait with mean `mean` seconds at the calibrator's p.
    static func exponential(mean: Double) -> [EmpiricalDelay.Point] {
        Calibration.probabilities.map { EmpiricalDelay.Point(p: $0, seconds: -mean * log1p(-$0)) }
    }

    @Test("Inverse-CDF: an exponential's every quantile comes back, and the never share is no launch")
    func inverse() throws {
        let delay = EmpiricalDelay(points: Self.exponential(mean: 6_000))
        for u in [0.05, 0.1, 0.3, 0.5, 0.8, 0.9, 0.95, 0.99, 0.995] {
            let t = try #require(delay.seconds(at: u))
            #expect(abs(t - -6_000 * log1p(-u)) < 1e-6, "u \(u): \(t)")
        }
        #expect(delay.seconds(at: 0) == 0)
        // Capped at 48 h far in the tail.
        let capped = try #require(delay.seconds(at: 1 - 1e-15))
        #expect(capped == 172_800, "\(capped - 172_800)")
        let never = EmpiricalDelay(points: Self.exponential(mean: 6_000), neverLaunch: 0.2)
        #expect(never.seconds(at: 0.79) != nil && never.seconds(at: 0.8) == nil)
        // Bad knots are dropped, so a decoded value is checked.
        let bad = EmpiricalDelay(points: [
            .init(p: 0.5, seconds: 10), .init(p: 0.9, seconds: 5), .init(p: 1, seconds: 9),
        ])
        #expect(bad.points == [.init(p: 0.5, seconds: 10)])
        var decoded = delay
        decoded.points[1].seconds = .nan
        #expect(decoded.validationProblem == "points[1].seconds nan: expected ≥ 0")
        #expect(delay.validationProblem == nil)
    }

    /// An iOS scheduler on `delay` with a pending request submitted at `t0`, and its launch.
    static func plannedLaunch(_ delay: EmpiricalDelay?, seed: UInt64) throws -> Date? {
        var configuration = IOSBackgroundScheduler.Configuration(permittedIdentifiers: ["refresh"])
        configuration.opportunity.empirical = delay
        var ios = IOSBackgroundScheduler(configuration: configuration, seed: seed)
        let t0 = Date(timeIntervalSince1970: 1_772_409_600)
        ios.appLaunched(at: t0, byUser: true)
        _ = try ios.register(identifier: "refresh", at: t0)
        ios.finishLaunching(at: t0)
        try ios.submit(identifier: "refresh", earliestBeginDate: t0.addingTimeInterval(3_600), at: t0)
        return ios.nextLaunch(after: t0).map { Date(timeIntervalSince1970: $0.timeIntervalSince1970 - 3_600) }
    }

    @Test("The iOS OS draws its wait from the model with its seeded SplitMix64: it replays and fits the model")
    func iosDraws() throws {
        let delay = EmpiricalDelay(points: Self.exponential(mean: 10_000))
        #expect(try Self.plannedLaunch(delay, seed: 7) == (try Self.plannedLaunch(delay, seed: 7)))
        let t0 = 1_772_409_600.0
        var waits: [Double] = []
        for seed in 0..<2_000 as Range<UInt64> {
            let launch = try #require(try Self.plannedLaunch(delay, seed: seed))
            waits.append(launch.timeIntervalSince1970 - t0)
        }
        waits.sort()
        // Median of Exp(mean 10,000 s) is 6,931 s; n = 2,000 gives a standard error near 155 s,
        // plus up to 60 s of the minute grid.
        let median = waits[1_000]
        #expect(abs(median - 6_931) < 600, "\(median)")
        // Codable: the setting survives os.json.
        var configuration = IOSBackgroundScheduler.Configuration(permittedIdentifiers: ["refresh"])
        configuration.opportunity.empirical = delay
        let data = try JSONEncoder().encode(configuration)
        #expect(try JSONDecoder().decode(IOSBackgroundScheduler.Configuration.self, from: data) == configuration)
        // A configuration without the key (an older os.json) reads as the built-in draws.
        let old = try JSONEncoder().encode(IOSBackgroundScheduler.Configuration(permittedIdentifiers: ["refresh"]))
        #expect(!String(decoding: old, as: UTF8.self).contains("empirical"))
        #expect(
            try JSONDecoder().decode(IOSBackgroundScheduler.Configuration.self, from: old).opportunity.empirical == nil)
    }

    /// A wait of `points` with a fast bin [0, 1) day (mean 600 s) and a slow one from 1 day on
    /// (mean 60,000 s), no bin for the requests without an open (they take the pooled 6,000 s).
    static func binned() -> EmpiricalDelay {
        EmpiricalDelay(
            points: Self.exponential(mean: 6_000),
            byDaysSinceOpen: [
                .init(fromDays: 0, toDays: 1, delay: EmpiricalDelay(points: Self.exponential(mean: 600))),
                .init(fromDays: 1, toDays: nil, delay: EmpiricalDelay(points: Self.exponential(mean: 60_000))),
            ])
    }

    @Test(
        "Bins by the days since the last open: the bin of a request's days, the pooled wait outside them, bad bins named"
    )
    func openBins() throws {
        let delay = Self.binned()
        #expect(delay.validationProblem == nil)
        #expect(delay.delay(daysSinceOpen: 0).points == Self.exponential(mean: 600))
        #expect(delay.delay(daysSinceOpen: 0.999).points == Self.exponential(mean: 600))
        #expect(delay.delay(daysSinceOpen: 1).points == Self.exponential(mean: 60_000))
        #expect(delay.delay(daysSinceOpen: 30).points == Self.exponential(mean: 60_000))
        // No open seen and no bin for it: the pooled wait.
        #expect(delay.delay(daysSinceOpen: nil).points == delay.points)
        // Without bins (an older value) every request takes the pooled wait.
        let plain = EmpiricalDelay(points: Self.exponential(mean: 6_000))
        #expect(plain.delay(daysSinceOpen: 3) == plain)
        // Codable, and an encoding without the key (older os.json) decodes as no bins.
        let data = try JSONEncoder().encode(delay)
        #expect(try JSONDecoder().decode(EmpiricalDelay.self, from: data) == delay)
        let old = try JSONEncoder().encode(plain)
        #expect(!String(decoding: old, as: UTF8.self).contains("byDaysSinceOpen"))
        #expect(try JSONDecoder().decode(EmpiricalDelay.self, from: old).byDaysSinceOpen == nil)
        // A decoded value's bins are checked.
        var bad = delay
        bad.byDaysSinceOpen?[1].fromDays = 0.5
        #expect(
            bad.validationProblem
                == "byDaysSinceOpen[1].fromDays 0.5: overlaps the bin before (up to 1.0); bins must increase")
        bad = delay
        bad.byDaysSinceOpen?[0].toDays = 0
        #expect(bad.validationProblem == "byDaysSinceOpen[0].toDays 0.0: expected a finite number > fromDays 0.0")
        bad = delay
        bad.byDaysSinceOpen?[1].delay.points[0].seconds = -1
        #expect(bad.validationProblem == "byDaysSinceOpen[1].delay.points[0].seconds -1.0: expected ≥ 0")
        // The stored OS's check names the field under its configuration.
        var configuration = IOSBackgroundScheduler.Configuration(permittedIdentifiers: ["refresh"])
        configuration.opportunity.empirical = bad
        let os = SimulatedOS(IOSBackgroundScheduler(configuration: configuration, seed: 1))
        #expect(
            os.validationProblem(zoneProblem: { _ in nil })
                == "configuration.opportunity.empirical.byDaysSinceOpen[1].delay.points[0].seconds -1.0: expected ≥ 0")
        bad = delay
        bad.byDaysSinceOpen?.append(.init(fromDays: nil, toDays: 2, delay: plain))
        #expect(
            bad.validationProblem
                == "byDaysSinceOpen[2].toDays: expected null in the bin without an open (fromDays null)")
    }

    /// The launch's wait after eligibility on `delay` for a request eligible 1 h after its
    /// submit at `t0`, the user's last open `openedDaysBefore` days before `t0` (nil: none), and
    /// optionally an open between the submit and the eligibility.
    static func binnedWait(
        _ delay: EmpiricalDelay, seed: UInt64, openedDaysBefore: Double?, openBeforeEligible: Bool = false
    ) throws -> TimeInterval? {
        var configuration = IOSBackgroundScheduler.Configuration(permittedIdentifiers: ["refresh"])
        configuration.opportunity.empirical = delay
        var ios = IOSBackgroundScheduler(configuration: configuration, seed: seed)
        let t0 = Date(timeIntervalSince1970: 1_772_409_600)
        let start = t0.addingTimeInterval(-(openedDaysBefore ?? 30) * 86_400)
        ios.appLaunched(at: start, byUser: openedDaysBefore != nil)
        _ = try ios.register(identifier: "refresh", at: start)
        ios.finishLaunching(at: start)
        try ios.submit(identifier: "refresh", earliestBeginDate: t0.addingTimeInterval(3_600), at: t0)
        if openBeforeEligible {
            // Through os.json (the stored last open), then the user opens the app.
            ios = try JSONDecoder().decode(IOSBackgroundScheduler.self, from: JSONEncoder().encode(ios))
            ios.appLaunched(at: t0.addingTimeInterval(1_800), byUser: true)
            _ = try ios.register(identifier: "refresh", at: t0.addingTimeInterval(1_800))
            ios.finishLaunching(at: t0.addingTimeInterval(1_800))
        }
        return ios.nextLaunch(after: t0).map { $0.timeIntervalSince(t0) - 3_600 }
    }

    @Test(
        "The iOS OS draws from the bin of the days since the user's last open at eligibility; an open before it draws again"
    )
    func binnedDraws() throws {
        let delay = Self.binned()
        func median(_ openedDaysBefore: Double?, openBeforeEligible: Bool = false) throws -> Double {
            var waits: [Double] = []
            for seed in 0..<2_000 as Range<UInt64> {
                waits.append(
                    try #require(
                        try Self.binnedWait(
                            delay, seed: seed, openedDaysBefore: openedDaysBefore,
                            openBeforeEligible: openBeforeEligible)))
            }
            return waits.sorted()[1_000]
        }
        // Medians: 600 s, 6,000 s and 60,000 s × ln 2 (n = 2,000: standard errors near 3 %), plus
        // up to 60 s of the minute grid.
        let fast = try median(0.5)
        let slow = try median(3)
        let none = try median(nil)
        #expect(abs(fast - 416) < 42 + 60, "\(fast)")
        #expect(abs(slow - 41_589) < 4_159, "\(slow)")
        #expect(abs(none - 4_159) < 416 + 60, "\(none)")
        // Opened 3 days ago, then again before the request became eligible: the fast bin.
        let reopened = try median(3, openBeforeEligible: true)
        #expect(abs(reopened - 416) < 42 + 60, "\(reopened)")
        // The same seed, the same launch.
        #expect(
            try Self.binnedWait(delay, seed: 9, openedDaysBefore: 3)
                == (try Self.binnedWait(delay, seed: 9, openedDaysBefore: 3)))
        // The pooled wait alone (an older model) ignores the opens.
        let plain = EmpiricalDelay(points: Self.exponential(mean: 6_000))
        #expect(
            try Self.binnedWait(plain, seed: 9, openedDaysBefore: 3)
                == (try Self.binnedWait(plain, seed: 9, openedDaysBefore: 0.5)))
    }

    @Test("The model file's reader: groups with data, the most specific match, and a bad file named by its field")
    func reader() throws {
        var model = CalibrationModel(confidence: 0.95)
        func group(_ name: String, _ platform: Platform?, version: String? = nil, n: Int, p99: Double?)
            -> CalibrationModel.Group
        {
            var g = CalibrationModel.Group(name: name)
            g.platform = platform
            g.appVersion = version
            var d = EmpiricalDistribution([], confidence: 0.95)
            d.n = n
            d.quantiles = Self.exponential(mean: 6_000).map {
                .init(p: $0.p, value: $0.p == 0.99 ? p99 : $0.seconds, lower: nil, upper: nil)
            }
            g.delay = d
            return g
        }
        model.groups = [
            group("all", nil, n: 500, p99: nil), group("ios", .ios, n: 400, p99: nil),
            group("ios, version 1.0", .ios, version: "1.0", n: 300, p99: 27_631),
            group("ios, version 1.1", .ios, version: "1.1", n: 5, p99: 27_631),
        ]
        let os = try CalibratedOS(json: model.json())
        // The file's numbers as the fit's, to an ulp (Foundation's JSONSerialization on Linux does
        // not always write the shortest round-tripping form: 1726.0924347106854 comes back ...852).
        let memory = CalibratedOS(model: model)
        #expect(os.entries.map(\.group) == memory.entries.map(\.group))
        for (a, b) in zip(os.entries, memory.entries) {
            #expect(a.n == b.n && a.delay.neverLaunch == b.delay.neverLaunch)
            #expect(a.delay.points.map(\.p) == b.delay.points.map(\.p))
            for (x, y) in zip(a.delay.points, b.delay.points) {
                #expect(abs(x.seconds - y.seconds) <= 1e-9 * y.seconds, "\(x) vs \(y)")
            }
        }
        #expect(os.entries.map(\.group) == ["ios", "ios, version 1.0"])
        // p99 not reached: at least 1 % is never launched.
        #expect(abs(try #require(os.entries.first?.delay.neverLaunch) - 0.01) < 1e-12)
        #expect(os.delay(platform: .ios, appVersion: "1.0")?.group == "ios, version 1.0")
        // Version 1.1 has too few samples: the platform's group.
        #expect(os.delay(platform: .ios, appVersion: "1.1")?.group == "ios")
        #expect(os.delay(platform: .android) == nil)

        func problem(_ text: String) -> String? {
            do {
                _ = try CalibratedOS(json: Data(text.utf8))
                return nil
            } catch { return error.description }
        }
        #expect(problem("[]") == "the top level must be a JSON object, found an array")
        // Strict JSON, as every input: what Foundation alone would accept or say only vaguely.
        #expect(problem("") != nil)
        #expect(problem(#"{"kind": "sleeptap.calibration",}"#)?.hasPrefix("not valid JSON: line 1, column") == true)
        #expect(
            problem(#"{"kind": "x", "kind": "sleeptap.calibration"}"#)?.hasPrefix("key kind appears twice") == true,
            "\(String(describing: problem(#"{"kind": "x", "kind": "sleeptap.calibration"}"#)))")
        #expect(problem(#"{"n": NaN}"#)?.hasPrefix("not valid JSON: line 1, column") == true)
        #expect(problem(#"{"kind": "x"}"#)?.hasPrefix("kind:") == true)
        #expect(
            problem(#"{"kind": "sleeptap.calibration", "schemaVersion": 2, "groups": []}"#)
                == "schemaVersion: expected 1")
        let badSeconds = #"""
            {"kind": "sleeptap.calibration", "schemaVersion": 1, "groups": [{"group": "ios", "platform": "ios",
             "bucket": null, "appVersion": null, "delay": {"n": 30, "quantiles": [{"p": 0.5, "seconds": "1"}]}}]}
            """#
        #expect(problem(badSeconds) == "groups[0].delay.quantiles[0].seconds: expected a number ≥ 0 or null")
        #expect(
            problem(badSeconds.replacingOccurrences(of: #""platform": "ios""#, with: #""platform": "tv""#))
                == #"groups[0].platform "tv": expected ios or android"#)
        // The counts and rates the OS does not run on are still checked: no file calibrate
        // writes has them out of range.
        let good = #"""
            {"kind": "sleeptap.calibration", "schemaVersion": 1, "groups": [{"group": "ios", "platform": "ios",
             "bucket": null, "appVersion": null, "submitted": 40, "neverAnsweredShare": 0.25,
             "delay": {"n": 30, "quantiles": [{"p": 0.5, "seconds": 60, "lowerSeconds": 50, "upperSeconds": 70}],
             "meanSeconds": 65, "histogram": [1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}}]}
            """#
        #expect(problem(good) == nil)
        #expect(problem(good.replacingOccurrences(of: "0.25", with: "0")) == nil)
        #expect(
            problem(good.replacingOccurrences(of: "0.25", with: "true"))
                == "groups[0].neverAnsweredShare: expected a number between 0 and 1, or null")
        #expect(
            problem(good.replacingOccurrences(of: "0.25", with: "2"))
                == "groups[0].neverAnsweredShare: expected a number between 0 and 1, or null")
        #expect(
            problem(good.replacingOccurrences(of: "0.25", with: "-1"))
                == "groups[0].neverAnsweredShare: expected a number between 0 and 1, or null")
        let histogram =
            "groups[0].delay.histogram: expected 18 whole numbers ≥ 0 (one per bin of histogramEdgesSeconds, "
            + "and one above the last edge)"
        #expect(problem(good.replacingOccurrences(of: "[1, 2,", with: "[1, -2,")) == histogram)
        #expect(problem(good.replacingOccurrences(of: "[1, 2, 0,", with: "[1,")) == histogram, "one bin short")
        #expect(
            problem(good.replacingOccurrences(of: #""meanSeconds": 65"#, with: #""meanSeconds": -65"#))
                == "groups[0].delay.meanSeconds: expected a number ≥ 0 or null")
        #expect(
            problem(good.replacingOccurrences(of: #""lowerSeconds": 50"#, with: #""lowerSeconds": 80"#))
                == "groups[0].delay.quantiles[0]: lowerSeconds 80.0 above upperSeconds 70.0")
        #expect(
            problem(good.replacingOccurrences(of: #""upperSeconds": 70"#, with: #""upperSeconds": 55"#))
                == "groups[0].delay.quantiles[0].seconds 60.0: outside its interval [50.0, 55.0]")
        #expect(problem(good.replacingOccurrences(of: #""upperSeconds": 70"#, with: #""upperSeconds": null"#)) == nil)
        // The share agrees with its counts: 10 of 40 never answered is 0.25, not 1.
        let counted = good.replacingOccurrences(
            of: #""submitted": 40,"#, with: #""submitted": 40, "replaced": 6, "pendingAtEnd": 4,"#)
        #expect(problem(counted) == nil)
        #expect(
            problem(counted.replacingOccurrences(of: "0.25", with: "1"))
                == "groups[0].neverAnsweredShare 1.0: not (replaced + pendingAtEnd) ÷ submitted = 10 ÷ 40")
        // Every request is accounted for; the rate is its counts'; a share is null only without requests.
        let whole = counted.replacingOccurrences(
            of: #""replaced": 6,"#,
            with: #""replaced": 6, "answeredByRun": 28, "answeredByDrop": 2, "succeeded": 28, "executionRate": 0.7,"#)
        #expect(problem(whole) == nil)
        #expect(
            problem(whole.replacingOccurrences(of: #""answeredByRun": 28"#, with: #""answeredByRun": 99999"#))
                == "groups[0].submitted 40: not answeredByRun + answeredByDrop + replaced + pendingAtEnd = 100011")
        #expect(
            problem(whole.replacingOccurrences(of: #""executionRate": 0.7"#, with: #""executionRate": 0.9"#))
                == "groups[0].executionRate 0.9: not succeeded ÷ submitted = 28 ÷ 40")
        #expect(
            problem(whole.replacingOccurrences(of: "0.25", with: "null"))
                == "groups[0].neverAnsweredShare: a number when requests were submitted")
        #expect(
            problem(good.replacingOccurrences(of: #"{"kind""#, with: #"{"histogramEdgesSeconds": [300, 600], "kind""#))
                == "histogramEdgesSeconds: expected this tool's 17 edges (5 min to 48 h)")
        #expect(
            problem(good.replacingOccurrences(of: #""submitted": 40"#, with: #""submitted": -4"#))
                == "groups[0].submitted: expected a whole number ≥ 0")
    }

    @Test(
        "The model file's bins by the days since the last open: kept with data, the pooled wait otherwise, bad bins named"
    )
    func readerBins() throws {
        func distribution(n: Int, mean: Double) -> EmpiricalDistribution {
            var d = EmpiricalDistribution([], confidence: 0.95)
            d.n = n
            d.quantiles = Self.exponential(mean: mean).map { .init(p: $0.p, value: $0.seconds, lower: nil, upper: nil) }
            return d
        }
        var ios = CalibrationModel.Group(name: "ios")
        ios.platform = .ios
        ios.delay = distribution(n: 400, mean: 6_000)
        ios.delayByDaysSinceOpen = [
            .init(fromDays: 0, toDays: 1, delay: distribution(n: 300, mean: 600)),
            .init(fromDays: 1, toDays: 7, delay: distribution(n: CalibratedOS.minimumSamples - 1, mean: 9_000)),
            .init(fromDays: 7, toDays: nil, delay: distribution(n: 60, mean: 60_000)),
            .init(fromDays: nil, toDays: nil, delay: distribution(n: 0, mean: 1)),
        ]
        var model = CalibrationModel(confidence: 0.95)
        model.groups = [ios]
        let os = try CalibratedOS(json: model.json())
        let delay = try #require(os.delay(platform: .ios)?.delay)
        // The bins with 20 or more answered requests; the others' requests take the pooled wait.
        #expect(delay.byDaysSinceOpen?.map(\.fromDays) == [0, 7])
        #expect(delay.byDaysSinceOpen?.map(\.toDays) == [1, nil])
        #expect(CalibratedOS(model: model).entries.first?.delay.byDaysSinceOpen?.count == 2)
        let median = try #require(delay.delay(daysSinceOpen: 3).seconds(at: 0.5))
        #expect(abs(median - 6_000 * log(2)) < 1e-6, "\(median)")
        #expect(abs(try #require(delay.delay(daysSinceOpen: 8).seconds(at: 0.5)) - 60_000 * log(2)) < 1e-3)
        // A model without bins (a file of before) reads as the pooled wait alone.
        ios.delayByDaysSinceOpen = nil
        model.groups = [ios]
        let text = String(decoding: model.json(), as: UTF8.self)
        #expect(!text.contains("delayByDaysSinceOpen"))
        let old = try CalibratedOS(json: model.json())
        #expect(old.entries.first?.delay.byDaysSinceOpen == nil)
        #expect(old.entries.first?.delay.points == delay.points)

        func problem(_ bins: String) -> String? {
            let text = #"""
                {"kind": "sleeptap.calibration", "schemaVersion": 1, "groups": [{"group": "ios", "platform": "ios",
                 "bucket": null, "appVersion": null, "delay": {"n": 30, "quantiles": [{"p": 0.5, "seconds": 10}]},
                 "delayByDaysSinceOpen": 
                """# + bins + "}]}"
            do {
                _ = try CalibratedOS(json: Data(text.utf8))
                return nil
            } catch { return error.description }
        }
        let q = #""delay": {"n": 30, "quantiles": [{"p": 0.5, "seconds": 10}]}"#
        #expect(problem("null") == nil)
        #expect(problem(#"[{"fromDays": 0, "toDays": 1, \#(q)}, {"fromDays": null, "toDays": null, \#(q)}]"#) == nil)
        #expect(problem("{}") == "groups[0].delayByDaysSinceOpen: expected an array or null")
        #expect(
            problem(#"[{"fromDays": -1, "toDays": 1, \#(q)}]"#)
                == "groups[0].delayByDaysSinceOpen[0].fromDays: expected a number ≥ 0 or null")
        #expect(
            problem(#"[{"fromDays": 2, "toDays": 1, \#(q)}]"#)
                == "groups[0].delayByDaysSinceOpen[0].toDays 1.0: expected more than fromDays 2.0")
        #expect(
            problem(#"[{"fromDays": 0, "toDays": 2, \#(q)}, {"fromDays": 1, "toDays": 3, \#(q)}]"#)
                == "groups[0].delayByDaysSinceOpen[1].fromDays 1.0: overlaps the bin before (up to 2.0); bins must increase"
        )
        #expect(
            problem(#"[{"fromDays": null, "toDays": null, \#(q)}, {"fromDays": null, "toDays": null, \#(q)}]"#)
                == "groups[0].delayByDaysSinceOpen[1].fromDays: a second bin without an open (null)")
        #expect(
            problem(
                #"[{"fromDays": 0, "toDays": 1, "delay": {"n": 30, "quantiles": [{"p": 0.5, "seconds": 10}, {"p": 0.9, "seconds": 5}]}}]"#
            )
                == "groups[0].delayByDaysSinceOpen[0].delay.quantiles: seconds must not decrease")
        #expect(
            problem(#"[{"fromDays": 0, "toDays": 1, "delay": {"n": 30, "quantiles": [{"p": 1.5, "seconds": 10}]}}]"#)
                == "groups[0].delayByDaysSinceOpen[0].delay.quantiles[0].p: expected a number between 0 and 1")
    }

    static let start = LocalDate(parsing: "2026-03-02")!
    static let reportDate = LocalDate(parsing: "2026-03-15")!

    /// A 14-day fleet of `devices` with the default mix and habits, on legacy's draws: a fitted
    /// delay does not depend on the time of day or the user's opens, as legacy's does not
    /// (docs/calibration.md, "What the records cannot identify").
    static func fleet(devices: Int, seed: UInt64, model: CalibratedOS? = nil) -> FleetOptions {
        var options = FleetOptions(devices: devices, days: 14, start: start)
        options.seed = seed
        options.opportunityModel = .legacy
        options.osModel = model
        return options
    }

    /// The weekly report on `options`' records, and the fit of them.
    static func run(_ options: FleetOptions) async -> (FreshnessReport, CalibrationModel) {
        let devices = await CalibrationTests.records(options)
        var report = FreshnessReport(date: reportDate)
        var calibration = Calibration()
        for records in devices {
            report.add(file: records)
            calibration.add(device: records)
        }
        return (report, calibration.model())
    }

    /// `model` with every iOS delay knot multiplied by `factor`.
    static func stretched(_ model: CalibratedOS, by factor: Double) -> CalibratedOS {
        var model = model
        for i in model.entries.indices {
            let d = model.entries[i].delay
            model.entries[i].delay = EmpiricalDelay(
                points: d.points.map { .init(p: $0.p, seconds: $0.seconds * factor) }, neverLaunch: d.neverLaunch,
                maximumSeconds: d.maximumSeconds * factor)
        }
        return model
    }

    /// 200 devices: at 120 the weekly figures of one population under two OS seeds of the
    /// built-in model already differed by 3.9 h in the iOS p90 and 1.9 points in the execution
    /// rate (measured), the tolerances' size; at 200 that noise is about 1/1.3 of it.
    static let devices = 200

    /// An iOS fleet of rare users (`opens` a day, so days pass between their opens) without Low
    /// Power Mode or unplugged nights, on `kind`'s draws.
    static func rareUsers(_ kind: OpportunityModelKind, devices: Int, opens: Double) -> FleetOptions {
        var options = FleetOptions(devices: devices, days: 14, start: start)
        options.seed = 5
        options.iosShare = 1
        options.lowPower = 0
        options.nightstand = 0
        options.opens = opens
        options.opportunityModel = kind
        return options
    }

    @Test(
        "The delay by the days since the last open recovers the usage model's decay: longer in the higher bins; legacy's bins agree"
    )
    func openBinsDirection() async throws {
        /// The fitted median delay of the bins from 0 and from 4 days since the last open, seconds.
        func medians(_ kind: OpportunityModelKind) async throws -> (Double, Double) {
            let model = await CalibrationTests.fit(Self.rareUsers(kind, devices: 80, opens: 0.2))
            let bins = try #require(model.group("ios")?.delayByDaysSinceOpen)
            #expect(bins.map(\.fromDays) == [0, 1, 2, 4, 7, 14, nil])
            func p50(_ from: Double) throws -> Double {
                let bin = try #require(bins.first { $0.fromDays == from })
                #expect(bin.delay.n >= 100, "\(kind) bin \(from): n \(bin.delay.n)")
                return try #require(bin.delay.quantiles.first { $0.p == 0.5 }?.value, "\(kind) bin \(from)")
            }
            return (try p50(0), try p50(4))
        }
        // Usage: the OS keeps an opportunity with a chance that halves per 7 days since the last
        // open, so a wait about 5 days later in that decay (bin [4, 7) against [0, 1)) is about
        // 2^(5/7) = 1.64 times as long. 80 devices, 0.2 opens a day: medians 5.8 h and 8.5 h
        // (1.47 times; 1.36 to 1.76 over six populations); on legacy 1.1 h and 1.1 h (0.86 to 1.09).
        let usage = try await medians(.usage)
        #expect(usage.1 > 1.25 * usage.0, "usage p50 by bin: \(usage)")
        // Legacy's wait does not depend on the opens: the same comparison fails there.
        let legacy = try await medians(.legacy)
        #expect(legacy.1 < 1.25 * legacy.0, "legacy p50 by bin: \(legacy)")
    }

    @Test(
        "Round trip: the fleet on the model fitted to its records, with other OS draws, gives its weekly report; longer delays, worse p90"
    )
    func roundTrip() async throws {
        let original = Self.fleet(devices: Self.devices, seed: 41)
        let (before, fitted) = await Self.run(original)
        let model = try CalibratedOS(json: fitted.json())
        let ios = try #require(model.delay(platform: .ios, appVersion: FleetOptions.appVersion))
        #expect(ios.group == "ios, version 1.0" && ios.n > 500, "\(ios.group) n \(ios.n)")
        // The same users, another OS seed, the OS on the model (read back from the file's bytes).
        var second = original
        second.osSeedSalt = 1
        second.osModel = model
        let (after, refitted) = await Self.run(second)
        for group in [FreshnessReport.Group.platform(.ios), .platform(.android)] {
            let a = before.figures(group, days: FreshnessReport.thisWeek)
            let b = after.figures(group, days: FreshnessReport.thisWeek)
            #expect(a.samples == b.samples && a.samples > 500, "\(group): \(a.samples) vs \(b.samples) samples")
            for (name, x, y) in [("p50", a.p50?.hours, b.p50?.hours), ("p90", a.p90?.hours, b.p90?.hours)] {
                let x = try #require(x, "\(group) \(name)")
                let y = try #require(y, "\(group) \(name)")
                #expect(abs(x - y) <= max(1, 0.05 * x), "\(group) \(name): \(x) h vs \(y) h")
            }
            let rate = (try #require(a.executionRate), try #require(b.executionRate))
            #expect(abs(rate.0 - rate.1) <= 0.02, "\(group) execution rate \(rate)")
        }
        // The refit on the second fleet recovers the model's median delay (within 10 min).
        let p50 = { (m: CalibrationModel) in m.group("ios")?.delay.quantiles.first { $0.p == 0.5 }?.value }
        let (x, y) = (try #require(p50(fitted)), try #require(p50(refitted)))
        #expect(abs(x - y) < 600, "p50 delay \(x) s vs \(y) s")

        // Direction: the same fleet on delays three times as long has a worse iOS p90.
        second.osModel = Self.stretched(model, by: 3)
        let (slower, _) = await Self.run(second)
        let was = try #require(before.figures(.platform(.ios), days: FreshnessReport.thisWeek).p90?.hours)
        let now = try #require(slower.figures(.platform(.ios), days: FreshnessReport.thisWeek).p90?.hours)
        #expect(now > was + 1, "p90 \(was) h -> \(now) h")
    }

    /// On `usage`, the default, the fleet on its fitted model comes near its weekly report,
    /// though not within `roundTrip`'s tolerance (docs/calibration.md, "What the records cannot
    /// identify"). Holding launches again for a critically low battery on top of a wait fitted
    /// with those holds in it had put the iOS p50 gap at 27 h of 43, the p90's at 97 h of 150 and
    /// the execution rate 13 points lower; these bounds fail on each.
    @Test(
        "Round trip on usage: the fitted wait already holds the battery's holds, so the fleet on its model comes near"
    )
    func usageRoundTrip() async throws {
        var original = FleetOptions(devices: Self.devices, days: 14, start: Self.start)
        original.seed = 41
        original.opportunityModel = .usage
        let (before, fitted) = await Self.run(original)
        var second = original
        second.osSeedSalt = 1
        second.osModel = try CalibratedOS(json: fitted.json())
        let (after, _) = await Self.run(second)
        let a = before.figures(.platform(.ios), days: FreshnessReport.thisWeek)
        let b = after.figures(.platform(.ios), days: FreshnessReport.thisWeek)
        for (name, x, y) in [("p50", a.p50?.hours, b.p50?.hours), ("p90", a.p90?.hours, b.p90?.hours)] {
            let x = try #require(x, "fleet \(name)")
            let y = try #require(y, "fleet on its model \(name)")
            #expect(abs(x - y) <= 0.3 * x, "\(name): \(x) h vs \(y) h")
        }
        let rate = (try #require(a.executionRate), try #require(b.executionRate))
        #expect(abs(rate.0 - rate.1) <= 0.06, "execution rate \(rate)")
    }
}

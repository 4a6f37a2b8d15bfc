// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore
import SleepTapOS
import Testing

/// The weekly freshness report's maths and text (docs/metrics.md), on worked examples.
@Suite("Freshness report")
struct FreshnessReportTests {
    static let date = LocalDate(parsing: "2026-03-14")!
    /// The worked sample: sorted [0.5, 1, 2, 3.5, 4, 7.25, 9.5, 12, 15, 26].
    static let sample = [3.5, 0.5, 12.0, 7.25, 1.0, 26.0, 4.0, 9.5, 2.0, 15.0]

    /// A foreground record on `day` (2026-03-DD) at noon UTC.
    static func open(
        _ day: Int, _ hours: Double?, device: String = "d1", platform: Platform = .ios, bucket: StandbyBucket? = nil
    ) -> RunRecord {
        RunRecord(
            device: device, platform: platform, kind: .foreground,
            at: ISO8601.date(String(format: "2026-03-%02dT12:00:00Z", day))!, lowPower: false, bucket: bucket,
            stalenessHours: hours)
    }

    /// A successful background run of d1 on `day` at 06:00 UTC.
    static func ran(_ day: Int) -> RunRecord {
        let at = ISO8601.date(String(format: "2026-03-%02dT06:00:00Z", day))!
        return RunRecord(
            device: "d1", platform: .ios, kind: .background, at: at, earliestBeginDate: at, success: true,
            expired: false, stalenessHours: 0)
    }

    /// The samples of device d1, which runs in the background once a week (so that only the
    /// week-over-week rule can warn).
    static func report(lastWeek: [Double], thisWeek: [Double]) -> FreshnessReport {
        var report = FreshnessReport(date: date)
        report.add(file: [ran(1), ran(8)])
        report.add(file: lastWeek.enumerated().map { open(1 + $0.offset % 7, $0.element) })
        report.add(file: thisWeek.enumerated().map { open(8 + $0.offset % 7, $0.element) })
        return report
    }

    @Test("Type 7 on the worked example: p50 5.625, p90 16.1 (nearest rank would give 4.0 and 15.0)")
    func workedExample() throws {
        let sorted = Self.sample.sorted()
        let p50 = try #require(Percentile.linear(sorted, 0.5))
        let p90 = try #require(Percentile.linear(sorted, 0.9))
        #expect(p50 == 5.625)
        #expect(abs(p90 - 16.1) < 1e-12)
        #expect(Percentile.wholeSeconds(hours: p90) == 57_960)
        let report = Self.report(lastWeek: [], thisWeek: Self.sample)
        let week = report.figures(.all, days: FreshnessReport.thisWeek)
        #expect(week.p50 == .hours(p50) && week.p90 == .hours(p90) && week.samples == 10)
        let text = report.markdown()
        // Hours to one decimal, with the sample count beside.
        #expect(text.contains("| p50 staleness (h) | 5.6 (n = 10) | n/a (n = 0) |"), "\(text)")
        #expect(text.contains("| p90 staleness (h) | 16.1 (n = 10) | n/a (n = 0) |"))
        #expect(text.contains("Hyndman and Fan type 7"))
    }

    @Test("n = 0 gives n/a, n = 1 gives that value")
    func smallSamples() {
        #expect(Percentile.linear([], 0.5) == nil)
        #expect(Percentile.linear([7.25], 0.5) == 7.25)
        #expect(Percentile.linear([7.25], 0.9) == 7.25)
        let report = Self.report(lastWeek: [], thisWeek: [7.25])
        let text = report.markdown()
        #expect(text.contains("| p50 staleness (h) | 7.2 (n = 1) | n/a (n = 0) |"), "\(text)")
        #expect(text.contains("| p90 staleness (h) | 7.2 (n = 1) | n/a (n = 0) |"))
        // Last week has no samples: nothing to compare, no warning, and the report says so.
        #expect(report.trend == .notComparable("last week has no staleness samples"))
        #expect(text.hasPrefix("# Background refresh freshness, 2026-03-14\n"))
        #expect(text.contains("No week-over-week comparison: last week has no staleness samples (1 samples"))
    }

    @Test("Week over week: p90 16.1 h then 27.6 h is 11.5 h worse: no warning")
    func elevenAndAHalfHours() {
        let report = Self.report(lastWeek: Self.sample, thisWeek: [1, 2, 3, 4, 5, 6, 7, 8, 27.5, 28.5])
        #expect(report.trend == .compared(changeSeconds: 41_400, warning: false))
        #expect(report.heading == "# Background refresh freshness, 2026-03-14")
    }

    @Test("Exactly 12.0 h worse is no warning (floating point would say 12.000000000000002); 12.1 h is")
    func exactTwelveHours() throws {
        let twelve = Self.report(lastWeek: Self.sample, thisWeek: [1, 2, 3, 4, 5, 6, 7, 8, 28, 29])
        let p90 = try #require(twelve.figures(.all, days: FreshnessReport.thisWeek).p90?.hours)
        let before = try #require(twelve.figures(.all, days: FreshnessReport.lastWeek).p90?.hours)
        #expect(p90 - before > 12, "the trap: a naive comparison would warn")
        #expect(twelve.trend == .compared(changeSeconds: 43_200, warning: false))
        #expect(!twelve.markdown().hasPrefix("# ⚠"))
        let more = Self.report(lastWeek: Self.sample, thisWeek: [1, 2, 3, 4, 5, 6, 7, 8, 28, 30])
        #expect(more.trend == .compared(changeSeconds: 43_560, warning: true))
        #expect(more.markdown().hasPrefix("# ⚠ Background refresh freshness, 2026-03-14\n"))
    }

    @Test(
        "A null staleness is unbounded: it ranks above every number, and a percentile on or bracketing it reads never")
    func nullStaleness() throws {
        var report = FreshnessReport(date: Self.date)
        report.add(file: [Self.open(9, nil), Self.open(9, nil), Self.open(10, 2), Self.open(11, 4)])
        let week = report.figures(.all, days: FreshnessReport.thisWeek)
        #expect(week.samples == 4 && week.neverRefreshed == 2)
        // Sorted [2, 4, never, never]: p50's bracket is 4..never, so never (it was 3 when nulls were dropped).
        #expect(week.p50 == .never && week.p90 == .never)
        // Nine samples, one null: p50 lands on x[4] = 5; p90 (h = 7.2) brackets 8 and never.
        #expect(Percentile.staleness([1, 2, 3, 4, 5, 6, 7, 8], never: 1, 0.5) == .hours(5))
        #expect(Percentile.staleness([1, 2, 3, 4, 5, 6, 7, 8], never: 1, 0.9) == .never)
        // Ten numbers and one null: h = 9 for p90 lands exactly on x[9], a number.
        #expect(Percentile.staleness(Array(1...10).map(Double.init), never: 1, 0.9) == .hours(10))
        #expect(Percentile.staleness([], never: 1, 0.5) == .never && Percentile.staleness([], never: 0, 0.5) == nil)
        let text = report.markdown()
        #expect(text.contains("| never refreshed (no background run yet) | 2 | 0 |"), "\(text)")
        #expect(text.contains("| p50 staleness (h) | never (n = 4) |"), "\(text)")
        #expect(text.contains("reads `never`"))
        // A p90 going from a number to never is worse by more than 12 h: ⚠, and the condition printed.
        var never = FreshnessReport(date: Self.date)
        never.add(file: [Self.open(2, 5), Self.open(9, nil)])
        #expect(never.trend == .becameNever)
        #expect(never.conditions.first == .p90BecameNever(lastWeekHours: 5))
        #expect(never.heading.hasPrefix("# ⚠ "))
        #expect(
            never.markdown().contains("- ⚠ p90 staleness went from 5.0 h last week to never: more than 12 h worse."))
    }

    /// A week of `devices` iOS devices: each opens the app with `hours` staleness (nil: never
    /// refreshed), submits once, and runs in the background when `ran`.
    static func week(
        _ firstDay: Int, devices: Int, days: Int = 7, hours: (Int) -> Double?, ran: (Int) -> Bool,
        version: String? = nil
    ) -> [RunRecord] {
        (0..<devices).flatMap { index -> [RunRecord] in
            let at = ISO8601.date(String(format: "2026-03-%02dT10:00:00Z", firstDay + index % days))!
            var records = [
                RunRecord(
                    device: "d\(index)", platform: .ios, kind: .foreground, at: at, stalenessHours: hours(index),
                    appVersion: version),
                RunRecord(
                    device: "d\(index)", platform: .ios, kind: .submitted, at: at, earliestBeginDate: at,
                    appVersion: version),
            ]
            if ran(index) {
                records.append(
                    RunRecord(
                        device: "d\(index)", platform: .ios, kind: .background, at: at.addingTimeInterval(60),
                        earliestBeginDate: at, success: true, expired: false, stalenessHours: 0, appVersion: version))
            } else {
                records.append(
                    RunRecord(
                        device: "d\(index)", platform: .ios, kind: .dropped, at: at.addingTimeInterval(60),
                        earliestBeginDate: at, appVersion: version))
            }
            return records
        }
    }

    @Test(
        "A push run feeds the device: with the refresh task dropped, 20 devices fed by a successful push are no devices without a run; failed pushes are; the execution rate counts requests only"
    )
    func pushRuns() throws {
        // Every request dropped (a launch handler registered too late); a nightly push runs the
        // job outside the scheduler, succeeding or not.
        func report(pushSucceeds: Bool) -> FreshnessReport {
            var report = FreshnessReport(date: Self.date)
            for first in [1, 8] {
                var records = Self.week(first, devices: 20, hours: { _ in 20 }, ran: { _ in false })
                records += (0..<20).map { index in
                    let at = ISO8601.date(String(format: "2026-03-%02dT04:00:30Z", first + index % 7))!
                    return RunRecord(
                        device: "d\(index)", platform: .ios, kind: .push, at: at, success: pushSucceeds, expired: false,
                        stalenessHours: pushSucceeds ? 0 : 20)
                }
                report.add(file: records)
            }
            return report
        }
        let fed = report(pushSucceeds: true)
        let fedThis = fed.figures(.all, days: FreshnessReport.thisWeek)
        #expect(fedThis.noRunDevices == 0 && fedThis.push == 20 && fedThis.pushSucceeded == 20)
        #expect(fedThis.executionRate == 0 && fedThis.succeeded == 0, "the scheduler answered no request")
        #expect(fed.conditions == [.noneRan(requests: 20)], "the refresh task is still broken: (3) says so")
        let text = fed.markdown()
        #expect(text.contains("| push runs that succeeded | 20 | 20 |"), "\(text)")
        // The device count's label says what counts: the requests had no run, the devices had.
        #expect(text.contains("| devices without a successful background or push run | 0 of 20 (0.0 %) |"), "\(text)")
        #expect(fed.runWords == "background or push run")
        #expect(Self.report(lastWeek: [1], thisWeek: [1]).runWords == "background run")
        // The report gets worse when the pushes fail: every device is one without a run.
        let starved = report(pushSucceeds: false)
        let starvedThis = starved.figures(.all, days: FreshnessReport.thisWeek)
        #expect(starvedThis.noRunDevices == 20 && starvedThis.pushSucceeded == 0)
        #expect(starved.conditions.contains(.mostDevicesWithoutRun(noRun: 20, devices: 20)))
        // An expired push's run is an expired run, with its cause.
        var expired = FreshnessReport(date: Self.date)
        expired.add(file: [
            RunRecord(
                device: "d0", platform: .ios, kind: .push, at: ISO8601.date("2026-03-10T04:00:30Z")!, success: false,
                expired: true, stalenessHours: 20)
        ])
        #expect(expired.figures(.all, days: FreshnessReport.thisWeek).expired == 1)
        #expect(expired.markdown().contains("| expired (budget ran out) | 1 | 0 |"))
        #expect(expired.causes.contains { $0.hasPrefix("`expired`") }, "\(expired.causes)")
        #expect(!fed.conditions.contains(.mostDevicesWithoutRun(noRun: 20, devices: 20)))
        let this = try #require(fed.summary(path: "r.md")["thisWeek"] as? [String: Any])
        #expect(this["push"] as? Int == 20 && this["pushSucceeded"] as? Int == 20)
        // Without push records the Failures table has no push rows (older reports unchanged).
        #expect(!Self.report(lastWeek: [1], thisWeek: [1]).markdown().contains("push runs"))
    }

    @Test(
        "Absolute ⚠ conditions: p90 above the 168 h cache horizon (exactly 168 h is not), none ran, most devices without a run"
    )
    func absoluteConditions() throws {
        // Both weeks alike (no week-over-week change), p90 exactly 168 h: no warning.
        func report(p90Hours: Double, ranShare: Int) -> FreshnessReport {
            var report = FreshnessReport(date: Self.date)
            for firstDay in [1, 8] {
                report.add(
                    file: Self.week(
                        firstDay, devices: 30, hours: { $0 < 20 ? 1 : p90Hours }, ran: { $0 % 10 < ranShare }))
            }
            return report
        }
        let exact = report(p90Hours: 168, ranShare: 10)
        #expect(exact.figures(.all, days: FreshnessReport.thisWeek).p90 == .hours(168))
        #expect(exact.conditions == [] && !exact.heading.hasPrefix("# ⚠"))
        let above = report(p90Hours: 168.1, ranShare: 10)
        #expect(above.conditions == [.p90AboveCacheHorizon(.hours(168.1))])
        #expect(
            above.markdown().contains(
                "- ⚠ p90 staleness this week is 168.1 h, above the watch's 168 h (7-day) cache horizon"))
        // 4 devices in 10 ran: 18 of 30 without a run is more than half.
        let most = report(p90Hours: 2, ranShare: 4)
        #expect(most.conditions == [.mostDevicesWithoutRun(noRun: 18, devices: 30)])
        let most5 = report(p90Hours: 2, ranShare: 5)
        #expect(most5.conditions == [], "exactly half is not more than half")
        #expect(most.figures(.all, days: FreshnessReport.thisWeek).noRunDevices == 18)
        #expect(
            most.markdown().contains(
                "| devices without a successful background run | 18 of 30 (60.0 %) | 18 of 30 (60.0 %) |"))
        // A fleet that never refreshes (every sample null, nothing ran, in both weeks): ⚠ with all three.
        var dead = FreshnessReport(date: Self.date)
        for firstDay in [1, 8] {
            dead.add(file: Self.week(firstDay, devices: 30, hours: { _ in nil }, ran: { _ in false }))
        }
        #expect(
            dead.conditions == [
                .p90AboveCacheHorizon(.never), .noneRan(requests: 30), .mostDevicesWithoutRun(noRun: 30, devices: 30),
            ])
        let text = dead.markdown()
        #expect(
            text.hasPrefix("# ⚠ Background refresh freshness, 2026-03-14\n\n- ⚠ p90 staleness this week is never"),
            "\(text)")
        #expect(text.contains("- ⚠ 30 requests were made this week and no background run succeeded"))
        #expect(text.contains("- ⚠ 30 of 30 devices (100.0 %) had no successful background run this week"))
        let summary = dead.summary(path: "r.md")
        #expect(summary["warning"] as? Bool == true)
        #expect(
            (summary["conditions"] as? [[String: String]])?.map { $0["condition"] } == [
                "p90AboveCacheHorizon", "noneRan", "mostDevicesWithoutRun",
            ])
        #expect((summary["thisWeek"] as? [String: Any])?["p90Hours"] as? String == "never")
        #expect((summary["thisWeek"] as? [String: Any])?["noRunDevices"] as? Int == 30)
    }

    @Test(
        "Devices that fall silent (records last week, none this week) count as without a run, and a tenth of them warns"
    )
    func silentDevices() throws {
        // 30 devices, all running in both weeks; then `silent` of them write nothing this week.
        func report(silent: Int) -> FreshnessReport {
            var report = FreshnessReport(date: Self.date)
            report.add(file: Self.week(1, devices: 30, hours: { _ in 2 }, ran: { _ in true }))
            report.add(
                file: Self.week(8, devices: 30, hours: { _ in 2 }, ran: { _ in true }).filter {
                    Int($0.device.dropFirst())! >= silent
                })
            return report
        }
        let none = report(silent: 0)
        #expect(none.conditions == [])
        let few = report(silent: 2)
        let fewThis = few.figures(.all, days: FreshnessReport.thisWeek)
        #expect(fewThis.devices == 28 && fewThis.silentDevices == 2 && fewThis.noRunDevices == 0)
        #expect(fewThis.noRunShare == 2.0 / 30)
        #expect(few.conditions == [], "2 of 30 is less than a tenth")
        // The rest ran every day: the report must still get worse. The silent devices' usual
        // requests (7 each) went unanswered, and their data aged all week (p90 2 h to 21.2 h).
        let three = report(silent: 3)
        #expect(three.figures(.all, days: FreshnessReport.thisWeek).executionRate == 189.0 / 210)
        #expect(three.conditions == [.weekOverWeek(changeSeconds: 69_114), .devicesWentSilent(silent: 3, recent: 30)])
        let text = three.markdown()
        #expect(text.hasPrefix("# ⚠ "), "\(text)")
        #expect(
            text.contains(
                "- ⚠ 3 of the 30 devices with records in the four weeks before this week (10.0 %) have no record this week"
            ), "\(text)")
        #expect(
            text.contains(
                "| devices without a successful background run | 3 of 30 (10.0 %; 3 with no record this week) | 0 of 30 (0.0 %) |"
            ),
            "\(text)")
        #expect((three.summary(path: "r.md")["thisWeek"] as? [String: Any])?["silentDevices"] as? Int == 3)
        // More silent than running: more than half without a run.
        let most = report(silent: 16)
        #expect(
            most.conditions.map(\.name) == [
                "p90WeekOverWeek", "p90AboveCacheHorizon", "mostDevicesWithoutRun", "devicesWentSilent",
            ])
        #expect(most.conditions.last == .devicesWentSilent(silent: 16, recent: 30))
        #expect(
            most.figures(.all, days: FreshnessReport.thisWeek).noRunShare! > three.figures(
                .all, days: FreshnessReport.thisWeek
            ).noRunShare!)
        // Every device silent: no record this week at all. One condition says the week is empty
        // (the whole fleet silent, or an input that ends before it) rather than healthy, so the
        // worst case warns too; it stands for (4) and (5).
        let all = report(silent: 30)
        #expect(all.figures(.all, days: FreshnessReport.thisWeek).silentDevices == 30)
        // Their data's age counts (no request of theirs is said to be made this week).
        #expect(
            all.conditions.map(\.name) == ["p90WeekOverWeek", "p90AboveCacheHorizon", "noRecordsThisWeek"],
            "\(all.conditions)")
        #expect(all.conditions.last == .noRecordsThisWeek(recent: 30))
        #expect(all.markdown().hasPrefix("# ⚠ "))
        #expect(all.summary(path: "r.md")["warning"] as? Bool == true)
        #expect(
            all.markdown().contains(
                "- ⚠ No record this week from any of the 30 devices with records in the four weeks before it: the whole fleet wrote nothing"
            ))
        // By app version: a device that moved to 1.1 is not silent on 1.0; one with no record is.
        var versions = FreshnessReport(date: Self.date)
        versions.add(file: Self.week(1, devices: 30, hours: { _ in 2 }, ran: { _ in true }, version: "1.0"))
        let thisWeek = Self.week(8, devices: 30, hours: { _ in 2 }, ran: { _ in true })
        versions.add(
            file: thisWeek.compactMap { record in
                let index = Int(record.device.dropFirst())!
                guard index >= 3 else { return nil }
                var record = record
                record.appVersion = index < 10 ? "1.1" : "1.0"
                return record
            })
        let old = try #require(versions.figures(appVersion: "1.0", days: FreshnessReport.thisWeek))
        #expect(old.devices == 20 && old.silentDevices == 3, "\(old)")
        #expect(versions.figures(appVersion: "1.1", days: FreshnessReport.thisWeek)?.silentDevices == 0)
    }

    @Test(
        "⚠ for an app version whose devices mostly had no run, for most records outside the weeks, and for skipped files"
    )
    func inputConditions() throws {
        // 30 devices on 1.0 that run; `broken` more on 1.1 that never do.
        func versions(broken: Int) -> FreshnessReport {
            var report = FreshnessReport(date: Self.date)
            for first in [1, 8] {
                report.add(file: Self.week(first, devices: 30, hours: { _ in 2 }, ran: { _ in true }, version: "1.0"))
                report.add(
                    file: Self.week(first, devices: broken, hours: { _ in 100 }, ran: { _ in false }, version: "1.1")
                        .map { record in
                            var record = record
                            record.device = "b" + record.device
                            return record
                        })
            }
            return report
        }
        #expect(versions(broken: 0).conditions == [])
        // 2 of 32 devices: under a tenth of the week's devices, and the fleet's p90 stays low.
        #expect(versions(broken: 2).conditions == [])
        // 4 of 34: a tenth or more, all of them without a run; the fleet as a whole is fine.
        let four = versions(broken: 4)
        #expect(four.conditions == [.versionWithoutRuns(version: "1.1", noRun: 4, devices: 4)], "\(four.conditions)")
        #expect(
            four.markdown().contains(
                "- ⚠ 4 of the 4 devices on app version 1.1 this week (100.0 %) had no successful background run on it"))
        // A version every device runs is the fleet's own condition (4), not this one.
        var single = FreshnessReport(date: Self.date)
        single.add(file: Self.week(8, devices: 10, hours: { _ in 2 }, ran: { _ in false }, version: "1.0"))
        #expect(!single.conditions.contains { $0.name == "versionWithoutRuns" }, "\(single.conditions)")
        #expect(single.conditions.contains(.mostDevicesWithoutRun(noRun: 10, devices: 10)))
        // An update mid-week that breaks the runs of the devices that get it: the week also holds
        // 1.0's records, so this is not (4)'s case, and the version's own condition fires.
        func update(at hour: Int) -> FreshnessReport {
            var report = FreshnessReport(date: Self.date)
            let cut = ISO8601.date("2026-03-08T00:00:00Z")!.addingTimeInterval(Double(hour) * 3_600)
            for first in [1, 8] {
                report.add(
                    file: Self.week(first, devices: 20, hours: { _ in 2 }, ran: { _ in true }, version: "1.0")
                        .filter { $0.at < cut })
            }
            report.add(
                file: Self.week(8, devices: 20, hours: { _ in 100 }, ran: { _ in false }, version: "1.1").filter {
                    $0.at >= cut
                })
            return report
        }
        let everyDevice = update(at: 3 * 24)
        #expect(
            everyDevice.conditions.contains { $0.name == "versionWithoutRuns" }, "\(everyDevice.conditions)")
        // The same update in the last hours of the week: too new to judge (its devices have had no
        // time to run), so no ⚠ for it.
        let lastHours = update(at: 6 * 24 + 6)
        #expect(lastHours.appVersions == ["1.0", "1.1"], "the update's records are in the week")
        #expect(
            !lastHours.conditions.contains { $0.name == "versionWithoutRuns" }, "\(lastHours.conditions)")

        // Most devices with records only outside the two weeks: a date set by one record from a
        // wrong clock. A long history before the weeks, of the same devices, is no such thing.
        var history = FreshnessReport(date: Self.date)
        history.add(file: Self.week(8, devices: 10, hours: { _ in 2 }, ran: { _ in true }))
        history.add(
            file: (0..<10).map { index in
                RunRecord(
                    device: "d\(index)", platform: .ios, kind: .foreground, at: ISO8601.date("2025-03-09T12:00:00Z")!,
                    stalenessHours: 1)
            })
        #expect(history.mostRecordsOutside == false && history.conditions == [], "\(history.conditions)")
        for hour in 0..<10 {
            history.add(
                file: (0..<10).map { index in
                    RunRecord(
                        device: "d\(index)", platform: .ios, kind: .foreground,
                        at: ISO8601.date("2025-03-09T12:00:00Z")!.addingTimeInterval(Double(hour + 1) * 3_600),
                        stalenessHours: 1)
                })
        }
        #expect(history.mostRecordsOutside, "most records are old: said, but no ⚠")
        #expect(history.conditions == [], "\(history.conditions)")
        var stray = FreshnessReport(date: Self.date)
        stray.add(
            file: Self.week(8, devices: 1, hours: { _ in 2 }, ran: { _ in true }).map { record in
                var record = record
                record.device = "x"
                return record
            })
        stray.add(
            file: Self.week(1, devices: 10, hours: { _ in 2 }, ran: { _ in true }).map { record in
                var record = record
                record.at = record.at.addingTimeInterval(-365 * 86_400)
                return record
            })
        #expect(stray.conditions == [.mostDevicesOutside(outside: 10, devices: 11)], "\(stray.conditions)")
        #expect(FreshnessReport.Condition.mostDevicesOutside(outside: 10, devices: 11).text.contains("a small part of"))
        // Every device outside: the figures describe none of the fleet, not a small part of it.
        #expect(FreshnessReport.Condition.mostDevicesOutside(outside: 4, devices: 4).text.contains("describe none of"))
        #expect(stray.summary(path: "r")["warning"] as? Bool == true)

        // Skipped files: a hundredth or more of the files are in no figure.
        func skipping(_ count: Int) -> FreshnessReport {
            var report = FreshnessReport(date: Self.date)
            let week = Self.week(8, devices: 99, hours: { _ in 2 }, ran: { _ in true })
            for index in 0..<99 { report.add(file: week.filter { $0.device == "d\(index)" }) }
            for index in 0..<count { report.skip(file: "bad-\(index).json", reason: "not JSON") }
            return report
        }
        #expect(skipping(0).conditions == [])
        #expect(skipping(1).conditions == [.filesSkipped(skipped: 1, files: 100)])
        let half = skipping(99)
        #expect(half.conditions == [.filesSkipped(skipped: 99, files: 198)])
        #expect(half.markdown().contains("- ⚠ 99 of the input's 198 files (50.0 %) could not be read"))
    }

    @Test("Each failure kind gets its usual cause; the first day the daily execution rate fell; a split by app version")
    func causesFallAndVersions() throws {
        var report = FreshnessReport(date: Self.date)
        // Days 1...10: 30 devices a day, all run; from day 11 version 1.1 drops 20 of 30.
        for day in 1...14 {
            let late = day >= 11
            report.add(
                file: Self.week(
                    day, devices: 30, days: 1, hours: { _ in 2 }, ran: { late ? $0 % 3 == 0 : true },
                    version: late ? "1.1" : "1.0"))
        }
        let fall = try #require(report.firstExecutionRateFall)
        #expect(
            fall.day == LocalDate(parsing: "2026-03-11")! && fall.beforeRate == 1 && abs(fall.rate - 1.0 / 3) < 1e-12)
        #expect(fall.before == LocalDate(parsing: "2026-03-01")!...LocalDate(parsing: "2026-03-10")!)
        let text = report.markdown()
        #expect(
            text.contains(
                "The daily execution rate first fell on **2026-03-11**: 33.3 %, after 100.0 % over 2026-03-01 to 2026-03-10"
            ),
            "\(text)")
        #expect(
            text.contains(
                "- `dropped` (80 this week, 0 last week): the OS launched the app for the task and no launch handler was registered in time"
            ))
        #expect(text.contains("didFinishLaunching"))
        #expect(report.appVersions == ["1.0", "1.1"])
        let updated = try #require(report.figures(appVersion: "1.1", days: FreshnessReport.thisWeek))
        #expect(updated.dropped == 80 && updated.noRunDevices == 20 && updated.devices == 30)
        #expect(
            text.contains("| 1.1 | this | 30 | 20 of 30 (66.7 %) | 120 | 0 | 2.0 | 2.0 | 33.3 % (40 / 120) | 80 |"),
            "\(text)")
        // submit_failed by reason, expired, and App Standby for a rare bucket that rarely runs.
        var other = FreshnessReport(date: Self.date)
        let at = ISO8601.date("2026-03-10T06:00:00Z")!
        other.add(file: [
            RunRecord(device: "i", platform: .ios, kind: .submitFailed, at: at, reason: "unavailable"),
            RunRecord(device: "i", platform: .ios, kind: .submitFailed, at: at, reason: "notPermitted"),
            RunRecord(
                device: "i", platform: .ios, kind: .background, at: at, earliestBeginDate: at, success: false,
                expired: true),
            RunRecord(device: "a", platform: .android, kind: .submitted, at: at, earliestBeginDate: at, bucket: .rare),
            RunRecord(device: "a", platform: .android, kind: .submitted, at: at, earliestBeginDate: at, bucket: .rare),
        ])
        let causes = other.causes
        #expect(causes.count == 4, "\(causes)")
        #expect(
            causes[0].hasPrefix(
                "`submit_failed: notPermitted` (1 this week, 0 last week): the identifier is not permitted"))
        #expect(causes[1].hasPrefix("`submit_failed: unavailable` (1 this week, 0 last week): the app cannot schedule"))
        #expect(causes[2].hasPrefix("`expired` (1 this week, 0 last week): the job ran past its budget"))
        #expect(
            causes[3].hasPrefix("Low execution in `rare` (execution rate 0.0 % (0 / 2)")
                && causes[3].contains("App Standby"))
        #expect(other.firstExecutionRateFall == nil)
        #expect(other.markdown().contains("did not fall by 5 points or more"))
    }

    @Test(
        "An ordinary day after the luckiest one is no fall: the earlier days are pooled (84.4 %), so 80 % is 4.4 points below, though 6 below the best day's 86 %; a day at 70 % is one"
    )
    func fallAgainstThePooledRate() throws {
        func report(_ rates: [Int: Int]) -> FreshnessReport {
            var report = FreshnessReport(date: Self.date)
            for day in 1...14 {
                let percent = rates[day] ?? 84
                report.add(file: Self.week(day, devices: 400, days: 1, hours: { _ in 2 }, ran: { $0 % 100 < percent }))
            }
            return report
        }
        // The rule before: 86 % on day 4, then 80 % on day 6, is 6 points and 2.3 standard errors.
        #expect(report([4: 86, 6: 80]).firstExecutionRateFall == nil)
        let fall = try #require(report([4: 86, 6: 80, 12: 70]).firstExecutionRateFall)
        #expect(fall.day == LocalDate(parsing: "2026-03-12")! && abs(fall.rate - 0.7) < 1e-12)
        #expect(fall.before == LocalDate(parsing: "2026-03-01")!...LocalDate(parsing: "2026-03-11")!)
        #expect(abs(fall.beforeRate - (84.0 * 9 + 86 + 80) / 1_100) < 1e-12)
    }

    @Test(
        "A p90 of never is explained: the share of opens before a first run, and records that begin inside the week; the figures stay"
    )
    func neverExplained() throws {
        // Records from 2026-03-10 only (inside this week, 03-08..03-14): 3 of 20 opens never.
        func young(never: Int, from day: Int = 10, ran: @escaping (Int) -> Bool = { _ in true }) -> FreshnessReport {
            var report = FreshnessReport(date: Self.date)
            report.add(
                file: Self.week(day, devices: 20, days: 5, hours: { $0 < never ? nil : 5 }, ran: ran))
            return report
        }
        let report = young(never: 3)
        #expect(report.figures(.all, days: FreshnessReport.thisWeek).p90 == .never)
        let note = try #require(report.neverNote)
        #expect(
            note
                == "p90 is never: 3 of 20 samples (15.0 %) are app opens that came before their device's first "
                + "successful background run, and the p90 reads never once such samples reach its rank (the stalest "
                + "tenth of the week's samples). The records begin on 2026-03-10, inside this week: the opens of the devices' first days, "
                + "before any background run could answer, are in its sample.")
        // Still ⚠ from condition 2: a young fleet's never may be broken devices as well as its
        // install's opens, and without it a young fleet with half its devices broken warned of
        // nothing.
        #expect(report.conditions.contains(.p90AboveCacheHorizon(.never)))
        #expect(report.summaryLines(path: "r").contains(note) && report.markdown().contains(note))
        #expect(report.summary(path: "r")["neverNote"] as? String == note)
        // More opens before a first run: a larger share, the p90 still never.
        #expect(young(never: 6).neverNote?.contains("6 of 20 samples (30.0 %)") == true)
        // Exactly a tenth already reaches the p90's rank (h = 17.1 of 0...19): no "more than" in the text.
        #expect(young(never: 2).figures(.all, days: FreshnessReport.thisWeek).p90 == .never)
        #expect(young(never: 2).neverNote?.contains("2 of 20 samples (10.0 %)") == true)
        // Records that begin on the week's first day begin inside it too.
        #expect(
            young(never: 3, from: 8).neverNote?.contains("The records begin on 2026-03-08, inside this week") == true)
        // Devices that never ran are counted apart.
        #expect(
            young(never: 3, ran: { $0 >= 4 }).neverNote?.contains("4 of the week's 20 devices had no successful")
                == true)
        // Records in both weeks, or one long before them: the share alone, no beginning named.
        var old = FreshnessReport(date: Self.date)
        for firstDay in [1, 8] {
            old.add(file: Self.week(firstDay, devices: 20, hours: { $0 < 3 ? nil : 5 }, ran: { _ in true }))
        }
        #expect(old.neverNote?.hasSuffix("samples).") == true, "\(String(describing: old.neverNote))")
        #expect(old.conditions.contains(.p90AboveCacheHorizon(.never)), "\(old.conditions)")
        var early = young(never: 3)
        early.add(
            file: [Self.open(1, 5)].map {
                var r = $0
                r.at = ISO8601.date("2025-03-01T12:00:00Z")!
                return r
            })
        #expect(early.neverNote?.contains("The records begin") == false, "\(String(describing: early.neverNote))")
        // A p90 that is a number needs no note.
        #expect(young(never: 1).neverNote == nil)
        #expect(young(never: 1).markdown().contains("| devices with records | 20 | 0 |"))
    }

    @Test("A comparison with fewer than 20 samples a side is marked \"few samples\"; 20 a side is not")
    func fewSamples() {
        let few = Self.report(lastWeek: Self.sample, thisWeek: [1, 2, 3, 4, 5, 6, 7, 8, 27.5, 28.5])
        #expect(few.markdown().contains("(10 samples this week, 10 last week) (few samples: fewer than 20 a side)"))
        #expect(few.summary(path: "r")["fewSamples"] as? Bool == true)
        let enough = Self.report(lastWeek: Self.sample + Self.sample, thisWeek: Self.sample + Self.sample)
        #expect(!enough.markdown().contains("few samples:"))
        #expect(enough.markdown().contains("| all | 1 | 0 of 1 (0.0 %) | 20 |"), "\(enough.markdown())")
    }

    @Test(
        "A day without samples is a gap in the chart (left off the x axis), never 0; most records outside the weeks is said"
    )
    func gapsAndOutside() {
        var report = FreshnessReport(date: Self.date)
        report.add(file: [Self.open(2, 5), Self.open(9, 7)])
        let text = report.markdown()
        #expect(text.contains("    x-axis [\"03-02\", \"03-09\"]"), "\(text)")
        #expect(text.contains("    line [5.0, 7.0]"))
        #expect(text.contains("Not drawn: 2026-03-01 (no samples), 2026-03-03 (no samples)"))
        #expect(!report.mostRecordsOutside)
        // Records of 2025 in a 2026 report: most are outside, and the report says where they are.
        var wrongYear = FreshnessReport(date: Self.date)
        wrongYear.add(file: [Self.open(9, 7)])
        wrongYear.add(
            file: (1...3).map { _ in
                RunRecord(
                    device: "x", platform: .ios, kind: .foreground, at: ISO8601.date("2025-03-09T12:00:00Z")!,
                    stalenessHours: 1)
            })
        #expect(wrongYear.mostRecordsOutside)
        let sentence =
            "Most records (3 of 4) fall outside the two weeks: the records run from 2025-03-09 to 2026-03-09 (UTC)"
        #expect(wrongYear.markdown().contains("**" + sentence), "\(wrongYear.markdown())")
        #expect(wrongYear.summaryLines(path: "r").contains(sentence))
        #expect(wrongYear.summary(path: "r")["mostRecordsOutside"] as? Bool == true)
        #expect(
            wrongYear.summaryLines(path: "r").contains(
                sentence + "; a --date of 2026-03-09 covers their last two weeks."))
        // The report already ends on the last record's day: the records outside lie before the
        // weeks (a history), no date to suggest and nothing to say (a stray late record that set
        // the date is `lateLastRecord`'s).
        var stray = FreshnessReport(date: Self.date)
        stray.add(file: [Self.open(14, 7)])
        stray.add(
            file: (1...3).map { _ in
                RunRecord(
                    device: "x", platform: .ios, kind: .foreground, at: ISO8601.date("2025-03-09T12:00:00Z")!,
                    stalenessHours: 1)
            })
        #expect(stray.mostRecordsOutside && !stray.summaryLines(path: "r").contains("Most records"))
        stray.dateSource = .lastRecordDay
        #expect(!stray.summaryLines(path: "r").contains("Most records"))
        #expect(!stray.summaryLines(path: "r").contains("a --date of 2026-03-14"))
    }

    @Test("Execution rate, breakdown by platform and bucket, failures, windows in UTC days")
    func breakdown() throws {
        let at = ISO8601.date("2026-03-10T06:00:00Z")!
        func record(_ kind: RunRecord.Kind, _ device: String, bucket: StandbyBucket? = nil) -> RunRecord {
            RunRecord(
                device: device, platform: bucket == nil ? .ios : .android, kind: kind, at: at,
                earliestBeginDate: kind == .submitted ? at : nil, success: kind == .background ? true : nil,
                expired: kind == .background ? false : nil, lowPower: false, bucket: bucket,
                reason: kind == .submitFailed ? "unavailable" : nil)
        }
        var report = FreshnessReport(date: Self.date)
        report.add(file: [
            record(.submitted, "i1"), record(.submitted, "i1"), record(.background, "i1"), record(.dropped, "i1"),
            record(.submitFailed, "i1"),
        ])
        report.add(file: [
            record(.submitted, "a1", bucket: .rare), record(.background, "a1", bucket: .rare),
            record(.submitted, "a2", bucket: .active),
            Self.open(10, 30, device: "a2", platform: .android, bucket: .active),
        ])
        // 23:59:59.999 on the 14th is this week; 00:00 on the 15th and 23:59 on 28 Feb are outside.
        report.add(file: [
            RunRecord(device: "x", platform: .ios, kind: .dropped, at: ISO8601.date("2026-03-14T23:59:59.999Z")!),
            RunRecord(device: "x", platform: .ios, kind: .dropped, at: ISO8601.date("2026-03-15T00:00:00Z")!),
            RunRecord(device: "x", platform: .ios, kind: .dropped, at: ISO8601.date("2026-02-28T23:59:00Z")!),
        ])
        let all = report.figures(.all, days: FreshnessReport.thisWeek)
        // The rate's denominator is the requests: 4 submitted and 1 refused at submit.
        #expect(all.submitted == 4 && all.requests == 5 && all.succeeded == 2 && all.executionRate == 0.4)
        #expect(all.devices == 4 && all.dropped == 2 && all.submitFailed == ["unavailable": 1])
        #expect(report.outside == 2 && report.records == 12)
        #expect(report.figures(.platform(.ios), days: FreshnessReport.thisWeek).executionRate == 1.0 / 3)
        #expect(report.figures(.bucket(.rare), days: FreshnessReport.thisWeek).executionRate == 1)
        let active = report.figures(.bucket(.active), days: FreshnessReport.thisWeek)
        #expect(
            active.executionRate == 0 && active.p90 == .hours(30) && active.devices == 1 && active.noRunDevices == 1)
        let text = report.markdown()
        #expect(
            text.contains("| android, rare | 1 | 0 of 1 (0.0 %) | 0 | 0 | n/a | n/a | 100.0 % (1 / 1) | n/a |"),
            "\(text)")
        #expect(text.contains("| submit_failed: unavailable | 1 | 0 |"))
        #expect(text.contains("```mermaid\nxychart-beta\n"))
        #expect(text.contains("÷ requests (`submitted` and `submit_failed` records)"), "\(text)")
    }

    /// `devices` iOS devices d0… that each open the app, submit and run on each day of `days`
    /// (2026-03-DD), at 10:00 UTC; `bucket` makes them Android devices in it.
    static func daily(_ days: ClosedRange<Int>, devices: Range<Int>, bucket: StandbyBucket? = nil) -> [RunRecord] {
        devices.flatMap { index in
            days.flatMap { day -> [RunRecord] in
                let at = ISO8601.date(String(format: "2026-03-%02dT10:00:00Z", day))!
                let platform: Platform = bucket == nil ? .ios : .android
                return [
                    RunRecord(
                        device: "d\(index)", platform: platform, kind: .foreground, at: at, bucket: bucket,
                        stalenessHours: 2),
                    RunRecord(
                        device: "d\(index)", platform: platform, kind: .submitted, at: at, earliestBeginDate: at,
                        bucket: bucket),
                    RunRecord(
                        device: "d\(index)", platform: platform, kind: .background, at: at.addingTimeInterval(60),
                        earliestBeginDate: at, success: true, expired: false, bucket: bucket, stalenessHours: 0),
                ]
            }
        }
    }

    @Test(
        "Devices silent for two weeks or three still count as silent, and warn (a month's lookback); a device silent for longer than the four weeks drops out"
    )
    func silentForWeeks() throws {
        // The report's weeks: 2026-03-01..07 (last) and 08..14 (this); its lookback reaches back
        // to 2026-02-08. 30 devices ran daily; from `silentFrom` on, 12 of them wrote nothing.
        func report(silentFrom day: Int) -> FreshnessReport {
            var report = FreshnessReport(date: Self.date)
            var records = (0..<30).flatMap { index -> [RunRecord] in
                let last = index < 12 ? day - 1 : 14
                return Self.daily(1...max(1, last), devices: index..<(index + 1)).filter { _ in last >= 1 }
            }
            // February: every device ran on Feb 10 and Feb 20.
            for february in ["2026-02-10T10:00:00Z", "2026-02-20T10:00:00Z"] {
                let at = ISO8601.date(february)!
                records += (0..<30).map {
                    RunRecord(
                        device: "d\($0)", platform: .ios, kind: .background, at: at, earliestBeginDate: at,
                        success: true, expired: false, stalenessHours: 0)
                }
            }
            report.add(file: records)
            return report
        }
        // Silent this week only, since last week, since the week before: each warns, 12 of 30.
        for day in [8, 1] {
            let silent = report(silentFrom: day)
            let this = silent.figures(.all, days: FreshnessReport.thisWeek)
            #expect(this.silentDevices == 12 && this.recentDevices == 30, "from day \(day)")
            // Silent this week, after 7 opens a week: their data aged, the p90 with it.
            #expect(silent.trend.warning == (day == 8), "from day \(day)")
            #expect(
                silent.conditions.filter { if case .weekOverWeek = $0 { false } else { true } } == [
                    .devicesWentSilent(silent: 12, recent: 30)
                ], "from day \(day)")
            #expect(this.noRunShare == 12.0 / 30)
        }
        // Silent from before the two weeks (records on Feb 10 and 20 only): still in the lookback.
        let long = report(silentFrom: 0)
        #expect(long.figures(.all, days: FreshnessReport.thisWeek).silentDevices == 12)
        #expect(long.conditions.contains(.devicesWentSilent(silent: 12, recent: 30)))
        #expect(!long.conditions.contains { if case .mostDevicesOutside = $0 { true } else { false } })
        // Their last records 4 weeks and more before this week: no longer counted.
        var old = FreshnessReport(date: Self.date)
        let early = ISO8601.date("2026-02-07T10:00:00Z")!
        old.add(file: Self.daily(1...14, devices: 0..<18))
        old.add(
            file: (18..<30).map {
                RunRecord(
                    device: "d\($0)", platform: .ios, kind: .background, at: early, earliestBeginDate: early,
                    success: true, expired: false, stalenessHours: 0)
            })
        #expect(old.figures(.all, days: FreshnessReport.thisWeek).silentDevices == 0)
        #expect(old.conditions == [])
    }

    /// Device `index`'s records of days `days` (March 2026) of a phone whose refresh stopped
    /// before March: an open at 10:00 (its data 100 h old on Mar 1, a day older each day) and a
    /// request a day, no run.
    static func stale(_ days: ClosedRange<Int>, device index: Int) -> [RunRecord] {
        days.flatMap { day -> [RunRecord] in
            let at = ISO8601.date(String(format: "2026-03-%02dT10:00:00Z", day))!
            return [
                RunRecord(
                    device: "d\(index)", platform: .ios, kind: .foreground, at: at,
                    stalenessHours: 100 + 24 * Double(day - 1)),
                RunRecord(device: "d\(index)", platform: .ios, kind: .submitted, at: at, earliestBeginDate: at),
            ]
        }
    }

    @Test(
        "Devices that break and fall silent make this week's p50, p90 and execution rate worse, never better: each counts by its usual opens at its data's age, and its usual requests"
    )
    func silenceWorsens() throws {
        // 40 devices; the 4 whose refresh stopped are the stalest. Silence them this week.
        func report(silent: Bool) -> FreshnessReport {
            var report = FreshnessReport(date: Self.date)
            report.add(file: Self.daily(1...14, devices: 4..<40))
            for index in 0..<4 { report.add(file: Self.stale(silent ? 1...7 : 1...14, device: index)) }
            return report
        }
        let writing = report(silent: false).figures(.all, days: FreshnessReport.thisWeek)
        let silent = report(silent: true).figures(.all, days: FreshnessReport.thisWeek)
        // Each silent device: 7 opens and 7 requests a week in its lookback (one week of it).
        #expect([silent.silentDevices, silent.silentSamples, silent.silentRequests] == [Int](arrayLiteral: 4, 28, 28))
        #expect(silent.samples == writing.samples)
        #expect(try #require(silent.p90?.hours) >= (try #require(writing.p90?.hours)))
        #expect(try #require(silent.p50?.hours) >= (try #require(writing.p50?.hours)))
        #expect(try #require(silent.executionRate) <= (try #require(writing.executionRate)))
        #expect(try #require(silent.noRunShare) >= (try #require(writing.noRunShare)))
        // Their samples are their data's age: Mar 7 10:00 less 244 h, to the week's instants.
        let lastRefresh = ISO8601.date("2026-03-07T10:00:00Z")!.addingTimeInterval(-244 * 3_600)
        let firstSample = ISO8601.date("2026-03-08T12:00:00Z")!
        var alone = FreshnessReport(date: Self.date)
        for index in 0..<4 { alone.add(file: Self.stale(1...7, device: index)) }
        let day8 = alone.figures(.all, days: 7...7)
        #expect(day8.silentSamples == 4)
        #expect(day8.p90 == .hours(firstSample.timeIntervalSince(lastRefresh) / 3_600))
        // Last week's figures hold none (its lookback, February, has no record).
        #expect(report(silent: true).figures(.all, days: FreshnessReport.lastWeek).silentSamples == 0)
        // Silent devices whose records show no refresh give never samples, and the note says so.
        var never = FreshnessReport(date: Self.date)
        never.add(file: Self.daily(1...14, devices: 10..<20))
        for index in 0..<10 {
            never.add(
                file: (1...7).map { day in
                    Self.open(day, nil, device: "d\(index)")
                })
        }
        let neverWeek = never.figures(.all, days: FreshnessReport.thisWeek)
        #expect(neverWeek.p90 == .never && neverWeek.silentNever == 70 && neverWeek.neverRefreshed == 0)
        #expect(
            never.neverNote?.contains("70 are the usual opens of silent devices") == true,
            "\(String(describing: never.neverNote))")
    }

    @Test(
        "The same share of devices silent in both weeks, other devices in each: last week counts its own silent devices by its own lookback, and the week over week reads no change"
    )
    func steadySilence() throws {
        // 40 devices ran and opened the app daily from Feb 8; 4 fell silent last week, 4 others
        // this week (the first four came back).
        var report = FreshnessReport(date: Self.date)
        let start = ISO8601.date("2026-02-08T10:00:00Z")!
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        for index in 0..<40 {
            let records = (0..<35).flatMap { offset -> [RunRecord] in
                let silent = (index < 4 && (21..<28).contains(offset)) || ((4..<8).contains(index) && offset >= 28)
                guard !silent else { return [] }
                let at = calendar.date(byAdding: .day, value: offset, to: start)!
                return [
                    RunRecord(device: "d\(index)", platform: .ios, kind: .foreground, at: at, stalenessHours: 2),
                    RunRecord(device: "d\(index)", platform: .ios, kind: .submitted, at: at, earliestBeginDate: at),
                    RunRecord(
                        device: "d\(index)", platform: .ios, kind: .background, at: at.addingTimeInterval(60),
                        earliestBeginDate: at, success: true, expired: false, stalenessHours: 0),
                ]
            }
            report.add(file: records)
        }
        let this = report.figures(.all, days: FreshnessReport.thisWeek)
        let last = report.figures(.all, days: FreshnessReport.lastWeek)
        #expect([this.silentDevices, last.silentDevices] == [Int](arrayLiteral: 4, 4))
        #expect([this.silentSamples, last.silentSamples] == [Int](arrayLiteral: 28, 28))
        #expect(this.p90 == last.p90 && this.executionRate == last.executionRate)
        #expect(report.trend == .compared(changeSeconds: 0, warning: false))
    }

    @Test("A record repeated in a copy of a file whose bytes differ is read once; the figures are the same")
    func repeatedRecords() throws {
        var once = FreshnessReport(date: Self.date)
        var twice = FreshnessReport(date: Self.date)
        for index in 0..<5 {
            let records = Self.daily(1...14, devices: index..<(index + 1))
            once.add(file: records)
            twice.add(file: records)
            twice.add(file: Array(records.suffix(6)))
        }
        #expect(once.repeatedRecords == 0 && twice.repeatedRecords == 30)
        #expect(twice.records == once.records)
        #expect(
            twice.figures(.all, days: FreshnessReport.thisWeek) == once.figures(.all, days: FreshnessReport.thisWeek))
        #expect(twice.markdown().contains("30 repeated records read once"))
        // A copy read first, of a file that since held one open twice (the phone's own
        // repeat): the file's second copy of it counts.
        let open = Self.open(10, 2)
        var ownRepeat = FreshnessReport(date: Self.date)
        ownRepeat.add(file: [open])
        ownRepeat.add(file: [open, open])
        #expect(ownRepeat.repeatedRecords == 1 && ownRepeat.records == 2)
        // Many records at one instant (a stuck clock), and a copy: each compared by its own kind.
        let stuck = (0..<5_000).map { Self.open(10, Double($0), device: "s") }
        var many = FreshnessReport(date: Self.date)
        many.add(file: stuck)
        many.add(file: stuck.reversed())
        #expect(many.repeatedRecords == 5_000 && many.records == 5_000)
    }

    @Test(
        "A device that moved to another standby bucket is in that bucket's figures, not silent in its old one; a bucket whose devices all fell silent keeps its row and its cause"
    )
    func bucketsAndSilence() throws {
        var moved = FreshnessReport(date: Self.date)
        moved.add(file: Self.daily(1...7, devices: 0..<10, bucket: .rare))
        moved.add(file: Self.daily(8...14, devices: 0..<10, bucket: .active))
        let rare = moved.figures(.bucket(.rare), days: FreshnessReport.thisWeek)
        #expect(rare.silentDevices == 0 && rare.devices == 0)
        #expect(moved.figures(.bucket(.active), days: FreshnessReport.thisWeek).devices == 10)
        #expect(moved.causes.filter { $0.hasPrefix("Low execution") } == [], "\(moved.causes)")
        let thisWeek = try #require(moved.markdown().components(separatedBy: "## Breakdown, last week").first)
        #expect(!thisWeek.contains("| android, rare |"), "\(thisWeek)")
        // Moved from restricted to rare in the lookback, then silent: rare's, and only rare's.
        var movedThenSilent = FreshnessReport(date: Self.date)
        movedThenSilent.add(file: Self.daily(1...14, devices: 0..<20, bucket: .active))
        movedThenSilent.add(file: Self.daily(1...3, devices: 20..<25, bucket: .restricted))
        movedThenSilent.add(file: Self.daily(4...7, devices: 20..<25, bucket: .rare))
        let silentIn = [StandbyBucket.restricted, .rare, .active].map {
            movedThenSilent.figures(.bucket($0), days: FreshnessReport.thisWeek).silentDevices
        }
        #expect(silentIn == [0, 5, 0])
        #expect(movedThenSilent.figures(.platform(.android), days: FreshnessReport.thisWeek).silentDevices == 5)
        #expect(!movedThenSilent.causes.contains { $0.hasPrefix("Low execution in `restricted`") })
        #expect(movedThenSilent.causes.contains { $0.hasPrefix("Low execution in `rare`") })
        // The same by app version: moved to 1.1, then silent, is 1.1's.
        var versions = FreshnessReport(date: Self.date)
        versions.add(
            file: Self.daily(1...14, devices: 0..<20).map {
                var record = $0
                record.appVersion = "1.0"
                return record
            })
        versions.add(
            file: Self.daily(1...7, devices: 20..<30).map {
                var record = $0
                record.appVersion = $0.at < ISO8601.date("2026-03-04T00:00:00Z")! ? "1.0" : "1.1"
                return record
            })
        #expect(versions.figures(appVersion: "1.0", days: FreshnessReport.thisWeek)?.silentDevices == 0)
        #expect(versions.figures(appVersion: "1.1", days: FreshnessReport.thisWeek)?.silentDevices == 10)
        // Every restricted device silent this week; the active ones ran.
        var gone = FreshnessReport(date: Self.date)
        gone.add(file: Self.daily(1...14, devices: 0..<20, bucket: .active))
        gone.add(file: Self.daily(1...7, devices: 20..<25, bucket: .restricted))
        let restricted = gone.figures(.bucket(.restricted), days: FreshnessReport.thisWeek)
        #expect(restricted.silentDevices == 5 && restricted.records == 0)
        let text = gone.markdown()
        #expect(text.contains("| android, restricted | 0 | 5 of 5 (100.0 %; 5 with no record this week) |"), "\(text)")
        #expect(gone.causes.contains { $0.hasPrefix("Low execution in `restricted`") }, "\(gone.causes)")
        let groups = try #require(gone.summary(path: "r.md")["groups"] as? [[String: Any]])
        #expect(groups.contains { $0["group"] as? String == "android, restricted" && $0["silentDevices"] as? Int == 5 })
    }

    @Test(
        "The execution rate falls as requests are refused at submit (Background App Refresh off): failed submits count")
    func submitFailuresLowerTheRate() {
        func report(refused: Int) -> FreshnessReport {
            var report = FreshnessReport(date: Self.date)
            for index in 0..<20 {
                let at = ISO8601.date("2026-03-10T10:00:00Z")!
                if index < refused {
                    report.add(file: [
                        RunRecord(
                            device: "d\(index)", platform: .ios, kind: .submitFailed, at: at, reason: "unavailable")
                    ])
                } else {
                    report.add(file: Self.daily(10...10, devices: index..<(index + 1)))
                }
            }
            return report
        }
        let rates = [0, 5, 10, 20].map {
            report(refused: $0).figures(.all, days: FreshnessReport.thisWeek).executionRate
        }
        #expect(rates == [1, 0.75, 0.5, 0])
        #expect(report(refused: 20).conditions.contains(.noneRan(requests: 20)))
    }

    @Test("An instant with digits past the millisecond keeps its UTC day: 23:59:59.9995Z is 23:59:59.999Z")
    func subMillisecondDigits() throws {
        let text =
            #"[{"device":"d1","platform":"ios","kind":"foreground","at":"2026-03-14T23:59:59.9995Z","lowPower":false,"stalenessHours":1}]"#
        let records = try RunRecordFile.decode(Data(text.utf8))
        #expect(RunRecordFile.instantString(records[0].at) == "2026-03-14T23:59:59.999Z")
        var report = FreshnessReport(date: Self.date)
        report.add(file: records)
        #expect(report.outside == 0 && report.figures(.all, days: FreshnessReport.thisWeek).samples == 1)
    }

    @Test(
        "A date set by one record from a clock ahead, while half the devices' last records are days earlier, is said; a date given, or a fleet that ends together, says nothing"
    )
    func lateLastRecord() throws {
        var report = FreshnessReport(date: LocalDate(parsing: "2026-03-17")!)
        report.dateSource = .lastRecordDay
        report.add(file: Self.daily(1...14, devices: 0..<10))
        report.add(file: [
            RunRecord(
                device: "d0", platform: .ios, kind: .foreground, at: ISO8601.date("2026-03-17T08:00:00Z")!,
                stalenessHours: 3)
        ])
        let late = try #require(report.lateLastRecord)
        #expect(late.device == "d0" && RunRecordFile.utcDay(late.median) == "2026-03-14")
        #expect(report.markdown().contains("or a clock ahead set the date: then give --date 2026-03-14."))
        #expect(report.summaryLines(path: "r.md").contains("give --date 2026-03-14"))
        report.dateSource = .given
        #expect(report.lateLastRecord == nil)
        var together = FreshnessReport(date: Self.date)
        together.dateSource = .lastRecordDay
        together.add(file: Self.daily(1...14, devices: 0..<10))
        #expect(together.lateLastRecord == nil)
    }

    @Test("A p90 change under a second's rounding to 0.0 h reads +0.0 h, never −0.0 h")
    func noNegativeZero() {
        #expect(FreshnessReport.signedHours(seconds: -100) == "+0.0 h")
        #expect(FreshnessReport.signedHours(seconds: -180) == "−0.1 h")
        #expect(FreshnessReport.signedHours(seconds: 100) == "+0.0 h")
    }

    @Test("The same records in another file order give the same report")
    func deterministic() {
        let files = [[Self.open(2, 3), Self.open(9, 1)], [Self.open(10, 8, device: "d2")]]
        var a = FreshnessReport(date: Self.date)
        var b = FreshnessReport(date: Self.date)
        for file in files { a.add(file: file) }
        for file in files.reversed() { b.add(file: file) }
        #expect(a.markdown() == b.markdown())
    }

    @Test("Files read into separate reports and merged in order give the report of one reader")
    func merged() {
        let files = (0..<9).map { file in
            (0..<5).map { record in
                Self.open(
                    1 + (file * 5 + record) % 14, record == 4 ? nil : Double(file * 7 + record) / 4,
                    device: "d\(file % 4)", platform: file % 2 == 0 ? .ios : .android,
                    bucket: file % 2 == 0 ? nil : StandbyBucket.all[file % StandbyBucket.all.count])
            }
        }
        var one = FreshnessReport(date: Self.date)
        for file in files { one.add(file: file) }
        one.skip(file: "bad.json", reason: "x")
        var merged = FreshnessReport(date: Self.date)
        for part in [0..<2, 2..<3, 3..<9] {
            var report = FreshnessReport(date: Self.date)
            for file in files[part] { report.add(file: file) }
            if part.lowerBound == 3 { report.skip(file: "bad.json", reason: "x") }
            merged.merge(report)
        }
        #expect(merged.markdown() == one.markdown())
        #expect(merged.records == one.records && merged.files == one.files && merged.skipped.count == 1)
        for group in FreshnessReport.Group.ordered {
            #expect(merged.figures(group, days: 0...13) == one.figures(group, days: 0...13), "\(group)")
        }
        // Parts whose samples were sorted (as each reading thread does), or some of them, merge
        // into the same report.
        for sortedParts in [[true, true, true], [false, true, true], [true, false, true]] {
            var sorted = FreshnessReport(date: Self.date)
            for (part, sorts) in zip([0..<2, 2..<3, 3..<9], sortedParts) {
                var report = FreshnessReport(date: Self.date)
                for file in files[part] { report.add(file: file) }
                if part.lowerBound == 3 { report.skip(file: "bad.json", reason: "x") }
                if sorts { report.sortSamples() }
                sorted.merge(report)
            }
            #expect(sorted.markdown() == one.markdown(), "\(sortedParts)")
            for group in FreshnessReport.Group.ordered {
                for days in [0...13, 0...6, 7...13, 3...3] {
                    #expect(sorted.figures(group, days: days) == one.figures(group, days: days), "\(group) \(days)")
                }
            }
        }
    }
}

// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

extension RefreshJob {
    /// The action `input` returns on a copy of this machine.
    func on(_ input: (inout RefreshJob) -> Action) -> Action {
        var copy = self
        return input(&copy)
    }

    /// A copy of this machine after `input`.
    func after(_ input: (inout RefreshJob) -> Action) -> RefreshJob {
        var copy = self
        _ = input(&copy)
        return copy
    }
}

/// The refresh job's step machine, one transition per test (the app performing the steps is in
/// `RefreshJobTests`). Costs in binary fractions, so the sums are exact.
@Suite("Refresh job machine")
struct RefreshJobMachineTests {
    typealias Completion = RefreshJob.Completion
    static let costs = StepCosts(renew: 0.5, notices: 0.25, dates: 1, sunlight: 0.125)

    static func idle() -> RefreshJob { RefreshJob(costs: costs) }
    static func renewing(_ budget: TimeInterval? = nil) -> RefreshJob { idle().after { $0.start(budget: budget) } }
    static func postingNotices(_ budget: TimeInterval? = nil) -> RefreshJob {
        renewing(budget).after { $0.renewed(appAlive: true) }
    }
    static func publishingDates(_ budget: TimeInterval? = nil) -> RefreshJob {
        postingNotices(budget).after { $0.noticesPosted() }
    }
    static func awaitingWeather(_ budget: TimeInterval? = nil) -> RefreshJob {
        publishingDates(budget).after { $0.datesPublished(weather: .fetch(reason: "no cache")) }
    }
    static func skippingWeather(_ budget: TimeInterval? = nil) -> RefreshJob {
        publishingDates(budget).after { $0.datesPublished(weather: .skip(reason: "outside 06:00-18:00")) }
    }
    static func applyingForecast(_ budget: TimeInterval? = nil) -> RefreshJob {
        awaitingWeather(budget).after { $0.weatherArrived(cost: 2) }
    }

    @Test("idle, start: renew first")
    func start() { #expect(Self.idle().on { $0.start(budget: 30) } == .renew) }

    @Test("idle, start with a budget smaller than renew: expired at renew, the budget spent")
    func startExpires() {
        #expect(
            Self.idle().on { $0.start(budget: 0.25) }
                == .complete(Completion(outcome: .failure, elapsed: 0.25, expiredAt: "renew", attempted: 0.5)))
    }

    @Test("renewing, renewed: the bedtime notices")
    func renewed() { #expect(Self.renewing().on { $0.renewed(appAlive: true) } == .postNotices) }

    @Test("renewing, the submit killed the app: the run fails, not expired")
    func renewCrashed() {
        #expect(
            Self.renewing(30).on { $0.renewed(appAlive: false) }
                == .complete(Completion(outcome: .failure, elapsed: 0.5, expiredAt: nil, attempted: nil)))
    }

    @Test("renewing, renewed, the notices do not fit: expired at notices")
    func noticesExpire() {
        #expect(
            Self.renewing(0.625).on { $0.renewed(appAlive: true) }
                == .complete(Completion(outcome: .failure, elapsed: 0.625, expiredAt: "notices", attempted: 0.75)))
    }

    @Test("posting notices, posted: the wake dates")
    func noticesPosted() { #expect(Self.postingNotices().on { $0.noticesPosted() } == .publishDates) }

    @Test("posting notices, posted, the dates do not fit: expired at dates")
    func datesExpire() {
        #expect(
            Self.postingNotices(1).on { $0.noticesPosted() }
                == .complete(Completion(outcome: .failure, elapsed: 1, expiredAt: "dates", attempted: 1.75)))
    }

    @Test("publishing dates, the policy says fetch: the forecast is asked for, with the reason")
    func fetch() {
        #expect(
            Self.publishingDates().on { $0.datesPublished(weather: .fetch(reason: "expired")) }
                == .fetchWeather(reason: "expired"))
    }

    @Test("publishing dates, the cache is fresh: the weather step is skipped")
    func useCache() {
        #expect(
            Self.publishingDates().on { $0.datesPublished(weather: .useCache(reason: "fresh")) }
                == .skipWeather(reason: "fresh"))
    }

    @Test("publishing dates, outside 06:00-18:00: the weather step is skipped")
    func skip() {
        #expect(
            Self.publishingDates().on { $0.datesPublished(weather: .skip(reason: "outside 06:00-18:00")) }
                == .skipWeather(reason: "outside 06:00-18:00"))
    }

    @Test("the fetch asked for: the job waits for the weather")
    func waits() { #expect(Self.awaitingWeather().state == .awaitingWeather) }

    @Test("skipping the weather, said: the sunlight notice")
    func weatherSkipped() { #expect(Self.skippingWeather().on { $0.weatherSkipped() } == .updateSunlight) }

    @Test("skipping the weather, said, the sunlight step does not fit: expired at sunlight")
    func skippedSunlightExpires() {
        #expect(
            Self.skippingWeather(1.75).on { $0.weatherSkipped() }
                == .complete(Completion(outcome: .failure, elapsed: 1.75, expiredAt: "sunlight", attempted: 1.875)))
    }

    @Test("awaiting the weather, arrived: the forecast is applied")
    func arrived() { #expect(Self.awaitingWeather().on { $0.weatherArrived(cost: 2) } == .applyForecast) }

    @Test("awaiting the weather, arrived after the budget: expired at weather, the provider's cost attempted")
    func weatherExpires() {
        #expect(
            Self.awaitingWeather(3).on { $0.weatherArrived(cost: 2) }
                == .complete(Completion(outcome: .failure, elapsed: 3, expiredAt: "weather", attempted: 3.75)))
    }

    @Test("awaiting the weather, a write failed: the run is abandoned as failed")
    func abandon() {
        #expect(
            Self.awaitingWeather().on { $0.abandon() }
                == .abandon(Completion(outcome: .failure, elapsed: 1.75, expiredAt: nil, attempted: nil)))
    }

    @Test("applying the forecast, applied: the sunlight notice")
    func forecastApplied() {
        #expect(Self.applyingForecast().on { $0.forecastApplied(outcome: .retry) } == .updateSunlight)
    }

    @Test("applying the forecast, applied, the sunlight step does not fit: expired at sunlight, whatever the fetch")
    func appliedSunlightExpires() {
        #expect(
            Self.applyingForecast(3.8).on { $0.forecastApplied(outcome: .success) }
                == .complete(Completion(outcome: .failure, elapsed: 3.8, expiredAt: "sunlight", attempted: 3.875)))
    }

    @Test("updating the sunlight notice after a fetch, updated: complete with the fetch's outcome (Android retry)")
    func completeWithOutcome() {
        #expect(
            Self.applyingForecast().after { $0.forecastApplied(outcome: .retry) }.on { $0.sunlightUpdated() }
                == .complete(Completion(outcome: .retry, elapsed: 3.875, expiredAt: nil, attempted: nil)))
    }

    @Test("updating the sunlight notice after a skip, updated: complete with success")
    func completeSuccess() {
        #expect(
            Self.skippingWeather().after { $0.weatherSkipped() }.on { $0.sunlightUpdated() }
                == .complete(Completion(outcome: .success, elapsed: 1.875, expiredAt: nil, attempted: nil)))
    }

    @Test("a completed run: every input is stray")
    func completedIgnores() {
        #expect(Self.renewing().after { $0.renewed(appAlive: false) }.on { $0.start(budget: nil) } == .none)
    }

    @Test("renewing, a second start: stray")
    func strayStart() { #expect(Self.renewing().on { $0.start(budget: nil) } == .none) }

    @Test("renewing, a forecast: stray (none was asked for)")
    func strayWeather() { #expect(Self.renewing().on { $0.weatherArrived(cost: 1) } == .none) }

    @Test("skipping the weather, abandon: stray (only a job waiting for the weather is abandoned)")
    func strayAbandon() { #expect(Self.skippingWeather().on { $0.abandon() } == .none) }
}

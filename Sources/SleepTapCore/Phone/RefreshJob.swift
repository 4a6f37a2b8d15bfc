// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS

/// One run of the consolidated refresh job, sans I/O: which step comes next and whether it fits
/// the background task's budget. `PhoneApp` performs each `Action` (it owns the OS, the sync
/// state, the weather provider) and reports back through the input named in the action, so every
/// input returns exactly one action.
///
/// The steps, in this project's order: renew (submit the next request), the bedtime notices, the
/// wake dates for the watch, the weather (a fetch, or skipped: from the cache, outside
/// 06:00-18:00), the sunlight notice. Each costs virtual seconds (`StepCosts`; the weather step
/// what the provider took), charged before the step runs: a step that does not fit before the
/// expiration warning is not run, and the run completes unsuccessfully, expired at that step.
struct RefreshJob: Equatable, Sendable {
    /// Where the run stands: the step whose result it waits for.
    enum State: Equatable, Sendable {
        /// Not started (`start(budget:)`).
        case idle
        /// The next request is being submitted (`renewed(appAlive:)`).
        case renewing
        /// The bedtime notices are being updated (`noticesPosted()`).
        case postingNotices
        /// The wake dates are being published (`datesPublished(weather:)`).
        case publishingDates
        /// The weather step was skipped; the skip is being said (`weatherSkipped()`).
        case skippingWeather
        /// The forecast was asked for (`weatherArrived(cost:)`, or `abandon()`).
        case awaitingWeather
        /// The forecast (or the provider's error) is being stored (`forecastApplied(outcome:)`).
        case applyingForecast
        /// The sunlight notice is being updated; the run then ends with `outcome`
        /// (`sunlightUpdated()`).
        case updatingSunlight(outcome: RunOutcome)
        /// The run ended (`complete` or `abandon` was returned); no input applies.
        case completed
    }

    /// How a run ended, for the OS, the run history and the events.
    struct Completion: Equatable, Sendable {
        /// What the OS hears (`setTaskCompleted`, a Worker's `Result`).
        var outcome: RunOutcome
        /// Virtual seconds the run took (the budget when it expired).
        var elapsed: TimeInterval
        /// The step that did not fit the budget, nil when none expired the run.
        var expiredAt: String?
        /// The seconds the run would have taken had that step finished (more than the budget).
        var attempted: TimeInterval?
    }

    /// What the app does next.
    enum Action: Equatable, Sendable {
        /// Submit the next request (and the processing request); report `renewed(appAlive:)`.
        case renew
        /// Update the bedtime notices; report `noticesPosted()`.
        case postNotices
        /// Publish the wake dates to the watch (and set the companion alarm), then decide the
        /// weather step; report `datesPublished(weather:)`.
        case publishDates
        /// Ask the provider for a forecast (`reason` for `weather.fetched`); report
        /// `weatherArrived(cost:)`.
        case fetchWeather(reason: String)
        /// Say that the weather step is skipped (`weather.skipped` {reason}); report
        /// `weatherSkipped()`.
        case skipWeather(reason: String)
        /// Store the forecast or say the provider's error; report `forecastApplied(outcome:)`.
        case applyForecast
        /// Update the sunlight notice; report `sunlightUpdated()`.
        case updateSunlight
        /// End the run: the expiration handler's event, the OS told the outcome, the history.
        case complete(Completion)
        /// End a run that waited for the weather without its remaining steps (a write before
        /// the fetch failed): the OS hears it failed, no history is written.
        case abandon(Completion)
        /// Nothing: the input does not apply in this state (a stray report).
        case none
    }

    /// Where the run stands.
    private(set) var state = State.idle
    /// The steps' costs.
    let costs: StepCosts
    /// The run's budget in virtual seconds (the OS's budget less the expiration warning), nil =
    /// no limit.
    private(set) var budget: TimeInterval?
    /// Virtual seconds charged so far.
    private(set) var elapsed: TimeInterval = 0
    /// The step that did not fit, once one did not.
    private var expiredAt: String?
    /// The seconds the run would have taken had that step finished.
    private var attempted: TimeInterval?

    /// A run not started yet, charging `costs`.
    init(costs: StepCosts) {
        self.costs = costs
    }

    // MARK: inputs

    /// The handler is entered (or the user opened the app, or the watch's REQUEST woke it) with
    /// `budget` virtual seconds before the expiration warning (nil = no limit): renew first.
    mutating func start(budget: TimeInterval?) -> Action {
        switch state {
        case .idle:
            self.budget = budget
            return next(.renew, .renewing, cost: costs.renew, step: "renew")
        case .renewing, .postingNotices, .publishingDates, .skippingWeather, .awaitingWeather, .applyingForecast,
            .updatingSunlight, .completed:
            return .none
        }
    }

    /// Renew ended; `appAlive` is false when a submit killed the app (late-crash), which ends the
    /// run unsuccessfully.
    mutating func renewed(appAlive: Bool) -> Action {
        switch state {
        case .renewing:
            guard appAlive else { return complete(.failure) }
            return next(.postNotices, .postingNotices, cost: costs.notices, step: "notices")
        case .idle, .postingNotices, .publishingDates, .skippingWeather, .awaitingWeather, .applyingForecast,
            .updatingSunlight, .completed:
            return .none
        }
    }

    /// The bedtime notices were updated.
    mutating func noticesPosted() -> Action {
        switch state {
        case .postingNotices:
            return next(.publishDates, .publishingDates, cost: costs.dates, step: "dates")
        case .idle, .renewing, .publishingDates, .skippingWeather, .awaitingWeather, .applyingForecast,
            .updatingSunlight, .completed:
            return .none
        }
    }

    /// The wake dates were published; `weather` is `WeatherPolicy`'s decision for this run.
    mutating func datesPublished(weather: WeatherPolicy.Decision) -> Action {
        switch state {
        case .publishingDates:
            switch weather {
            case .fetch(let reason):
                state = .awaitingWeather
                return .fetchWeather(reason: reason)
            case .useCache(let reason), .skip(let reason):
                state = .skippingWeather
                return .skipWeather(reason: reason)
            }
        case .idle, .renewing, .postingNotices, .skippingWeather, .awaitingWeather, .applyingForecast,
            .updatingSunlight, .completed:
            return .none
        }
    }

    /// The skipped weather step was said: the sunlight notice next.
    mutating func weatherSkipped() -> Action {
        switch state {
        case .skippingWeather:
            return next(.updateSunlight, .updatingSunlight(outcome: .success), cost: costs.sunlight, step: "sunlight")
        case .idle, .renewing, .postingNotices, .publishingDates, .awaitingWeather, .applyingForecast,
            .updatingSunlight, .completed:
            return .none
        }
    }

    /// The forecast (or the provider's error) arrived after `cost` virtual seconds, charged now.
    mutating func weatherArrived(cost: TimeInterval) -> Action {
        switch state {
        case .awaitingWeather:
            return next(.applyForecast, .applyingForecast, cost: cost, step: "weather")
        case .idle, .renewing, .postingNotices, .publishingDates, .skippingWeather, .applyingForecast,
            .updatingSunlight, .completed:
            return .none
        }
    }

    /// The forecast was stored (or its error said); the run will end with `outcome` (Android: a
    /// failed fetch may ask for a retry, `WorkerRetryRule`).
    mutating func forecastApplied(outcome: RunOutcome) -> Action {
        switch state {
        case .applyingForecast:
            return next(.updateSunlight, .updatingSunlight(outcome: outcome), cost: costs.sunlight, step: "sunlight")
        case .idle, .renewing, .postingNotices, .publishingDates, .skippingWeather, .awaitingWeather,
            .updatingSunlight, .completed:
            return .none
        }
    }

    /// The sunlight notice was updated: the run ends.
    mutating func sunlightUpdated() -> Action {
        switch state {
        case .updatingSunlight(let outcome):
            return complete(outcome)
        case .idle, .renewing, .postingNotices, .publishingDates, .skippingWeather, .awaitingWeather,
            .applyingForecast, .completed:
            return .none
        }
    }

    /// A write before the fetch failed: a run waiting for the weather ends unsuccessfully
    /// without its remaining steps.
    mutating func abandon() -> Action {
        switch state {
        case .awaitingWeather:
            state = .completed
            return .abandon(completion(.failure))
        case .idle, .renewing, .postingNotices, .publishingDates, .skippingWeather, .applyingForecast,
            .updatingSunlight, .completed:
            return .none
        }
    }

    // MARK: the budget

    /// `action` and `state` when `cost` fits the budget (charged, to a microsecond: summed costs
    /// carry rounding, and an Android budget is whole milliseconds); otherwise the run expires at
    /// `step`: the budget is spent and the run completes unsuccessfully.
    private mutating func next(_ action: Action, _ state: State, cost: TimeInterval, step: String) -> Action {
        if let budget, elapsed + cost > budget + 1e-6 {
            expiredAt = step
            attempted = elapsed + cost
            elapsed = budget
            return complete(.failure)
        }
        elapsed += cost
        self.state = state
        return action
    }

    private mutating func complete(_ outcome: RunOutcome) -> Action {
        state = .completed
        return .complete(completion(outcome))
    }

    private func completion(_ outcome: RunOutcome) -> Completion {
        Completion(outcome: outcome, elapsed: elapsed, expiredAt: expiredAt, attempted: attempted)
    }
}

public import Foundation
public import SleepTapCore

/// The simulated OS the phone runs on (`--platform`, `--registration`, …).
public struct OSOptions: Equatable, Sendable {
    /// `ios` (BGTaskScheduler) or `android` (WorkManager).
    public var platform = "ios"
    /// How the refresh handler is registered (seed 000): early (AppDelegate), late-silent
    /// (SwiftUI `.backgroundTask` on iOS 26.6), late-crash.
    public var registration = RegistrationMode.early
    /// iOS app-refresh budget, virtual seconds (default 30).
    public var budget: TimeInterval = 30
    public var lowPower = false
    /// Background App Refresh (iOS setting); off = submit fails `unavailable`.
    public var backgroundRefresh = true
    public var charging = false
    /// Android App Standby bucket; nil = the scheduler's default.
    public var bucket: StandbyBucket?
    /// Android periodic interval, seconds (raised to 900).
    public var interval: TimeInterval = 6 * 3_600
    /// Seed of the OS's opportunity model.
    public var seed: UInt64 = 1
    /// Virtual seconds each job step costs.
    public var stepCosts = StepCosts()

    public init() {}

    /// The scheduler these options describe.
    public func makeScheduler(taskIdentifier: String) -> any BackgroundScheduler {
        if platform == "android" {
            var configuration = AndroidWorkScheduler.Configuration(repeatInterval: interval)
            if let bucket { configuration.initialBucket = bucket }
            return AndroidWorkScheduler(configuration: configuration)
        }
        var configuration = IOSBackgroundScheduler.Configuration(permittedIdentifiers: [taskIdentifier])
        configuration.registrationMode = registration
        configuration.runtimeBudget = budget
        return IOSBackgroundScheduler(configuration: configuration, seed: seed)
    }

    /// The app configuration these options describe, with `horizonDays` of wake-ups per batch.
    public func appConfiguration(horizonDays: Int = BatchPlanner.defaultHorizonDays) -> PhoneAppConfiguration {
        var configuration = PhoneAppConfiguration()
        configuration.stepCosts = stepCosts
        configuration.horizonDays = horizonDays
        return configuration
    }
}

/// Which weather provider the phone uses (`--weather`).
public struct WeatherOptions: Equatable, Sendable {
    /// nil = the embedded offline provider; a URL = Open-Meteo at that base URL.
    public var openMeteoBase: URL?
    /// The offline provider's cost per fetch, virtual seconds.
    public var offlineCost: TimeInterval = 0.3

    public init() {}

    public func makeProvider(seed: UInt64) -> any WeatherProvider {
        if let base = openMeteoBase { return OpenMeteoClient(baseURL: base) }
        return OfflineWeatherProvider(seed: seed, cost: offlineCost)
    }
}

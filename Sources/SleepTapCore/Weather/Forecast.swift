// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// One hour of a forecast, as Open-Meteo's `hourly` block gives it (https://open-meteo.com/en/docs).
/// A value the source did not give (JSON `null`) is nil.
public struct HourlyWeather: Codable, Equatable, Sendable {
    /// Start of the hour, an instant (the hour is UTC-aligned: Open-Meteo is asked for `timezone=GMT`).
    public var time: Date
    /// Total cloud cover, percent 0...100 (Open-Meteo `cloud_cover`).
    public var cloudCover: Int?
    /// Probability of precipitation in the hour, percent 0...100 (Open-Meteo
    /// `precipitation_probability`).
    public var precipitationProbability: Int?
    /// WMO weather interpretation code, WMO 4677 as Open-Meteo uses it (`weather_code`): 0 clear,
    /// 1–3 mainly clear to overcast, 45/48 fog, 51–57 drizzle, 61–67 rain, 71–77 snow, 80–86
    /// showers, 95–99 thunderstorm.
    public var weatherCode: Int?
    /// Air temperature at 2 m, degrees Celsius (Open-Meteo `temperature_2m`).
    public var temperature: Double?

    /// - Parameters:
    ///   - time: start of the hour (instant).
    ///   - cloudCover: percent, or nil if unknown.
    ///   - precipitationProbability: percent, or nil if unknown.
    ///   - weatherCode: WMO code, or nil if unknown.
    ///   - temperature: °C, or nil if unknown.
    public init(
        time: Date, cloudCover: Int? = nil, precipitationProbability: Int? = nil, weatherCode: Int? = nil,
        temperature: Double? = nil
    ) {
        self.time = time
        self.cloudCover = cloudCover
        self.precipitationProbability = precipitationProbability
        self.weatherCode = weatherCode
        self.temperature = temperature
    }
}

/// A fetched forecast: the hours, where and when it was fetched, and by whom.
public struct Forecast: Codable, Equatable, Sendable {
    /// When it was fetched, an instant on the job's clock (virtual time in simulations); the
    /// weather policy's cache age is `now − fetchedAt`.
    public var fetchedAt: Date
    /// The location it was requested for (degrees); the weather policy compares it with the
    /// phone's current location.
    public var location: Coordinate
    /// The provider's `name`: `"offline"` or `"open-meteo"`.
    public var source: String
    /// The hours, ascending by `time`, one hour apart.
    public var hours: [HourlyWeather]

    /// - Parameters:
    ///   - fetchedAt: when it was fetched.
    ///   - location: where it is for.
    ///   - source: the provider's name.
    ///   - hours: ascending hours.
    public init(fetchedAt: Date, location: Coordinate, source: String, hours: [HourlyWeather]) {
        self.fetchedAt = fetchedAt
        self.location = location
        self.source = source
        self.hours = hours
    }

    /// The hour whose interval [time, time + 1 h) contains `instant`, if the forecast covers it.
    /// - Complexity: O(n) in the number of hours.
    public func hour(containing instant: Date) -> HourlyWeather? {
        hours.first { $0.time <= instant && instant < $0.time.addingTimeInterval(3_600) }
    }
}

/// Why a forecast could not be had. `kind` says what failed, `reason` says it in words; only
/// network failures (`isNetwork`) are worth retrying.
public struct WeatherError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The class of failure: a struct with named values rather than an enum, so new kinds can be
    /// added without breaking switch statements (STYLE.md).
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// `network`, `timeout`, `http`, `decoding`.
        public let rawValue: String

        /// - Parameter rawValue: the kind's name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// No response: connection refused, host not found, connection lost, TLS failure.
        public static let network = Kind(rawValue: "network")
        /// No complete response within the client's timeout.
        public static let timeout = Kind(rawValue: "timeout")
        /// The server answered with an HTTP status other than 200 (`WeatherError.status`).
        public static let http = Kind(rawValue: "http")
        /// The body is not a usable Open-Meteo forecast (not JSON, missing `hourly`, bad times,
        /// arrays of unequal length).
        public static let decoding = Kind(rawValue: "decoding")

        /// The raw value.
        public var description: String { rawValue }
    }

    /// What failed.
    public let kind: Kind
    /// Human-readable detail, e.g. `HTTP 400: Latitude must be in range of -90 to 90°.`
    public let reason: String
    /// The HTTP status for `.http` errors, else nil.
    public let status: Int?

    /// - Parameters:
    ///   - kind: what failed.
    ///   - reason: detail in words.
    ///   - status: HTTP status, for `.http`.
    public init(kind: Kind, reason: String, status: Int? = nil) {
        self.kind = kind
        self.reason = reason
        self.status = status
    }

    /// A network-level failure.
    public static func network(_ reason: String) -> WeatherError { WeatherError(kind: .network, reason: reason) }
    /// A timeout.
    public static func timeout(_ reason: String) -> WeatherError { WeatherError(kind: .timeout, reason: reason) }
    /// An HTTP status other than 200.
    public static func http(status: Int, _ reason: String) -> WeatherError {
        WeatherError(kind: .http, reason: reason, status: status)
    }
    /// A body that cannot be decoded.
    public static func decoding(_ reason: String) -> WeatherError { WeatherError(kind: .decoding, reason: reason) }

    /// True for `.network` and `.timeout`: the failures worth a retry. The Android worker
    /// (`WorkerRetryRule`) retries only network errors (a Kotlin `IOException`, which includes
    /// socket timeouts), at most 3 attempts, and fails anything else: WorkManager's
    /// `Result.retry()` is meant for transient failures (Android docs, `ListenableWorker.Result`),
    /// and an HTTP error or a bad body would fail again the same way.
    public var isNetwork: Bool { kind == .network || kind == .timeout }

    /// `timeout: no response within 10 s`.
    public var description: String { "\(kind): \(reason)" }
}

/// Something that gives a forecast.
///
/// Synchronous: the phone calls it from its single loop thread and gets the answer back in the
/// same call. `cost` is how long it took in seconds (wall seconds for a real client, a fixed
/// simulated figure for the offline one); the consolidated refresh job charges it against the
/// background task's budget.
public protocol WeatherProvider: Sendable {
    /// The name recorded as `Forecast.source` (`"offline"`, `"open-meteo"`).
    var name: String { get }

    /// A forecast for `location`.
    ///
    /// - Parameters:
    ///   - location: where (degrees).
    ///   - now: the caller's current instant; becomes `Forecast.fetchedAt`.
    /// - Returns: the forecast or the error, and the time it cost in seconds (≥ 0). Never throws.
    func forecast(for location: Coordinate, now: Date) -> (result: Result<Forecast, WeatherError>, cost: TimeInterval)
}

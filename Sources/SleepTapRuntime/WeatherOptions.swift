// SPDX-License-Identifier: Apache-2.0

public import Foundation
public import SleepTapCore

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

// SPDX-License-Identifier: Apache-2.0

package import Foundation
package import SleepTapCore

/// Which weather provider the phone uses (`--weather`).
package struct WeatherOptions: Equatable, Sendable {
    /// nil = the embedded offline provider; a URL = Open-Meteo at that base URL.
    package var openMeteoBase: URL?
    /// The offline provider's cost per fetch, virtual seconds.
    package var offlineCost: TimeInterval = 0.3

    package init() {}

    package func makeProvider(seed: UInt64) -> any WeatherProvider {
        if let base = openMeteoBase { return OpenMeteoClient(baseURL: base) }
        return OfflineWeatherProvider(seed: seed, cost: offlineCost)
    }
}

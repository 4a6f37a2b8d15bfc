// SPDX-License-Identifier: Apache-2.0

package import Foundation
package import SleepTapCore
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The real weather provider: one HTTPS GET of Open-Meteo's forecast API
/// (https://open-meteo.com/en/docs; request and decoding in `OpenMeteo`), made synchronously.
///
/// `forecast(for:now:)` blocks the calling thread until the answer is in, for at most `timeout`
/// seconds (plus the moment it takes to cancel): it starts a `URLSession` data task and waits on
/// a semaphore with that deadline, then cancels the task. That is meant for the phone's single
/// loop thread, which runs the refresh job step by step and charges `cost` to the task budget;
/// never call it from a URLSession delegate queue.
///
/// Thread safety: a value type with no shared state; every call makes (and invalidates) its own
/// ephemeral session, so calls from different threads do not interfere. No caching, no cookies,
/// no retries: retrying is the caller's decision (`WeatherError.isNetwork`).
package struct OpenMeteoClient: WeatherProvider {
    /// Scheme, host, port and optional path prefix the request goes to.
    package let baseURL: URL
    /// Upper bound on one call, seconds (enforced by the client's own wait, not by URLSession).
    package let timeout: TimeInterval

    /// `"open-meteo"`, recorded as `Forecast.source`.
    package var name: String { "open-meteo" }

    /// - Parameters:
    ///   - baseURL: default `https://api.open-meteo.com`; tests point it at a local server.
    ///   - timeout: seconds, default 10; a non-finite or non-positive value becomes 10, and the
    ///     rest is clamped to 0.05...86,400 s.
    package init(baseURL: URL = OpenMeteo.defaultBaseURL, timeout: TimeInterval = 10) {
        self.baseURL = baseURL
        self.timeout = timeout.isFinite && timeout > 0 ? min(86_400, max(0.05, timeout)) : 10
    }

    /// Fetches and decodes the forecast for `location`.
    ///
    /// - Parameters:
    ///   - location: where (degrees); the request is `OpenMeteo.requestURL(base:location:)`.
    ///   - now: the caller's instant, recorded as `Forecast.fetchedAt` (virtual time in
    ///     simulations; the wall clock only measures `cost`).
    /// - Returns: the forecast, or a `WeatherError`: `.network` (connection refused, host not
    ///   found, connection lost, TLS), `.timeout` (no answer within `timeout`), `.http` (status
    ///   other than 200, with `status`; an Open-Meteo error body `{"error":true,"reason":"…"}`
    ///   gives the reason), `.decoding` (a 200 whose body is not a usable forecast); and `cost`,
    ///   the measured wall-clock seconds of the call. Never throws, never traps.
    package func forecast(for location: Coordinate, now: Date) -> (
        result: Result<Forecast, WeatherError>, cost: TimeInterval
    ) {
        let clock = ContinuousClock()
        let started = clock.now
        let url = OpenMeteo.requestURL(base: baseURL, location: location)
        let result = get(url).flatMap { status, body -> Result<Forecast, WeatherError> in
            guard status == 200 else { return .failure(Self.httpError(status: status, body: body)) }
            return OpenMeteo.decode(body, fetchedAt: now, location: location)
        }
        let elapsed = clock.now - started
        let cost = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (result, cost)
    }

    /// One GET of `url`: the HTTP status and body, or a network or timeout error.
    func get(_ url: URL) -> Result<(status: Int, body: Data), WeatherError> {
        // The deadline is ours (the semaphore wait below): URLSession on Linux truncates its
        // timeouts to whole seconds (0.5 s fires at once), so give it a later, whole-second one.
        let sessionTimeout = timeout.rounded(.up) + 1
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = sessionTimeout
        configuration.timeoutIntervalForResource = sessionTimeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        let session = URLSession(configuration: configuration)
        defer { session.invalidateAndCancel() }

        var request = URLRequest(
            url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: sessionTimeout)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let outcome = Outcome()
        let task = session.dataTask(with: request) { data, response, error in
            outcome.finish(Self.result(data: data, response: response, error: error, timeout: timeout))
        }
        task.resume()
        if outcome.wait(seconds: timeout) == nil {
            task.cancel()
            return .failure(.timeout("no response from \(Self.hostAndPort(url)) within \(Self.seconds(timeout))"))
        }
        return outcome.value ?? .failure(.network("no outcome"))
    }

    /// Maps URLSession's completion arguments to a result.
    static func result(data: Data?, response: URLResponse?, error: (any Error)?, timeout: TimeInterval) -> Result<
        (status: Int, body: Data), WeatherError
    > {
        if let error {
            return .failure(transportError(error, timeout: timeout))
        }
        guard let http = response as? HTTPURLResponse else {
            return .failure(.network("no HTTP response"))
        }
        return .success((http.statusCode, data ?? Data()))
    }

    /// A transport failure as a `WeatherError`: URLError's timeout becomes `.timeout`, anything
    /// else `.network` with the URLError code and its text.
    static func transportError(_ error: any Error, timeout: TimeInterval) -> WeatherError {
        guard let urlError = error as? URLError else { return .network("\(error)") }
        let host = urlError.failingURL.map(hostAndPort) ?? "the server"
        switch urlError.code {
        case .timedOut:
            return .timeout("no response from \(host) within \(seconds(timeout))")
        case .cannotConnectToHost:
            return .network("cannot connect to \(host) (connection refused; URLError \(urlError.code.rawValue))")
        case .cannotFindHost, .dnsLookupFailed:
            return .network("cannot find host \(host) (URLError \(urlError.code.rawValue))")
        case .networkConnectionLost, .notConnectedToInternet:
            return .network("connection to \(host) lost (URLError \(urlError.code.rawValue))")
        default:
            return .network("\(host): URLError \(urlError.code.rawValue): \(urlError.localizedDescription)")
        }
    }

    /// `HTTP 400: <Open-Meteo reason>`, or `HTTP 500: <start of the body>`.
    static func httpError(status: Int, body: Data) -> WeatherError {
        if let reason = OpenMeteo.errorReason(body) {
            return .http(status: status, "HTTP \(status): \(reason)")
        }
        let text = String(decoding: body.prefix(200), as: UTF8.self)
            .replacingOccurrences(of: "\n", with: " ")
            .trimmingCharacters(in: .whitespaces)
        let detail = text.isEmpty ? HTTPURLResponse.localizedString(forStatusCode: status) : text
        return .http(status: status, "HTTP \(status): \(detail)")
    }

    static func hostAndPort(_ url: URL) -> String {
        let host = url.host ?? url.absoluteString
        return url.port.map { "\(host):\($0)" } ?? host
    }

    static func seconds(_ value: TimeInterval) -> String {
        String(format: "%g s", value)
    }

    /// The completion's result, handed from URLSession's queue to the waiting caller.
    private final class Outcome: Sendable {
        private let state = Mutex<Result<(status: Int, body: Data), WeatherError>?>(nil)
        private let done = DispatchSemaphore(value: 0)

        /// Records the first result and wakes the waiter; later calls are ignored.
        func finish(_ result: Result<(status: Int, body: Data), WeatherError>) {
            let first = state.withLock { value in
                guard value == nil else { return false }
                value = result
                return true
            }
            if first { done.signal() }
        }

        /// Waits up to `seconds`; nil on timeout.
        func wait(seconds: TimeInterval) -> Result<(status: Int, body: Data), WeatherError>? {
            guard done.wait(timeout: .now() + seconds) == .success else { return nil }
            return value
        }

        var value: Result<(status: Int, body: Data), WeatherError>? { state.withLock { $0 } }
    }
}

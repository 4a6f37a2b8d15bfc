// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapTestFixtures
import Testing

@testable import SleepTapRuntime

/// `OpenMeteoClient` against a local server on 127.0.0.1 (ephemeral port, started per test,
/// stopped in a `defer`). No other network access. Every call is bounded by the client's own
/// timeout; the suite's time limit is a backstop. Serialized: concurrent URLSession requests in one
/// process can stall each other for about a second on Linux (libcurl's multi timer), and the
/// phone only ever makes one request at a time anyway.
@Suite("Open-Meteo client over local HTTP", .serialized, .timeLimit(.minutes(1)))
struct OpenMeteoClientTests {
    static let berlin = Coordinate(latitude: 52.52, longitude: 13.42)!
    static let now = ISO8601.date("2026-06-21T04:10:00Z")!

    static let routes: [String: OpenMeteoTestServer.Answer] = [
        "ok": .respond(status: 200, body: OpenMeteoSample.json),
        "bad-request": .respond(
            status: 400, body: #"{"error":true,"reason":"Latitude must be in range of -90 to 90°. Given: 91.0."}"#),
        "broken": .respond(status: 500, body: "upstream exploded\n"),
        "garbage": .respond(status: 200, body: "\u{1}\u{2}not json at all"),
        "hang": .hang,
    ]

    static func client(_ server: OpenMeteoTestServer, route: String, timeout: TimeInterval = 5) -> OpenMeteoClient {
        OpenMeteoClient(baseURL: server.baseURL.appendingPathComponent(route), timeout: timeout)
    }

    @Test("200 with the sample: 24 hours, fetchedAt is the caller's now, cost is measured")
    func success() throws {
        let server = try OpenMeteoTestServer(routes: Self.routes)
        defer { server.stop() }
        let client = Self.client(server, route: "ok")
        #expect(client.name == "open-meteo")
        let (result, cost) = client.forecast(for: Self.berlin, now: Self.now)
        let forecast = try result.get()
        #expect(forecast.hours.count == 24)
        #expect(forecast.source == "open-meteo")
        #expect(forecast.fetchedAt == Self.now)
        #expect(forecast.location == Self.berlin)
        #expect(forecast.hours[23].precipitationProbability == nil)
        #expect(cost > 0 && cost < 5, "\(cost)")
        #expect(
            server.requests == [
                "/ok/v1/forecast?latitude=52.52&longitude=13.42"
                    + "&hourly=temperature_2m,cloud_cover,precipitation_probability,weather_code"
                    + "&timezone=GMT&forecast_days=2"
            ])
    }

    @Test("400 with an Open-Meteo error body: an http error carrying the status and its reason")
    func badRequest() throws {
        let server = try OpenMeteoTestServer(routes: Self.routes)
        defer { server.stop() }
        let (result, _) = Self.client(server, route: "bad-request").forecast(for: Self.berlin, now: Self.now)
        guard case .failure(let error) = result else {
            Issue.record("expected failure, got \(result)")
            return
        }
        #expect(error.kind == .http)
        #expect(error.status == 400)
        #expect(error.reason == "HTTP 400: Latitude must be in range of -90 to 90°. Given: 91.0.")
        #expect(!error.isNetwork)
    }

    @Test("500: an http error, not retryable, the body's start as the reason")
    func serverError() throws {
        let server = try OpenMeteoTestServer(routes: Self.routes)
        defer { server.stop() }
        let (result, _) = Self.client(server, route: "broken").forecast(for: Self.berlin, now: Self.now)
        guard case .failure(let error) = result else {
            Issue.record("expected failure, got \(result)")
            return
        }
        #expect(error.kind == .http)
        #expect(error.status == 500)
        #expect(error.reason == "HTTP 500: upstream exploded")
        #expect(!error.isNetwork)
        #expect(error.description == "http: HTTP 500: upstream exploded")
    }

    @Test("200 with garbage: a decoding error")
    func garbage() throws {
        let server = try OpenMeteoTestServer(routes: Self.routes)
        defer { server.stop() }
        let (result, _) = Self.client(server, route: "garbage").forecast(for: Self.berlin, now: Self.now)
        #expect(result == .failure(.decoding("not JSON")))
    }

    @Test("A closed port: connection refused is a network error, promptly")
    func refused() throws {
        let closed = try RefusingPort()
        defer { closed.close() }
        let client = OpenMeteoClient(baseURL: URL(string: "http://127.0.0.1:\(closed.port)")!, timeout: 5)
        let (result, cost) = client.forecast(for: Self.berlin, now: Self.now)
        guard case .failure(let error) = result else {
            Issue.record("expected failure, got \(result)")
            return
        }
        #expect(error.kind == .network, "\(error)")
        #expect(error.isNetwork)
        #expect(error.reason.contains("127.0.0.1:\(closed.port)"), "\(error)")
        #expect(cost < 4, "\(cost)")
    }

    @Test("A server that never answers: a timeout after about `timeout`, retryable")
    func timeout() throws {
        let server = try OpenMeteoTestServer(routes: Self.routes)
        defer { server.stop() }
        let (result, cost) = Self.client(server, route: "hang", timeout: 0.5).forecast(for: Self.berlin, now: Self.now)
        guard case .failure(let error) = result else {
            Issue.record("expected failure, got \(result)")
            return
        }
        #expect(error.kind == .timeout, "\(error)")
        #expect(error.isNetwork)
        #expect(cost >= 0.45 && cost < 2, "\(cost)")
    }

    @Test("Timeouts are sanitised: non-finite or non-positive becomes 10 s, the rest is clamped")
    func timeoutValues() {
        #expect(OpenMeteoClient(timeout: .nan).timeout == 10)
        #expect(OpenMeteoClient(timeout: -1).timeout == 10)
        #expect(OpenMeteoClient(timeout: 0.001).timeout == 0.05)
        #expect(OpenMeteoClient(timeout: 1e300).timeout == 86_400)
        #expect(OpenMeteoClient().baseURL.absoluteString == "https://api.open-meteo.com")
    }
}

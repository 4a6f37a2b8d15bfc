// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCore
import SleepTapTestFixtures
import Testing

@Suite("Open-Meteo request and decoding")
struct OpenMeteoDecodeTests {
    static let berlin = Coordinate(latitude: 52.52, longitude: 13.42)!
    static let fetchedAt = ISO8601.date("2026-06-21T04:10:00Z")!

    static func decode(_ text: String) -> Result<Forecast, WeatherError> {
        OpenMeteo.decode(Data(text.utf8), fetchedAt: fetchedAt, location: berlin)
    }

    /// The decoding error's reason, or a note that there was none.
    static func decodingReason(_ text: String) -> String {
        switch decode(text) {
        case .success(let forecast): return "unexpected success with \(forecast.hours.count) hours"
        case .failure(let error):
            #expect(error.kind == .decoding, "\(error)")
            #expect(!error.isNetwork)
            #expect(!error.reason.isEmpty)
            return error.reason
        }
    }

    @Test("The request: /v1/forecast with the four hourly variables, timezone=GMT, two days")
    func request() {
        let url = OpenMeteo.requestURL(base: OpenMeteo.defaultBaseURL, location: Self.berlin)
        #expect(
            url.absoluteString
                == "https://api.open-meteo.com/v1/forecast?latitude=52.52&longitude=13.42"
                + "&hourly=temperature_2m,cloud_cover,precipitation_probability,weather_code"
                + "&timezone=GMT&forecast_days=2")
        // A base with a path prefix and a trailing slash; negative, tiny and zero coordinates.
        let other = OpenMeteo.requestURL(
            base: URL(string: "http://127.0.0.1:8080/prefix/")!,
            location: Coordinate(latitude: -0.000_01, longitude: -149.866_667)!)
        #expect(
            other.absoluteString.hasPrefix("http://127.0.0.1:8080/prefix/v1/forecast?latitude=0&longitude=-149.8667&"))
    }

    @Test("The sample decodes to 24 UTC hours; the one null becomes nil; the extra uv_index is ignored")
    func sample() throws {
        let forecast = try Self.decode(OpenMeteoSample.json).get()
        #expect(forecast.source == "open-meteo")
        #expect(forecast.fetchedAt == Self.fetchedAt)
        #expect(forecast.location == Self.berlin)
        #expect(forecast.hours.count == 24)
        #expect(forecast.hours.first?.time == ISO8601.date("2026-06-21T00:00:00Z"))
        #expect(forecast.hours.last?.time == ISO8601.date("2026-06-21T23:00:00Z"))
        #expect(
            zip(forecast.hours, forecast.hours.dropFirst()).allSatisfy { $1.time.timeIntervalSince($0.time) == 3_600 })
        #expect(
            forecast.hours[7]
                == HourlyWeather(
                    time: ISO8601.date("2026-06-21T07:00:00Z")!, cloudCover: 22, precipitationProbability: 3,
                    weatherCode: 1, temperature: 15.2))
        #expect(forecast.hours[14].weatherCode == 80)
        #expect(forecast.hours[14].cloudCover == 100)
        #expect(forecast.hours[23].precipitationProbability == nil)
        #expect(forecast.hours[23].cloudCover == 12)
        #expect(forecast.hours.dropLast().allSatisfy { $0.precipitationProbability != nil })
        // Round trip through the cache's Codable form.
        let encoded = try JSONEncoder().encode(forecast)
        #expect(try JSONDecoder().decode(Forecast.self, from: encoded) == forecast)
    }

    @Test("A non-zero utc_offset_seconds is taken off, so times stay UTC instants")
    func offset() throws {
        let body = #"{"utc_offset_seconds": 7200, "hourly": {"time": ["2026-06-21T09:00"], "cloud_cover": [40]}}"#
        let forecast = try Self.decode(body).get()
        #expect(forecast.hours.map(\.time) == [ISO8601.date("2026-06-21T07:00:00Z")!])
        #expect(forecast.hours[0].cloudCover == 40)
        #expect(forecast.hours[0].temperature == nil)  // a missing column is nil throughout
    }

    @Test("Malformed bodies each give a decoding error with a reason")
    func malformed() {
        #expect(Self.decodingReason("") == "empty body")
        #expect(Self.decodingReason("<html>502 Bad Gateway</html>") == "not JSON")
        #expect(Self.decodingReason("{\"hourly\": {\"time\": [") == "not JSON")
        #expect(Self.decodingReason("[1, 2, 3]") == "not a JSON object")
        #expect(Self.decodingReason(#"{"latitude": 52.52}"#) == "missing \"hourly\"")
        #expect(Self.decodingReason(#"{"hourly": {"cloud_cover": [1]}}"#) == "missing \"hourly.time\"")
        #expect(
            Self.decodingReason(
                #"{"error": true, "reason": "Cannot initialize WeatherVariable from invalid String value"}"#)
                == "Open-Meteo error: Cannot initialize WeatherVariable from invalid String value")
        #expect(
            Self.decodingReason(#"{"hourly": {"time": ["2026-06-21T00:00", "2026-06-21T01:00"], "cloud_cover": [1]}}"#)
                == "hourly.cloud_cover has 1 values, hourly.time has 2")
        #expect(
            Self.decodingReason(#"{"hourly": {"time": ["2026-06-21T00:00"], "temperature_2m": [1, 2]}}"#)
                == "hourly.temperature_2m has 2 values, hourly.time has 1")
        #expect(
            Self.decodingReason(#"{"hourly": {"time": ["2026-06-21 00:00"]}}"#)
                == "hourly.time[0]: \"2026-06-21 00:00\" is not yyyy-MM-ddTHH:mm")
        #expect(
            Self.decodingReason(#"{"hourly": {"time": ["2026-02-30T00:00"]}}"#)
                == "hourly.time[0]: \"2026-02-30T00:00\" is not yyyy-MM-ddTHH:mm")
        #expect(
            Self.decodingReason(#"{"hourly": {"time": ["2026-06-21T01:00", "2026-06-21T01:00"]}}"#)
                == "hourly.time[1]: \"2026-06-21T01:00\" is not after the previous time")
        #expect(
            Self.decodingReason(#"{"hourly": {"time": ["2026-06-21T00:00"], "cloud_cover": ["lots"]}}"#)
                == "hourly.cloud_cover[0]: expected a number or null")
        #expect(Self.decodingReason(#"{"hourly": {"time": [7]}}"#).hasPrefix("hourly.time[0]"))
        #expect(Self.decodingReason(#"{"hourly": [1]}"#).hasPrefix("hourly"))
        // Truncated sample: valid JSON prefix cut in the middle.
        let sample = OpenMeteoSample.json
        #expect(Self.decodingReason(String(sample.prefix(sample.count / 2))) == "not JSON")
    }

    @Test("An empty hourly block is no forecast: a decoding error, so nothing empty is cached for 6 h")
    func empty() throws {
        #expect(
            Self.decodingReason(#"{"hourly": {"time": [], "cloud_cover": []}}"#) == "\"hourly.time\" is empty: no hours"
        )
    }
}

// SPDX-License-Identifier: Apache-2.0

package import Foundation

/// The Open-Meteo forecast API (https://open-meteo.com/en/docs): the request the phone makes and
/// the strict decoder for its JSON answer. Pure: no I/O (the HTTP client is `OpenMeteoClient` in
/// SleepTapRuntime).
package enum OpenMeteo {
    /// `https://api.open-meteo.com`, the free public endpoint (no API key).
    package static let defaultBaseURL =
        URL(string: "https://api.open-meteo.com") ?? URL(fileURLWithPath: "/")  // the literal always parses

    /// The hourly variables asked for, in the order Open-Meteo documents them.
    package static let hourlyVariables = ["temperature_2m", "cloud_cover", "precipitation_probability", "weather_code"]

    /// The forecast request for `location`.
    ///
    /// `base` + `/v1/forecast?latitude=…&longitude=…&hourly=temperature_2m,cloud_cover,`
    /// `precipitation_probability,weather_code&timezone=GMT&forecast_days=2`. Coordinates are in
    /// degrees with 4 decimals (about 11 m; Open-Meteo's grid is 1–11 km). `timezone=GMT` makes
    /// every `hourly.time` a UTC wall time, so no zone guessing is needed when decoding.
    ///
    /// - Parameters:
    ///   - base: scheme, host, optional port and path prefix (`https://api.open-meteo.com`, or a
    ///     local test server).
    ///   - location: where.
    /// - Returns: the URL, with the path `/v1/forecast` appended to `base`'s path.
    package static func requestURL(base: URL = defaultBaseURL, location: Coordinate) -> URL {
        let query = [
            "latitude=\(number(location.latitude))",
            "longitude=\(number(location.longitude))",
            "hourly=\(hourlyVariables.joined(separator: ","))",
            "timezone=GMT",
            "forecast_days=2",
        ].joined(separator: "&")
        var text = base.absoluteString
        if let queryStart = text.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            text = String(text[..<queryStart])
        }
        while text.hasSuffix("/") { text.removeLast() }
        return URL(string: "\(text)/v1/forecast?\(query)") ?? base
    }

    /// Decodes a response body into a forecast.
    ///
    /// `hourly.time` entries are `yyyy-MM-ddTHH:mm` wall times at the response's
    /// `utc_offset_seconds` (0 for `timezone=GMT`; another offset is subtracted, so `time` is
    /// always the UTC instant). Each of `temperature_2m`, `cloud_cover`,
    /// `precipitation_probability`, `weather_code` must have one value per time; `null` becomes nil,
    /// a missing array makes that field nil for every hour; percentages and codes are rounded to
    /// whole numbers.
    ///
    /// - Parameters:
    ///   - data: the body.
    ///   - fetchedAt: the caller's instant of the fetch (becomes `Forecast.fetchedAt`).
    ///   - location: the requested location (Open-Meteo answers with its grid cell's centre; the
    ///     request's location is kept so the move check compares like with like).
    /// - Returns: the forecast with `source` `"open-meteo"`, or `WeatherError` of kind `.decoding`
    ///   whose reason names the problem: empty body, not JSON, an Open-Meteo error object, missing
    ///   `hourly` or `hourly.time`, no hours, a malformed or out-of-order time, a non-number value, arrays of
    ///   unequal length.
    /// - Complexity: O(n) in the number of hours.
    package static func decode(_ data: Data, fetchedAt: Date, location: Coordinate) -> Result<Forecast, WeatherError> {
        guard !data.isEmpty else { return .failure(.decoding("empty body")) }
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: data)
        } catch let error as DecodingError {
            return .failure(.decoding(describe(error)))
        } catch {
            return .failure(.decoding("not JSON: \(error)"))
        }
        if body.error == true {
            return .failure(.decoding("Open-Meteo error: \(body.reason ?? "no reason given")"))
        }
        guard let hourly = body.hourly else { return .failure(.decoding("missing \"hourly\"")) }
        guard let times = hourly.time else { return .failure(.decoding("missing \"hourly.time\"")) }
        guard !times.isEmpty else { return .failure(.decoding("\"hourly.time\" is empty: no hours")) }

        let offset = TimeInterval(body.utcOffsetSeconds ?? 0)
        var instants: [Date] = []
        instants.reserveCapacity(times.count)
        for (index, text) in times.enumerated() {
            guard let wall = parseTime(text) else {
                return .failure(.decoding("hourly.time[\(index)]: \"\(text)\" is not yyyy-MM-ddTHH:mm"))
            }
            let instant = wall.addingTimeInterval(-offset)
            if let last = instants.last, instant <= last {
                return .failure(.decoding("hourly.time[\(index)]: \"\(text)\" is not after the previous time"))
            }
            instants.append(instant)
        }

        let columns: [(String, [Double?]?)] = [
            ("temperature_2m", hourly.temperature),
            ("cloud_cover", hourly.cloudCover),
            ("precipitation_probability", hourly.precipitationProbability),
            ("weather_code", hourly.weatherCode),
        ]
        for (name, values) in columns {
            if let values, values.count != times.count {
                return .failure(
                    .decoding("hourly.\(name) has \(values.count) values, hourly.time has \(times.count)"))
            }
        }
        func whole(_ values: [Double?]?, _ index: Int) -> Int? {
            guard let value = values?[index] ?? nil, value.isFinite, abs(value) < 1e9 else { return nil }
            return Int(value.rounded())
        }
        let hours = instants.indices.map { index in
            HourlyWeather(
                time: instants[index],
                cloudCover: whole(hourly.cloudCover, index),
                precipitationProbability: whole(hourly.precipitationProbability, index),
                weatherCode: whole(hourly.weatherCode, index),
                temperature: hourly.temperature?[index] ?? nil)
        }
        return .success(Forecast(fetchedAt: fetchedAt, location: location, source: "open-meteo", hours: hours))
    }

    /// The `reason` of an Open-Meteo error body (`{"error": true, "reason": "…"}`), if `data` is one.
    package static func errorReason(_ data: Data) -> String? {
        guard let body = try? JSONDecoder().decode(ErrorBody.self, from: data), body.error == true else {
            return nil
        }
        return body.reason ?? "no reason given"
    }

    // MARK: - Internals

    private struct ErrorBody: Decodable {
        var error: Bool?
        var reason: String?
    }

    private struct Body: Decodable {
        var error: Bool?
        var reason: String?
        var utcOffsetSeconds: Int?
        var hourly: Hourly?

        enum CodingKeys: String, CodingKey {
            case error
            case reason
            case utcOffsetSeconds = "utc_offset_seconds"
            case hourly
        }
    }

    private struct Hourly: Decodable {
        var time: [String]?
        var temperature: [Double?]?
        var cloudCover: [Double?]?
        var precipitationProbability: [Double?]?
        var weatherCode: [Double?]?

        enum CodingKeys: String, CodingKey {
            case time
            case temperature = "temperature_2m"
            case cloudCover = "cloud_cover"
            case precipitationProbability = "precipitation_probability"
            case weatherCode = "weather_code"
        }
    }

    /// `52.52`, `-149.8667`, `0`: up to 4 decimals, no exponent, no trailing zeros.
    static func number(_ value: Double) -> String {
        var text = String(format: "%.4f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }

    /// `yyyy-MM-ddTHH:mm` read as a UTC wall time (a valid Gregorian date, 00:00–23:59); nil for
    /// any other text.
    static func parseTime(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 16, bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"),
            let date = LocalDate(parsing: String(decoding: bytes[0..<10], as: UTF8.self)),
            let time = LocalTime(parsing: String(decoding: bytes[11..<16], as: UTF8.self)),
            let dayStart = UTCDays.start(of: date)
        else { return nil }
        // The day's first instant comes from Foundation's UTC calendar; within a UTC day a wall
        // time is its distance from that instant (UTC has no offset changes).
        return dayStart.addingTimeInterval(TimeInterval(time.hour * 3_600 + time.minute * 60))
    }

    /// A one-line reason for a `DecodingError`, naming the JSON path.
    static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            var out = ""
            for key in codingPath {
                if let index = key.intValue {
                    out += "[\(index)]"
                } else {
                    out += out.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
            return out.isEmpty ? "top level" : out
        }
        switch error {
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "not JSON" }
            return "\(path(context.codingPath)): \(context.debugDescription)"
        case .typeMismatch(let type, let context):
            let wanted = type == Double.self ? "a number or null" : "\(type)"
            if context.codingPath.isEmpty { return "not a JSON object" }
            return "\(path(context.codingPath)): expected \(wanted)"
        case .valueNotFound(_, let context):
            return "\(path(context.codingPath)): unexpected null"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): missing"
        @unknown default:
            return "undecodable: \(error)"
        }
    }
}

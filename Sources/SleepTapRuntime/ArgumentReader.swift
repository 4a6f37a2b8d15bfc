// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapCommandLine
import SleepTapCore

/// The readers of the values only phone and watch take: endpoints, zones, routing ids, local
/// times, step costs and the virtual clock.
extension ArgumentReader {
    /// The value of `flag` as an endpoint (`Endpoint.parse`), a relative ipc path resolved
    /// against `workingDirectory`.
    /// - Throws: `UsageError` naming the flag, the text and what is wrong.
    mutating func endpoint(_ flag: String, workingDirectory: String) throws(UsageError) -> Endpoint {
        try Endpoint.parse(nonEmpty(flag), flag: flag, workingDirectory: workingDirectory)
    }

    mutating func timeZone(_ flag: String) throws(UsageError) -> TimeZone {
        let text = try nonEmpty(flag)
        guard let zone = WakeCalendar.zone(named: text) else {
            throw UsageError("\(flag): \(WakeCalendar.unknownZoneReason(text))")
        }
        return zone
    }

    mutating func routingId(_ flag: String) throws(UsageError) -> String {
        let text = try nonEmpty(flag)
        guard text.utf8.count <= 255, text.utf8.first != 0 else {
            throw UsageError(
                "\(flag) \"\(Self.clip(text))\": a routing id is 1-255 bytes and must not start with a zero byte")
        }
        return text
    }

    mutating func localTime(_ flag: String) throws(UsageError) -> LocalTime {
        let text = try value(flag)
        guard let time = LocalTime(parsing: text) else {
            throw UsageError("\(flag) \"\(Self.clip(text))\": expected a 24-hour time HH:MM (00:00-23:59)")
        }
        return time
    }

    /// `renew=0.1,notices=0.5,dates=2,sunlight=0.05` (any subset; virtual seconds), and
    /// `weather-bytes=8000` (bytes a background weather fetch draws from the iOS data budget).
    mutating func stepCosts(_ flag: String) throws(UsageError) -> StepCosts {
        let text = try value(flag)
        var costs = StepCosts()
        var given: Set<String> = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else {
                throw UsageError(
                    "\(flag) \"\(Self.clip(text))\": expected STEP=SECONDS[,...]; \"\(Self.clip(String(item)))\" is not"
                )
            }
            guard given.insert(pair[0]).inserted else {
                throw UsageError("\(flag) \"\(Self.clip(text))\": \(pair[0]) is given twice; give each step once")
            }
            if pair[0] == "weather-bytes" {
                guard pair[1].count <= 9, pair[1].allSatisfy({ $0.isASCII && $0.isNumber }), let bytes = Int(pair[1])
                else {
                    throw UsageError(
                        "\(flag) \"\(Self.clip(text))\": expected weather-bytes=BYTES with a whole number from 0 to 999999999"
                    )
                }
                costs.weatherBytes = bytes
                continue
            }
            guard pair.count == 2, let number = Self.decimal(pair[1]), (0...600).contains(number) else {
                throw UsageError(
                    "\(flag) \"\(Self.clip(text))\": expected STEP=SECONDS[,...] with seconds from 0 to 600")
            }
            switch pair[0] {
            case "renew": costs.renew = number
            case "notices": costs.notices = number
            case "dates": costs.dates = number
            case "sunlight": costs.sunlight = number
            default:
                throw UsageError(
                    "\(flag): unknown step \"\(Self.clip(pair[0]))\" (renew, notices, dates, sunlight, weather-bytes; weather costs what the provider takes)"
                )
            }
        }
        return costs
    }

    /// Reads `KEY=NUMBER[,...]`, each key one of `ranges`' and given once, its number within its
    /// range.
    /// - Returns: the numbers by key (only the keys given).
    /// - Throws: `UsageError` naming the flag, the text and what is wrong.
    mutating func keyedNumbers(
        _ flag: String, _ ranges: KeyValuePairs<String, ClosedRange<Double>>
    ) throws(UsageError) -> [String: Double] {
        let text = try value(flag)
        let keys = ranges.map(\.key).joined(separator: ", ")
        var numbers: [String: Double] = [:]
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2, let range = ranges.first(where: { $0.key == pair[0] })?.value else {
                throw UsageError(
                    "\(flag) \"\(Self.clip(text))\": expected KEY=NUMBER[,...] with KEY one of \(keys); "
                        + "\"\(Self.clip(String(item)))\" is not")
            }
            guard numbers[pair[0]] == nil else {
                throw UsageError("\(flag) \"\(Self.clip(text))\": \(pair[0]) is given twice; give each key once")
            }
            guard let number = Self.decimal(pair[1]), number.isFinite, range.contains(number) else {
                throw UsageError(
                    "\(flag) \"\(Self.clip(text))\": \(pair[0]) \"\(Self.clip(pair[1]))\" is not a number from "
                        + "\(Self.plain(range.lowerBound)) to \(Self.plain(range.upperBound))")
            }
            numbers[pair[0]] = number
        }
        return numbers
    }

    /// `value` without a fraction when it has none (600, not 600.0).
    private static func plain(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// Handles the three clock flags. - Returns: false if `flag` is not one of them.
    mutating func clockFlag(_ flag: String, into clock: inout ClockOptions) throws(UsageError) -> Bool {
        switch flag {
        case "--clock-start":
            let text = try value(flag)
            guard let date = ISO8601.date(text), date >= ClockOptions.earliest, date <= ClockOptions.latest else {
                throw UsageError(
                    "\(flag) \"\(Self.clip(text))\": expected an ISO-8601 instant from 1970 to 2199, such as 2025-03-06T17:00:00Z"
                )
            }
            clock.start = date
        case "--clock-speed":
            let text = try value(flag)
            guard let speed = Self.decimal(text), speed.isFinite, speed > 0, speed <= ClockOptions.maxSpeed else {
                throw UsageError(
                    "\(flag) \"\(Self.clip(text))\": expected a number > 0 and <= 10000000 (virtual seconds per wall second)"
                )
            }
            clock.speed = speed
        case "--clock-anchor":
            let text = try value(flag)
            guard let seconds = Self.decimal(text), seconds >= 0,
                seconds <= ClockOptions.latest.timeIntervalSince1970
            else {
                throw UsageError(
                    "\(flag) \"\(Self.clip(text))\": expected UNIX seconds from 0 to 7258118399 (e.g. 1767225600.5)")
            }
            clock.anchor = Date(timeIntervalSince1970: seconds)
        default:
            return false
        }
        return true
    }
}

// SPDX-License-Identifier: Apache-2.0

package import Foundation

/// Thresholds for the sunlight notice (the "get some sun" notice): which forecast hours count as
/// a morning worth going out into.
///
/// An hour passes when its cloud cover is at most `maxCloudCover`, its precipitation probability
/// at most `maxPrecipitationProbability`, and its WMO code is not in `badWeatherCodes`. A nil value
/// is unknown and fails nothing by itself, but an hour with neither cloud cover nor a weather code
/// says nothing about the sky and is never chosen.
public struct SunlightPolicy: Equatable, Sendable {
    /// Highest total cloud cover that still counts as sunny, percent (default 70, between 5 and
    /// 6 oktas: broken cloud with gaps for the Sun; overcast skies are out).
    public var maxCloudCover: Int
    /// Highest precipitation probability, percent (default 40).
    public var maxPrecipitationProbability: Int
    /// End of the morning, local wall time, exclusive (default 12:00): the notice never fires at or
    /// after it.
    public var latestHour: LocalTime
    /// WMO weather codes that rule an hour out whatever the cloud cover (default 51...99: drizzle,
    /// rain, snow, showers, thunderstorm; WMO 4677 as documented by Open-Meteo).
    public var badWeatherCodes: Set<Int>

    /// 12:00, the default `latestHour`.
    public static let defaultLatestHour = LocalTime(clampingHour: 12, minute: 0)
    /// WMO 51...99, the default `badWeatherCodes`.
    public static let defaultBadWeatherCodes = Set(51...99)

    /// - Parameters:
    ///   - maxCloudCover: percent (default 70).
    ///   - maxPrecipitationProbability: percent (default 40).
    ///   - latestHour: local, exclusive (default 12:00).
    ///   - badWeatherCodes: WMO codes (default 51...99).
    public init(
        maxCloudCover: Int = 70, maxPrecipitationProbability: Int = 40,
        latestHour: LocalTime = SunlightPolicy.defaultLatestHour,
        badWeatherCodes: Set<Int> = SunlightPolicy.defaultBadWeatherCodes
    ) {
        self.maxCloudCover = maxCloudCover
        self.maxPrecipitationProbability = maxPrecipitationProbability
        self.latestHour = latestHour
        self.badWeatherCodes = badWeatherCodes
    }

    /// Whether `hour`'s weather passes the thresholds (the Sun's position is not checked here).
    public func accepts(_ hour: HourlyWeather) -> Bool {
        guard hour.cloudCover != nil || hour.weatherCode != nil else { return false }
        if let cloud = hour.cloudCover, cloud > maxCloudCover { return false }
        if let rain = hour.precipitationProbability, rain > maxPrecipitationProbability { return false }
        if let code = hour.weatherCode, badWeatherCodes.contains(code) { return false }
        return true
    }
}

/// Plans the sunlight notice for one wake-up: the first forecast hour, on the wake-up's local
/// morning, that starts at or after the later of wake-up and sunrise and whose weather passes the
/// `SunlightPolicy`.
package enum SunlightPlanner {
    /// Identifier prefix of sunlight notices (`sunlight-2026-06-21`); an update replaces them.
    package static let idPrefix = "sunlight-"

    /// The outcome for one wake-up.
    package enum Plan: Equatable, Sendable {
        /// Schedule this notification.
        case notice(NotificationRecord)
        /// No notice, and why: `no forecast`, `polar night`, `no sunrise before 12:00`,
        /// `wake-up after 12:00`, `forecast does not cover the morning`, `no clear morning hour`.
        case none(reason: String)
    }

    /// The sunlight notice for the wake-up at `wake`.
    ///
    /// The start is the first instant at or after `wake` at which the Sun is up (above −0.833°,
    /// `Solar`) on the wake-up's local date: on an ordinary day that is max(wake, sunrise); on a
    /// polar day it is `wake`; on a polar night there is none. Candidates are the forecast hours
    /// whose start (an instant) is at or after that, on the same local date, before `latestHour`,
    /// with the Sun up at their start. The first that `policy.accepts` is chosen.
    ///
    /// - Parameters:
    ///   - wake: the wake-up instant.
    ///   - location: where the user is (for sunrise).
    ///   - zone: the user's zone: the local date, the morning's end, the time in the text.
    ///   - forecast: the cached or fresh forecast; nil gives `.none("no forecast")`.
    ///   - policy: thresholds.
    /// - Returns: a record with id `sunlight-<local date of wake>`, fire date = the chosen hour's
    ///   start, text naming its local `HH:MM`; or `.none` with a reason. The caller drops a notice
    ///   whose fire date has passed.
    package static func plan(
        wake: Date, location: Coordinate, zone: TimeZone, forecast: Forecast?, policy: SunlightPolicy
    ) -> Plan {
        guard let forecast else { return .none(reason: "no forecast") }
        let calendar = WakeCalendar.calendar(in: zone)
        let date = LocalDate(wake, in: calendar)
        guard let morningEnd = WakeCalendar.instant(of: policy.latestHour, onDayOf: wake, in: calendar) else {
            return .none(reason: "no \(policy.latestHour) on \(date)")
        }
        guard wake < morningEnd else { return .none(reason: "wake-up after \(policy.latestHour)") }

        let start: Date
        switch Solar.day(date, at: location, in: zone) {
        case .polarNight:
            return .none(reason: "polar night")
        case .polarDay:
            start = wake
        case .events(let events):
            if Solar.isUp(at: wake, location: location) {
                start = wake
            } else if let rise = events.first(where: { $0.kind == .sunrise && $0.at >= wake }), rise.at < morningEnd {
                start = rise.at
            } else {
                return .none(reason: "no sunrise before \(policy.latestHour)")
            }
        }

        let candidates = forecast.hours
            .filter { $0.time >= start && $0.time < morningEnd }
            .sorted { $0.time < $1.time }
        let covered = forecast.hours.contains { $0.time < morningEnd && $0.time.addingTimeInterval(3_600) > start }
        guard covered else { return .none(reason: "forecast does not cover the morning") }
        for hour in candidates where policy.accepts(hour) && Solar.isUp(at: hour.time, location: location) {
            let local = WakeCalendar.localTimeString(hour.time, in: calendar)
            var details: [String] = []
            if let cloud = hour.cloudCover { details.append("cloud \(cloud)%") }
            if let rain = hour.precipitationProbability { details.append("rain \(rain)%") }
            let suffix = details.isEmpty ? "" : " (\(details.joined(separator: ", ")))"
            let text = "Sunlight at \(local): step outside for some morning light\(suffix)."
            return .notice(NotificationRecord(id: idPrefix + date.description, fireDate: hour.time, text: text))
        }
        return .none(reason: "no clear morning hour")
    }
}

extension LocalTime {
    /// A time from parts known to be valid; out-of-range parts are clamped (no force-unwrap).
    fileprivate init(clampingHour hour: Int, minute: Int) {
        self.hour = min(23, max(0, hour))
        self.minute = min(59, max(0, minute))
    }
}

// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// When the phone fetches weather, this project's rule for the weather step of the consolidated
/// refresh job (only between 06:00 and 18:00 local time; check the 6-hour cache and whether the
/// phone moved; fetch only when needed) and for the app being opened (an expired cache is
/// refreshed, a valid one is reused and the sunlight plan recomputed from it).
///
/// In the background the step runs only while the local wall time is in
/// [`windowStart`, `windowEnd`); it then fetches when there is no cached forecast, when the cache
/// is older than `maxAge`, or when the phone moved more than `moveThreshold` from the cached
/// forecast's location, and otherwise reuses the cache. In the foreground there is no window.
public struct WeatherPolicy: Equatable, Sendable {
    /// Start of the background window, local wall time, inclusive (default 06:00).
    public var windowStart: LocalTime
    /// End of the background window, local wall time, exclusive (default 18:00). A window with
    /// `windowEnd < windowStart` wraps past midnight; equal values mean "never" in the background.
    public var windowEnd: LocalTime
    /// Cache lifetime in seconds (default 6 h = 21,600 s); a cache exactly this old is still used.
    public var maxAge: TimeInterval
    /// Distance in meters (default 1,000 m) the phone may move before the cache no longer counts;
    /// exactly this far is still the same place.
    public var moveThreshold: Double

    /// 06:00, the default `windowStart`.
    public static let defaultWindowStart = LocalTime(clampingHour: 6, minute: 0)
    /// 18:00, the default `windowEnd`.
    public static let defaultWindowEnd = LocalTime(clampingHour: 18, minute: 0)

    /// - Parameters:
    ///   - windowStart: local, inclusive (default 06:00).
    ///   - windowEnd: local, exclusive (default 18:00).
    ///   - maxAge: seconds (default 21,600).
    ///   - moveThreshold: meters (default 1,000).
    public init(
        windowStart: LocalTime = WeatherPolicy.defaultWindowStart,
        windowEnd: LocalTime = WeatherPolicy.defaultWindowEnd,
        maxAge: TimeInterval = 6 * 3_600, moveThreshold: Double = 1_000
    ) {
        self.windowStart = windowStart
        self.windowEnd = windowEnd
        self.maxAge = maxAge
        self.moveThreshold = moveThreshold
    }

    /// What the weather step does.
    public enum Decision: Equatable, Sendable {
        /// Request a forecast. Reason: `no cache`, `expired`, or `moved 1234 m`.
        case fetch(reason: String)
        /// Keep the cached forecast (recompute the sunlight plan from it). Reason: `fresh`.
        case useCache(reason: String)
        /// Do nothing now. Reason: `outside 06:00-18:00`.
        case skip(reason: String)
    }

    /// The decision for one run of the weather step.
    ///
    /// Checks, in order: the window (background only), no cache, age (`now − fetchedAt` above
    /// `maxAge`, or negative: a cache from the future after a clock change counts as expired), then
    /// distance (haversine, above `moveThreshold`).
    ///
    /// - Parameters:
    ///   - now: the current instant.
    ///   - zone: the phone's zone, for the window's wall time (follows DST).
    ///   - location: the phone's current location.
    ///   - cached: the last forecast kept, if any.
    ///   - foreground: true when the user opened the app (no window), false for the background job.
    /// - Returns: fetch, use the cache, or skip, each with a short reason for the event log.
    public func decide(
        now: Date, zone: TimeZone, location: Coordinate, cached: Forecast?, foreground: Bool
    ) -> Decision {
        if !foreground && !inWindow(now, zone: zone) {
            return .skip(reason: "outside \(windowStart)-\(windowEnd)")
        }
        guard let cached else { return .fetch(reason: "no cache") }
        let age = now.timeIntervalSince(cached.fetchedAt)
        if age > maxAge || age < 0 { return .fetch(reason: "expired") }
        let moved = location.distance(to: cached.location)
        if moved > moveThreshold { return .fetch(reason: "moved \(Int(moved.rounded())) m") }
        return .useCache(reason: "fresh")
    }

    /// Whether the wall time of `now` in `zone` is in [`windowStart`, `windowEnd`) (minute
    /// resolution: 05:59:59 is before 06:00).
    public func inWindow(_ now: Date, zone: TimeZone) -> Bool {
        let c = WakeCalendar.wallClock(now, in: WakeCalendar.calendar(in: zone))
        guard let time = LocalTime(hour: c.hour, minute: c.minute) else { return false }
        if windowStart <= windowEnd {
            return windowStart <= time && time < windowEnd
        }
        return time >= windowStart || time < windowEnd
    }
}

extension LocalTime {
    /// A time from parts known to be valid; out-of-range parts are clamped (no force-unwrap).
    fileprivate init(clampingHour hour: Int, minute: Int) {
        self.hour = min(23, max(0, hour))
        self.minute = min(59, max(0, minute))
    }
}

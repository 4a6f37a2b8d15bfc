// SPDX-License-Identifier: Apache-2.0

package import Foundation
import Synchronization

/// Sunrise and sunset by the NOAA solar calculator (NOAA Global Monitoring Division, "General
/// Solar Position Calculations" and the NOAA Solar Calculator spreadsheet), for the apparent
/// altitude −0.833° of the Sun's centre (34′ standard refraction + 16′ semidiameter).
///
/// The Sun's declination and the equation of time come from NOAA's series in Julian centuries
/// (Meeus, *Astronomical Algorithms*, ch. 25, low-precision form). Unlike the spreadsheet, which
/// evaluates them once at local noon, they are evaluated at each instant, and an event is the
/// instant the geometric altitude crosses −0.833°, bracketed on a 30-minute grid plus the solar
/// transits and refined by bisection to under 1 ms. Against the US Naval Observatory's
/// minute-rounded values (the table in `SolarTests`) it lands within 33 s (docs/weather.md); real
/// refraction near the horizon varies by more than that, so the solver is not the limit.
///
/// All inputs and results are instants (`Date`, absolute); a local date is turned into its
/// instants through Foundation's `Calendar` in the given zone, so days of 23 or 25 hours are
/// handled.
package enum Solar {
    /// Altitude of the Sun's centre at sunrise and sunset, degrees: −0.833 (NOAA, USNO).
    package static let horizonAltitude: Double = -0.833

    /// A sunrise or a sunset.
    package struct Event: Equatable, Sendable, CustomStringConvertible {
        /// Which way the Sun crosses the horizon.
        package enum Kind: Sendable, Equatable, CustomStringConvertible {
            /// The Sun's centre rises through −0.833°.
            case sunrise
            /// The Sun's centre sets through −0.833°.
            case sunset

            /// `rise` or `set`.
            package var description: String {
                switch self {
                case .sunrise: "rise"
                case .sunset: "set"
                }
            }
        }

        /// Rise or set.
        package let kind: Kind
        /// The instant (absolute; render it in any zone).
        package let at: Date

        /// - Parameters:
        ///   - kind: rise or set.
        ///   - at: the instant.
        package init(kind: Kind, at: Date) {
            self.kind = kind
            self.at = at
        }

        /// `rise 2020-06-15T12:21:05Z` (UTC).
        package var description: String { "\(kind) \(ISO8601.string(at))" }
    }

    /// What the Sun does during one local day.
    package enum Day: Equatable, Sendable {
        /// The rises and sets inside the local day, in time order. Never empty, except for a
        /// local date the zone skipped altogether (Pacific/Apia 2011-12-30), which has no
        /// instants and so no events.
        case events([Event])
        /// The Sun is above −0.833° for the whole local day (midnight sun).
        case polarDay
        /// The Sun is below −0.833° for the whole local day.
        case polarNight
    }

    /// Geometric altitude of the Sun's centre, degrees above the horizon (no refraction), by the
    /// NOAA solar position equations.
    ///
    /// - Parameters:
    ///   - instant: the moment.
    ///   - location: where.
    /// - Returns: degrees in -90...90. The Sun counts as up when this is above `horizonAltitude`.
    package static func altitude(at instant: Date, location: Coordinate) -> Double {
        let seconds = instant.timeIntervalSince1970
        let position = position(unixSeconds: seconds)
        var secondOfDay = fmod(seconds, 86_400)
        if secondOfDay < 0 { secondOfDay += 86_400 }
        // True solar time, minutes: UTC minutes + equation of time + 4 min per degree east.
        let trueSolarMinutes = secondOfDay / 60 + position.equationOfTime + 4 * location.longitude
        let hourAngle = radians(trueSolarMinutes / 4 - 180)
        let phi = radians(location.latitude)
        let delta = radians(position.declination)
        let sinAltitude = sin(phi) * sin(delta) + cos(phi) * cos(delta) * cos(hourAngle)
        return degrees(asin(min(1, max(-1, sinAltitude))))
    }

    /// Whether the Sun's centre is above `horizonAltitude` (−0.833°) at `instant`.
    package static func isUp(at instant: Date, location: Coordinate) -> Bool {
        altitude(at: instant, location: location) > horizonAltitude
    }

    /// The rises and sets during the LOCAL date `date` in `zone` at `location`.
    ///
    /// A local day runs from its first instant (local midnight, or the first instant after a
    /// midnight DST gap) to the next local day's first instant. Near the polar circles a local day
    /// can hold "set, rise" or even "set, rise, set"; every one is reported, in order. Each event
    /// belongs to exactly one local day: consecutive days share their boundary instant, and a
    /// crossing within a millisecond before midnight stays with the earlier day.
    ///
    /// - Parameters:
    ///   - date: the local calendar date.
    ///   - location: where.
    ///   - zone: the zone the date is meant in.
    /// - Returns: `.events` in time order, or `.polarDay` / `.polarNight` when the Sun stays on one
    ///   side of −0.833° all day. Never NaN, never a crash.
    /// - Complexity: about 60 altitude evaluations plus 30 per event.
    package static func day(_ date: LocalDate, at location: Coordinate, in zone: TimeZone) -> Day {
        guard let (start, end) = bounds(of: date, in: zone) else { return .events([]) }
        return day(from: start.timeIntervalSince1970, to: end.timeIntervalSince1970, at: location)
    }

    /// The (first) sunrise on the local date `date` in `zone` at `location`.
    ///
    /// - Returns: the instant, or nil on a polar day, a polar night, or a day without a rise.
    package static func sunrise(on date: LocalDate, at location: Coordinate, in zone: TimeZone) -> Date? {
        guard case .events(let events) = day(date, at: location, in: zone) else { return nil }
        return events.first(where: { $0.kind == .sunrise })?.at
    }

    /// The last sunset on the local date `date` in `zone` at `location`.
    ///
    /// - Returns: the instant, or nil on a polar day, a polar night, or a day without a set.
    package static func sunset(on date: LocalDate, at location: Coordinate, in zone: TimeZone) -> Date? {
        guard case .events(let events) = day(date, at: location, in: zone) else { return nil }
        return events.last(where: { $0.kind == .sunset })?.at
    }

    // MARK: - Internals

    /// First instant of `date` in `zone` and of the day after; nil when the zone skipped the date.
    ///
    /// Foundation's answers are kept per date and zone (`boundsCache`): every run of the job
    /// asks about the same few days.
    static func bounds(of date: LocalDate, in zone: TimeZone) -> (Date, Date)? {
        let key = BoundsKey(date: date, zone: zone.identifier)
        if let known = boundsCache.withLock({ $0[key] }) { return known.map { ($0.start, $0.end) } }
        let found = computeBounds(of: date, in: zone)
        boundsCache.withLock { cache in
            if cache.count >= 20_000 { cache.removeAll(keepingCapacity: true) }
            cache[key] = .some(found.map { Bounds(start: $0.0, end: $0.1) })
        }
        return found
    }

    private struct BoundsKey: Hashable {
        var date: LocalDate
        var zone: String
    }

    private struct Bounds {
        var start: Date
        var end: Date
    }

    private static let boundsCache = Mutex<[BoundsKey: Bounds?]>([:])

    private static func computeBounds(of date: LocalDate, in zone: TimeZone) -> (Date, Date)? {
        let calendar = WakeCalendar.calendar(in: zone)
        guard let noon = WakeCalendar.instant(of: LocalTime(hour: 12, minute: 0)!, onDate: date, in: calendar),
            LocalDate(noon, in: calendar) == date,
            let nextNoon = WakeCalendar.adding(.day, 1, to: noon, in: calendar)
        else { return nil }
        let start = LocalDayCache.startOfDay(noon, in: calendar)
        let end = LocalDayCache.startOfDay(nextNoon, in: calendar)
        guard end > start else { return nil }
        return (start, end)
    }

    /// Changes of up/down state observed from `start` to `end` (Unix seconds).
    ///
    /// The answer is fixed by its arguments and kept (a few thousand at most): a fleet's devices
    /// in one city ask about the same days, each run of the job asks again.
    static func day(from start: Double, to end: Double, at location: Coordinate) -> Day {
        let key = DayKey(start: start, end: end, latitude: location.latitude, longitude: location.longitude)
        if let known = dayCache.withLock({ $0[key] }) { return known }
        let day = computeDay(from: start, to: end, at: location)
        dayCache.withLock { cache in
            if cache.count >= 20_000 { cache.removeAll(keepingCapacity: true) }
            cache[key] = day
        }
        return day
    }

    private struct DayKey: Hashable {
        var start: Double
        var end: Double
        var latitude: Double
        var longitude: Double
    }

    private static let dayCache = Mutex<[DayKey: Day]>([:])

    private static func computeDay(from start: Double, to end: Double, at location: Coordinate) -> Day {
        func lift(_ t: Double) -> Double {
            altitude(at: Date(timeIntervalSince1970: t), location: location) - horizonAltitude
        }
        // Bracket points: the interval ends, a 30-minute grid, and the solar transits (where the
        // altitude has its extrema, so a grazing dip below the horizon is not stepped over).
        var points: [Double] = [start]
        var t = start + 1_800
        while t < end {
            points.append(t)
            t += 1_800
        }
        points.append(end)
        for transit in transits(from: start, to: end, longitude: location.longitude) {
            points.append(transit)
        }
        points.sort()

        var events: [Event] = []
        var previousTime = points[0]
        var previousUp = lift(previousTime) > 0
        let startsUp = previousUp
        for point in points.dropFirst() where point > previousTime {
            let up = lift(point) > 0
            if up != previousUp {
                // The state changes in (previousTime, point]: bisect for the crossing.
                var low = previousTime
                var high = point
                for _ in 0..<32 where high - low > 1e-3 {
                    let middle = (low + high) / 2
                    if (lift(middle) > 0) == previousUp { low = middle } else { high = middle }
                }
                events.append(Event(kind: up ? .sunrise : .sunset, at: Date(timeIntervalSince1970: high)))
            }
            previousTime = point
            previousUp = up
        }
        if events.isEmpty { return startsUp ? .polarDay : .polarNight }
        return .events(events)
    }

    /// Local solar noons and midnights (hour angle 0° and 180°) inside (start, end), Unix seconds.
    static func transits(from start: Double, to end: Double, longitude: Double) -> [Double] {
        var result: [Double] = []
        let firstDay = (start / 86_400).rounded(.down) - 1
        let lastDay = (end / 86_400).rounded(.down) + 1
        var day = firstDay
        while day <= lastDay {
            // NOAA: solar noon (minutes UTC) = 720 − 4 × longitude − equation of time.
            var noon = day * 86_400 + (720 - 4 * longitude) * 60
            for _ in 0..<2 {
                noon = day * 86_400 + (720 - 4 * longitude - position(unixSeconds: noon).equationOfTime) * 60
            }
            for transit in [noon - 43_200, noon, noon + 43_200] where transit > start && transit < end {
                result.append(transit)
            }
            day += 1
        }
        return result
    }

    /// The Sun's declination (degrees) and the equation of time (minutes) at an instant, by the
    /// NOAA spreadsheet's formulas.
    static func position(unixSeconds: Double) -> (declination: Double, equationOfTime: Double) {
        let julianDay = unixSeconds / 86_400 + 2_440_587.5
        let t = (julianDay - 2_451_545) / 36_525  // Julian centuries since J2000.0
        let meanLongitude = fmod(280.466_46 + t * (36_000.769_83 + t * 0.000_303_2), 360)
        let meanAnomaly = 357.529_11 + t * (35_999.050_29 - 0.000_153_7 * t)
        let eccentricity = 0.016_708_634 - t * (0.000_042_037 + 0.000_000_126_7 * t)
        let m = radians(meanAnomaly)
        let center =
            sin(m) * (1.914_602 - t * (0.004_817 + 0.000_014 * t)) + sin(2 * m) * (0.019_993 - 0.000_101 * t)
            + sin(3 * m) * 0.000_289
        let trueLongitude = meanLongitude + center
        let omega = radians(125.04 - 1_934.136 * t)
        let apparentLongitude = trueLongitude - 0.005_69 - 0.004_78 * sin(omega)
        let meanObliquity = 23 + (26 + (21.448 - t * (46.815 + t * (0.000_59 - t * 0.001_813))) / 60) / 60
        let obliquity = meanObliquity + 0.002_56 * cos(omega)
        let declination = degrees(asin(sin(radians(obliquity)) * sin(radians(apparentLongitude))))
        let y = tan(radians(obliquity / 2)) * tan(radians(obliquity / 2))
        let l0 = radians(meanLongitude)
        let equationOfTime =
            4
            * degrees(
                y * sin(2 * l0) - 2 * eccentricity * sin(m) + 4 * eccentricity * y * sin(m) * cos(2 * l0)
                    - 0.5 * y * y * sin(4 * l0) - 1.25 * eccentricity * eccentricity * sin(2 * m))
        return (declination, equationOfTime)
    }

    static func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
    static func degrees(_ radians: Double) -> Double { radians * 180 / .pi }
}

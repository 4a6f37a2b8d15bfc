// SPDX-License-Identifier: Apache-2.0
package import Foundation
package import SleepTapCore
package import SleepTapEmbedded
package import SleepTapOS

/// One simulated device of a fleet and its user, drawn from the fleet's seed and the device's
/// index alone (so a device is the same in every run, shard and task order):
///
/// - platform (`FleetOptions.iosShare`), home city and zone, Android standby bucket;
/// - a weekly wake schedule (weekdays 05:30 to 08:00, weekends up to 2 h later or no alarm) and
///   a nightly bed tap on the watch about 8.5 h before the weekday wake-up;
/// - whether the app registers its refresh handler late (iOS, `FleetOptions.lateRegistration`),
///   from the start or from the app update's day;
/// - app opens between 07:00 and 23:00 local, `FleetOptions.opens` a day on average (Poisson);
/// - Low Power Mode (Battery Saver) on some days (`FleetOptions.lowPower`), for 4 to 14 hours
///   from an afternoon or evening moment;
/// - one trip in ten devices: 2 to 6 days in another city's zone (phone `time-zone` and `move`,
///   watch `time-zone`), then home again;
/// - Android nights: the screen goes off at the bed tap and on at the next wake-up (with the
///   phone picked up); on a share of nights (`FleetOptions.nightstand`) the phone is unplugged
///   and still all night, so Doze takes it, and on the others it charges (`charging on` to
///   `charging off`). Drawn from a stream of their own, so the other draws are those of a fleet
///   without nights;
/// - iOS on the usage model (`FleetOptions.opportunityModel`): the battery over the day. The
///   phone starts full (`battery 100%`), drains while unplugged and charges on the charger,
///   where it lies from the bed tap to the next wake-up on the nights `FleetOptions.nightstand`
///   does not leave it unplugged (the Android nights' draws), so a user who often leaves it
///   unplugged reaches the critical level by itself.
package struct FleetDevice: Sendable {
    /// A place users live in or travel to.
    package struct City: Sendable, Equatable {
        package var zone: String
        package var location: Coordinate
    }

    /// The cities of the simulated users (one per inhabited UTC offset band, half-hour and
    /// southern-hemisphere DST included).
    package static let cities: [City] = [
        ("America/New_York", 40.71, -74.01), ("America/Chicago", 41.88, -87.63),
        ("America/Los_Angeles", 34.05, -118.24), ("America/Sao_Paulo", -23.55, -46.63),
        ("Europe/London", 51.51, -0.13), ("Europe/Berlin", 52.52, 13.40), ("Asia/Kolkata", 22.57, 88.36),
        ("Asia/Tokyo", 35.68, 139.69), ("Australia/Sydney", -33.87, 151.21), ("Pacific/Auckland", -36.85, 174.76),
    ].map { City(zone: $0.0, location: Coordinate(latitude: $0.1, longitude: $0.2)!) }

    /// Virtual seconds per wall second of the device's twin (transport timers: a heartbeat each
    /// way every virtual hour).
    package static let speed = 3_600.0

    package let index: Int
    /// The device's name in its run records, `device-` and the index (zero-padded to the width of
    /// the fleet's largest index, at least 6 digits).
    package let name: String
    package let platform: Platform
    package let home: City
    package let schedule: WakeSchedule
    /// The nightly bed tap on the watch, and the wake time typed by hand when no date is cached.
    package let bedAt: LocalTime
    package let manualWake: LocalTime
    /// iOS: the app registers its handler too late from `lateFrom` on (nil: from the start).
    package let registersLate: Bool
    package let lateFrom: Date?
    /// Android: the standby bucket the user's use of the app keeps it in.
    package let bucket: StandbyBucket?
    /// Seeds of the simulated OS, the phone's state (notice rotation, weather) and the link.
    package let osSeed: UInt64
    package let deviceSeed: UInt64
    package let twinSeed: UInt64
    /// iOS: the fitted launch delay from `FleetOptions.osModel`, nil for the built-in draws.
    package let fittedDelay: EmpiricalDelay?
    /// iOS: how the OS draws app-refresh launches (`FleetOptions.opportunityModel`).
    package let opportunityModel: OpportunityModelKind
    /// The user's actions, in time order: stdin lines of the phone and the watch.
    package let steps: [(at: Date, step: TwinStep)]
    /// The phone's batch, local days (`FleetOptions.horizonDays`). No draw depends on it or on
    /// the two below, so the same user runs under each refresh strategy.
    package let horizonDays: Int
    /// Whether the watch sends REQUESTs (`FleetOptions.requestDates`).
    package let requestDates: Bool
    /// iOS: whether the app submits a nightly processing task (`FleetOptions.processingTask`).
    package let processingTask: Bool
    /// The watch's `--warn-nights` (`FleetOptions.warnNights`).
    package let warnNights: Int

    /// Draws device `index` of the fleet `options` describes.
    package init(index: Int, options: FleetOptions) {
        var rng = SplitMix64(state: options.seed ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15))
        func unit() -> Double { Double(rng.next() >> 11) / Double(UInt64(1) << 53) }
        func below(_ count: Int) -> Int { Int(rng.next() % UInt64(count)) }

        self.index = index
        horizonDays = options.horizonDays
        requestDates = options.requestDates
        processingTask = options.processingTask
        warnNights = options.warnNights
        let width = max(6, String(max(0, options.devices - 1)).count)
        let digits = String(index)
        name = "device-" + String(repeating: "0", count: max(0, width - digits.count)) + digits
        platform = unit() < options.iosShare ? .ios : .android
        home = Self.cities[below(Self.cities.count)]
        osSeed = rng.next() ^ options.osSeedSalt
        deviceSeed = rng.next()
        twinSeed = rng.next()

        // The week: weekdays 05:30 ... 08:00; weekends later, or no alarm (three users in ten).
        let weekdayWake = 330 + 15 * below(11)
        let weekendWake: Int? = unit() < 0.3 ? nil : weekdayWake + 30 * below(5)
        var wakeTimes: [Weekday: LocalTime] = [:]
        for day in Weekday.allCases {
            let isWeekend = day == .saturday || day == .sunday
            if let minutes = isWeekend ? weekendWake : weekdayWake { wakeTimes[day] = Self.time(minutes) }
        }
        schedule = WakeSchedule(wakeTimes: wakeTimes, timeZoneIdentifier: home.zone)
        bedAt = Self.time(weekdayWake - 510 - 15 * below(4))
        manualWake = Self.time(weekdayWake)

        let late = platform == .ios && unit() < options.lateRegistration
        registersLate = late
        let updateOffset = Double(below(86_400))
        lateFrom = late ? options.lateRegistrationFrom.map { FleetOptions.midnightUTC($0) + updateOffset } : nil

        var cumulative = 0.0
        let draw = unit()
        var chosen: StandbyBucket = .active
        for candidate in StandbyBucket.all {
            cumulative += options.buckets[candidate] ?? 0
            chosen = candidate
            if draw < cumulative { break }
        }
        bucket = platform == .android ? chosen : nil
        opportunityModel = options.opportunityModel
        fittedDelay =
            platform == .ios
            ? options.osModel?.delay(platform: .ios, appVersion: FleetOptions.appVersion)?.delay : nil

        // The user's days, in the home zone's calendar.
        let zone = TimeZone(identifier: home.zone) ?? .gmt
        let calendar = WakeCalendar.calendar(in: zone)
        let start = options.startInstant
        let end = options.endInstant
        var steps: [(at: Date, step: TwinStep)] = []
        func add(_ step: TwinStep, at instant: Date) {
            if instant > start, instant < end { steps.append((instant, step)) }
        }
        let firstDay = WakeCalendar.startOfDay(start, in: calendar)
        if let lateFrom { add(.phone("registration late-silent"), at: lateFrom) }
        for offset in 0...options.days {
            guard let day = WakeCalendar.adding(.day, offset, to: firstDay, in: calendar) else { break }
            let opens = Self.poisson(mean: options.opens, unit())
            for _ in 0..<opens {
                if let at = WakeCalendar.instant(of: Self.time(420 + below(960)), onDayOf: day, in: calendar) {
                    add(.phone("open"), at: at)
                }
            }
            if unit() < options.lowPower,
                let on = WakeCalendar.instant(of: Self.time(720 + below(660)), onDayOf: day, in: calendar)
            {
                add(.phone("low-power on"), at: on)
                add(.phone("low-power off"), at: on.addingTimeInterval(Double(4 * 3_600 + below(10 * 3_600))))
            }
        }
        if unit() < 0.1 {
            var away = Self.cities[below(Self.cities.count)]
            if away == home { away = Self.cities[(Self.cities.firstIndex(of: home)! + 1) % Self.cities.count] }
            let leaveDay = below(max(1, options.days))
            let length = 2 + below(5)
            if let leave = WakeCalendar.adding(.day, leaveDay, to: firstDay, in: calendar),
                let back = WakeCalendar.adding(.day, leaveDay + length, to: firstDay, in: calendar),
                let leaveAt = WakeCalendar.instant(of: Self.time(480 + below(720)), onDayOf: leave, in: calendar),
                let backAt = WakeCalendar.instant(of: Self.time(480 + below(720)), onDayOf: back, in: calendar)
            {
                for (at, city) in [(leaveAt, away), (backAt, home)] {
                    add(.phone("time-zone \(city.zone)"), at: at)
                    add(.phone("move \(city.location)"), at: at)
                    add(.watch("time-zone \(city.zone)"), at: at)
                }
            }
        }
        // Android: every night (Doze or the charger). iOS: for the processing task, which
        // waits for the charger and an idle device, and on the usage model, whose battery
        // drains and charges; the legacy refresh task depends on neither, so the other
        // strategies' iOS users need no nights (and their runs stay as they were).
        let batteryNights = platform == .ios && options.opportunityModel == .usage
        // Full at the start (a day unplugged leaves it above the critical level), then drained and charged.
        if batteryNights { add(.phone("battery 100%"), at: start.addingTimeInterval(1)) }
        if platform == .android || options.processingTask || batteryNights {
            var nights = SplitMix64(state: options.seed ^ (UInt64(index) &* 0xD1B5_4A32_D192_ED03) ^ 0x4E49_4748_54)
            let weekdayMinutes = weekdayWake
            for offset in 0...options.days {
                guard let day = WakeCalendar.adding(.day, offset, to: firstDay, in: calendar),
                    let next = WakeCalendar.adding(.day, offset + 1, to: firstDay, in: calendar),
                    let bed = WakeCalendar.instant(of: bedAt, onDayOf: day, in: calendar)
                else { break }
                // Up at the next day's alarm, or two hours after the weekday one on a day without.
                let wakeTime = schedule.wakeTime(onDayOf: next, in: calendar) ?? Self.time(weekdayMinutes + 120)
                guard let up = WakeCalendar.instant(of: wakeTime, onDayOf: next, in: calendar), up > bed else {
                    continue
                }
                let unplugged = Double(nights.next() >> 11) / Double(UInt64(1) << 53) < options.nightstand
                let screen = platform == .android || options.processingTask
                if !unplugged { add(.phone("charging on"), at: bed) }
                if screen { add(.phone("screen off"), at: bed) }
                if screen { add(.phone("screen on"), at: up) }
                if platform == .android { add(.phone("motion"), at: up) }
                if !unplugged { add(.phone("charging off"), at: up) }
            }
        }
        // The server's daily push (no draw: the other strategies' users stay the same).
        if let priority = options.push {
            for offset in 0...options.days {
                guard let day = WakeCalendar.adding(.day, offset, to: firstDay, in: calendar) else { break }
                if let at = WakeCalendar.instant(of: Self.pushTime, onDayOf: day, in: calendar) {
                    add(.phone("push \(priority.rawValue)"), at: at)
                }
            }
        }
        // Stable order: by instant, then as drawn (the twin keeps that order for equal instants).
        self.steps = steps.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }
            .map(\.element)
    }

    /// The most app opens a user makes in a day (`poisson(mean:_:)`'s cap).
    static let maxOpensPerDay = 10

    /// The count a Poisson distribution with `mean` gives at the cumulative probability `u`
    /// (inversion), at most `maxOpensPerDay`.
    static func poisson(mean: Double, _ u: Double) -> Int {
        var probability = exp(-mean)
        var cumulative = probability
        var count = 0
        while u >= cumulative, count < maxOpensPerDay {
            count += 1
            probability *= mean / Double(count)
            cumulative += probability
        }
        return count
    }

    /// The local time of the server's daily push (`FleetOptions.push`): 04:00, in the night,
    /// when an Android phone on the nightstand is in Doze.
    static let pushTime = LocalTime(hour: 4, minute: 0)!

    /// `minutes` after midnight as a wall time (taken modulo a day).
    static func time(_ minutes: Int) -> LocalTime {
        let m = ((minutes % 1_440) + 1_440) % 1_440
        return LocalTime(hour: m / 60, minute: m % 60)!
    }

    /// The device's twin, not booted: the phone and watch as the executables would run them
    /// with this device's flags.
    /// - Parameters:
    ///   - linkMode: how the twin's link hands messages over; the fleet runs `.messages`
    ///     (the same records as `.frames`, without JSON on the link; docs/performance.md).
    ///   - saysWhy: whether the phone's log has `os.why` lines (`PhoneAppConfiguration.saysWhy`);
    ///     the fleet reads none and leaves them out, which changes nothing else (docs/performance.md).
    package func twin(start: Date, linkMode: Twin.LinkMode = .messages, saysWhy: Bool = false) -> Twin {
        let zone = TimeZone(identifier: home.zone) ?? .gmt
        let taskIdentifier = PhoneAppConfiguration().taskIdentifier
        let os: SimulatedOS
        if platform == .android {
            os = SimulatedOS(AndroidWorkScheduler(configuration: .init(repeatInterval: 6 * 3_600)), seed: osSeed)
        } else {
            var ios = IOSBackgroundScheduler.Configuration(permittedIdentifiers: [taskIdentifier])
            ios.registrationMode = registersLate && lateFrom == nil ? .lateSilent : .early
            ios.opportunity.empirical = fittedDelay
            if opportunityModel != .legacy { ios.opportunityModel = opportunityModel }
            os = SimulatedOS(IOSBackgroundScheduler(configuration: ios, seed: osSeed))
        }
        var app = PhoneAppConfiguration()
        app.deviceID = name
        app.appVersion = FleetOptions.appVersion
        app.horizonDays = horizonDays
        app.processingTask = processingTask && platform == .ios
        app.saysWhy = saysWhy
        let phone = PhoneSetup(
            os: os, weather: OfflineWeatherProvider(seed: deviceSeed), schedule: schedule,
            location: home.location, appConfiguration: app, deviceSeed: deviceSeed,
            node: PhoneNodeConfiguration(
                watchID: "watch", machineZone: zone, statePath: "phone.json", osStatePath: "os.json",
                settings: bucket.map { [.bucket($0)] } ?? [], endpoint: "fleet", boundEndpoint: "fleet", pid: 1,
                security: .none, osState: .new))
        let watch = WatchNode.Configuration(
            endpoint: "fleet", statePath: "watch.json", systemZone: zone, bedAt: bedAt, manualWake: manualWake,
            warnNights: warnNights, requestDates: requestDates)
        var twin = Twin(
            start: start, speed: Self.speed, phone: phone, watch: watch, seed: twinSeed, linkMode: linkMode)
        for (at, step) in steps { twin.schedule(step, at: at) }
        return twin
    }

    /// Runs the device from 00:00 UTC of the fleet's first day to the end of its last one.
    /// - Parameter linkMode: the twin's link (`.messages`, the fleet's, unless given).
    /// - Returns: the run records its phone made before the end (00:00 UTC after the last day:
    ///   a step due at that instant, or a run that ends there, belongs to a day not simulated),
    ///   in order; those from the app update's moment (`lateFrom`) on carry the update's version
    ///   (`FleetOptions.updatedAppVersion`).
    package func run(_ options: FleetOptions, linkMode: Twin.LinkMode = .messages) -> [RunRecord] {
        simulate(options, linkMode: linkMode).records
    }

    /// What one device's simulation gave.
    package struct Outcome: Sendable {
        /// The run records, as `run(_:linkMode:)` returns them.
        package var records: [RunRecord]
        /// The watch's nights, one per bed tap before the end (`WatchNight`).
        package var nights: [WatchNight]
        /// The app's background launches before the end: the OS's launches for the refresh task
        /// (`os.launch`, whether the handler was entered or not), its wakes for a watch
        /// message (`os.watch_message` with `woken`) and the pushes the app got (`push.received`).
        package var launches: Int
        /// Bytes phone and watch put on their link, both ways, as wire frames (measured only
        /// when asked: `measureBytes`; else 0).
        package var linkBytes: Int
        /// The watch's REQUEST checks that found its nights low with the link up
        /// (`Twin.watchRequestChecksLow`); 0 in a run without `--request-dates` means the run
        /// with it, at the same `--warn-nights`, is this one.
        package var requestChecksLow = 0
    }

    /// Runs the device as `run(_:linkMode:)` does and also reads its watch's nights and its
    /// launches off the twin's log.
    /// - Parameters:
    ///   - linkMode: the twin's link (`.messages` unless given).
    ///   - measureBytes: whether to measure the link's bytes (`Twin.measureLinkBytes()`: each
    ///     message encoded once more, so it costs time).
    package func simulate(
        _ options: FleetOptions, linkMode: Twin.LinkMode = .messages, measureBytes: Bool = false
    ) -> Outcome {
        // Nothing here reads the twin's `os.why` lines: leaving them out spares computing the
        // answer after every call into the OS, a fifth of the device-day (docs/performance.md).
        var twin = twin(start: options.startInstant, linkMode: linkMode, saysWhy: false)
        if measureBytes { twin.measureLinkBytes() }
        twin.boot()
        twin.run(until: options.endInstant)
        let end = options.endInstant
        let records = stamped(twin.runRecords.filter { $0.at < end })
        var launches = 0
        for entry in twin.log where entry.at < end {
            switch entry.event.name {
            case .osLaunch: launches += 1
            case .osWatchMessage where entry.event["woken"] == .bool(true): launches += 1
            case .pushReceived: launches += 1
            default: continue
            }
        }
        let nights = WatchNight.nights(
            of: twin.log.filter { $0.at < end || $0.event.name == .alarmFired }, device: name, platform: platform,
            schedule: schedule, records: records, end: end)
        let bytes = twin.linkBytes
        return Outcome(
            records: records, nights: nights.filter { $0.tapAt < end }, launches: launches,
            linkBytes: bytes.toWatch + bytes.toPhone, requestChecksLow: twin.watchRequestChecksLow)
    }

    /// `records` of this device's twin with the app version of their moment: the update's
    /// (`FleetOptions.updatedAppVersion`) from `lateFrom` on, else the one it was built with.
    package func stamped(_ records: [RunRecord]) -> [RunRecord] {
        guard let lateFrom else { return records }
        return records.map { record in
            var record = record
            if record.at >= lateFrom { record.appVersion = FleetOptions.updatedAppVersion }
            return record
        }
    }
}

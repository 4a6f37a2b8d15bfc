// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// Android's deep and light Doze timings (AOSP `DeviceIdleController` constants), in virtual seconds.
///
/// Defaults: `INACTIVE_TIMEOUT` 30 min after the screen goes off on battery, then 30 min of
/// sensing (`IDLE_AFTER_INACTIVE_TIMEOUT`), then idle periods of 1 h (`IDLE_TIMEOUT`) growing by
/// `IDLE_FACTOR` 2 up to 6 h (`MAX_IDLE_TIMEOUT`): 1, 2, 4, 6, 6 … h; between them maintenance
/// windows from 5 min (`MIN_DEEP_MAINTENANCE_TIME`) to 10 min. How the window grows between the
/// two (`maintenanceFactor`, default 2: 5 then 10 min) is this model's assumption.
public struct DozeSettings: Codable, Equatable, Sendable {
    /// Screen off, unplugged and still for this long: the device starts sensing (default 1,800 s).
    public var inactiveTimeout: TimeInterval
    /// Sensing for this long without motion: the device enters deep idle (default 1,800 s).
    public var sensingTimeout: TimeInterval
    /// The first idle period (default 3,600 s).
    public var idleTimeout: TimeInterval
    /// Each idle period is this many times the previous one (default 2).
    public var idleFactor: Double
    /// The longest idle period (default 21,600 s, 6 h).
    public var maxIdleTimeout: TimeInterval
    /// The first maintenance window (default 300 s).
    public var minMaintenance: TimeInterval
    /// The longest maintenance window (default 600 s).
    public var maxMaintenance: TimeInterval
    /// Each window is this many times the previous one (default 2; this model's assumption).
    public var maintenanceFactor: Double
    /// Light Doze: screen off and unplugged this long (motion allowed), the device goes light
    /// idle after `lightPreIdleTimeout` (default 60 s, `LIGHT_IDLE_AFTER_INACTIVE_TIMEOUT`);
    /// nil in an older encoding = the default.
    public var lightAfterInactiveTimeout: TimeInterval?
    /// Light pre-idle, waiting for running work, seconds (default 180, `LIGHT_PRE_IDLE_TIMEOUT`).
    public var lightPreIdleTimeout: TimeInterval?
    /// The first light idle period, seconds (default 300, `LIGHT_IDLE_TIMEOUT`); each next one
    /// is twice as long (`LIGHT_IDLE_FACTOR` 2) up to `lightMaxIdleTimeout`.
    public var lightIdleTimeout: TimeInterval?
    /// The longest light idle period, seconds (default 900, `LIGHT_MAX_IDLE_TIMEOUT`).
    public var lightMaxIdleTimeout: TimeInterval?
    /// A light maintenance window, seconds (default 60, `LIGHT_IDLE_MAINTENANCE_MIN_BUDGET`; that
    /// every window has the minimum budget is this model's assumption).
    public var lightMaintenance: TimeInterval?

    /// The light Doze timings with their defaults filled in, seconds: after-inactive, pre-idle,
    /// first idle, longest idle, maintenance window (AOSP `DeviceIdleController` defaults 60,
    /// 180, 300, 900, 60).
    var light:
        (
            afterInactive: TimeInterval, preIdle: TimeInterval, idle: TimeInterval, maxIdle: TimeInterval,
            maintenance: TimeInterval
        )
    {
        let idle = max(1, lightIdleTimeout ?? 300)
        return (
            max(0, lightAfterInactiveTimeout ?? 60), max(0, lightPreIdleTimeout ?? 180), idle,
            max(idle, lightMaxIdleTimeout ?? 900), max(1, lightMaintenance ?? 60)
        )
    }

    /// - Parameters: the timings in seconds and the factors; see the properties.
    public init(
        inactiveTimeout: TimeInterval = 1_800, sensingTimeout: TimeInterval = 1_800, idleTimeout: TimeInterval = 3_600,
        idleFactor: Double = 2, maxIdleTimeout: TimeInterval = 21_600, minMaintenance: TimeInterval = 300,
        maxMaintenance: TimeInterval = 600, maintenanceFactor: Double = 2
    ) {
        self.inactiveTimeout = max(0, inactiveTimeout)
        self.sensingTimeout = max(0, sensingTimeout)
        self.idleTimeout = max(60, idleTimeout)
        self.idleFactor = max(1, idleFactor)
        self.maxIdleTimeout = max(self.idleTimeout, maxIdleTimeout)
        self.minMaintenance = max(1, minMaintenance)
        self.maxMaintenance = max(self.minMaintenance, maxMaintenance)
        self.maintenanceFactor = max(1, maintenanceFactor)
    }
}

/// Where the device is in Doze at an instant.
public enum DozePhase: String, Sendable {
    /// Screen on, charging, or moved recently: no Doze.
    case active
    /// Screen off on battery, waiting out `inactiveTimeout`.
    case inactive
    /// Checking that the device stays still (`sensingTimeout`).
    case sensing
    /// Deep idle: jobs and regular alarms wait for the next maintenance window.
    case idle
    /// A maintenance window: deferred jobs run.
    case maintenance
}

/// Where the device is in light Doze (AOSP `DeviceIdleController` light states) at an instant.
public enum LightDozePhase: String, Sendable {
    /// Screen on or charging: no light Doze.
    case active
    /// Screen off on battery, waiting out the after-inactive and pre-idle timeouts (work runs).
    case inactive
    /// Light idle: jobs wait for the next light maintenance window.
    case idle
    /// A light maintenance window: deferred jobs run.
    case maintenance
}

/// The device's Doze inputs: screen, stillness, `dumpsys deviceidle force-idle | step | unforce`.
/// Value type; `AndroidWorkScheduler` keeps it (optional in the encoding: an older file has none).
struct DozeState: Codable, Equatable, Sendable {
    /// The screen is on (default: a phone in use, so an older encoding behaves as before).
    var screenOn = true
    /// The instant the device was last picked up (`motion`), nil when never.
    var lastMotion: Date?
    /// When the screen went off (nil while on).
    var screenOffAt: Date?
    /// When the device was unplugged (nil while charging or never seen).
    var unpluggedAt: Date?
    /// `idle force`: deep idle from this instant whatever the screen or the charger.
    var forcedAt: Date?
    /// Seconds `idle step` moved the timeline ahead.
    var stepShift: TimeInterval = 0

    /// The instant the Doze timeline starts (inactive), nil when the device is not quiet.
    func origin(charging: Bool, settings: DozeSettings) -> Date? {
        if let forcedAt { return forcedAt.addingTimeInterval(-(settings.inactiveTimeout + settings.sensingTimeout)) }
        guard !screenOn, !charging, let off = screenOffAt else { return nil }
        return [off, unpluggedAt, lastMotion].compactMap { $0 }.max()
    }

    /// The phase at `now`, with the instant it began and the one it ends (nil: lasts while the
    /// inputs stay as they are).
    func phase(at now: Date, charging: Bool, settings s: DozeSettings) -> (DozePhase, start: Date?, end: Date?) {
        guard let origin = origin(charging: charging, settings: s), now >= origin else { return (.active, nil, nil) }
        let e = now.timeIntervalSince(origin) + stepShift
        let base = now.addingTimeInterval(-e)
        func at(_ offset: TimeInterval) -> Date { base.addingTimeInterval(offset) }
        if e < s.inactiveTimeout { return (.inactive, at(0), at(s.inactiveTimeout)) }
        let idleStart = s.inactiveTimeout + s.sensingTimeout
        if e < idleStart { return (.sensing, at(s.inactiveTimeout), at(idleStart)) }
        var t = idleStart
        var idle = s.idleTimeout
        var window = s.minMaintenance
        // Idle periods reach their cap within a few steps; then every cycle is the same length.
        for _ in 0..<10_000 {
            if e < t + idle { return (.idle, at(t), at(t + idle)) }
            t += idle
            if e < t + window { return (.maintenance, at(t), at(t + window)) }
            t += window
            idle = min(idle * s.idleFactor, s.maxIdleTimeout)
            window = min(window * s.maintenanceFactor, s.maxMaintenance)
            if idle == s.maxIdleTimeout && window == s.maxMaintenance {
                let cycle = idle + window
                let skip = ((e - t) / cycle).rounded(.down)
                if skip > 0 { t += skip * cycle }
            }
        }
        return (.active, nil, nil)
    }
}

extension DozeState {
    /// The light Doze phase at `now`, with its start and end (nil: lasts while the inputs stay).
    /// Light Doze follows the screen and the charger only: a motion does not end it (Android 7.0,
    /// "Doze on the go"). Deep idle (forced or not) is not light Doze: callers check deep first.
    func lightPhase(at now: Date, charging: Bool, settings: DozeSettings) -> (
        LightDozePhase, start: Date?, end: Date?
    ) {
        guard !screenOn, !charging, let off = screenOffAt else { return (.active, nil, nil) }
        let origin = [off, unpluggedAt].compactMap { $0 }.max() ?? off
        guard now >= origin else { return (.active, nil, nil) }
        let l = settings.light
        let e = now.timeIntervalSince(origin)
        func at(_ offset: TimeInterval) -> Date { origin.addingTimeInterval(offset) }
        let idleStart = l.afterInactive + l.preIdle
        if e < idleStart { return (.inactive, at(0), at(idleStart)) }
        var t = idleStart
        var idle = l.idle
        for _ in 0..<10_000 {
            if e < t + idle { return (.idle, at(t), at(t + idle)) }
            t += idle
            if e < t + l.maintenance { return (.maintenance, at(t), at(t + l.maintenance)) }
            t += l.maintenance
            idle = min(idle * 2, l.maxIdle)
            if idle == l.maxIdle {
                let cycle = idle + l.maintenance
                let skip = ((e - t) / cycle).rounded(.down)
                if skip > 0 { t += skip * cycle }
            }
        }
        return (.active, nil, nil)
    }
}

/// A Doze input (Android): the screen, a significant motion, or a `dumpsys deviceidle` control
/// (`adb shell dumpsys deviceidle force-idle | step | unforce`).
public enum DozeInput: Equatable, Sendable {
    /// `screen on|off`.
    case screen(Bool)
    /// `motion`: the device is picked up.
    case motion
    /// `idle force`: `dumpsys deviceidle force-idle`.
    case force
    /// `idle step`: `dumpsys deviceidle step`.
    case step
    /// `idle off`: `dumpsys deviceidle unforce`.
    case unforce

    /// The input in words, e.g. "screen off", "idle step".
    public var text: String {
        switch self {
        case .screen(let on): "screen \(on ? "on" : "off")"
        case .motion: "motion"
        case .force: "idle force"
        case .step: "idle step"
        case .unforce: "idle off"
        }
    }
}

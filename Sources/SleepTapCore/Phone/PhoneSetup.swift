// SPDX-License-Identifier: Apache-2.0

public import Foundation
public import SleepTapOS

/// Everything a phone is built from: the settings its command line gives and the OS it starts
/// on. The `phone` process, the embedded twin (`TwinBuilder` and hand-built twins), the fleet
/// and the benchmarks all build their `PhoneNode` through `makeNode(state:os:randomSeed:)`, so
/// no two hosts put a phone together differently.
public struct PhoneSetup: Sendable {
    /// The simulated OS at first start (later starts pass the stored one to `makeNode`).
    public var os: SimulatedOS
    /// Where forecasts come from (`OfflineWeatherProvider` in most twins).
    public var weather: any WeatherProvider
    /// The user's wake schedule as read at start.
    public var schedule: WakeSchedule
    /// Where the device is (the weather step's sunlight plan).
    public var location: Coordinate
    /// The app's settings: task identifier, horizon, step costs, device name, app version.
    public var appConfiguration: PhoneAppConfiguration
    /// The device seed (daily rotation of notice texts); it wins over a stored state's.
    public var deviceSeed: UInt64
    /// `phone.started` fields and the rest of the node's settings, the zone flags among them
    /// (`PhoneZone`). The twin has no files: with a `schedulePath`, every read of it gives
    /// `schedule` (as a file that does not change).
    public var node: PhoneNodeConfiguration
    /// What a start on a stored OS (a restart) applies to it: the command line's device flags,
    /// as `phone` applies them to its os.json at every start (a flag given at a restart
    /// overrides the stored value: `--registration` installs an update, `--budget` and the
    /// other OS flags are set again). The instant is the start's (virtual). nil: nothing.
    public var storedOSFlags: (@Sendable (SimulatedOS, Date) -> SimulatedOS)?

    /// A phone with every part given; each parameter sets the property of its name.
    public init(
        os: SimulatedOS, weather: any WeatherProvider, schedule: WakeSchedule, location: Coordinate,
        appConfiguration: PhoneAppConfiguration = PhoneAppConfiguration(), deviceSeed: UInt64,
        node: PhoneNodeConfiguration
    ) {
        self.os = os
        self.weather = weather
        self.schedule = schedule
        self.location = location
        self.appConfiguration = appConfiguration
        self.deviceSeed = deviceSeed
        self.node = node
    }

    /// A phone on `os` that lives in `zone`, as most twins need one: the embedded node
    /// configuration (`PhoneNodeConfiguration.embedded(zone:watchID:)`: endpoint `twin`, pid 1,
    /// no CURVE, a new OS, `zone` as `--time-zone`), offline weather seeded from `deviceSeed`,
    /// and the app's default configuration (one consolidated refresh task).
    ///
    /// - Parameters:
    ///   - os: the simulated OS at first start, for example
    ///     `SimulatedOS(IOSBackgroundScheduler(configuration:seed:))`.
    ///   - schedule: the user's wake schedule.
    ///   - zone: the device's zone; the schedule's local times are in it.
    ///   - location: where the device is (the weather step's sunlight plan).
    ///   - deviceSeed: the device seed (notice texts) and the offline weather's seed.
    public init(
        os: SimulatedOS, schedule: WakeSchedule, zone: TimeZone, location: Coordinate, deviceSeed: UInt64 = 1
    ) {
        self.init(
            os: os, weather: OfflineWeatherProvider(seed: deviceSeed), schedule: schedule, location: location,
            deviceSeed: deviceSeed, node: .embedded(zone: zone))
    }

    /// The phone node for one start of the app.
    /// - Parameters:
    ///   - state: the sync state read back from the state file; nil starts afresh. Its device
    ///     seed is replaced by `deviceSeed`.
    ///   - stored: the OS read back from its state file, `storedOSFlags` applied to it at `now`;
    ///     nil starts on `os`. The node's `phone.started` then says `osState` `stored`.
    ///   - randomSeed: seeds the sync core's random epochs (`SplitMix64`).
    ///   - now: the start's instant (virtual), for `storedOSFlags`.
    /// - Returns: the node, not started; its zone follows `PhoneZone` from `node`'s flags and
    ///   the OS's kept zone.
    public func makeNode(
        state: PhoneSyncState?, os stored: SimulatedOS?, randomSeed: UInt64, at now: Date = .distantPast
    ) -> PhoneNode {
        var state = state ?? PhoneSyncState(deviceSeed: deviceSeed)
        state.deviceSeed = deviceSeed
        var node = node
        if stored != nil { node.osState = .stored }
        var scheduler = stored.map { storedOSFlags?($0, now) ?? $0 } ?? os
        // A value handed over in memory (the twin's restart) says no more than one read back
        // from os.json: none of Doze's changes while no process ran.
        scheduler.forgetSaidDozeChanges()
        let app = PhoneApp(
            state: state, scheduler: scheduler, weather: weather, schedule: schedule,
            zones: PhoneZone(flag: node.timeZone, machine: node.machineZone), location: location,
            configuration: appConfiguration, randomSeed: randomSeed)
        return PhoneNode(app: app, configuration: node)
    }
}

// SPDX-License-Identifier: Apache-2.0
package import Foundation
package import SleepTapCalibration
package import SleepTapCore
package import SleepTapOS

/// What a simulated fleet is: how many devices, for how long, and the shares of its users'
/// platforms, app builds and habits (`sleeptap-fleet`'s flags, docs/fleet.md).
package struct FleetOptions: Equatable, Sendable {
    /// Devices in the whole fleet, numbered 0 ..< devices (a shard runs some of them).
    package var devices: Int
    /// Simulated UTC days.
    package var days: Int
    /// The first simulated UTC day; the run starts at its 00:00 UTC.
    package var start: LocalDate
    /// Seeds every device's user, OS and link (SplitMix64).
    package var seed: UInt64 = 0
    /// XORed into every device's OS seed (`--os-seed`; default 0: the OS seed `seed` draws): the
    /// same users with other OS draws, to compare two OS models on one population (`OSModelTests`).
    package var osSeedSalt: UInt64 = 0
    /// Share of iOS devices in 0...1; the rest are Android.
    package var iosShare: Double = 0.6
    /// Share of iOS devices in 0...1 whose app registers its refresh handler too late (SwiftUI's
    /// `.backgroundTask`, `RegistrationMode.lateSilent`): submit succeeds, the handler never runs.
    package var lateRegistration: Double = 0
    /// The UTC day on which the app update that registers late reaches those devices (each at a
    /// time of that day drawn per device); nil: their app registers late from the start.
    package var lateRegistrationFrom: LocalDate?
    /// App opens per user per day, on average (Poisson, at most 10 a day), 0...10.
    package var opens: Double = 1.5
    /// Share of days in 0...1 on which a user turns Low Power Mode (Battery Saver) on for some hours.
    package var lowPower: Double = 0.1
    /// Share of Android nights in 0...1 on which the phone lies on the nightstand unplugged, screen
    /// off and still, from the bed tap to the morning's wake-up, so Doze takes it (AOSP
    /// `DeviceIdleController`, docs/scheduler.md); on the other nights it charges. An iOS phone
    /// has no Doze; its nights are drawn the same way for the processing task and on the usage
    /// model (unplugged nights drain its battery). The share is this model's assumption: no
    /// platform owner publishes how many users charge overnight.
    package var nightstand: Double = 0.5
    /// Shares of the Android standby buckets, summing to 1, in `StandbyBucket.all` order.
    package var buckets: [StandbyBucket: Double] = FleetOptions.defaultBuckets
    /// The fitted OS the devices run on (`--os-model FILE`, docs/calibration.md): an iOS device
    /// draws its launch delays from the most specific iOS group of the model for its app version
    /// (`FleetOptions.appVersion`) that has data; nil, or no such group: the built-in draws.
    package var osModel: CalibratedOS?
    /// How the iOS devices' OS draws app-refresh launches (`--opportunity-model`, default usage,
    /// as a new phone's: `OSOptions.defaultOpportunityModel`).
    package var opportunityModel: OpportunityModelKind = .usage
    /// The model file `osModel` was read from, for the summary; nil without one.
    package var osModelFile: String?
    /// The FNV-1a 64 hash of the model file's bytes, 16 hex digits (`FNV1a64`): what identifies the
    /// model across machines and paths (a `--merge` compares it, not the path); nil without one.
    package var osModelDigest: String?
    /// Local days of wake-ups in each batch the phone sends (`phone --horizon-days`, default
    /// `BatchPlanner.defaultHorizonDays`, 7).
    package var horizonDays = BatchPlanner.defaultHorizonDays
    /// Whether the watch asks the phone for dates when they run low (`watch --request-dates`,
    /// docs/protocol.md "REQUEST").
    package var requestDates = false
    /// Whether the iOS app also submits a nightly `BGProcessingTask` on the charger (`phone
    /// --processing-task on`); its users then put the phone on the charger, screen off, at bed
    /// time on the nights `nightstand` does not leave it unplugged.
    package var processingTask = false
    /// A server push to every device each day at `FleetDevice.pushTime` local, with this
    /// priority (`sleeptap-compare`'s `push` and `push-normal`, docs/scheduler.md "A server
    /// push"); nil = none.
    package var push: PushPriority?
    /// The watch's `--warn-nights`: `coverage.low` (and, with `requestDates`, a REQUEST) when the
    /// cached nights left fall to this many (default 2).
    package var warnNights = WatchNode.Configuration.defaultWarnNights
    /// Whether `FleetRun` also writes the watch's night records (`sleeptap-fleet --watch-nights`,
    /// `WatchNight`).
    package var watchNights = false
    /// This run's shard: devices whose index ≡ `shardIndex` (mod `shardCount`).
    package var shardIndex = 0
    package var shardCount = 1

    /// The app version every simulated device starts with (`RunRecord.appVersion`).
    package static let appVersion = "1.0"
    /// The version of the app update `lateRegistrationFrom` installs (the one that registers late).
    package static let updatedAppVersion = "1.1"

    /// The default standby-bucket mix (an engaged app's users: mostly active and working set).
    package static let defaultBuckets: [StandbyBucket: Double] = [
        .active: 0.3, .workingSet: 0.3, .frequent: 0.2, .rare: 0.15, .restricted: 0.05,
    ]

    package init(devices: Int, days: Int, start: LocalDate) {
        self.devices = devices
        self.days = days
        self.start = start
    }

    /// The device indices of this shard, in order.
    package var shardDevices: StrideTo<Int> { stride(from: shardIndex, to: devices, by: shardCount) }

    /// How many devices `shardDevices` holds.
    package var shardDeviceCount: Int { devices > shardIndex ? (devices - shardIndex - 1) / shardCount + 1 : 0 }

    /// 00:00 UTC of `start`.
    package var startInstant: Date { Self.midnightUTC(start) }

    /// 00:00 UTC after the last simulated day.
    package var endInstant: Date {
        Self.utc.date(byAdding: .day, value: days, to: startInstant) ?? startInstant
    }

    /// The Gregorian calendar in UTC, for the run's days.
    package static let utc = WakeCalendar.calendar(in: TimeZone(identifier: "UTC") ?? .gmt)

    /// 00:00 UTC of a calendar date.
    package static func midnightUTC(_ date: LocalDate) -> Date {
        utc.date(from: DateComponents(year: date.year, month: date.month, day: date.day))
            ?? Date(timeIntervalSince1970: 0)
    }
}

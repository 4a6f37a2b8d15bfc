// SPDX-License-Identifier: Apache-2.0
public import Foundation
public import SleepTapOS

/// One background-refresh run record: a thing that matters for freshness, as a value. The phone
/// app (`PhoneApp`) produces them as `PhoneAction.record` (no I/O); the phone process appends them
/// to `DIR/metrics/bg_runs/<device>-<YYYY-MM-DD>.json` (`--metrics-dir`), the twin collects them,
/// and `sleeptap-report` reads them. The file format and the meaning of every field are in
/// docs/metrics.md.
///
/// Instants are kept to the millisecond (the file's precision), so a record read back from its
/// file equals the record written.
public struct RunRecord: Equatable, Hashable, Sendable {
    /// What happened. The raw value is the file's `kind`.
    public enum Kind: String, CaseIterable, Codable, Sendable {
        /// A request was accepted (iOS `BGTaskScheduler.submit`, Android `enqueueUniquePeriodicWork`).
        case submitted
        /// A submit was refused (`reason` says why).
        case submitFailed = "submit_failed"
        /// The OS launched the task and the handler was entered (`success`, `expired`).
        case background
        /// The OS launched the app for the task but no handler was registered in time.
        case dropped
        /// The user opened the app (its `stalenessHours` is what the user saw).
        case foreground
        /// The app ran its job for a server push (iOS: a silent background notification's
        /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`; Android:
        /// `FirebaseMessagingService.onMessageReceived`), outside the task scheduler: a
        /// background run that answers no request (`success`, `expired`; no earliestBeginDate).
        case push

        /// Whether a record of this kind is a run the app got without the user, the runs
        /// staleness counts (`background`, `push`): it carries `success` and `expired`.
        public var isRun: Bool { self == .background || self == .push }
    }

    /// The device's name: 1 to 64 of `A-Z a-z 0-9 . _ -`, not starting with `.` (it is part of a
    /// file name).
    public var device: String
    /// The device's platform: `ios` or `android`.
    public var platform: Platform
    /// What happened.
    public var kind: Kind
    /// When it happened (UTC instant, milliseconds). For `background`, the end of the run.
    public var at: Date
    /// `submitted`: the request's earliestBeginDate. `background`, `dropped`: the
    /// earliestBeginDate of the request the launch answered (the run's scheduled time; on Android
    /// the work's next run time). Otherwise nil.
    public var earliestBeginDate: Date?
    /// `background` and `push` only: whether the run finished its work
    /// (`setTaskCompleted(success:)`, `Result.success()`, the push's fetch completion handler).
    public var success: Bool?
    /// `background` and `push` only: whether the expiration handler ran (the budget ran out).
    public var expired: Bool?
    /// Low Power Mode (iOS) or Battery Saver (Android) at `at`.
    public var lowPower: Bool
    /// The Android standby bucket at `at`; nil on iOS.
    public var bucket: StandbyBucket?
    /// WorkManager's `runAttemptCount` of the run (Android `background`, `dropped` and the
    /// `submitted`/`submit_failed` made by such a run); nil otherwise.
    public var attempt: Int?
    /// Hours from this device's last successful background run to `at` (≥ 0); nil when there has
    /// never been one. A foreground refresh does not reset it.
    public var stalenessHours: Double?
    /// `submit_failed` only: why.
    public var reason: String?
    /// The app's version that wrote the record (`phone --app-version`; a simulated fleet's build,
    /// bumped by its app update); nil when not known. 1 to 64 printable ASCII characters.
    public var appVersion: String?
    /// Android `background` only: `WorkInfo.getStopReason()` when the OS stopped the Worker
    /// before it returned (the `JobParameters.STOP_REASON_*` codes, 0 to 15; this model gives 10
    /// `STOP_REASON_QUOTA`); nil when the run returned its own result, and on every other kind.
    public var stopReason: Int?

    /// The `JobParameters.STOP_REASON_*` codes `stopReason` may hold (0 `UNDEFINED` to 15
    /// `ESTIMATED_APP_LAUNCH_TIME_CHANGED`, Android 14).
    public static let stopReasonRange = 0...15

    /// A record; `at` and `earliestBeginDate` are rounded to the millisecond. No rule is
    /// checked here: see `problem`.
    public init(
        device: String, platform: Platform, kind: Kind, at: Date, earliestBeginDate: Date? = nil,
        success: Bool? = nil, expired: Bool? = nil, lowPower: Bool = false, bucket: StandbyBucket? = nil,
        attempt: Int? = nil, stalenessHours: Double? = nil, reason: String? = nil, appVersion: String? = nil,
        stopReason: Int? = nil
    ) {
        self.device = device
        self.platform = platform
        self.kind = kind
        self.at = Self.milliseconds(at)
        self.earliestBeginDate = earliestBeginDate.map(Self.milliseconds)
        self.success = success
        self.expired = expired
        self.lowPower = lowPower
        self.bucket = bucket
        self.attempt = attempt
        self.stalenessHours = stalenessHours
        self.reason = reason
        self.appVersion = appVersion
        self.stopReason = stopReason
    }

    /// Whether `text` can be an app version: 1 to 64 printable ASCII characters (`1.4.2`,
    /// `2026.11 (312)`), no control character.
    public static func isValidAppVersion(_ text: String) -> Bool {
        let bytes = text.utf8
        return (1...64).contains(bytes.count) && bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }

    /// `date` rounded to the nearest millisecond (the file's precision).
    public static func milliseconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1_000).rounded() / 1_000)
    }

    /// Whether `name` can be a device name: 1 to 64 of `A-Z a-z 0-9 . _ -`, not starting with `.`.
    public static func isValidDevice(_ name: String) -> Bool {
        let bytes = name.utf8
        guard (1...64).contains(bytes.count), bytes.first != UInt8(ascii: ".") else { return false }
        return bytes.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: "-")
        }
    }

    /// Why this record breaks the format's rules, nil when it keeps them: the device name, the
    /// fields that belong to one kind only, the bucket on the right platform, ranges.
    public var problem: (field: String, reason: String)? {
        if !Self.isValidDevice(device) {
            return ("device", "must be 1 to 64 of A-Z a-z 0-9 . _ - and not start with '.'")
        }
        if kind.isRun {
            if success == nil { return ("success", "required for kind \(kind.rawValue)") }
            if expired == nil { return ("expired", "required for kind \(kind.rawValue)") }
        } else {
            if success != nil { return ("success", "only kinds background and push have it (use null)") }
            if expired != nil { return ("expired", "only kinds background and push have it (use null)") }
        }
        if kind == .submitted, earliestBeginDate == nil { return ("earliestBeginDate", "required for kind submitted") }
        if kind == .foreground || kind == .push, earliestBeginDate != nil {
            return ("earliestBeginDate", "kind \(kind.rawValue) has none (use null)")
        }
        if kind == .submitFailed {
            if reason == nil { return ("reason", "required for kind submit_failed") }
        } else if reason != nil {
            return ("reason", "only kind submit_failed has it (use null)")
        }
        switch platform {
        case .ios where bucket != nil: return ("bucket", "iOS has no standby bucket (use null)")
        case .android where bucket == nil: return ("bucket", "required on android: the standby bucket's name")
        default: break
        }
        if let appVersion, !Self.isValidAppVersion(appVersion) {
            return ("appVersion", "must be 1 to 64 printable ASCII characters or null")
        }
        if let attempt {
            if platform != .android { return ("attempt", "only android records have it (use null)") }
            if attempt < 0 { return ("attempt", "must not be negative") }
        }
        if let stopReason {
            if kind != .background || platform != .android {
                return ("stopReason", "only an android background record has it (use null)")
            }
            if !Self.stopReasonRange.contains(stopReason) {
                return ("stopReason", "must be a STOP_REASON_* code from 0 to 15 or null")
            }
        }
        if let stalenessHours, !(stalenessHours >= 0 && stalenessHours.isFinite) {
            return ("stalenessHours", "must be a finite number ≥ 0 or null")
        }
        // Runs are recorded from 1970 on (ISO-8601 instants), so the last one cannot be longer ago.
        if let stalenessHours, stalenessHours * 3_600 > at.timeIntervalSince1970 {
            return ("stalenessHours", "longer ago than 1970-01-01 at this record's at")
        }
        return nil
    }
}

// MARK: - Codable

extension RunRecord: Codable {
    /// The file's keys, in the (sorted) order they are written.
    public static let keys = [
        "appVersion", "at", "attempt", "bucket", "device", "earliestBeginDate", "expired", "kind", "lowPower",
        "platform",
        "reason", "stalenessHours", "stopReason", "success",
    ]

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Strict: every key known (an unknown key is an error naming it), `device`, `platform`,
    /// `kind`, `at` and `lowPower` present, the others present or absent (absent = null; older
    /// files have no `appVersion` or `stopReason`), each of
    /// its type, and the record's rules (`problem`).
    /// - Throws: `DecodingError.dataCorrupted` naming the field.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        for key in container.allKeys where !Self.keys.contains(key.stringValue) {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container,
                debugDescription: "unknown key (expected \(Self.keys.joined(separator: ", ")))")
        }
        func date(_ name: String, required: Bool) throws -> Date? {
            let key = Key(name)
            guard
                let text = required
                    ? try container.decode(String.self, forKey: key)
                    : try container.decodeIfPresent(String.self, forKey: key)
            else { return nil }
            guard let value = RunRecordFile.parseInstant(Array(text.utf8)[...]) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "not an ISO-8601 UTC instant (2026-03-07T11:30:00Z)")
            }
            return value
        }
        let platformName = try container.decode(String.self, forKey: Key("platform"))
        guard let platform = Platform(rawValue: platformName) else {
            throw DecodingError.dataCorruptedError(
                forKey: Key("platform"), in: container, debugDescription: "expected ios or android")
        }
        let kindName = try container.decode(String.self, forKey: Key("kind"))
        guard let kind = Kind(rawValue: kindName) else {
            throw DecodingError.dataCorruptedError(
                forKey: Key("kind"), in: container,
                debugDescription: "expected submitted, submit_failed, background, dropped, foreground or push")
        }
        var bucket: StandbyBucket?
        if let name = try container.decodeIfPresent(String.self, forKey: Key("bucket")) {
            guard let value = StandbyBucket(name: name) else {
                throw DecodingError.dataCorruptedError(
                    forKey: Key("bucket"), in: container,
                    debugDescription: "expected active, working_set, frequent, rare or restricted")
            }
            bucket = value
        }
        self.init(
            device: try container.decode(String.self, forKey: Key("device")), platform: platform, kind: kind,
            at: try date("at", required: true)!, earliestBeginDate: try date("earliestBeginDate", required: false),
            success: try container.decodeIfPresent(Bool.self, forKey: Key("success")),
            expired: try container.decodeIfPresent(Bool.self, forKey: Key("expired")),
            lowPower: try container.decode(Bool.self, forKey: Key("lowPower")), bucket: bucket,
            attempt: try container.decodeIfPresent(Int.self, forKey: Key("attempt")),
            stalenessHours: try container.decodeIfPresent(Double.self, forKey: Key("stalenessHours")),
            reason: try container.decodeIfPresent(String.self, forKey: Key("reason")),
            appVersion: try container.decodeIfPresent(String.self, forKey: Key("appVersion")),
            stopReason: try container.decodeIfPresent(Int.self, forKey: Key("stopReason")))
        if let problem {
            throw DecodingError.dataCorruptedError(
                forKey: Key(problem.field), in: container, debugDescription: problem.reason)
        }
    }

    /// Every key, null where there is no value; instants as `RunRecordFile.instantString`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        // One function per value type, so that each value goes through the container's
        // overload for its type (a generic value is first checked against the types an encoder
        // writes its own way, which cost more than the writing); the same JSON either way.
        func put(_ name: String, _ value: String?) throws {
            if let value {
                try container.encode(value, forKey: Key(name))
            } else {
                try container.encodeNil(forKey: Key(name))
            }
        }
        func put(_ name: String, _ value: Int?) throws {
            if let value {
                try container.encode(value, forKey: Key(name))
            } else {
                try container.encodeNil(forKey: Key(name))
            }
        }
        func put(_ name: String, _ value: Bool?) throws {
            if let value {
                try container.encode(value, forKey: Key(name))
            } else {
                try container.encodeNil(forKey: Key(name))
            }
        }
        func put(_ name: String, _ value: Double?) throws {
            if let value {
                try container.encode(value, forKey: Key(name))
            } else {
                try container.encodeNil(forKey: Key(name))
            }
        }
        try put("appVersion", appVersion)
        try put("at", RunRecordFile.instantString(at))
        try put("attempt", attempt)
        try put("bucket", bucket?.name)
        try put("device", device)
        try put("earliestBeginDate", earliestBeginDate.map(RunRecordFile.instantString))
        try put("expired", expired)
        try put("kind", kind.rawValue)
        try put("lowPower", lowPower)
        try put("platform", platform.rawValue)
        try put("reason", reason)
        try put("stalenessHours", stalenessHours)
        try put("stopReason", stopReason)
        try put("success", success)
    }
}

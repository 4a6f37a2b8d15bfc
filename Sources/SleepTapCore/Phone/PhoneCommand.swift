// SPDX-License-Identifier: Apache-2.0

public import Foundation
public import SleepTapOS

/// One command of the phone's stdin language (docs/protocol.md, "Phone stdin"), parsed.
public enum PhoneCommand: Equatable, Sendable {
    /// The user opens the app: the schedule file is read again, then launch and foreground refresh.
    case open
    /// One `phone.status` event.
    case status
    /// One `os.why` event: every condition holding the pending refresh back, now.
    case why
    /// One `run.record` event per run in the history.
    case history
    /// One `notification.pending` event per pending notification.
    case notifications
    /// Travel: the phone's zone becomes this one (it wins over `--time-zone` and the schedule file).
    case timeZone(TimeZone)
    /// The phone moves to this place.
    case move(Coordinate)
    /// Low Power Mode (iOS) or Battery Saver (Android) on or off.
    case lowPower(Bool)
    /// Background App Refresh (iOS), or background work at all (Android), on or off.
    case backgroundRefresh(Bool)
    /// Plugged in or not (Android: quotas and constraints; iOS: a processing task's
    /// `requiresExternalPower`).
    case charging(Bool)
    /// Android: the App Standby bucket.
    case bucket(StandbyBucket)
    /// A Doze input (`screen on|off`, `motion`, `idle force|step|off`); on iOS only `screen on|off`:
    /// the user uses the device or leaves it idle (processing tasks).
    case doze(DozeInput)
    /// The network connection on or off (Android: constraints; iOS: a processing task's
    /// `requiresNetworkConnectivity`).
    case network(Bool)
    /// Android: the battery low (`ACTION_BATTERY_LOW`) or not.
    case batteryLow(Bool)
    /// iOS: the battery's charge is now this fraction in [0, 1] (it drains or charges from here
    /// under the usage model).
    case battery(Double)
    /// Android: storage low (`ACTION_DEVICE_STORAGE_LOW`) or not.
    case storageLow(Bool)
    /// Android: a control of androidx.work.testing's TestDriver.
    case testDriver(AndroidWorkScheduler.TestDriverControl)
    /// Android: `cmd jobscheduler stop -s REASON`, the worker stopped with that reason.
    case stop(WorkStopReason)
    /// Android: the user grants (true) or revokes the notification permission.
    case notificationPermission(Bool)
    /// iOS: the app's notification authorization (`UNAuthorizationStatus`) as the user left it.
    case notificationAuthorization(NotificationAuthorization)
    /// The user sets the device's wall clock by this many seconds (negative: back); true time goes on.
    case clockSet(TimeInterval)
    /// Android: the user grants (true) or revokes `SCHEDULE_EXACT_ALARM`.
    case exactAlarmPermission(Bool)
    /// A server push reaches the device with this priority (`push [normal|high]`, normal
    /// unless given): a silent background notification on iOS, an FCM message on Android.
    case push(PushPriority)
    /// The user swipes the app away.
    case forceQuit
    /// iOS: the user installs an app update that registers its handler this way (from the app's
    /// next launch).
    case registration(RegistrationMode)
    /// The device restarts.
    case reboot
    /// The debugger's simulate-launch of the refresh task.
    case simulateLaunch
    /// The debugger's simulate-launch followed by simulate-expiration.
    case simulateExpiration
    /// Stop the process cleanly.
    case quit

    /// A line the language does not accept: the line (shortened) and what is wrong with it.
    public struct Rejection: Error, Equatable, Sendable {
        /// The rejected line as given, shortened to 120 characters (`echoed(_:to:)`).
        public var input: String
        /// What is wrong with it, in words (`expected low-power on|off`).
        public var reason: String

        /// A rejection of `input` (shortened) for `reason`.
        public init(input: String, reason: String) {
            self.input = echoed(input)
            self.reason = reason
        }

        /// The `input.rejected` event.
        public var event: Event {
            Event(.inputRejected, [("input", .string(input)), ("reason", .string(reason))])
        }
    }

    /// The rejection reason for a line that names no command.
    package static let unknownCommandReason =
        "unknown command; expected open, status, why, history, notifications, time-zone TZ, move LAT,LON, "
        + "low-power on|off, background-refresh on|off, charging on|off, bucket NAME, screen on|off, motion, "
        + "idle force|step|off, network on|off, battery LEVEL, battery-low on|off, storage-low on|off, "
        + "period-delay-met, initial-delay-met, constraints-met, stop REASON, permission notifications|exact-alarm grant|revoke, "
        + "notifications authorized|denied|provisional|not-determined, clock-set ±DURATION, push [normal|high], force-quit, "
        + "registration MODE, reboot, simulate-launch, simulate-expiration or quit"

    /// The words of each command after its name, as the usage shows them (nil: none).
    static let argumentUsage: [String: String?] = [
        "open": nil, "status": nil, "why": nil, "history": nil, "notifications": nil,
        "time-zone": "TZ (an IANA zone, e.g. Europe/Berlin)", "move": "LAT,LON (degrees, e.g. 52.52,13.405)",
        "low-power": "on|off", "background-refresh": "on|off", "charging": "on|off",
        "bucket": "active|working_set|frequent|rare|restricted", "screen": "on|off", "motion": nil,
        "idle": "force|step|off", "network": "on|off",
        "battery": "LEVEL (a percentage or a fraction, e.g. 15% or 0.15)",
        "battery-low": "on|off", "storage-low": "on|off",
        "period-delay-met": nil, "initial-delay-met": nil, "constraints-met": nil,
        "stop": "REASON (a WorkInfo STOP_REASON_* name or code, e.g. STOP_REASON_USER or 13)",
        "permission": "notifications|exact-alarm grant|revoke", "force-quit": nil,
        "push": "[normal|high] (the sender's priority; normal unless given)",
        "clock-set": "±DURATION (a signed offset of the wall clock, e.g. -12h, +90m, +1h30m)",
        "registration": "early|late-silent|late-crash", "reboot": nil, "simulate-launch": nil,
        "simulate-expiration": nil, "quit": nil,
    ]

    /// Splits a line into words at spaces and tabs (the two blanks of POSIX's `[:blank:]`).
    /// - Returns: the line without its leading and trailing blanks, and its words.
    package static func words(_ line: String) -> (text: String, words: [String]) {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        let text = line.drop(while: { $0 == " " || $0 == "\t" })
        let end = text.lastIndex(where: { $0 != " " && $0 != "\t" }).map { text.index(after: $0) } ?? text.startIndex
        return (String(text[..<end]), words)
    }

    /// Parses one stdin line: words separated by spaces or tabs, surrounding ones ignored.
    /// - Parameters:
    ///   - line: the line, without its newline.
    ///   - platform: `ios` or `android`; `charging` and `bucket` are Android settings,
    ///     `registration` an iOS one.
    /// - Returns: the command; nil for an empty line.
    /// - Throws: `Rejection` naming the line and what is wrong.
    public static func parse(_ line: String, platform: Platform) throws(Rejection) -> PhoneCommand? {
        let (text, words) = Self.words(line)
        func reject(_ reason: String) -> Rejection {
            Rejection(input: text, reason: reason)
        }
        if let name = words.first, let usage = argumentUsage[name],
            words.count != (usage == nil ? 1 : name == "permission" ? 3 : 2),
            !(name == "notifications" && words.count == 2), !(name == "push" && words.count == 1)
        {
            if name == "notifications" {
                throw reject(
                    "expected notifications, or notifications authorized|denied|provisional|not-determined (iOS)")
            }
            throw reject(usage.map { "expected \(name) \($0)" } ?? "\(name) takes no argument")
        }
        func onOff(_ name: String) throws(Rejection) -> Bool {
            switch words[1] {
            case "on": return true
            case "off": return false
            default: throw reject("expected \(name) on|off")
            }
        }
        switch (words.first, words.count) {
        case (nil, _): return nil
        case ("open", 1): return .open
        case ("status", 1): return .status
        case ("why", 1): return .why
        case ("history", 1): return .history
        case ("notifications", 1): return .notifications
        case ("notifications", 2) where platform != .ios:
            throw reject(
                "notifications STATE is iOS's notification authorization (UNUserNotificationCenter); on Android "
                    + "the app's notifications follow its permission: permission notifications grant|revoke")
        case ("notifications", 2):
            guard let state = NotificationAuthorization(rawValue: words[1]) else {
                throw reject(
                    "expected notifications authorized|denied|provisional|not-determined; not \"\(clipped(words[1]))\"")
            }
            return .notificationAuthorization(state)
        case ("clock-set", 2):
            switch clockOffset(words[1]) {
            case .success(let seconds): return .clockSet(seconds)
            case .failure(let problem): throw reject(problem.reason)
            }
        case ("time-zone", 2):
            guard let zone = WakeCalendar.zone(named: words[1]) else {
                throw reject(WakeCalendar.unknownZoneReason(words[1]))
            }
            return .timeZone(zone)
        case ("move", 2):
            guard let location = coordinate(words[1]) else {
                // Decimal degrees that parse but lie outside the ranges: say which.
                let decimal = words[1].allSatisfy { $0 == "," || decimalCharacters.contains($0) }
                let parts = words[1].split(separator: ",", omittingEmptySubsequences: false).compactMap { Double($0) }
                if decimal, parts.count == 2, parts.allSatisfy(\.isFinite) {
                    throw reject(
                        "out of range: latitude \(parts[0]) must be -90 to 90 and longitude \(parts[1]) -180 to 180 "
                            + "(degrees)")
                }
                throw reject("expected LAT,LON in degrees, e.g. 52.52,13.405")
            }
            return .move(location)
        case ("low-power", 2): return .lowPower(try onOff("low-power"))
        case ("background-refresh", 2): return .backgroundRefresh(try onOff("background-refresh"))
        case ("bucket", 2) where platform != .android, ("motion", 1) where platform != .android,
            ("idle", 2) where platform != .android, ("battery-low", 2) where platform != .android,
            ("storage-low", 2) where platform != .android:
            throw reject("\(words[0]) is an Android setting; this phone runs --platform \(platform)")
        case ("period-delay-met", 1) where platform != .android, ("initial-delay-met", 1) where platform != .android,
            ("constraints-met", 1) where platform != .android, ("stop", 2) where platform != .android:
            throw reject(
                "\(words[0]) is an Android control (androidx.work.testing TestDriver, cmd jobscheduler); this phone "
                    + "runs --platform \(platform), where simulate-launch and simulate-expiration are the debugger's controls"
            )
        case ("permission", 3) where platform != .android:
            throw reject("permission is an Android setting; this phone runs --platform \(platform)")
        case ("permission", 3):
            let usage = "expected permission notifications|exact-alarm grant|revoke"
            let granted: Bool
            switch words[2] {
            case "grant": granted = true
            case "revoke": granted = false
            default: throw reject("\(usage); not \"\(clipped(words[2]))\"")
            }
            switch words[1] {
            case "notifications": return .notificationPermission(granted)
            case "exact-alarm": return .exactAlarmPermission(granted)
            default: throw reject("\(usage); not the permission \"\(clipped(words[1]))\"")
            }
        case ("network", 2): return .network(try onOff("network"))
        case ("push", 1): return .push(.normal)
        case ("push", 2):
            guard let priority = PushPriority(rawValue: words[1]) else {
                throw reject("expected push [normal|high]; not \"\(clipped(words[1]))\"")
            }
            return .push(priority)
        case ("battery", 2) where platform != .ios:
            throw reject(
                "battery LEVEL is iOS's battery charge (the usage model's critically low battery); this phone runs "
                    + "--platform \(platform), where the battery is battery-low on|off")
        case ("battery", 2):
            guard let level = batteryLevel(words[1]) else {
                throw reject(
                    "expected battery LEVEL: a percentage from 0% to 100% (e.g. 15%) or a fraction from 0 to 1 "
                        + "(e.g. 0.15); not \"\(clipped(words[1]))\"")
            }
            return .battery(level)
        case ("battery-low", 2): return .batteryLow(try onOff("battery-low"))
        case ("storage-low", 2): return .storageLow(try onOff("storage-low"))
        case ("period-delay-met", 1): return .testDriver(.periodDelayMet)
        case ("initial-delay-met", 1): return .testDriver(.initialDelayMet)
        case ("constraints-met", 1): return .testDriver(.constraintsMet)
        case ("stop", 2):
            guard let reason = WorkStopReason(parsing: words[1]) else {
                throw reject(
                    "expected stop REASON: a WorkInfo STOP_REASON_* name (e.g. STOP_REASON_USER, or USER) or its "
                        + "code 0 to 15; not \"\(clipped(words[1]))\"")
            }
            return .stop(reason)
        case ("charging", 2): return .charging(try onOff("charging"))
        case ("bucket", 2):
            guard let bucket = StandbyBucket(name: words[1]) else {
                throw reject("expected bucket active|working_set|frequent|rare|restricted")
            }
            return .bucket(bucket)
        case ("screen", 2): return .doze(.screen(try onOff("screen")))
        case ("motion", 1): return .doze(.motion)
        case ("idle", 2):
            switch words[1] {
            case "force": return .doze(.force)
            case "step": return .doze(.step)
            case "off": return .doze(.unforce)
            default: throw reject("expected idle force|step|off")
            }
        case ("force-quit", 1): return .forceQuit
        case ("registration", 2) where platform != .ios:
            throw reject(
                "registration is an iOS setting (BGTaskScheduler launch handlers); this phone runs --platform "
                    + platform.rawValue)
        case ("registration", 2):
            guard let mode = RegistrationMode(rawValue: words[1]) else {
                throw reject("expected registration early|late-silent|late-crash")
            }
            return .registration(mode)
        case ("reboot", 1): return .reboot
        case ("simulate-launch", 1): return .simulateLaunch
        case ("simulate-expiration", 1): return .simulateExpiration
        case ("quit", 1): return .quit
        default: throw reject(unknownCommandReason)
        }
    }

    /// Why a `clock-set` argument is not an offset.
    package struct ClockOffsetProblem: Error, Equatable, Sendable {
        /// The reason, naming the argument.
        package var reason: String
    }

    /// The largest `clock-set` change, seconds (366 days; this model's bound).
    package static let clockOffsetLimit: TimeInterval = 366 * 86_400

    /// A `clock-set` argument: a sign, then one or more whole numbers each followed by a unit
    /// (`d`, `h`, `m`, `s`), largest unit first (`-12h`, `+90m`, `+1h30m`, `-45s`); a zero change
    /// (`-0m`, `+0s`) is refused.
    /// - Parameter text: the argument.
    /// - Returns: the offset in seconds, or the problem naming `text`.
    package static func clockOffset(_ text: String) -> Result<TimeInterval, ClockOffsetProblem> {
        let shown = clipped(text)
        func problem(_ what: String) -> Result<TimeInterval, ClockOffsetProblem> {
            .failure(
                ClockOffsetProblem(
                    reason: "expected clock-set ±DURATION (a sign, then numbers with units d, h, m, s, e.g. -12h, "
                        + "+90m, +1h30m); \"\(shown)\" \(what)"))
        }
        var characters = Substring(text)
        guard let sign = characters.first, sign == "+" || sign == "-" else { return problem("has no sign") }
        characters = characters.dropFirst()
        guard !characters.isEmpty else { return problem("has no duration") }
        let units: [Character: TimeInterval] = ["d": 86_400, "h": 3_600, "m": 60, "s": 1]
        let order: [Character] = ["d", "h", "m", "s"]
        var total: TimeInterval = 0
        var lastUnit = -1
        while !characters.isEmpty {
            let digits = characters.prefix(while: { $0.isASCII && $0.isNumber })
            guard !digits.isEmpty else { return problem("has no number before \"\(characters.prefix(1))\"") }
            guard digits.count <= 9, let value = Double(digits) else { return problem("has a number too large") }
            characters = characters.dropFirst(digits.count)
            guard let unit = characters.first, let seconds = units[unit], let rank = order.firstIndex(of: unit) else {
                return problem(characters.isEmpty ? "has a number without a unit" : "has an unknown unit")
            }
            guard rank > lastUnit else { return problem("repeats a unit or puts a larger one after a smaller") }
            lastUnit = rank
            total += value * seconds
            characters = characters.dropFirst()
        }
        guard total <= clockOffsetLimit else { return problem("is more than 366 days") }
        guard total > 0 else {
            return .failure(
                ClockOffsetProblem(
                    reason: "expected clock-set ±DURATION with a duration that is not zero (e.g. -12h, +90m); "
                        + "\"\(shown)\" is a zero change: the clock would not move"))
        }
        return .success(sign == "-" ? -total : total)
    }

    /// A `battery` argument: a percentage from 0% to 100% (`15%`, `12.5%`) or a fraction from 0
    /// to 1 (`0.15`), digits and one `.` only.
    /// - Returns: the fraction in [0, 1], nil when the text is not such a level.
    package static func batteryLevel(_ text: String) -> Double? {
        let percent = text.hasSuffix("%")
        let number = percent ? String(text.dropLast()) : text
        guard !number.isEmpty, number.count <= 12, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            number.filter({ $0 == "." }).count <= 1, number.first != ".", number.last != ".",
            let value = Double(number)
        else { return nil }
        let level = percent ? value / 100 : value
        return (0...1).contains(level) ? level : nil
    }

    /// What a coordinate of `move` may be written with: decimal degrees (no hex, no `inf`).
    static let decimalCharacters = Set("0123456789.eE+-")

    /// `LAT,LON` in decimal degrees (digits, `.`, `e`, sign), each in range.
    /// - Returns: nil when the text is not such a pair.
    package static func coordinate(_ text: String) -> Coordinate? {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(decimalCharacters.contains) }),
            let latitude = Double(parts[0]), let longitude = Double(parts[1])
        else { return nil }
        return Coordinate(latitude: latitude, longitude: longitude)
    }

    /// Whether the command starts or changes the app's work (a launch, a job, a setting of the
    /// OS): such a command waits while a job waits for its weather. Read-only commands and
    /// `quit` never wait.
    package var touchesApp: Bool {
        switch self {
        case .status, .why, .history, .notifications, .quit: false
        default: true
        }
    }
}

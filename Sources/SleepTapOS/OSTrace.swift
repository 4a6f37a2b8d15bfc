// SPDX-License-Identifier: Apache-2.0

public import Foundation

// What the simulated OS tells the developer it did: its trace (`drainTrace()`), one named event
// with typed fields per entry, and the typed values of its `status()`. The phone writes these as
// JSON Lines (`os.*` events, docs/protocol.md); this module only keeps them as values.

/// A typed value of an event's fields: an `OSEvent`'s, a `status()` entry's, and a host's own
/// events', each written as the JSON value named by its case.
public enum EventValue: Equatable, Sendable {
    /// A JSON string.
    case string(String)
    /// A JSON integer.
    case int(Int64)
    /// A JSON number with a fraction (durations in seconds, coordinates).
    case double(Double)
    /// A JSON `true` or `false`.
    case bool(Bool)
    /// An instant, rendered ISO-8601 UTC (`2025-03-07T11:30:00Z`).
    case date(Date)
    /// A nested JSON object (for example the `reasons` of `WhyAnswer.fields`).
    case object(EventObject)
    /// JSON `null`: a field whose value is absent (for example a date not yet known).
    case null
}

/// The fields of a nested JSON object in an event, in the order they are written.
public struct EventObject: Equatable, Sendable {
    /// The object's keys and values, in the order they are written.
    public var fields: [(key: String, value: EventValue)]

    /// An object with `fields`, written in this order.
    public init(_ fields: [(String, EventValue)]) {
        self.fields = fields.map { (key: $0.0, value: $0.1) }
    }

    /// The value of `key`, if present.
    public subscript(key: String) -> EventValue? {
        fields.first(where: { $0.key == key })?.value
    }

    public static func == (lhs: EventObject, rhs: EventObject) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}

/// The name of an event the simulated OS traces; the raw value is the event's name (`os.launch`, …),
/// which a host may write as is.
public enum OSEventName: String, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    /// `os.launch`: the OS launched the app in the background for its work.
    case osLaunch = "os.launch"
    /// `os.launch.dropped`: the OS launched the app, but no handler was entered.
    case osLaunchDropped = "os.launch.dropped"
    /// `os.opportunity.missed`: the drawn launch opportunity passed without a launch.
    case osOpportunityMissed = "os.opportunity.missed"
    /// `os.request.submitted`: a request was accepted.
    case osRequestSubmitted = "os.request.submitted"
    /// `os.request.replaced`: a request replaced the pending one of the same identifier.
    case osRequestReplaced = "os.request.replaced"
    /// `os.request.cancelled`: the app cancelled its pending request
    /// (`BGTaskScheduler.cancel(taskRequestWithIdentifier:)`).
    case osRequestCancelled = "os.request.cancelled"
    /// `os.request.rejected`: `submit` threw.
    case osRequestRejected = "os.request.rejected"
    /// `os.register`: a launch handler was registered.
    case osRegister = "os.register"
    /// `os.register.refused`: `register` returned false.
    case osRegisterRefused = "os.register.refused"
    /// `os.app.launched`: the app process started.
    case osAppLaunched = "os.app.launched"
    /// `os.app.killed`: the OS ended the app process.
    case osAppKilled = "os.app.killed"
    /// `os.app.crashed`: the app died with `NSInternalInconsistencyException`.
    case osAppCrashed = "os.app.crashed"
    /// `os.app.updated`: an app update was installed.
    case osAppUpdated = "os.app.updated"
    /// `os.task.completed`: the app called `setTaskCompleted(success:)`.
    case osTaskCompleted = "os.task.completed"
    /// `os.task.expired`: the run outlived its budget.
    case osTaskExpired = "os.task.expired"
    /// `os.complete.ignored`: a completion for a run that is not in flight.
    case osCompleteIgnored = "os.complete.ignored"
    /// `os.simulate.failed`: the debugger's simulate-launch found nothing to launch.
    case osSimulateFailed = "os.simulate.failed"
    /// `os.conditions.changed`: a condition that gates runs changed.
    case osConditionsChanged = "os.conditions.changed"
    /// `os.rebooted`: the device restarted.
    case osRebooted = "os.rebooted"
    /// `os.work.enqueued`: unique periodic work was enqueued.
    case osWorkEnqueued = "os.work.enqueued"
    /// `os.work.kept`: `KEEP` kept the work already enqueued.
    case osWorkKept = "os.work.kept"
    /// `os.work.rescheduled`: the work's next run time moved.
    case osWorkRescheduled = "os.work.rescheduled"
    /// `os.work.completed`: the Worker returned its `Result`.
    case osWorkCompleted = "os.work.completed"
    /// `os.work.stopped`: the OS stopped the Worker.
    case osWorkStopped = "os.work.stopped"
    /// `os.watch_message`: a message from the paired watch reached the phone.
    case osWatchMessage = "os.watch_message"
    /// `os.push`: a server push reached the device.
    case osPush = "os.push"
    /// `os.why`: the conditions holding the pending request back changed (`WhyAnswer`).
    case osWhy = "os.why"
    /// `os.doze`: Doze changed state.
    case osDoze = "os.doze"
    /// `os.test_driver`: a WorkManager `TestDriver` control was applied.
    case osTestDriver = "os.test_driver"
    /// `os.time_changed`: the user set the device's wall clock (iOS
    /// `significantTimeChangeNotification`, Android `ACTION_TIME_CHANGED`).
    case osTimeChanged = "os.time_changed"
    /// `os.alarm.fired`: an alarm the app set fired (Android `AlarmManager`).
    case osAlarmFired = "os.alarm.fired"
    /// `os.screen`: the user turned the screen on (uses the device) or off (iOS).
    case osScreen = "os.screen"

    /// The raw value, e.g. "os.launch".
    public var description: String { rawValue }
}

/// One entry of the simulated OS's trace: a name and its fields, in the order they are written.
public struct OSEvent: Equatable, Sendable {
    /// The event's name, e.g. `.osLaunch` (`os.launch`).
    public var name: OSEventName
    /// Fields in the order they are written.
    public var fields: [(key: String, value: EventValue)]

    /// An event named `name` with `fields` in the order given.
    /// - Parameters:
    ///   - name: the event's name.
    ///   - fields: its keys and values, in the order they are written.
    public init(_ name: OSEventName, _ fields: [(String, EventValue)] = []) {
        self.name = name
        self.fields = fields.map { (key: $0.0, value: $0.1) }
    }

    /// The value of `key`, if present.
    public subscript(key: String) -> EventValue? {
        fields.first(where: { $0.key == key })?.value
    }

    public static func == (lhs: OSEvent, rhs: OSEvent) -> Bool {
        lhs.name == rhs.name && lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}

/// OS-side trace entries, kept in time order (stable for equal instants).
struct SchedulerTrace: Sendable {
    private var entries: [(at: Date, event: OSEvent)] = []

    mutating func add(_ at: Date, _ name: OSEventName, _ fields: [(String, EventValue)] = []) {
        entries.append((at: at, event: OSEvent(name, fields)))
    }

    /// Whether an entry waits to be drained.
    var isEmpty: Bool { entries.isEmpty }

    mutating func drain() -> [(at: Date, event: OSEvent)] {
        let sorted = entries.enumerated().sorted {
            $0.element.at != $1.element.at ? $0.element.at < $1.element.at : $0.offset < $1.offset
        }
        entries = []
        return sorted.map(\.element)
    }
}

extension SplitMix64 {
    /// A uniform double in [0, 1) from the top 53 bits of the next output.
    mutating func schedulerUnitInterval() -> Double {
        Double(next() >> 11) * 0x1p-53
    }
}

extension EventValue {
    /// `.date` or `.null`.
    static func schedulerDate(_ date: Date?) -> EventValue { date.map { .date($0) } ?? .null }
    /// `.double` or `.null`.
    static func schedulerSeconds(_ seconds: TimeInterval?) -> EventValue { seconds.map { .double($0) } ?? .null }
}

extension Date {
    /// The instant as ISO 8601 in UTC, whole seconds (`2025-03-07T13:46:00Z`): Foundation's
    /// `.iso8601` format style, for the OS's texts (`PendingReason.state`, `WhyAnswer.summary`),
    /// which are built only when read. SleepTapCore's `ISO8601.string` writes the same text
    /// (its `WireEncodingTests` keep the two equal), so the `os.why` lines are unchanged.
    var osText: String { Self.osTextStyle.format(self) }

    /// Foundation's `.iso8601` style, made once: building it for each text cost as much as using it.
    private static let osTextStyle = Date.ISO8601FormatStyle()
}

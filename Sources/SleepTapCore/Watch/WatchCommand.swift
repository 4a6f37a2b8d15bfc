// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// One line of the watch's stdin command language, parsed.
///
/// `bed` (the user taps bed), `status` (`cache.status`), `time-zone TZ` (the watch travels to
/// the IANA zone TZ), `HH:MM` (a wake time typed after a manual-entry prompt), `wrist up` and
/// `wrist down` (the user looks at the watch, then lowers it), `quit`, and the empty line
/// (ignored). Words are separated by spaces or tabs; leading and trailing ones are
/// ignored.
public enum WatchCommand: Equatable, Sendable {
    /// An empty (or blank) line: nothing to do.
    case empty
    /// The user taps bed.
    case bed
    /// Write `cache.status`.
    case status
    /// Write the complication's timeline (`complication.timeline` and its entries).
    case complication
    /// The watch travels to this zone.
    case timeZone(TimeZone)
    /// A wake time `HH:MM`, the answer to a manual-entry prompt.
    case wakeTime(LocalTime)
    /// Stop the ringing alarm.
    case stopAlarm
    /// Snooze the ringing alarm (it rings again after the snooze, `WatchNode.Configuration.snooze`).
    case snooze
    /// The user raises the wrist to look at the watch (`true`) or lowers it (`false`): the app
    /// is active while the wrist is up (`WatchNode.isActive(at:)`).
    case wrist(up: Bool)
    /// Stop the process.
    case quit
    /// A line naming a command with the wrong words after it (`status 1`, `time-zone`), or a
    /// wake time that is not `HH:MM` (`7:30`, `25:00`): `input` shortened for echoing (`echoed(_:to:)`), and what is
    /// wrong with it.
    case invalid(input: String, reason: String)
    /// A line that names no command (`dance`, `BED`: commands are lower case). It is an
    /// unknown command whether or not a manual-entry prompt is open.
    case unrecognized(String)

    /// The reason given for an unknown command.
    public static let unknownCommandReason =
        "unknown command; expected bed, status, complication, stop, snooze, wrist up|down, time-zone TZ, HH:MM or quit"

    /// Parses one stdin line (without its newline).
    /// - Parameter line: the line as typed.
    public init(parsing line: String) {
        let (text, words) = PhoneCommand.words(line)
        guard let name = words.first else {
            self = .empty
            return
        }
        switch name {
        case "bed", "status", "quit", "stop", "snooze", "complication":
            guard words.count == 1 else {
                self = .invalid(input: echoed(text), reason: "\(name) takes no argument")
                return
            }
            switch name {
            case "bed": self = .bed
            case "status": self = .status
            case "stop": self = .stopAlarm
            case "snooze": self = .snooze
            case "complication": self = .complication
            default: self = .quit
            }
        case "wrist":
            if words.count == 2, words[1] == "up" || words[1] == "down" {
                self = .wrist(up: words[1] == "up")
            } else {
                self = .invalid(input: echoed(text), reason: "expected wrist up or wrist down")
            }
        case "time-zone":
            if words.count == 2, let zone = WakeCalendar.zone(named: words[1]) {
                self = .timeZone(zone)
            } else {
                let reason =
                    words.count == 2
                    ? WakeCalendar.unknownZoneReason(words[1])
                    : "expected time-zone TZ with one IANA zone, e.g. time-zone Asia/Tokyo"
                self = .invalid(input: echoed(text), reason: reason)
            }
        default:
            if words.count == 1, let time = LocalTime(parsing: name) {
                self = .wakeTime(time)
            } else if name.first?.isASCII == true, name.first?.isNumber == true {
                // Starts with a digit: a wake time that is not HH:MM.
                self = .invalid(input: echoed(text), reason: Self.wakeTimeReason)
            } else {
                self = .unrecognized(text)
            }
        }
    }

    /// The reason given for a wake time that is not `HH:MM`.
    public static let wakeTimeReason = "expected a wake time HH:MM (00:00-23:59)"
}

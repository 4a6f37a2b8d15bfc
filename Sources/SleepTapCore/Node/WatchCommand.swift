public import Foundation

/// One line of the watch's stdin command language, parsed.
///
/// `bed` (the user taps bed), `status` (`cache.status`), `time-zone TZ` (the watch travels to
/// the IANA zone TZ), `HH:MM` (a wake time typed after a manual-entry prompt), `quit`, and the
/// empty line (ignored). Leading and trailing spaces and tabs are ignored.
public enum WatchCommand: Equatable, Sendable {
    /// An empty (or blank) line: nothing to do.
    case empty
    /// The user taps bed.
    case bed
    /// Write `cache.status`.
    case status
    /// The watch travels to this zone.
    case timeZone(TimeZone)
    /// A wake time `HH:MM`, the answer to a manual-entry prompt.
    case wakeTime(LocalTime)
    /// Stop the process.
    case quit
    /// A `time-zone` line without exactly one known IANA zone: `input` clipped for echoing, and
    /// what is wrong with it.
    case invalid(input: String, reason: String)
    /// Any other line. While a manual-entry prompt is open it is taken as a (bad) wake time;
    /// otherwise it is an unknown command.
    case unrecognized(String)

    /// The reason given for an unknown command.
    public static let unknownCommandReason = "unknown command; expected bed, status, time-zone TZ, HH:MM or quit"

    /// Parses one stdin line (without its newline).
    /// - Parameter line: the line as typed.
    public init(parsing line: String) {
        let text = line.trimmingCharacters(in: .whitespaces)
        switch text {
        case "": self = .empty
        case "bed": self = .bed
        case "status": self = .status
        case "quit": self = .quit
        case _ where text.split(separator: " ").first == "time-zone":
            let words = text.split(separator: " ", omittingEmptySubsequences: true)
            if words.count == 2, let zone = WakeCalendar.zone(named: String(words[1])) {
                self = .timeZone(zone)
            } else {
                let reason =
                    words.count == 2
                    ? "\"\(clipped(String(words[1])))\" is not a known IANA time zone identifier (e.g. Asia/Tokyo)"
                    : "expected time-zone TZ with one IANA zone, e.g. time-zone Asia/Tokyo"
                self = .invalid(input: clipped(text), reason: reason)
            }
        default:
            if let time = LocalTime(parsing: text) {
                self = .wakeTime(time)
            } else {
                self = .unrecognized(text)
            }
        }
    }
}

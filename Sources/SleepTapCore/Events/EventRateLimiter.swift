// SPDX-License-Identifier: Apache-2.0

package import Foundation
import SleepTapOS

/// Holds back repeats of an event that a peer (or an absent peer) can cause at will, so that a
/// connect loop or a stream of garbage cannot flood the output, while every occurrence is still
/// counted.
///
/// Occurrences are grouped into streams by event name, the class of one field, `reason` unless
/// told otherwise (`reasonClass(_:)`), and the message `type` where the event has one. The first `burst` occurrences of a stream's window
/// (`interval` seconds from the first line let through; one occurrence unless told otherwise)
/// are let through at once. Later repeats within the window are held back and
/// counted. The next line of the stream, whether a new occurrence after the window or the summary
/// `flush(at:)` writes when the window ends with repeats held back, carries
/// `suppressed` = how many were held back since the previous line, so the lines plus their
/// `suppressed` counts add up to every occurrence. While a stream keeps repeating its window
/// doubles, up to `maximumInterval`; a quiet window ends the stream, and the next occurrence
/// starts a new one.
///
/// A value type with no clock of its own: the caller passes `now` (wall time, as transport timing
/// is), so tests drive it with any instants they like.
package struct EventRateLimiter: Sendable {
    /// A stream: the event name and the class of its reason.
    package struct Key: Hashable, Sendable {
        /// The event's name.
        package var event: EventName
        /// The class of the event's `reason` field (`reasonClass(_:)`).
        package var reason: String
        /// The stream of `event` occurrences whose reason falls in the class `reason`.
        package init(event: EventName, reason: String) {
            self.event = event
            self.reason = reason
        }
    }

    private struct Stream: Sendable {
        /// Repeats before this instant are held back.
        var windowEnd: Date
        /// The current window length, seconds.
        var window: TimeInterval
        /// Lines let through in this window.
        var written = 1
        /// Repeats held back since the last line.
        var held = 0
        /// The last repeat held back, for the summary line.
        var lastHeld: Event?
    }

    /// The first window, seconds.
    package let interval: TimeInterval
    /// The longest window, seconds.
    package let maximumInterval: TimeInterval
    /// The most streams tracked at once; occurrences beyond them share one stream per event name.
    package let maximumStreams: Int
    /// How many lines a stream lets through in one window before it holds repeats back.
    package let burst: Int
    /// The field whose class (`reasonClass(_:)`) splits an event's occurrences into streams.
    package let keyField: String
    private var streams: [Key: Stream] = [:]

    /// The reason class that collects occurrences once `maximumStreams` streams are tracked.
    package static let otherReasons = "(other reasons)"

    /// - Parameters:
    ///   - interval: the first window, seconds (default 30).
    ///   - maximumInterval: the longest window while a stream keeps repeating (default 960 s: 30 s
    ///     doubled five times).
    ///   - maximumStreams: how many streams to track at once (default 64), so a peer that invents
    ///     reasons cannot make this grow.
    ///   - burst: how many lines a stream lets through per window before holding back (default 1:
    ///     only the first), so traffic that is normal at a low rate passes untouched.
    ///   - keyField: the field that splits an event into streams (default `reason`; `type` for
    ///     `message.received`).
    package init(
        interval: TimeInterval = 30, maximumInterval: TimeInterval = 960, maximumStreams: Int = 64, burst: Int = 1,
        keyField: String = "reason"
    ) {
        self.interval = interval
        self.maximumInterval = max(interval, maximumInterval)
        self.maximumStreams = max(1, maximumStreams)
        self.burst = max(1, burst)
        self.keyField = keyField
    }

    /// The stream `event` belongs to.
    package func key(for event: Event) -> Key {
        var reason: String
        if case .string(let text) = event[keyField] { reason = Self.reasonClass(text) } else { reason = "" }
        // Failed sends of HELLO and of ERROR are two streams: a line's `suppressed` counts its own
        // message type only.
        if case .string(let type) = event["type"] { reason = type + " " + reason }
        let key = Key(event: event.name, reason: reason)
        if streams[key] == nil && streams.count >= maximumStreams {
            return Key(event: event.name, reason: Self.otherReasons)
        }
        return key
    }

    /// Offers one occurrence.
    /// - Parameters:
    ///   - event: the occurrence.
    ///   - now: the current (wall) instant.
    /// - Returns: the event to write now (with `suppressed` when repeats were held back since the
    ///   previous line of its stream), or nil: held back and counted.
    /// - Complexity: O(1) on average.
    package mutating func admit(_ event: Event, at now: Date) -> Event? {
        let key = key(for: event)
        guard var stream = streams[key], now < stream.windowEnd || stream.held > 0 else {
            streams[key] = Stream(windowEnd: now.addingTimeInterval(interval), window: interval)
            return event
        }
        if now < stream.windowEnd && stream.held == 0 && stream.written < burst {
            stream.written += 1
            streams[key] = stream
            return event
        }
        if now < stream.windowEnd {
            stream.held += 1
            stream.lastHeld = event
            streams[key] = stream
            return nil
        }
        // The window ended with repeats held back: this line reports them, and the stream goes on.
        let line = Self.with(event, suppressed: stream.held)
        stream.window = min(stream.window * 2, maximumInterval)
        stream.windowEnd = now.addingTimeInterval(stream.window)
        stream.written = 1
        stream.held = 0
        stream.lastHeld = nil
        streams[key] = stream
        return line
    }

    /// The summaries of windows that have ended with repeats held back: the last repeat held, with
    /// `suppressed` = the others. Streams whose window ended quietly are forgotten. Call it
    /// regularly (every second is plenty).
    /// - Returns: the lines to write, oldest stream first.
    /// - Complexity: O(s log s) in the number of streams.
    package mutating func flush(at now: Date) -> [Event] {
        var lines: [(Date, Event)] = []
        for (key, var stream) in streams where now >= stream.windowEnd {
            guard stream.held > 0, let last = stream.lastHeld else {
                streams[key] = nil
                continue
            }
            lines.append((stream.windowEnd, Self.with(last, suppressed: stream.held - 1)))
            stream.window = min(stream.window * 2, maximumInterval)
            stream.windowEnd = now.addingTimeInterval(stream.window)
            stream.written = 1
            stream.held = 0
            stream.lastHeld = nil
            streams[key] = stream
        }
        return lines.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Ends every stream of `eventName` (its cause went away, e.g. a send succeeded), so its next
    /// occurrence is written at once.
    /// - Returns: the summaries of repeats still held back, as `flush(at:)` writes them.
    package mutating func end(_ eventName: EventName) -> [Event] {
        var lines: [Event] = []
        for (key, stream) in streams where key.event == eventName {
            if stream.held > 0, let last = stream.lastHeld {
                lines.append(Self.with(last, suppressed: stream.held - 1))
            }
            streams[key] = nil
        }
        return lines
    }

    /// Ends every stream (the process stops).
    /// - Returns: the summaries of all repeats still held back.
    package mutating func endAll() -> [Event] {
        let names = Set(streams.keys.map(\.event)).sorted()
        return names.flatMap { end($0) }
    }

    /// The class of a reason: the text from its first to its last double quote becomes `"…"`, and
    /// each run of digits `#`, so a peer that varies ids or numbers in what it sends still makes
    /// one stream. (`unknown peer routing id "m1"` and `… "m2"` are one class; `not valid JSON`
    /// another.)
    package static func reasonClass(_ reason: String) -> String {
        var text = Substring(reason)
        if let first = text.firstIndex(of: "\""), let last = text.lastIndex(of: "\""), first < last {
            text = text[..<first] + "\"…\"" + text[text.index(after: last)...]
        }
        var out = ""
        var inDigits = false
        for character in text {
            let digit = character.isASCII && character.isNumber
            if !digit { out.append(character) } else if !inDigits { out.append("#") }
            inDigits = digit
        }
        return out
    }

    private static func with(_ event: Event, suppressed: Int) -> Event {
        var line = event
        if suppressed > 0 { line.fields.append((key: "suppressed", value: .int(Int64(suppressed)))) }
        return line
    }
}

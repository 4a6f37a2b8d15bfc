// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore

/// A small hand-written SVG (SVG 1.1, https://www.w3.org/TR/SVG11/) of a run's coverage: the
/// nights of cached dates the watch holds over the run's virtual time, with the fallbacks,
/// warnings, opens and background runs marked.
///
/// - x: virtual time from `start` to `end`, with a tick at each local midnight of the zone the
///   watch lives in at that instant (the scenario's zone, then each watch `timezone.changed`'s
///   `to`; Foundation `Calendar`), labelled `MM-dd` every few days; each tick's `<title>` gives
///   the midnight's instant and zone, and each move is labelled with its zone
///   (`class="zone"`).
/// - y: nights of cached dates left (0 at the bottom).
/// - The line (`class="coverage"`): a step line through each batch the watch applied
///   (`batch.applied`: its `count`) and each bed tap (`bed.wake_time`: `remaining`;
///   `fallback.manual_entry`: 0).
/// - Marks, one element each, with a `<title>` giving the instant: `class="fallback"` (a red
///   cross at 0, `fallback.manual_entry`), `class="warning"` (an orange triangle,
///   `coverage.low` from the watch), `class="open"` (a blue line, each `phone: open` step),
///   `class="background-run"` (a green tick at the bottom, `handler.entered`).
package enum CoverageChart {
    static let width = 900.0
    static let height = 320.0
    static let left = 50.0
    static let right = 20.0
    static let top = 40.0
    static let bottom = 50.0

    /// The chart of `run`, as an SVG document (UTF-8 text).
    package static func svg(_ run: ScenarioRun) -> String {
        let scenario = run.scenario
        let span = max(scenario.end.timeIntervalSince(scenario.start), 1)
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        var points: [(at: Date, nights: Int)] = []
        var fallbacks: [Date] = []
        var warnings: [(at: Date, nights: Int)] = []
        var runs: [Date] = []
        for entry in run.log {
            switch (entry.event.name, entry.source) {
            case (.batchApplied, .watch):
                if case .int(let count)? = entry.event["count"] { points.append((entry.at, Int(count))) }
            case (.bedWakeTime, .watch):
                if case .int(let remaining)? = entry.event["remaining"] { points.append((entry.at, Int(remaining))) }
            case (.fallbackManualEntry, .watch):
                points.append((entry.at, 0))
                fallbacks.append(entry.at)
            case (.coverageLow, .watch):
                var nights = 0
                if case .int(let left)? = entry.event["nightsLeft"] { nights = Int(left) }
                warnings.append((entry.at, nights))
            case (.handlerEntered, _):
                runs.append(entry.at)
            default:
                continue
            }
        }
        let opens = scenario.steps.filter {
            if case .phone(let line) = $0.step { PhoneCommand.words(line).words == ["open"] } else { false }
        }.map(\.at)
        let top = max(7, points.map(\.nights).max() ?? 0)
        func x(_ date: Date) -> Double {
            left + plotWidth * min(max(date.timeIntervalSince(scenario.start) / span, 0), 1)
        }
        func y(_ nights: Int) -> Double { Self.top + plotHeight * (1 - Double(nights) / Double(top)) }
        func number(_ value: Double) -> String { String(format: "%.1f", value) }
        func title(_ text: String) -> String { "<title>\(escape(text))</title>" }

        var svg = [
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"\(Int(width))\" height=\"\(Int(height))\" "
                + "viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"sans-serif\" font-size=\"11\">",
            "<title>\(escape("\(scenario.name): nights of cached dates left (\(run.mode.rawValue))"))</title>",
            "<rect x=\"0\" y=\"0\" width=\"\(Int(width))\" height=\"\(Int(height))\" fill=\"white\"/>",
            "<text x=\"\(number(left))\" y=\"16\" font-size=\"13\">\(escape(scenario.name))</text>",
        ]
        // Axes, the nights scale and a tick per local midnight.
        svg.append(
            "<g class=\"axes\" stroke=\"#444\" fill=\"none\"><path d=\"M\(number(left)) \(number(Self.top)) V\(number(y(0))) "
                + "H\(number(width - right))\"/></g>")
        svg.append("<g class=\"scale\" fill=\"#444\" text-anchor=\"end\">")
        for nights in stride(from: 0, through: top, by: top > 10 ? 2 : 1) {
            svg.append("<text x=\"\(number(left - 6))\" y=\"\(number(y(nights) + 4))\">\(nights)</text>")
        }
        svg.append("</g>")
        let days = max(1, Int((scenario.end.timeIntervalSince(scenario.start) / 86_400).rounded()))
        let labelEvery = max(1, days / 10)
        svg.append("<g class=\"days\" stroke=\"#ddd\" fill=\"#444\" text-anchor=\"middle\">")
        var index = 0
        let segments = zoneSegments(run)
        for (position, segment) in segments.enumerated() {
            let until = position + 1 < segments.count ? segments[position + 1].from : scenario.end
            let calendar = WakeCalendar.calendar(in: segment.zone)
            if position > 0 {
                svg.append(
                    "<text class=\"zone\" x=\"\(number(x(segment.from)))\" y=\"\(number(Self.top - 4))\" stroke=\"none\" "
                        + "text-anchor=\"start\">\(escape(segment.zone.identifier))"
                        + title("from \(ISO8601.string(segment.from)), local days in \(segment.zone.identifier)")
                        + "</text>")
            }
            var midnight = WakeCalendar.startOfDay(segment.from, in: calendar)
            if midnight < segment.from, let next = WakeCalendar.adding(.day, 1, to: midnight, in: calendar) {
                midnight = next
            }
            while midnight < until {
                let at = x(midnight)
                svg.append(
                    "<line x1=\"\(number(at))\" y1=\"\(number(Self.top))\" x2=\"\(number(at))\" y2=\"\(number(y(0)))\">"
                        + title("midnight in \(segment.zone.identifier), \(ISO8601.string(midnight))") + "</line>")
                if index % labelEvery == 0 {
                    let parts = WakeCalendar.wallClock(midnight, in: calendar).date
                    let label = String(format: "%02d-%02d", parts.month, parts.day)
                    svg.append("<text x=\"\(number(at))\" y=\"\(number(y(0) + 16))\" stroke=\"none\">\(label)</text>")
                }
                index += 1
                guard let next = WakeCalendar.adding(.day, 1, to: midnight, in: calendar) else { break }
                midnight = next
            }
        }
        svg.append("</g>")
        // The coverage: a step line.
        if let first = points.first {
            var path = "M\(number(x(first.at))) \(number(y(first.nights)))"
            for point in points.dropFirst() { path += " H\(number(x(point.at))) V\(number(y(point.nights)))" }
            path += " H\(number(x(scenario.end)))"
            svg.append("<path class=\"coverage\" d=\"\(path)\" fill=\"none\" stroke=\"#1f4e9c\" stroke-width=\"2\"/>")
        }
        for at in opens {
            svg.append(
                "<line class=\"open\" x1=\"\(number(x(at)))\" y1=\"\(number(Self.top))\" x2=\"\(number(x(at)))\" "
                    + "y2=\"\(number(y(0)))\" stroke=\"#2f80ed\" stroke-dasharray=\"4 3\">"
                    + title("open \(ISO8601.string(at))") + "</line>")
        }
        for at in runs {
            svg.append(
                "<line class=\"background-run\" x1=\"\(number(x(at)))\" y1=\"\(number(y(0) - 8))\" x2=\"\(number(x(at)))\" "
                    + "y2=\"\(number(y(0)))\" stroke=\"#27ae60\" stroke-width=\"2\">"
                    + title("background run \(ISO8601.string(at))") + "</line>")
        }
        for (at, nights) in warnings {
            let (cx, cy) = (x(at), y(nights) - 8)
            svg.append(
                "<path class=\"warning\" d=\"M\(number(cx)) \(number(cy - 6)) L\(number(cx + 6)) \(number(cy + 5)) "
                    + "L\(number(cx - 6)) \(number(cy + 5)) Z\" fill=\"#f2994a\">"
                    + title("coverage.low, \(nights) nights left, \(ISO8601.string(at))") + "</path>")
        }
        for at in fallbacks {
            let (cx, cy) = (x(at), y(0))
            svg.append(
                "<path class=\"fallback\" d=\"M\(number(cx - 5)) \(number(cy - 5)) L\(number(cx + 5)) \(number(cy + 5)) "
                    + "M\(number(cx - 5)) \(number(cy + 5)) L\(number(cx + 5)) \(number(cy - 5))\" stroke=\"#d62828\" "
                    + "stroke-width=\"2.5\">" + title("manual entry \(ISO8601.string(at))") + "</path>")
        }
        // The legend.
        let legend: [(String, String)] = [
            ("#1f4e9c", "nights of cached dates left"), ("#d62828", "manual entry (fallback)"),
            ("#f2994a", "warning (coverage.low)"), ("#2f80ed", "app opened"), ("#27ae60", "background run"),
        ]
        svg.append("<g class=\"legend\">")
        var legendX = left
        for (color, text) in legend {
            svg.append("<rect x=\"\(number(legendX))\" y=\"24\" width=\"10\" height=\"10\" fill=\"\(color)\"/>")
            svg.append("<text x=\"\(number(legendX + 14))\" y=\"33\">\(escape(text))</text>")
            legendX += 14 + Double(text.count) * 6.2 + 16
        }
        svg.append("</g>")
        svg.append("</svg>")
        return svg.joined(separator: "\n") + "\n"
    }

    /// The zones the watch lives in over the run, each from its instant: the scenario's zone from
    /// the start, then the `to` of each of the watch's `timezone.changed` (a move to a zone this
    /// machine does not know is skipped).
    static func zoneSegments(_ run: ScenarioRun) -> [(from: Date, zone: TimeZone)] {
        var segments: [(from: Date, zone: TimeZone)] = [(run.scenario.start, run.scenario.timeZone)]
        for entry in run.log where entry.source == .watch && entry.event.name == .timezoneChanged {
            guard case .string(let name)? = entry.event["to"], let zone = WakeCalendar.zone(named: name),
                zone.identifier != segments.last?.zone.identifier, entry.at < run.scenario.end
            else { continue }
            if let last = segments.last, last.from >= entry.at { segments.removeLast() }
            segments.append((max(entry.at, run.scenario.start), zone))
        }
        return segments
    }

    /// `&`, `<`, `>` and `"` as XML entities.
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

// SPDX-License-Identifier: Apache-2.0

/// A POSIX TZ string such as `PST8PDT,M3.2.0,M11.1.0` or `<-03>3`: the rule a TZif footer
/// gives for instants after the file's last transition (RFC 8536 section 3.3, POSIX.1-2017
/// section 8.3, with the RFC's extensions: hours -167...167 in rule times, `<...>` names).
///
/// Offsets are kept as seconds east of UTC (the string's sign is the other way round).
package struct PosixTimeZone: Sendable, Equatable {
    /// Offset of standard time, seconds east of UTC.
    package let standardOffset: Int32
    /// Offset of daylight time and the rules of its start and end; nil without daylight time.
    package let daylight: Daylight?

    /// Daylight saving time of a POSIX TZ string.
    package struct Daylight: Sendable, Equatable {
        /// Offset of daylight time, seconds east of UTC.
        package let offset: Int32
        /// When it starts, in standard local time.
        package let start: Rule
        /// When it ends, in daylight local time.
        package let end: Rule
    }

    /// A day of the year and a local time of day on it (seconds, may be negative or past 24 h).
    package struct Rule: Sendable, Equatable {
        /// The day: `Jn`, `n` or `Mm.w.d`.
        package enum Day: Sendable, Equatable {
            /// `Jn`: day 1...365, February 29 never counted.
            case julian(Int)
            /// `n`: day 0...365, February 29 counted.
            case zeroBased(Int)
            /// `Mm.w.d`: day `d` (0 = Sunday) of week `w` (1...5, 5 = last) of month `m`.
            case monthWeekDay(month: Int, week: Int, weekday: Int)
        }

        /// Which day of the year the transition falls on.
        package let day: Day
        /// Seconds after local midnight of that day (default 02:00).
        package let time: Int64
    }

    /// Parses a POSIX TZ string; nil for anything else.
    package init?(parsing text: String) {
        var scanner = PosixScanner(bytes: Array(text.utf8))
        guard scanner.name(), let std = scanner.offset(maxHours: 24) else { return nil }
        standardOffset = Int32(-std)
        if scanner.atEnd {
            daylight = nil
            return
        }
        guard scanner.name() else { return nil }
        var dstOffset = -std + 3600
        if let peek = scanner.peek, peek != UInt8(ascii: ",") {
            guard let parsed = scanner.offset(maxHours: 24) else { return nil }
            dstOffset = -parsed
        }
        let start: Rule
        let end: Rule
        if scanner.atEnd {
            // No rule: the United States' rule, as glibc and the tz code assume.
            start = Rule(day: .monthWeekDay(month: 3, week: 2, weekday: 0), time: 7200)
            end = Rule(day: .monthWeekDay(month: 11, week: 1, weekday: 0), time: 7200)
        } else {
            guard scanner.skip(UInt8(ascii: ",")), let s = scanner.rule(), scanner.skip(UInt8(ascii: ",")),
                let e = scanner.rule(), scanner.atEnd
            else { return nil }
            start = s
            end = e
        }
        daylight = Daylight(offset: Int32(dstOffset), start: start, end: end)
    }

    /// The UTC offset at `instant` (UNIX seconds), seconds east of UTC.
    package func offset(at instant: Int64) -> Int32 {
        guard let daylight else { return standardOffset }
        let year = CivilDate(days: floorDiv(instant + Int64(standardOffset), 86_400)).year
        let start = daylight.start.instant(in: year, offset: Int64(standardOffset))
        let end = daylight.end.instant(in: year, offset: Int64(daylight.offset))
        let inDaylight = start < end ? (start <= instant && instant < end) : !(end <= instant && instant < start)
        return inDaylight ? daylight.offset : standardOffset
    }
}

extension PosixTimeZone.Rule {
    /// The UNIX instant of this rule in `year`, its time read at UTC offset `offset` (seconds east).
    func instant(in year: Int, offset: Int64) -> Int64 {
        let days: Int64
        switch day {
        case .julian(let n):
            let leap = CivilDate.isLeap(year) && n >= 60 ? 1 : 0
            days = CivilDate(year: year, month: 1, day: 1).daysSince1970 + Int64(n - 1 + leap)
        case .zeroBased(let n):
            days = CivilDate(year: year, month: 1, day: 1).daysSince1970 + Int64(n)
        case .monthWeekDay(let month, let week, let weekday):
            let first = CivilDate(year: year, month: month, day: 1).daysSince1970
            let firstWeekday = Int(floorMod(first + 4, 7))
            var day = 1 + (weekday - firstWeekday + 7) % 7 + (week - 1) * 7
            let length = CivilDate.daysIn(month: month, year: year)
            while day > length { day -= 7 }
            days = first + Int64(day - 1)
        }
        return days * 86_400 + time - offset
    }
}

/// Scans the parts of a POSIX TZ string.
private struct PosixScanner {
    let bytes: [UInt8]
    var position = 0

    var atEnd: Bool { position == bytes.count }
    var peek: UInt8? { atEnd ? nil : bytes[position] }

    mutating func skip(_ byte: UInt8) -> Bool {
        guard peek == byte else { return false }
        position += 1
        return true
    }

    /// `<...>` (letters, digits, `+`, `-`) or three or more letters.
    mutating func name() -> Bool {
        if skip(UInt8(ascii: "<")) {
            let start = position
            while let byte = peek, byte != UInt8(ascii: ">") {
                guard isAlnum(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") else { return false }
                position += 1
            }
            return position - start >= 3 && skip(UInt8(ascii: ">"))
        }
        let start = position
        while let byte = peek, isAlpha(byte) { position += 1 }
        return position - start >= 3
    }

    /// `[+-]hh[:mm[:ss]]` in seconds, hours up to `maxHours`.
    mutating func offset(maxHours: Int) -> Int64? {
        var sign: Int64 = 1
        if skip(UInt8(ascii: "-")) { sign = -1 } else { _ = skip(UInt8(ascii: "+")) }
        guard let hours = number(maxDigits: 3), hours <= maxHours else { return nil }
        var seconds = Int64(hours) * 3600
        if skip(UInt8(ascii: ":")) {
            guard let minutes = number(maxDigits: 2), minutes < 60 else { return nil }
            seconds += Int64(minutes) * 60
            if skip(UInt8(ascii: ":")) {
                guard let s = number(maxDigits: 2), s < 60 else { return nil }
                seconds += Int64(s)
            }
        }
        return sign * seconds
    }

    /// `Jn`, `n` or `Mm.w.d`, then an optional `/time`.
    mutating func rule() -> PosixTimeZone.Rule? {
        let day: PosixTimeZone.Rule.Day
        if skip(UInt8(ascii: "J")) {
            guard let n = number(maxDigits: 3), (1...365).contains(n) else { return nil }
            day = .julian(n)
        } else if skip(UInt8(ascii: "M")) {
            guard let m = number(maxDigits: 2), (1...12).contains(m), skip(UInt8(ascii: ".")),
                let w = number(maxDigits: 1), (1...5).contains(w), skip(UInt8(ascii: ".")),
                let d = number(maxDigits: 1), (0...6).contains(d)
            else { return nil }
            day = .monthWeekDay(month: m, week: w, weekday: d)
        } else {
            guard let n = number(maxDigits: 3), (0...365).contains(n) else { return nil }
            day = .zeroBased(n)
        }
        var time: Int64 = 7200
        if skip(UInt8(ascii: "/")) {
            guard let parsed = offset(maxHours: 167) else { return nil }
            time = parsed
        }
        return PosixTimeZone.Rule(day: day, time: time)
    }

    mutating func number(maxDigits: Int) -> Int? {
        var value = 0
        var digits = 0
        while let byte = peek, (48...57).contains(byte), digits < maxDigits {
            value = value * 10 + Int(byte - 48)
            digits += 1
            position += 1
        }
        return digits == 0 ? nil : value
    }

    func isAlpha(_ byte: UInt8) -> Bool { (65...90).contains(byte) || (97...122).contains(byte) }
    func isAlnum(_ byte: UInt8) -> Bool { isAlpha(byte) || (48...57).contains(byte) }
}

/// A proleptic Gregorian date, converted to and from days since 1970-01-01 (the algorithms of
/// Howard Hinnant's "chrono-Compatible Low-Level Date Algorithms").
struct CivilDate: Equatable {
    var year: Int
    var month: Int
    var day: Int

    init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date `days` after 1970-01-01.
    init(days: Int64) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        day = Int(doy - (153 * mp + 2) / 5 + 1)
        month = Int(mp < 10 ? mp + 3 : mp - 9)
        year = Int(yoe + era * 400) + (month <= 2 ? 1 : 0)
    }

    /// Days from 1970-01-01 to this date.
    var daysSince1970: Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = floorDiv(y, 400)
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

/// `a / b` rounded towards minus infinity (b > 0).
func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }

/// `a mod b` in 0..<b (b > 0).
func floorMod(_ a: Int64, _ b: Int64) -> Int64 { a - floorDiv(a, b) * b }

// SPDX-License-Identifier: Apache-2.0

/// The rules of one time zone read from a TZif file (RFC 8536): its transitions, the UTC offset
/// after each, and the POSIX TZ footer that rules every instant after the last transition.
///
/// All instants are UNIX seconds (UTC, leap seconds not counted, as `Date.timeIntervalSince1970`);
/// offsets are seconds east of UTC. Pure: built from bytes, no I/O.
package struct ZoneRules: Sendable, Equatable {
    /// The zone's name as asked for (`America/Vancouver`).
    package let name: String
    /// Transition instants, ascending (64-bit data of a v2+ file, 32-bit of a v1 file).
    package let transitions: [Int64]
    /// The UTC offset from each transition on (same count as `transitions`).
    package let offsetsAfter: [Int32]
    /// The offset before the first transition (RFC 8536 3.2: local time type 0).
    package let initialOffset: Int32
    /// The footer's rule for instants after the last transition; nil when the file has none
    /// (v1, or an empty footer: the last transition's offset holds for ever).
    package let footer: PosixTimeZone?

    /// A zone whose offset never changes.
    package init(name: String, fixedOffset: Int32) {
        self.name = name
        transitions = []
        offsetsAfter = []
        initialOffset = fixedOffset
        footer = nil
    }

    /// Reads a TZif file (RFC 8536 versions 1, 2 and 3).
    ///
    /// - Parameters:
    ///   - bytes: the whole file.
    ///   - name: the zone's name, kept and named in errors.
    /// - Throws: `ZoneError.corrupt` naming the zone and what is wrong (bad magic, a count past
    ///   the end of the file, a type index out of range, transitions not ascending, a footer that
    ///   is not a POSIX TZ string).
    package init(tzif bytes: [UInt8], name: String) throws(ZoneError) {
        var reader = TZifReader(bytes: bytes, name: name)
        let first = try reader.header()
        if first.version == 0 {
            let block = try reader.block(first, timeSize: 4)
            try self.init(name: name, block: block, footer: nil)
            return
        }
        _ = try reader.block(first, timeSize: 4)
        let second = try reader.header()
        let block = try reader.block(second, timeSize: 8)
        let footer = try reader.footer()
        try self.init(name: name, block: block, footer: footer)
    }

    private init(name: String, block: TZifReader.Block, footer: PosixTimeZone?) throws(ZoneError) {
        self.name = name
        guard !block.offsets.isEmpty else { throw ZoneError.corrupt(zone: name, reason: "no local time types") }
        for index in block.typeIndices where Int(index) >= block.offsets.count {
            throw ZoneError.corrupt(zone: name, reason: "transition type index \(index) out of range")
        }
        for index in block.times.indices.dropFirst() where block.times[index] <= block.times[index - 1] {
            throw ZoneError.corrupt(zone: name, reason: "transition times not ascending")
        }
        transitions = block.times
        offsetsAfter = block.typeIndices.map { block.offsets[Int($0)] }
        initialOffset = block.offsets[0]
        self.footer = footer
    }

    /// The UTC offset at `instant` (UNIX seconds), seconds east of UTC.
    package func offset(at instant: Int64) -> Int32 {
        guard let last = transitions.last, instant >= transitions[0] else {
            if transitions.isEmpty, let footer { return footer.offset(at: instant) }
            return initialOffset
        }
        if instant > last, let footer { return footer.offset(at: instant) }
        var low = 0
        var high = transitions.count
        while low < high {
            let middle = (low + high) / 2
            if transitions[middle] <= instant { low = middle + 1 } else { high = middle }
        }
        return offsetsAfter[low - 1]
    }

    /// The instant whose local wall time is `wall` (wall-clock seconds since 1970-01-01T00:00
    /// local): a wall time in a gap (spring forward) moves forward by the gap, one that occurs
    /// twice (fall back) takes the first occurrence (Foundation's `Calendar.nextDate` with
    /// `.nextTimePreservingSmallerComponents` and `repeatedTimePolicy: .first`).
    package func instant(ofWall wall: Int64) -> Int64 {
        // The offsets around: 28 h either side covers every offset change of a real zone.
        let window: Int64 = 28 * 3600
        let before = Int64(offset(at: wall - window))
        let after = Int64(offset(at: wall + window))
        let naive = Int64(offset(at: wall - before))
        var best: Int64?
        for candidate in [before, naive, after] {
            let instant = wall - candidate
            if Int64(offset(at: instant)) == candidate, best.map({ instant < $0 }) ?? true { best = instant }
        }
        if let best { return best }
        // A gap: the offset before the change, so the instant lands after it by the gap.
        return wall - before
    }

    /// The local wall time (seconds since 1970-01-01T00:00 local) of `instant`.
    package func wall(at instant: Int64) -> Int64 { instant + Int64(offset(at: instant)) }
}

/// A time zone that cannot be used: not in the database, or its file unreadable or corrupt.
package enum ZoneError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No file for `zone` under `directory`.
    case missing(zone: String, directory: String)
    /// The file of `zone` is not valid TZif (RFC 8536).
    case corrupt(zone: String, reason: String)
    /// Not the form of an IANA zone name (`Area/Location`, `UTC`).
    case badName(String)
    /// Something is at the zone's path but cannot be read as a file: a FIFO, a directory, a
    /// link that loops or leads nowhere, or a file this process may not read (`reason` names it).
    case unreadable(zone: String, reason: String)

    package var description: String {
        switch self {
        case .missing(let zone, let directory): "time zone \"\(zone)\" is not in the tz database at \(directory)"
        case .corrupt(let zone, let reason): "time zone \"\(zone)\": not a valid TZif file (RFC 8536): \(reason)"
        case .badName(let zone): "\"\(zone)\" is not an IANA time-zone name (Area/Location)"
        case .unreadable(let zone, let reason): "time zone \"\(zone)\": \(reason)"
        }
    }

    /// Whether the zone's file is there but unusable (`corrupt` or `unreadable`): said in the
    /// database's own words, naming the file, rather than as a zone the database lacks.
    package var isFileProblem: Bool {
        switch self {
        case .corrupt, .unreadable: true
        case .missing, .badName: false
        }
    }
}

/// Reads the parts of a TZif file in order (RFC 8536 section 3).
private struct TZifReader {
    let bytes: [UInt8]
    let name: String
    var position = 0

    struct Header {
        var version: UInt8
        var isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt: Int
    }

    struct Block {
        var times: [Int64] = []
        var typeIndices: [UInt8] = []
        var offsets: [Int32] = []
    }

    func fail(_ reason: String) -> ZoneError { .corrupt(zone: name, reason: reason) }

    mutating func take(_ count: Int) throws(ZoneError) -> ArraySlice<UInt8> {
        guard count >= 0, position + count <= bytes.count else {
            throw fail("ends at byte \(bytes.count), \(count) more bytes expected at \(position)")
        }
        defer { position += count }
        return bytes[position..<position + count]
    }

    mutating func uint32() throws(ZoneError) -> UInt32 {
        try take(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func header() throws(ZoneError) -> Header {
        guard Array(try take(4)) == Array("TZif".utf8) else { throw fail("no TZif magic") }
        let version = try take(1).first ?? 0
        guard version == 0 || (UInt8(ascii: "2")...UInt8(ascii: "9")).contains(version) else {
            throw fail("unknown version byte \(version)")
        }
        _ = try take(15)
        var counts: [Int] = []
        for _ in 0..<6 { counts.append(Int(try uint32())) }
        guard counts[4] > 0 else { throw fail("typecnt is 0") }
        return Header(
            version: version == 0 ? 0 : version - UInt8(ascii: "0"), isutcnt: counts[0], isstdcnt: counts[1],
            leapcnt: counts[2], timecnt: counts[3], typecnt: counts[4], charcnt: counts[5])
    }

    mutating func block(_ header: Header, timeSize: Int) throws(ZoneError) -> Block {
        var block = Block()
        let times = try take(header.timecnt * timeSize)
        block.times.reserveCapacity(header.timecnt)
        var index = times.startIndex
        while index < times.endIndex {
            var value: UInt64 = 0
            for byte in times[index..<index + timeSize] { value = value << 8 | UInt64(byte) }
            block.times.append(timeSize == 4 ? Int64(Int32(truncatingIfNeeded: value)) : Int64(bitPattern: value))
            index += timeSize
        }
        block.typeIndices = Array(try take(header.timecnt))
        for _ in 0..<header.typecnt {
            let offset = Int32(bitPattern: try uint32())
            _ = try take(2)
            guard (-89_999...93_599).contains(offset) else { throw fail("UTC offset \(offset) s out of range") }
            block.offsets.append(offset)
        }
        _ = try take(header.charcnt + header.leapcnt * (timeSize + 4) + header.isstdcnt + header.isutcnt)
        return block
    }

    mutating func footer() throws(ZoneError) -> PosixTimeZone? {
        guard try take(1).first == UInt8(ascii: "\n") else { throw fail("no newline before the footer") }
        let rest = bytes[position...]
        guard let end = rest.firstIndex(of: UInt8(ascii: "\n")) else { throw fail("footer not ended by a newline") }
        let text = String(decoding: bytes[position..<end], as: UTF8.self)
        if text.isEmpty { return nil }
        guard let rule = PosixTimeZone(parsing: text) else { throw fail("footer \"\(text)\" is not a POSIX TZ string") }
        return rule
    }
}

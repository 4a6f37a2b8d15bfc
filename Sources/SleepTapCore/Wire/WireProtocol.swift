// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// Wire protocol v1 between phone and watch (docs/protocol.md is the normative text).
///
/// Every message is ONE ZeroMQ frame holding one UTF-8 JSON object with `"v": 1` and a `"type"`.
/// On the phone's ROUTER the frame is preceded by the watch's routing-id frame (added and removed
/// by ZeroMQ; the watch never sees it).
public enum WireMessage: Equatable, Sendable {
    /// Watch → phone on every (re)connect and on retry: the batch it holds (nil = none yet).
    case hello(BatchRef?)
    /// Phone → watch: the newest batch.
    case batch(WakeBatch)
    /// Watch → phone: the batch `ref` names (epoch, seq and digest of what it stored) is durably
    /// stored; `coverageEnd` is its last cached wake-up (nil if the batch was empty).
    case ack(BatchRef, coverageEnd: Date?)
    /// Phone → watch, answering HELLO: the watch already holds the newest batch `seq`.
    case upToDate(seq: UInt64)
    /// Either way: the peer's last message was rejected, with a human-readable reason.
    case error(reason: String)
    /// Either way, every second while connected: application-level liveness (no reply).
    case ping
    /// Watch → phone, when its coverage is low (`watch --request-dates`): please send fresh
    /// dates. The phone's OS wakes the app for it as for a message from the paired watch
    /// (docs/protocol.md, "REQUEST"; docs/scheduler.md, "A message from the watch").
    case request(DateRequest)

    /// The `type` string on the wire.
    public var typeName: String {
        switch self {
        case .hello: "HELLO"
        case .batch: "BATCH"
        case .ack: "ACK"
        case .upToDate: "UP_TO_DATE"
        case .error: "ERROR"
        case .ping: "PING"
        case .request: "REQUEST"
        }
    }
}

/// What a REQUEST carries: the watch's count of its requests and the coverage it still holds.
public struct DateRequest: Equatable, Sendable {
    /// The watch's number for this request, ≥ 1, increasing within one watch process (the phone
    /// names it in its events; it is not an identity across restarts).
    public var id: UInt64
    /// Cached wake-ups strictly after the instant the watch sent it (0…`WireCodec.maxEntries`).
    public var nightsLeft: Int
    /// The last cached wake-up (UTC), nil when the watch holds an empty batch or none.
    public var coverageEnd: Date?

    /// - Parameters:
    ///   - id: ≥ 1 on the wire (the decoder refuses 0).
    ///   - nightsLeft: 0…`WireCodec.maxEntries` on the wire.
    ///   - coverageEnd: the last cached wake-up, nil when none.
    public init(id: UInt64, nightsLeft: Int, coverageEnd: Date?) {
        self.id = id
        self.nightsLeft = nightsLeft
        self.coverageEnd = coverageEnd
    }
}

/// Why a received frame was not accepted. `reason` is what `message.rejected` events and ERROR
/// replies carry.
public struct ProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong with the frame, in words.
    public var reason: String
    /// An error for `reason`.
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// Encodes and strictly decodes v1 messages.
public enum WireCodec {
    /// The protocol version this build speaks.
    public static let version = 1
    /// Upper bound on a frame, in bytes; the transport sets ZMQ_MAXMSGSIZE to it.
    public static let maxFrameBytes = 64 * 1024
    /// The longest ERROR `reason` sent, in UTF-8 bytes: at most 6 bytes a byte once escaped
    /// (`\u001f`), it and the envelope stay within a frame (`maxFrameBytes`). A longer reason,
    /// such as one that quotes a hostile peer's 64 KB field, is cut at a character and ends in
    /// `…` (`clipped(_:)`).
    public static let maxReasonBytes = maxFrameBytes / 8

    /// `reason` cut to `maxReasonBytes` UTF-8 bytes at a character boundary, ending in `…`, when
    /// it is longer; else `reason`.
    static func clipped(_ reason: String) -> String {
        guard reason.utf8.count > maxReasonBytes else { return reason }
        let ellipsis = "…"
        var kept = ""
        var bytes = 0
        for character in reason {
            let size = character.utf8.count
            guard bytes + size + ellipsis.utf8.count <= maxReasonBytes else { break }
            kept.append(character)
            bytes += size
        }
        return kept + ellipsis
    }
    /// Largest seq (and lastSeq) on the wire: 2^53 − 1, exact in every JSON implementation
    /// (IEEE-754 doubles included). A phone that reaches it starts a new epoch at seq 1.
    public static let maxSeq: UInt64 = 9_007_199_254_740_991
    /// Upper bound on entries in one batch (a horizon of up to 64 days).
    public static let maxEntries = 64
    /// Bound on an entry's `utcOffset`, seconds: ±18 h, the range Foundation's `TimeZone` and
    /// `java.time.ZoneOffset` accept (real zones lie within −12 h … +14 h).
    public static let maxUTCOffset = 18 * 3600
    /// How far after its batch's `generatedAt` an entry's wake may lie, seconds: 74 × 24 h, the
    /// 8 days within which the phone's planner finds the first wake-up (a schedule with one
    /// wake-up a week), the 64 days a batch may hold (`maxEntries`) and 2 for offset changes. A
    /// wake in the year 9999 from a phone of the present is no wake-up to ring for.
    public static let maxWakeAhead: TimeInterval = 74 * 24 * 3600

    /// Whether a frame that failed to decode still says it is an ERROR: such a frame is never
    /// answered with an ERROR (two peers must not ping-pong errors).
    public static func claimsToBeError(_ frame: [UInt8]) -> Bool {
        guard frame.count <= maxFrameBytes,
            let object = try? JSONSerialization.jsonObject(with: Data(frame)) as? [String: Any]
        else { return false }
        return object["type"] as? String == "ERROR"
    }

    /// The single frame for `message`: one JSON object written by Foundation's `JSONEncoder`
    /// (`.sortedKeys`, no spaces), with exactly the keys docs/protocol.md lists for its type;
    /// `coverageEnd` of ACK and REQUEST is written `null` when there is none, and HELLO without
    /// a batch carries `lastSeq` 0 and no `epoch` or `digest`. Instants are `ISO8601.string`.
    /// PING, sent every second each way and always the same, is encoded once and kept.
    ///
    /// - Parameters:
    ///   - message: the message to encode.
    ///   - sentAt: HELLO only: the sender's virtual now (UTC), written as the optional `sentAt`
    ///     (ISO-8601) for the receiver's clock check; nil writes none (as a peer from before it).
    ///   - instance: HELLO only: the sending process's instance (`WireCodec.Hello.instance`),
    ///     written as the optional `instance` (16 hex digits); nil writes none.
    public static func encode(_ message: WireMessage, sentAt: Date?, instance: UInt64?) -> [UInt8] {
        if case .ping = message { return pingFrame }
        return encoded(message, sentAt: sentAt, instance: instance)
    }

    /// `message` as its v1 frame without a HELLO's optional fields (see
    /// `encode(_:sentAt:instance:)`).
    public static func encode(_ message: WireMessage) -> [UInt8] {
        encode(message, sentAt: nil, instance: nil)
    }

    /// A HELLO's optional fields beside the held batch (docs/protocol.md, "HELLO"): peers from
    /// before them send neither, and every peer ignores fields it does not know.
    public struct Hello: Equatable, Sendable {
        /// The watch's virtual now when it sent the HELLO (UTC), nil when not given.
        public var sentAt: Date?
        /// A random 64-bit value the watch process chose at its start: another value behind the
        /// same routing id is another process (a restart, or a second watch taking the id).
        public var instance: UInt64?

        /// The fields as given.
        public init(sentAt: Date? = nil, instance: UInt64? = nil) {
            self.sentAt = sentAt
            self.instance = instance
        }
    }

    /// Decodes one frame as `decode` does, and for a HELLO also its optional `sentAt` and
    /// `instance` (nil for other messages).
    /// - Throws: `ProtocolError` as `decode`, and for a `sentAt` that is not an ISO-8601 instant
    ///   or an `instance` that is not 16 lower-case hex digits (each named).
    public static func decodeWithHello(_ frame: [UInt8]) throws(ProtocolError) -> (WireMessage, Hello?) {
        let message = try decode(frame)
        guard case .hello = message else { return (message, nil) }
        let object: [String: Any]
        do {
            object = try JSONDiagnosis.object(from: Data(frame))
        } catch {
            return (message, Hello())
        }
        let fields = Fields(object: object)
        let instance: UInt64? =
            object["instance"] == nil || object["instance"] is NSNull ? nil : try fields.hex64("instance")
        return (message, Hello(sentAt: try fields.optionalDate("sentAt"), instance: instance))
    }

    /// `message` encoded by `JSONEncoder`.
    private static func encoded(_ message: WireMessage, sentAt: Date? = nil, instance: UInt64? = nil) -> [UInt8] {
        let frame: Wire.Frame
        switch message {
        case .hello(let held):
            frame = .hello(
                Wire.Hello(
                    lastSeq: held?.seq ?? 0, epoch: held.map { Hex64.string($0.epoch) },
                    digest: held.map { Hex64.string($0.digest) }, sentAt: sentAt.map(ISO8601.string),
                    instance: instance.map(Hex64.string)))
        case .batch(let batch):
            frame = .batch(
                Wire.Batch(
                    epoch: Hex64.string(batch.epoch), seq: batch.seq,
                    generatedAt: ISO8601.string(batch.generatedAt), timeZone: batch.timeZone,
                    entries: batch.entries.map(Wire.Entry.init)))
        case .ack(let ref, let coverageEnd):
            frame = .ack(
                Wire.Ack(
                    epoch: Hex64.string(ref.epoch), seq: ref.seq, digest: Hex64.string(ref.digest),
                    coverageEnd: coverageEnd.map(ISO8601.string)))
        case .upToDate(let seq):
            frame = .upToDate(Wire.UpToDate(seq: seq))
        case .error(let reason):
            frame = .error(Wire.Failure(reason: clipped(reason)))
        case .ping:
            frame = .ping
        case .request(let request):
            frame = .request(
                Wire.Request(
                    id: request.id, nightsLeft: request.nightsLeft,
                    coverageEnd: request.coverageEnd.map(ISO8601.string)))
        }
        let envelope = Wire.Envelope(type: message.typeName, v: version, body: frame)
        // Every field is a string, an integer or null: encoding cannot fail.
        return Array((try? encoder.encode(envelope)) ?? Data())
    }

    /// The size in bytes of one BATCH entry as `encode(_:)` writes it inside the batch's `entries`
    /// array. The frame of a batch of n ≥ 1 entries is its frame without entries, plus each entry's
    /// size, plus the n − 1 commas between them (compact JSON: RFC 8259, section 5, arrays), so a
    /// meter can size a batch from entries it measured before (the twin's `LinkByteMeter`).
    package static func encodedSize(of entry: WakeEntry) -> Int {
        (try? encoder.encode(Wire.Entry(entry)))?.count ?? 0
    }

    /// Configured once; `JSONEncoder.encode` may be called from any thread (it copies its options).
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    /// The wire's objects as `Encodable` values: `JSONEncoder` writes them.
    private enum Wire {
        struct Hello: Encodable {
            var lastSeq: UInt64
            var epoch: String?
            var digest: String?
            var sentAt: String?
            var instance: String?
        }

        struct Entry: Encodable {
            var wake: String
            var localDate: String
            var localTime: String
            var timeZone: String
            var utcOffset: Int

            init(_ entry: WakeEntry) {
                wake = ISO8601.string(entry.wake)
                localDate = entry.localDate
                localTime = entry.localTime
                timeZone = entry.timeZone
                utcOffset = entry.utcOffset
            }
        }

        struct Batch: Encodable {
            var epoch: String
            var seq: UInt64
            var generatedAt: String
            var timeZone: String
            var entries: [Entry]
        }

        struct Ack: Encodable {
            var epoch: String
            var seq: UInt64
            var digest: String
            var coverageEnd: String?

            private enum CodingKeys: String, CodingKey { case epoch, seq, digest, coverageEnd }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(epoch, forKey: .epoch)
                try container.encode(seq, forKey: .seq)
                try container.encode(digest, forKey: .digest)
                try container.encode(coverageEnd, forKey: .coverageEnd)  // null when nil
            }
        }

        struct UpToDate: Encodable { var seq: UInt64 }

        struct Failure: Encodable { var reason: String }

        struct Request: Encodable {
            var id: UInt64
            var nightsLeft: Int
            var coverageEnd: String?

            private enum CodingKeys: String, CodingKey { case id, nightsLeft, coverageEnd }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(id, forKey: .id)
                try container.encode(nightsLeft, forKey: .nightsLeft)
                try container.encode(coverageEnd, forKey: .coverageEnd)  // null when nil
            }
        }

        enum Frame {
            case hello(Hello)
            case batch(Batch)
            case ack(Ack)
            case upToDate(UpToDate)
            case error(Failure)
            case ping
            case request(Request)
        }

        /// `type` and `v`, and the type's own fields in the same object.
        struct Envelope: Encodable {
            var type: String
            var v: Int
            var body: Frame

            private enum CodingKeys: String, CodingKey { case type, v }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(type, forKey: .type)
                try container.encode(v, forKey: .v)
                switch body {
                case .hello(let fields): try fields.encode(to: encoder)
                case .batch(let fields): try fields.encode(to: encoder)
                case .ack(let fields): try fields.encode(to: encoder)
                case .upToDate(let fields): try fields.encode(to: encoder)
                case .error(let fields): try fields.encode(to: encoder)
                case .ping: break
                case .request(let fields): try fields.encode(to: encoder)
                }
            }
        }
    }

    /// PING as `encode` writes it.
    private static let pingFrame = encoded(.ping)

    /// Decodes and validates one frame.
    ///
    /// - Throws: `ProtocolError` naming what is wrong: not JSON (RFC 8259, strictly: no trailing
    ///   comma), a key given twice in one object (named), not an object, missing or
    ///   wrongly typed field, unsupported `v`, unknown `type`, or a batch whose entries are not
    ///   strictly increasing, repeat a local date, exceed `maxEntries`, whose zone is not an IANA
    ///   name, or whose local fields are not what `wake + utcOffset` reads. A zone this machine's
    ///   time-zone database does not know is accepted (`WakeBatch.zoneIsKnown`).
    public static func decode(_ frame: [UInt8]) throws(ProtocolError) -> WireMessage {
        guard frame.count <= maxFrameBytes else {
            throw ProtocolError("frame of \(frame.count) bytes exceeds \(maxFrameBytes)")
        }
        // A heartbeat every second each way: its one canonical form needs no parser.
        if frame == pingFrame { return .ping }
        let object: [String: Any]
        do {
            object = try JSONDiagnosis.object(from: Data(frame))
        } catch {
            switch error {
            case .syntax: throw ProtocolError("not valid JSON")
            case .notAnObject: throw ProtocolError("not a JSON object")
            case .duplicateKey(let path, _, _, _):
                throw ProtocolError("key \"\(clipped(path))\" appears twice in one object")
            }
        }
        let fields = Fields(object: object)
        let v = try fields.integer("v")
        guard v == UInt64(version) else {
            throw ProtocolError("unsupported protocol version \(v) (this build speaks \(version))")
        }
        let type = try fields.string("type")
        switch type {
        case "HELLO":
            let lastSeq = try fields.integer("lastSeq")
            guard lastSeq > 0 else { return .hello(nil) }
            return .hello(
                BatchRef(epoch: try fields.hex64("epoch"), seq: lastSeq, digest: try fields.hex64("digest")))
        case "BATCH":
            return .batch(try decodeBatch(fields))
        case "ACK":
            let ref = BatchRef(
                epoch: try fields.hex64("epoch"), seq: try fields.positive("seq"), digest: try fields.hex64("digest"))
            let end: Date? = try fields.optionalDate("coverageEnd")
            return .ack(ref, coverageEnd: end)
        case "UP_TO_DATE":
            return .upToDate(seq: try fields.integer("seq"))
        case "ERROR":
            return .error(reason: try fields.string("reason"))
        case "PING":
            return .ping
        case "REQUEST":
            let id = try fields.positive("id")
            let nightsLeft = try fields.integer("nightsLeft")
            guard nightsLeft <= UInt64(maxEntries) else {
                throw ProtocolError("field nightsLeft must be at most \(maxEntries) (the entries a batch holds)")
            }
            let end: Date? = try fields.optionalDate("coverageEnd")
            return .request(DateRequest(id: id, nightsLeft: Int(nightsLeft), coverageEnd: end))
        default:
            throw ProtocolError("unknown message type \"\(type)\"")
        }
    }

    private static func decodeBatch(_ fields: Fields) throws(ProtocolError) -> WakeBatch {
        let epoch = try fields.hex64("epoch")
        let seq = try fields.positive("seq")
        let generatedAt = try fields.date("generatedAt")
        let zone = try fields.string("timeZone")
        guard WakeCalendar.isZoneName(zone) else {
            throw ProtocolError("timeZone: \(WakeCalendar.unknownZoneReason(zone))")
        }
        let utc = utcCalendar
        guard let raw = fields.object["entries"] else { throw ProtocolError("missing field entries") }
        guard let list = raw as? [Any] else { throw ProtocolError("field entries must be an array") }
        guard list.count <= maxEntries else {
            throw ProtocolError("batch has \(list.count) entries; at most \(maxEntries) allowed")
        }
        var entries: [WakeEntry] = []
        var dates = Set<String>()
        for (index, item) in list.enumerated() {
            guard let entryObject = item as? [String: Any] else {
                throw ProtocolError("entries[\(index)] must be an object")
            }
            let entry = Fields(object: entryObject, prefix: "entries[\(index)].")
            let wake = try entry.date("wake")
            let localDate = try entry.string("localDate")
            let localTime = try entry.string("localTime")
            let offset = try entry.signedInteger("utcOffset", bound: maxUTCOffset)
            entries.append(
                try checkedEntry(
                    index, wake: wake, localDate: localDate, localTime: localTime,
                    entryZone: { () throws(ProtocolError) -> String? in
                        entryObject["timeZone"] == nil ? nil : try entry.string("timeZone")
                    }, offset: offset, zone: zone, generatedAt: generatedAt, after: entries.last, dates: &dates,
                    utc: utc))
        }
        return WakeBatch(epoch: epoch, seq: seq, generatedAt: generatedAt, timeZone: zone, entries: entries)
    }

    /// The checks of entry `index` once its fields are read (shared by `decode` and
    /// `delivered`, in the order `decode` makes them): a calendar date, `HH:MM`, the batch's zone
    /// (`entryZone` reads the entry's own, nil when absent), the local fields what `wake +
    /// utcOffset` reads in UTC, after the previous entry, a local date not seen before.
    private static func checkedEntry(
        _ index: Int, wake: Date, localDate: String, localTime: String,
        entryZone: () throws(ProtocolError) -> String?, offset: Int, zone: String, generatedAt: Date,
        after previous: WakeEntry?, dates: inout Set<String>, utc: Calendar
    ) throws(ProtocolError) -> WakeEntry {
        guard LocalDate(parsing: localDate) != nil else {
            throw ProtocolError("entries[\(index)].localDate \"\(localDate)\" is not a calendar date yyyy-MM-dd")
        }
        guard LocalTime(parsing: localTime) != nil else {
            throw ProtocolError("entries[\(index)].localTime \"\(localTime)\" is not HH:MM")
        }
        if let entryZone = try entryZone() {
            guard entryZone == zone else {
                throw ProtocolError(
                    "entries[\(index)].timeZone \"\(entryZone)\" differs from the batch's \"\(zone)\"")
            }
        }
        // The local fields must say what the instant reads at the sender's offset. Plain
        // arithmetic, so a receiver whose tz database differs from the sender's can check it.
        let shifted = wake.addingTimeInterval(TimeInterval(offset))
        let actualDate = WakeCalendar.localDateString(shifted, in: utc)
        let actualTime = WakeCalendar.localTimeString(shifted, in: utc)
        guard actualDate == localDate, actualTime == localTime else {
            throw ProtocolError(
                "entries[\(index)]: \(localDate) \(localTime) is not what its wake reads at utcOffset \(offset) s "
                    + "(\(actualDate) \(actualTime))")
        }
        if let previous, wake <= previous.wake {
            throw ProtocolError("entries[\(index)].wake is not after entries[\(index - 1)].wake")
        }
        guard wake.timeIntervalSince(generatedAt) <= maxWakeAhead else {
            throw ProtocolError(
                "entries[\(index)].wake \(ISO8601.string(wake)) is more than 74 days after generatedAt "
                    + ISO8601.string(generatedAt))
        }
        guard dates.insert(localDate).inserted else {
            throw ProtocolError("entries[\(index)].localDate \(localDate) appears twice")
        }
        return WakeEntry(wake: wake, localDate: localDate, localTime: localTime, timeZone: zone, utcOffset: offset)
    }

    /// The calendar the local fields of an entry are checked in (UTC, offsets added by hand).
    private static let utcCalendar = WakeCalendar.calendar(in: TimeZone(secondsFromGMT: 0) ?? .current)

    /// What `decode(encode(message))` gives, without writing or parsing JSON; nil when `message`
    /// might not survive the wire (`decode` would refuse its frame, or the frame could exceed
    /// `maxFrameBytes`), and for instants outside 1970-9999. Instants are floored to the whole
    /// second, as `ISO8601.string` writes them and `ISO8601.date` reads them back; a HELLO naming
    /// seq 0 arrives as a HELLO without a batch; a batch is checked entry by entry with the same
    /// checks `decode` makes.
    ///
    /// The embedded twin's typed link (`Twin.LinkMode.messages`) delivers this value instead of
    /// the frame, and the frame when it is nil, so the receiving node sees what it would have
    /// decoded. `WireEncodingTests` compares it with `decode(encode(message))` for seeded random
    /// messages, valid and not.
    public static func delivered(_ message: WireMessage) -> WireMessage? {
        switch message {
        case .ping:
            return .ping
        case .hello(let held):
            guard let held, held.seq > 0 else { return .hello(nil) }
            return held.seq <= maxSeq ? message : nil
        case .upToDate(let seq):
            return seq <= maxSeq ? message : nil
        case .error(let reason):
            // What the encoder sends: a longer reason is clipped there (`clipped(_:)`).
            return .error(reason: clipped(reason))
        case .ack(let ref, let coverageEnd):
            guard (1...maxSeq).contains(ref.seq) else { return nil }
            guard let end = wireInstant(coverageEnd) else { return nil }
            return .ack(ref, coverageEnd: end)
        case .request(let request):
            guard (1...maxSeq).contains(request.id), (0...maxEntries).contains(request.nightsLeft),
                let end = wireInstant(request.coverageEnd)
            else { return nil }
            return .request(DateRequest(id: request.id, nightsLeft: request.nightsLeft, coverageEnd: end))
        case .batch(let batch):
            return deliveredBatch(batch).map { .batch($0) }
        }
    }

    /// An optional instant as the wire carries it: `.some(nil)` for nil, nil when it cannot travel.
    private static func wireInstant(_ instant: Date?) -> Date?? {
        guard let instant else { return .some(nil) }
        return ISO8601.wholeSecond(instant).map { .some($0) }
    }

    private static func deliveredBatch(_ batch: WakeBatch) -> WakeBatch? {
        guard (1...maxSeq).contains(batch.seq), let generatedAt = ISO8601.wholeSecond(batch.generatedAt),
            WakeCalendar.isZoneName(batch.timeZone), batch.entries.count <= maxEntries
        else { return nil }
        var entries: [WakeEntry] = []
        entries.reserveCapacity(batch.entries.count)
        var dates = Set<String>()
        for (index, entry) in batch.entries.enumerated() {
            guard let wake = ISO8601.wholeSecond(entry.wake), abs(entry.utcOffset) <= maxUTCOffset,
                let checked = try? checkedEntry(
                    index, wake: wake, localDate: entry.localDate, localTime: entry.localTime,
                    entryZone: { () throws(ProtocolError) -> String? in entry.timeZone }, offset: entry.utcOffset,
                    zone: batch.timeZone, generatedAt: generatedAt, after: entries.last, dates: &dates,
                    utc: utcCalendar)
            else { return nil }
            entries.append(checked)
        }
        // Instants already whole seconds (what the phone sends): `decode` would give the batch back
        // field for field (each entry's zone is the batch's, checked above).
        if generatedAt == batch.generatedAt, entries == batch.entries { return batch }
        return WakeBatch(
            epoch: batch.epoch, seq: batch.seq, generatedAt: generatedAt, timeZone: batch.timeZone, entries: entries)
    }

    /// Typed access to a decoded JSON object, with errors that name the field.
    private struct Fields {
        let object: [String: Any]
        var prefix = ""

        func string(_ key: String) throws(ProtocolError) -> String {
            guard let value = object[key] else { throw ProtocolError("missing field \(prefix)\(key)") }
            guard let text = value as? String else {
                throw ProtocolError("field \(prefix)\(key) must be a string")
            }
            return text
        }

        /// A non-negative JSON integer ≤ 2^53 − 1 (booleans, fractions and exponents are refused).
        func integer(_ key: String) throws(ProtocolError) -> UInt64 {
            guard let raw = object[key] else { throw ProtocolError("missing field \(prefix)\(key)") }
            let failure = ProtocolError("field \(prefix)\(key) must be a non-negative integer")
            guard let number = raw as? NSNumber else { throw failure }
            let value: UInt64
            switch JSONNumber(number) {
            case .bool, .fraction:  // JSON true/false, or a number written with a fraction or exponent
                throw failure
            case .unsignedInteger(let unsigned):
                value = unsigned
            case .integer(let signed):
                guard signed >= 0 else { throw failure }
                value = UInt64(signed)
            }
            guard value <= WireCodec.maxSeq else {
                throw ProtocolError("field \(prefix)\(key) exceeds 2^53-1 (\(WireCodec.maxSeq))")
            }
            return value
        }

        /// A JSON integer (negative allowed) with |value| ≤ `bound`.
        func signedInteger(_ key: String, bound: Int) throws(ProtocolError) -> Int {
            guard let raw = object[key] else { throw ProtocolError("missing field \(prefix)\(key)") }
            let failure = ProtocolError("field \(prefix)\(key) must be an integer from -\(bound) to \(bound)")
            guard let number = raw as? NSNumber else { throw failure }
            switch JSONNumber(number) {
            case .bool, .fraction, .unsignedInteger: throw failure  // unsigned: above Int64.max
            case .integer(let value):
                guard value >= -Int64(bound), value <= Int64(bound) else { throw failure }
                return Int(value)
            }
        }

        /// Exactly 16 lower-case hexadecimal digits (an epoch or a digest).
        func hex64(_ key: String) throws(ProtocolError) -> UInt64 {
            let text = try string(key)
            guard let value = Hex64.parse(text) else {
                throw ProtocolError("field \(prefix)\(key) must be 16 lower-case hexadecimal digits")
            }
            return value
        }

        func positive(_ key: String) throws(ProtocolError) -> UInt64 {
            let value = try integer(key)
            guard value >= 1 else { throw ProtocolError("field \(prefix)\(key) must be >= 1") }
            return value
        }

        func date(_ key: String) throws(ProtocolError) -> Date {
            let text = try string(key)
            guard let date = ISO8601.date(text) else {
                throw ProtocolError("field \(prefix)\(key) \"\(text)\" is not an ISO-8601 instant")
            }
            return date
        }

        func optionalDate(_ key: String) throws(ProtocolError) -> Date? {
            if object[key] == nil || object[key] is NSNull { return nil }
            return try date(key)
        }
    }
}

extension WakeBatch {
    /// Why this batch could not travel on the wire (the rules of `WireCodec.decode`), or nil.
    /// State files are checked with it, so a hand-edited or corrupted file is refused on load.
    public var validationProblem: String? {
        do {
            let decoded = try WireCodec.decode(WireCodec.encode(.batch(self)))
            return decoded == .batch(self) ? nil : "the batch does not survive encoding"
        } catch {
            return error.reason
        }
    }
}

extension WatchSyncState {
    /// The most alarms a state file may hold (this model's own bound): a watch sets one per tap
    /// or typed wake time, each for the coming morning, so a file with more is not one it wrote.
    public static let maxAlarms = 1_000

    /// Why this state is not one the watch could have written, or nil.
    public var validationProblem: String? {
        guard lastAppliedSeq <= WireCodec.maxSeq else { return "lastAppliedSeq exceeds 2^53-1" }
        if let alarms {
            guard alarms.count <= Self.maxAlarms else {
                return "alarms holds \(alarms.count) instants (at most \(Self.maxAlarms))"
            }
            for (earlier, later) in zip(alarms, alarms.dropFirst()) where earlier >= later {
                return "alarms must be in time order without repeats (\(ISO8601.string(later)) follows "
                    + "\(ISO8601.string(earlier)))"
            }
        }
        guard let batch else {
            // A seq names a stored batch: without one the watch has applied nothing.
            return lastAppliedSeq == 0 ? nil : "lastAppliedSeq \(lastAppliedSeq) with no batch (0 when none is stored)"
        }
        guard batch.seq == lastAppliedSeq else {
            return "batch.seq \(batch.seq) differs from lastAppliedSeq \(lastAppliedSeq)"
        }
        return batch.validationProblem.map { "batch: \($0)" }
    }
}

extension PhoneSyncState {
    /// Why this state is not one the phone could have written, or nil.
    public var validationProblem: String? {
        guard lastSeq <= WireCodec.maxSeq else { return "lastSeq exceeds 2^53-1" }
        guard let outbox else { return nil }
        guard outbox.seq <= lastSeq else { return "outbox.seq \(outbox.seq) is above lastSeq \(lastSeq)" }
        // The outbox is always issued in the current epoch (a file from before epochs has neither).
        guard outbox.epoch == epoch else {
            return epoch == 0
                ? "outbox.epoch \(Hex64.string(outbox.epoch)) with no epoch (the file's epoch is missing or 0)"
                : "outbox.epoch \(Hex64.string(outbox.epoch)) differs from epoch \(Hex64.string(epoch))"
        }
        return outbox.validationProblem.map { "outbox: \($0)" }
    }
}

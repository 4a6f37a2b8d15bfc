// SPDX-License-Identifier: Apache-2.0

import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

@Suite("Wire protocol v1")
struct WireProtocolTests {
    @Test(
        "HELLO's optional sentAt and instance: written when given, read back; a HELLO without them (an older watch) decodes as before"
    )
    func helloSentAtAndInstance() throws {
        let at = try #require(ISO8601.date("2025-03-06T17:00:01Z"))
        let ref = BatchRef(epoch: 0xa1, seq: 3, digest: 0xb2)
        let frame = WireCodec.encode(.hello(ref), sentAt: at, instance: 0x5d1e)
        let text = String(decoding: frame, as: UTF8.self)
        #expect(text.contains("\"sentAt\":\"2025-03-06T17:00:01Z\""), "\(text)")
        #expect(text.contains("\"instance\":\"0000000000005d1e\""), "\(text)")
        let (message, hello) = try WireCodec.decodeWithHello(frame)
        #expect(message == .hello(ref))
        #expect(hello == WireCodec.Hello(sentAt: at, instance: 0x5d1e))
        #expect(try WireCodec.decode(frame) == .hello(ref))
        let old = try WireCodec.decodeWithHello(Array("{\"v\":1,\"type\":\"HELLO\",\"lastSeq\":0}".utf8))
        #expect(old.0 == .hello(nil) && old.1 == WireCodec.Hello())
        #expect(throws: ProtocolError("field sentAt \"soon\" is not an ISO-8601 instant")) {
            try WireCodec.decodeWithHello(Array("{\"v\":1,\"type\":\"HELLO\",\"lastSeq\":0,\"sentAt\":\"soon\"}".utf8))
        }
        #expect(WireCodec.encode(.hello(ref)) == WireCodec.encode(.hello(ref), sentAt: nil, instance: nil))
        #expect(!String(decoding: WireCodec.encode(.hello(ref)), as: UTF8.self).contains("sentAt"))
    }

    static let batch = WakeBatch(
        epoch: 0x9f86_d081_884c_7d65, seq: 3, generatedAt: ISO8601.date("2025-03-06T17:00:00Z")!,
        timeZone: "America/New_York",
        entries: [
            WakeEntry(
                wake: ISO8601.date("2025-03-07T11:30:00Z")!, localDate: "2025-03-07", localTime: "06:30",
                timeZone: "America/New_York"),
            WakeEntry(
                wake: ISO8601.date("2025-03-08T11:30:00Z")!, localDate: "2025-03-08", localTime: "06:30",
                timeZone: "America/New_York"),
        ])

    @Test(
        "Every message type survives encode then decode",
        arguments: [
            WireMessage.hello(nil), .hello(BatchRef(epoch: 1, seq: WireCodec.maxSeq, digest: UInt64.max)),
            .batch(batch),
            .batch(WakeBatch(seq: 1, generatedAt: Date(timeIntervalSince1970: 0), timeZone: "UTC", entries: [])),
            .ack(batch.ref, coverageEnd: ISO8601.date("2025-03-08T11:30:00Z")),
            .ack(BatchRef(epoch: 0, seq: 1, digest: 0), coverageEnd: nil),
            .upToDate(seq: 9), .error(reason: "bad \"quote\" and ünïcödé"), .ping,
        ])
    func roundTrip(_ message: WireMessage) throws {
        #expect(try WireCodec.decode(WireCodec.encode(message)) == message)
    }

    @Test("The documented BATCH example decodes")
    func documentedExample() throws {
        let text = """
            {"v":1,"type":"BATCH","epoch":"9f86d081884c7d65","seq":3,"generatedAt":"2025-03-06T17:00:00Z",
             "timeZone":"America/New_York",
             "entries":[{"wake":"2025-03-07T11:30:00Z","localDate":"2025-03-07","localTime":"06:30","utcOffset":-18000},
                        {"wake":"2025-03-08T11:30:00Z","localDate":"2025-03-08","localTime":"06:30","utcOffset":-18000}]}
            """
        #expect(try WireCodec.decode(Array(text.utf8)) == .batch(Self.batch))
        let hello = #"{"v":1,"type":"HELLO","lastSeq":3,"epoch":"9f86d081884c7d65","digest":"#
        #expect(
            try WireCodec.decode(Array((hello + "\"\(Hex64.string(Self.batch.digest))\"}").utf8))
                == .hello(Self.batch.ref))
    }

    @Test("The digest is FNV-1a 64 of the documented canonical text")
    func digestVector() {
        // FNV-1a 64 reference values (IETF draft-eastlake-fnv): "" and "a".
        #expect(FNV1a64.hash([]) == 0xcbf2_9ce4_8422_2325)
        #expect(FNV1a64.hash(Array("a".utf8)) == 0xaf63_dc4c_8601_ec8c)
        let text =
            "America/New_York\n2025-03-07T11:30:00Z 2025-03-07 06:30 -18000\n2025-03-08T11:30:00Z 2025-03-08 06:30 -18000\n"
        #expect(Self.batch.digest == FNV1a64.hash(Array(text.utf8)))
        var other = Self.batch
        other.entries[1].wake = ISO8601.date("2025-03-08T12:30:00Z")!
        other.entries[1].localTime = "07:30"
        #expect(other.digest != Self.batch.digest)
    }

    static func batchText(
        entries: String, seq: String = "3", zone: String = "\"UTC\"", epoch: String = "\"00000000000000a1\""
    )
        -> String
    {
        "{\"v\":1,\"type\":\"BATCH\",\"epoch\":\(epoch),\"seq\":\(seq),\"generatedAt\":\"2025-03-06T17:00:00Z\",\"timeZone\":\(zone),\"entries\":\(entries)}"
    }

    static let e1 =
        "{\"wake\":\"2025-03-07T11:30:00Z\",\"localDate\":\"2025-03-07\",\"localTime\":\"11:30\",\"utcOffset\":0}"
    static let e2 =
        "{\"wake\":\"2025-03-08T11:30:00Z\",\"localDate\":\"2025-03-08\",\"localTime\":\"11:30\",\"utcOffset\":0}"

    @Test(
        "Malformed frames are rejected with a reason naming the problem",
        arguments: [
            ("not json", "not valid JSON"),
            ("[1,2]", "not a JSON object"),
            ("{\"type\":\"HELLO\",\"lastSeq\":0}", "missing field v"),
            ("{\"v\":2,\"type\":\"HELLO\",\"lastSeq\":0}", "unsupported protocol version 2 (this build speaks 1)"),
            ("{\"v\":\"1\",\"type\":\"HELLO\",\"lastSeq\":0}", "field v must be a non-negative integer"),
            ("{\"v\":1,\"type\":\"PONG\"}", "unknown message type \"PONG\""),
            ("{\"v\":1,\"type\":7}", "field type must be a string"),
            ("{\"v\":1,\"type\":\"HELLO\"}", "missing field lastSeq"),
            ("{\"v\":1,\"type\":\"HELLO\",\"lastSeq\":-1}", "field lastSeq must be a non-negative integer"),
            ("{\"v\":1,\"type\":\"HELLO\",\"lastSeq\":1.5}", "field lastSeq must be a non-negative integer"),
            ("{\"v\":1,\"type\":\"HELLO\",\"lastSeq\":true}", "field lastSeq must be a non-negative integer"),
            ("{\"v\":1,\"type\":\"HELLO\",\"lastSeq\":2}", "missing field epoch"),
            (
                "{\"v\":1,\"type\":\"HELLO\",\"lastSeq\":2,\"epoch\":\"00000000000000a1\"}",
                "missing field digest"
            ),
            (
                "{\"v\":1,\"type\":\"HELLO\",\"lastSeq\":2,\"epoch\":\"A1\",\"digest\":\"00000000000000a1\"}",
                "field epoch must be 16 lower-case hexadecimal digits"
            ),
            ("{\"v\":1,\"type\":\"ACK\",\"epoch\":\"00000000000000a1\",\"seq\":0}", "field seq must be >= 1"),
            ("{\"v\":1,\"type\":\"ACK\",\"epoch\":\"00000000000000a1\",\"seq\":1}", "missing field digest"),
            ("{\"v\":1,\"type\":\"ACK\",\"seq\":1,\"digest\":\"00000000000000a1\"}", "missing field epoch"),
            (
                "{\"v\":1,\"type\":\"ACK\",\"epoch\":\"00000000000000a1\",\"seq\":1,\"digest\":\"00000000000000a1\","
                    + "\"coverageEnd\":\"tomorrow\"}",
                "field coverageEnd \"tomorrow\" is not an ISO-8601 instant"
            ),
            (batchText(entries: "[\(e2),\(e1)]"), "entries[1].wake is not after entries[0].wake"),
            (batchText(entries: "[\(e1),\(e1)]"), "entries[1].wake is not after entries[0].wake"),
            (
                batchText(entries: "[\(e1)]", zone: "\"EST\""),
                "timeZone: unknown time zone \"EST\": not an IANA name (Area/Location, UTC or GMT, e.g. Europe/Berlin)"
            ),
            (
                batchText(entries: "[\(e1)]", zone: "\"GMT+5\""),
                "timeZone: unknown time zone \"GMT+5\": not an IANA name (Area/Location, UTC or GMT, e.g. Europe/Berlin)"
            ),
            (batchText(entries: "[\(e1)]", epoch: "7"), "field epoch must be a string"),
            (batchText(entries: "[\(e1)]", epoch: "\"123\""), "field epoch must be 16 lower-case hexadecimal digits"),
            (
                batchText(entries: "[" + e1.replacingOccurrences(of: ",\"utcOffset\":0", with: "") + "]"),
                "missing field entries[0].utcOffset"
            ),
            (
                batchText(
                    entries: "[" + e1.replacingOccurrences(of: "\"utcOffset\":0", with: "\"utcOffset\":64801") + "]"),
                "field entries[0].utcOffset must be an integer from -64800 to 64800"
            ),
            (
                batchText(
                    entries: "[" + e1.replacingOccurrences(of: "\"utcOffset\":0", with: "\"utcOffset\":\"+01:00\"")
                        + "]"),
                "field entries[0].utcOffset must be an integer from -64800 to 64800"
            ),
            (
                batchText(
                    entries: "[" + e1.replacingOccurrences(of: "\"utcOffset\":0", with: "\"utcOffset\":3600") + "]"),
                "entries[0]: 2025-03-07 11:30 is not what its wake reads at utcOffset 3600 s (2025-03-07 12:30)"
            ),
            (batchText(entries: "{}"), "field entries must be an array"),
            (batchText(entries: "[1]"), "entries[0] must be an object"),
            (batchText(entries: "[\(e1)]", seq: "0"), "field seq must be >= 1"),
            (
                batchText(entries: "[" + e1.replacingOccurrences(of: "\"11:30\"", with: "\"25:00\"") + "]"),
                "entries[0].localTime \"25:00\" is not HH:MM"
            ),
            (
                batchText(entries: "[" + e1.replacingOccurrences(of: "\"2025-03-07\"", with: "\"March 7\"") + "]"),
                "entries[0].localDate \"March 7\" is not a calendar date yyyy-MM-dd"
            ),
        ])
    func rejects(text: String, reason: String) {
        #expect(throws: ProtocolError(reason)) {
            try WireCodec.decode(Array(text.utf8))
        }
    }

    @Test("More entries than the horizon allows, and oversized frames, are rejected")
    func limits() {
        let entries = (0...WireCodec.maxEntries).map { day in
            let wake = Date(timeIntervalSince1970: 1_741_000_000 + Double(day) * 86_400)
            return
                "{\"wake\":\"\(ISO8601.string(wake))\",\"localDate\":\"2025-01-01\",\"localTime\":\"06:30\",\"utcOffset\":0}"
        }
        #expect(throws: ProtocolError("batch has 65 entries; at most 64 allowed")) {
            try WireCodec.decode(Array(Self.batchText(entries: "[" + entries.joined(separator: ",") + "]").utf8))
        }
        let huge = [UInt8](repeating: UInt8(ascii: " "), count: WireCodec.maxFrameBytes + 1)
        #expect(throws: ProtocolError.self) { try WireCodec.decode(huge) }
    }

    @Test(
        "An ERROR that quotes a hostile peer's 64 KB type is cut to fit a frame, at a character, ending in …; a short one is whole"
    )
    func errorReasonFitsAFrame() throws {
        // A frame of exactly the limit whose type is 65,519 letters (and some 4-byte ones).
        let type = String(repeating: "A", count: 65_000) + String(repeating: "😀", count: 100)
        let frame = Array("{\"v\":1,\"type\":\"\(type)\"}".utf8)
        #expect(frame.count <= WireCodec.maxFrameBytes + 400)
        var reason = ""
        do { _ = try WireCodec.decode(frame) } catch { reason = error.reason }
        #expect(reason.utf8.count > 60_000, "the reason quotes the whole type")
        for text in [reason, String(repeating: "\u{1F}", count: 70_000)] {
            let encoded = WireCodec.encode(.error(reason: text), sentAt: nil, instance: nil)
            #expect(encoded.count <= WireCodec.maxFrameBytes, "\(encoded.count) bytes")
            guard case .error(let sent) = try WireCodec.decode(encoded) else {
                Issue.record("not an ERROR")
                continue
            }
            #expect(sent.hasSuffix("…") && sent.utf8.count <= WireCodec.maxReasonBytes)
            #expect(text.hasPrefix(sent.dropLast()))
            #expect(
                WireCodec.delivered(.error(reason: text)) == .error(reason: sent),
                "the twin delivers what the process sends")
        }
        let short = "field seq must be >= 1"
        #expect(
            try WireCodec.decode(WireCodec.encode(.error(reason: short), sentAt: nil, instance: nil))
                == .error(reason: short))
    }

    @Test(
        "An entry more than 74 days after generatedAt (a wake in 9999 from a phone of 2025) is refused; 74 days is not, nor the longest batch the phone plans"
    )
    func wakeTooFarAhead() throws {
        func entry(_ wake: String) -> String {
            let date = String(wake.prefix(10))
            return "{\"wake\":\"\(wake)\",\"localDate\":\"\(date)\",\"localTime\":\"11:30\",\"utcOffset\":0}"
        }
        // generatedAt 2025-03-06T17:00:00Z; 74 × 24 h later is 2025-05-19T17:00:00Z.
        let far = Self.batchText(entries: "[" + entry("9999-12-31T11:30:00Z") + "]")
        #expect(
            throws: ProtocolError(
                "entries[0].wake 9999-12-31T11:30:00Z is more than 74 days after generatedAt 2025-03-06T17:00:00Z"
            )
        ) { try WireCodec.decode(Array(far.utf8)) }
        let justOver = Self.batchText(entries: "[" + Self.e1 + "," + entry("2025-05-20T11:30:00Z") + "]")
        #expect(throws: ProtocolError.self) { try WireCodec.decode(Array(justOver.utf8)) }
        let within = Self.batchText(entries: "[" + Self.e1 + "," + entry("2025-05-19T11:30:00Z") + "]")
        guard case .batch(let batch) = try WireCodec.decode(Array(within.utf8)) else {
            Issue.record("not a batch")
            return
        }
        #expect(batch.entries.count == 2)
        // The twin's typed link refuses what the decoder refuses.
        var far9999 = batch
        far9999.entries[1].wake = ISO8601.date("9999-12-31T11:30:00Z")!
        far9999.entries[1].localDate = "9999-12-31"
        #expect(WireCodec.delivered(.batch(far9999)) == nil)
        // The longest batch the phone plans: one wake-up a week, planned just after it, over
        // the largest horizon (64 days): its last entry is 8 + 63 days on, and it goes through.
        let zone = TimeZone(identifier: "UTC")!
        let schedule = WakeSchedule(wakeTimes: [.thursday: LocalTime(hour: 6, minute: 30)!])
        let now = ISO8601.date("2026-12-03T06:31:00Z")!  // a Thursday, just after its wake-up
        let entries = BatchPlanner.entries(
            for: schedule, in: zone, after: now, horizonDays: WireCodec.maxEntries)
        #expect(entries.count == 10 && entries.first?.localDate == "2026-12-10", "\(entries.map(\.localDate))")
        let longest = WakeBatch(epoch: 1, seq: 1, generatedAt: now, timeZone: zone.identifier, entries: entries)
        let sent = WireCodec.encode(.batch(longest), sentAt: nil, instance: nil)
        #expect(try WireCodec.decode(sent) == .batch(longest))
        #expect(WireCodec.delivered(.batch(longest)) == .batch(longest))
    }

    @Test("Seeded mutation fuzz: no crash, and every rejection carries a reason")
    func mutationFuzz() {
        let seed = UInt64(0x5EED_0001)
        var rng = SplitMix64(state: seed)
        let valid = [WireMessage.batch(Self.batch), .hello(Self.batch.ref), .ack(Self.batch.ref, coverageEnd: nil)].map(
            WireCodec.encode)
        var rejected = 0
        for _ in 0..<3_000 {
            var frame = valid[Int(rng.next() % UInt64(valid.count))]
            for _ in 0..<(1 + rng.next() % 4) {
                guard !frame.isEmpty else { break }
                let index = Int(rng.next() % UInt64(frame.count))
                switch rng.next() % 3 {
                case 0: frame[index] = UInt8(truncatingIfNeeded: rng.next())
                case 1: frame.remove(at: index)
                default: frame.insert(UInt8(truncatingIfNeeded: rng.next()), at: index)
                }
            }
            do {
                _ = try WireCodec.decode(frame)
            } catch {
                rejected += 1
                #expect(!error.reason.isEmpty, "seed \(seed)")
            }
        }
        #expect(rejected > 1_000, "seed \(seed): mutations should mostly be rejected")
    }
}

@Suite("Wire protocol v1: sequence limits")
struct WireSequenceLimitTests {
    @Test(
        "Sequence numbers above 2^53-1, fractions and exponents are refused",
        arguments: [
            (
                "{\"v\":1,\"type\":\"HELLO\",\"lastSeq\":9007199254740992}",
                "field lastSeq exceeds 2^53-1 (9007199254740991)"
            ),
            (
                "{\"v\":1,\"type\":\"HELLO\",\"lastSeq\":18446744073709551615}",
                "field lastSeq exceeds 2^53-1 (9007199254740991)"
            ),
            (
                "{\"v\":1,\"type\":\"ACK\",\"epoch\":\"00000000000000a1\",\"seq\":1.0}",
                "field seq must be a non-negative integer"
            ),
            (
                "{\"v\":1,\"type\":\"ACK\",\"epoch\":\"00000000000000a1\",\"seq\":1e0}",
                "field seq must be a non-negative integer"
            ),
            ("{\"v\":1.0,\"type\":\"HELLO\",\"lastSeq\":0}", "field v must be a non-negative integer"),
        ])
    func refuses(text: String, reason: String) {
        #expect(throws: ProtocolError(reason)) { try WireCodec.decode(Array(text.utf8)) }
    }

    @Test("A phone at the last seq starts a new epoch at seq 1 instead of overflowing or stopping")
    func exhaustion() throws {
        var phone = PhoneCore(state: PhoneSyncState(epoch: 7, lastSeq: WireCodec.maxSeq), randomSeed: 1)
        let now = Date()
        let published = phone.publish(entries: [], generatedAt: now, timeZone: "UTC", at: now)
        let sent = published.compactMap { if case .send(.batch(let b)) = $0 { b } else { nil } }
        #expect(sent.map(\.seq) == [1])
        #expect(sent.first?.epoch != 7 && sent.first?.epoch != 0)
        #expect(published.contains { $0.event?.name == .epochChanged })
    }

    @Test("Hand-edited state files that break the wire rules are refused on load")
    func stateValidation() {
        #expect(PhoneSyncState(lastSeq: WireCodec.maxSeq + 1).validationProblem != nil)
        // A state file written before epochs and utcOffset existed still loads.
        let legacy =
            #"{"seq":2,"generatedAt":"1970-01-01T00:00:00Z","timeZone":"Asia/Tokyo","entries":"#
            + #"[{"wake":"1970-01-02T03:46:40Z","localDate":"1970-01-02","localTime":"12:46","timeZone":"Asia/Tokyo"}]}"#
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let decoded = try? decoder.decode(WakeBatch.self, from: Data(legacy.utf8))
        #expect(decoded?.epoch == 0 && decoded?.entries.first?.utcOffset == 32_400)
        #expect(WatchSyncState(lastAppliedSeq: 2, batch: decoded).validationProblem == nil)
        let batch = WakeBatch(
            seq: 5, generatedAt: Date(timeIntervalSince1970: 0), timeZone: "UTC",
            entries: [
                WakeEntry(
                    wake: Date(timeIntervalSince1970: 200_000), localDate: "1970-01-03", localTime: "07:33",
                    timeZone: "UTC"),
                WakeEntry(
                    wake: Date(timeIntervalSince1970: 100_000), localDate: "1970-01-02", localTime: "03:46",
                    timeZone: "UTC"),
            ])
        #expect(PhoneSyncState(lastSeq: 4, outbox: batch).validationProblem == "outbox.seq 5 is above lastSeq 4")
        #expect(
            PhoneSyncState(lastSeq: 5, outbox: batch).validationProblem?.hasPrefix("outbox: entries[1].wake") == true)
        #expect(WatchSyncState(lastAppliedSeq: 5, batch: batch).validationProblem != nil)
        #expect(
            WatchSyncState(lastAppliedSeq: 6, batch: batch).validationProblem
                == "batch.seq 5 differs from lastAppliedSeq 6")
        #expect(WatchSyncState().validationProblem == nil)
        // The outbox is in the file's epoch; a file from before epochs has 0 for both.
        #expect(
            PhoneSyncState(
                lastSeq: 5,
                outbox: decoded.map {
                    var b = $0
                    b.seq = 5
                    return b
                }
            ).validationProblem == nil)
        var newer = decoded
        newer?.epoch = 0xa1
        #expect(
            PhoneSyncState(lastSeq: 2, outbox: newer).validationProblem
                == "outbox.epoch 00000000000000a1 with no epoch (the file's epoch is missing or 0)")
        #expect(
            PhoneSyncState(epoch: 0xb2, lastSeq: 2, outbox: newer).validationProblem
                == "outbox.epoch 00000000000000a1 differs from epoch 00000000000000b2")
        #expect(PhoneSyncState(epoch: 0xa1, lastSeq: 2, outbox: newer).validationProblem == nil)
    }
}

@Suite("Wire protocol v1: random fuzz")
struct WireRandomFuzzTests {
    /// A random JSON value of bounded depth, biased towards the protocol's own keys and types.
    static func value(_ rng: inout SplitMix64, depth: Int) -> Any {
        let keys = [
            "v", "type", "seq", "lastSeq", "entries", "wake", "localDate", "localTime", "timeZone", "reason", "x",
            "epoch", "digest", "utcOffset",
        ]
        let strings = [
            "HELLO", "BATCH", "ACK", "UP_TO_DATE", "ERROR", "2025-03-07T11:30:00Z", "2025-03-07", "06:30", "UTC", "",
            "\u{0}", "00000000000000a1",
        ]
        switch rng.next() % (depth > 2 ? 4 : 6) {
        case 0: return Int64(bitPattern: rng.next()) % 1_000
        case 1: return strings[Int(rng.next() % UInt64(strings.count))]
        case 2: return rng.next() % 2 == 0
        case 3: return NSNull()
        case 4: return (0..<(rng.next() % 4)).map { _ in value(&rng, depth: depth + 1) }
        default:
            var object: [String: Any] = [:]
            for _ in 0..<(rng.next() % 6) {
                object[keys[Int(rng.next() % UInt64(keys.count))]] = value(&rng, depth: depth + 1)
            }
            if rng.next() % 2 == 0 { object["v"] = 1 }
            return object
        }
    }

    @Test("Thousands of seeded random frames (bytes and JSON): no crash, every rejection has a reason")
    func randomFrames() throws {
        let seed: UInt64 = 0xF022_2026
        var rng = SplitMix64(state: seed)
        var accepted = 0
        for round in 0..<4_000 {
            let frame: [UInt8]
            if round % 4 == 0 {
                frame = (0..<(rng.next() % 200)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            } else if round % 4 == 1 {
                // Near-valid: the right envelope, random type, number fields and extras.
                let types = ["HELLO", "ACK", "UP_TO_DATE", "ERROR", "BATCH", "PING"]
                var object: [String: Any] = ["v": 1, "type": types[Int(rng.next() % UInt64(types.count))]]
                for key in ["seq", "lastSeq"] where rng.next() % 3 != 0 { object[key] = Int(rng.next() % 5) }
                for key in ["epoch", "digest"] where rng.next() % 3 != 0 {
                    object[key] = "00000000000000a\(rng.next() % 3)"
                }
                if rng.next() % 2 == 0 { object["reason"] = "r\(rng.next() % 9)" }
                if rng.next() % 3 == 0 { object["extra"] = Self.value(&rng, depth: 1) }
                frame = Array((try? JSONSerialization.data(withJSONObject: object, options: [])) ?? Data())
            } else {
                let json = Self.value(&rng, depth: 0)
                frame = Array((try? JSONSerialization.data(withJSONObject: [json], options: [])) ?? Data())
                    .dropFirst().dropLast()
            }
            do {
                let message = try WireCodec.decode(frame)
                accepted += 1
                // Whatever is accepted must survive re-encoding.
                #expect(try WireCodec.decode(WireCodec.encode(message)) == message, "seed \(seed) round \(round)")
            } catch {
                #expect(!error.reason.isEmpty, "seed \(seed) round \(round)")
            }
        }
        #expect(accepted > 0, "seed \(seed): the generator never produced a valid message")
    }
}

@Suite("Wire protocol v1: instants and local fields")
struct WireInstantTests {
    @Test(
        "ISO-8601 instants are parsed strictly",
        arguments: [
            ("2025-03-07T11:30:00Z", 1_741_347_000.0), ("2025-03-07T06:30:00-05:00", 1_741_347_000),
            ("2025-03-07T12:30:00+01:00", 1_741_347_000), ("2025-03-07T11:30:00.5Z", 1_741_347_000.5),
            ("2024-02-29T00:00:00Z", 1_709_164_800),
        ])
    func accepts(text: String, seconds: Double) {
        #expect(ISO8601.date(text) == Date(timeIntervalSince1970: seconds))
    }

    @Test(
        "Out-of-range or loose instants are refused",
        arguments: [
            "2026-02-30T00:00:00Z", "2025-03-07T24:00:00Z", "2025-03-07T11:60:00Z", "2025-03-07T11:30:60Z",
            "2025-03-07t11:30:00z", "2025-03-07T11:30:00", "2025-03-07 11:30:00Z", "2025-3-07T11:30:00Z",
            "2025-03-07T11:30:00+0100", "2025-03-07T11:30:00.Z", "2023-02-29T00:00:00Z", "",
        ])
    func refuses(text: String) {
        #expect(ISO8601.date(text) == nil)
    }

    static func batch(_ entry: String) -> [UInt8] {
        Array(
            ("{\"v\":1,\"type\":\"BATCH\",\"seq\":3,\"generatedAt\":\"2025-03-06T17:00:00Z\","
                + "\"epoch\":\"00000000000000a1\",\"timeZone\":\"America/New_York\",\"entries\":[\(entry)]}").utf8)
    }

    @Test("An entry's local fields must read its instant at its utcOffset; its zone must be the batch's")
    func localFieldsConsistent() throws {
        let good =
            "{\"wake\":\"2025-03-07T11:30:00Z\",\"localDate\":\"2025-03-07\",\"localTime\":\"06:30\",\"utcOffset\":-18000}"
        _ = try WireCodec.decode(Self.batch(good))
        #expect(throws: ProtocolError.self) {
            try WireCodec.decode(Self.batch(good.replacingOccurrences(of: "06:30", with: "07:30")))
        }
        #expect(throws: ProtocolError.self) {
            try WireCodec.decode(Self.batch(good.replacingOccurrences(of: "2025-03-07\"", with: "2025-03-08\"")))
        }
        #expect(
            throws: ProtocolError("entries[0].timeZone \"Europe/Berlin\" differs from the batch's \"America/New_York\"")
        ) {
            try WireCodec.decode(
                Self.batch(good.replacingOccurrences(of: "}", with: ",\"timeZone\":\"Europe/Berlin\"}")))
        }
    }
}

@Suite("Wire protocol v1: zones the receiver does not know")
struct WireUnknownZoneTests {
    static func frame(zone: String, offset: Int, localDate: String, localTime: String) -> [UInt8] {
        Array(
            ("{\"v\":1,\"type\":\"BATCH\",\"epoch\":\"00000000000000a1\",\"seq\":4,"
                + "\"generatedAt\":\"2026-06-20T10:00:00Z\",\"timeZone\":\"\(zone)\",\"entries\":[{\"wake\":"
                + "\"2026-06-20T22:00:00Z\",\"localDate\":\"\(localDate)\",\"localTime\":\"\(localTime)\","
                + "\"timeZone\":\"\(zone)\",\"utcOffset\":\(offset)}]}").utf8)
    }

    @Test("A zone name this tz database lacks keeps the batch: the dates stay, shown at the phone's offset")
    func unknownZoneKept() throws {
        // A newer or renamed zone on the phone: not in this machine's database.
        let message = try WireCodec.decode(
            Self.frame(zone: "America/Nowhere_New", offset: 32_400, localDate: "2026-06-21", localTime: "07:00"))
        guard case .batch(let batch) = message else {
            Issue.record("not a batch: \(message)")
            return
        }
        #expect(!batch.zoneIsKnown)
        #expect(batch.entries.map(\.wake) == [ISO8601.date("2026-06-20T22:00:00Z")!])
        #expect(batch.displayZone.secondsFromGMT(for: batch.entries[0].wake) == 32_400)
        // The watch plans its local times (the nightly tap) at that offset, not in its machine zone.
        let planned = WatchZone(system: TimeZone(identifier: "UTC")!).resolve(batch: batch)
        #expect(planned.source == .batch && planned.zone.secondsFromGMT(for: batch.entries[0].wake) == 32_400)
        var watch = WatchCore()
        let applied = watch.receive(message)
        #expect(watch.state.batch == batch)
        #expect(applied.contains { if case .send(.ack(let ref, _)) = $0 { ref == batch.ref } else { false } })
        let tap = watch.bedTap(at: ISO8601.date("2026-06-20T13:30:00Z")!, in: planned.zone)
        guard case .emit(let event) = try #require(tap.first) else {
            Issue.record("no event")
            return
        }
        #expect(event.name == .bedWakeTime)
        #expect(event.fields.contains { $0.key == "localTime" && $0.value == .string("07:00") })
        #expect(event.fields.contains { $0.key == "localDate" && $0.value == .string("2026-06-21") })
        #expect(event.fields.contains { $0.key == "zoneKnown" && $0.value == .bool(false) })
    }

    @Test("When the two tz databases disagree on a known zone, the phone's offset is what counts")
    func databasesDisagree() throws {
        // Tokyo is UTC+9 here; a phone whose rules said +10 would send 08:00. The dates are kept.
        let message = try WireCodec.decode(
            Self.frame(zone: "Asia/Tokyo", offset: 36_000, localDate: "2026-06-21", localTime: "08:00"))
        guard case .batch(let batch) = message else {
            Issue.record("not a batch: \(message)")
            return
        }
        #expect(batch.entries.first?.localTime == "08:00")
    }
}

// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapOS
import Testing

@testable import SleepTapCore

/// `WireCodec.encode` (Foundation's `JSONEncoder`) writes the same JSON values as the dictionary
/// docs/protocol.md describes, serialised by `JSONSerialization` (the reference below): the same
/// keys, values and nulls, whatever the bytes' spelling.
@Suite("Wire protocol v1: the encoder's JSON")
struct WireEncodingTests {
    /// The protocol's object for `message`, serialised by `JSONSerialization` with `.sortedKeys`.
    static func reference(_ message: WireMessage) -> [UInt8] {
        var object: [String: Any] = ["v": WireCodec.version, "type": message.typeName]
        switch message {
        case .hello(let held):
            object["lastSeq"] = held?.seq ?? 0
            if let held {
                object["epoch"] = Hex64.string(held.epoch)
                object["digest"] = Hex64.string(held.digest)
            }
        case .batch(let batch):
            object["epoch"] = Hex64.string(batch.epoch)
            object["seq"] = batch.seq
            object["generatedAt"] = ISO8601.string(batch.generatedAt)
            object["timeZone"] = batch.timeZone
            object["entries"] = batch.entries.map {
                [
                    "wake": ISO8601.string($0.wake), "localDate": $0.localDate, "localTime": $0.localTime,
                    "timeZone": $0.timeZone, "utcOffset": $0.utcOffset,
                ]
            }
        case .ack(let ref, let coverageEnd):
            object["epoch"] = Hex64.string(ref.epoch)
            object["seq"] = ref.seq
            object["digest"] = Hex64.string(ref.digest)
            object["coverageEnd"] = coverageEnd.map { ISO8601.string($0) as Any } ?? NSNull()
        case .upToDate(let seq):
            object["seq"] = seq
        case .error(let reason):
            object["reason"] = reason
        case .ping:
            break
        case .request(let request):
            object["id"] = request.id
            object["nightsLeft"] = request.nightsLeft
            object["coverageEnd"] = request.coverageEnd.map { ISO8601.string($0) as Any } ?? NSNull()
        }
        return Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }

    /// A random string of ASCII (control characters, quotes, slashes and backslashes included)
    /// and a few non-ASCII scalars.
    static func text(_ rng: inout SplitMix64) -> String {
        let extra: [Unicode.Scalar] = ["é", "ü", "€", "日", "\u{7f}", "\u{2028}", "😀", "\u{0}"]
        var scalars = String.UnicodeScalarView()
        for _ in 0..<(rng.next() % 24) {
            if rng.next() % 5 == 0 {
                scalars.append(extra[Int(rng.next() % UInt64(extra.count))])
            } else {
                scalars.append(Unicode.Scalar(UInt8(rng.next() % 128)))
            }
        }
        return String(scalars)
    }

    static func instant(_ rng: inout SplitMix64) -> Date {
        Date(timeIntervalSince1970: Double(rng.next() % 4_000_000_000) + Double(rng.next() % 1_000) / 1_000)
    }

    static func message(_ rng: inout SplitMix64) -> WireMessage {
        let ref = BatchRef(epoch: rng.next(), seq: rng.next() % (WireCodec.maxSeq + 1), digest: rng.next())
        switch rng.next() % 8 {
        case 0: return .hello(rng.next() % 2 == 0 ? nil : ref)
        case 1:
            let zone = ["America/New_York", "Asia/Tokyo", "UTC", "Australia/Lord_Howe", text(&rng)][
                Int(rng.next() % 5)]
            let entries = (0..<(rng.next() % 9)).map { _ in
                WakeEntry(
                    wake: instant(&rng), localDate: text(&rng), localTime: text(&rng), timeZone: zone,
                    utcOffset: Int(rng.next() % 129_601) - 64_800)
            }
            return .batch(
                WakeBatch(
                    epoch: rng.next(), seq: rng.next() % 1_000_000, generatedAt: instant(&rng), timeZone: zone,
                    entries: entries))
        case 2: return .ack(ref, coverageEnd: rng.next() % 3 == 0 ? nil : instant(&rng))
        case 3: return .upToDate(seq: rng.next() % (WireCodec.maxSeq + 1))
        case 4: return .error(reason: text(&rng))
        case 5: return .ping
        case 6:
            return .request(
                DateRequest(
                    id: rng.next() % (WireCodec.maxSeq + 1), nightsLeft: Int(rng.next() % 65) - 1,
                    coverageEnd: rng.next() % 3 == 0 ? nil : instant(&rng)))
        default: return .hello(nil)
        }
    }

    /// `frame` read back by `JSONSerialization`, as a comparable Foundation object.
    static func tree(_ frame: [UInt8]) -> NSDictionary? {
        try? JSONSerialization.jsonObject(with: Data(frame)) as? NSDictionary
    }

    @Test("Each message type, and 5,000 seeded random messages, encode to the reference's JSON values")
    func sameValues() {
        let fixed: [WireMessage] = [
            .hello(nil), .hello(BatchRef(epoch: 1, seq: WireCodec.maxSeq, digest: UInt64.max)),
            .batch(WireProtocolTests.batch), .ack(WireProtocolTests.batch.ref, coverageEnd: nil),
            .upToDate(seq: 0), .error(reason: "a/b \"c\" \\ \u{8}\u{c}\n\r\t\u{1}\u{1f} ü"), .ping,
            .request(DateRequest(id: 1, nightsLeft: 2, coverageEnd: nil)),
        ]
        for message in fixed {
            let ours = Self.tree(WireCodec.encode(message))
            #expect(ours != nil && ours == Self.tree(Self.reference(message)), "\(message)")
        }
        let seed: UInt64 = 0x5EED_0012
        var rng = SplitMix64(state: seed)
        for round in 0..<5_000 {
            let message = Self.message(&rng)
            let ours = WireCodec.encode(message)
            let same = Self.tree(ours) != nil && Self.tree(ours) == Self.tree(Self.reference(message))
            #expect(same, "seed \(seed) round \(round): \(String(decoding: ours, as: UTF8.self))")
            if !same { return }
        }
    }

    @Test("The documented shape: one compact object per message, exactly the listed keys, null coverageEnd")
    func documentedShape() throws {
        let keys: [(WireMessage, [String])] = [
            (.hello(nil), ["lastSeq", "type", "v"]),
            (.hello(WireProtocolTests.batch.ref), ["digest", "epoch", "lastSeq", "type", "v"]),
            (.batch(WireProtocolTests.batch), ["entries", "epoch", "generatedAt", "seq", "timeZone", "type", "v"]),
            (
                .ack(WireProtocolTests.batch.ref, coverageEnd: nil),
                ["coverageEnd", "digest", "epoch", "seq", "type", "v"]
            ),
            (.upToDate(seq: 3), ["seq", "type", "v"]),
            (.error(reason: "x"), ["reason", "type", "v"]),
            (.ping, ["type", "v"]),
            (
                .request(DateRequest(id: 1, nightsLeft: 0, coverageEnd: nil)),
                ["coverageEnd", "id", "nightsLeft", "type", "v"]
            ),
        ]
        for (message, expected) in keys {
            let frame = WireCodec.encode(message)
            let text = String(decoding: frame, as: UTF8.self)
            #expect(!text.contains(" ") && !text.contains("\n"), "compact: \(text)")
            let object = try #require(Self.tree(frame))
            #expect((object.allKeys as? [String])?.sorted() == expected, "\(text)")
            #expect(object["type"] as? String == message.typeName && object["v"] as? Int == 1, "\(text)")
        }
        let ack = String(decoding: WireCodec.encode(.ack(WireProtocolTests.batch.ref, coverageEnd: nil)), as: UTF8.self)
        #expect(ack.contains("\"coverageEnd\":null"), "\(ack)")
        let batch = try #require(Self.tree(WireCodec.encode(.batch(WireProtocolTests.batch))))
        let entry = try #require((batch["entries"] as? [NSDictionary])?.first)
        #expect((entry.allKeys as? [String])?.sorted() == ["localDate", "localTime", "timeZone", "utcOffset", "wake"])
        #expect(String(decoding: WireCodec.encode(.ping), as: UTF8.self) == #"{"type":"PING","v":1}"#)
    }

    @Test("ISO8601.string writes what Foundation's .iso8601 style writes: edges and 20,000 seeded instants")
    func instantText() {
        let edges: [TimeInterval] = [
            0, 0.999, 59.5, 86_399.999_999, 86_400, 951_782_400, 951_868_799.9, 4_107_542_400, 253_402_300_799.999,
            253_402_300_800, -0.5, -86_400, 1_741_280_400,
        ]
        let seed: UInt64 = 0x150_8601
        var rng = SplitMix64(state: seed)
        let random = (0..<20_000).map { _ in
            Double(rng.next() % 253_402_300_800) + Double(rng.next() % 1_000_000) / 1_000_000
        }
        for time in edges + random {
            let date = Date(timeIntervalSince1970: time)
            #expect(ISO8601.string(date) == date.formatted(.iso8601), "seed \(seed): \(time)")
        }
    }
}

/// The hand-written text helpers the twin's speed work put in place of Foundation's formatting.
@Suite("Text helpers: the same text as Foundation's")
struct TextHelperTests {
    @Test("padded(_:_:) writes what String(format: \"%0Nd\") writes")
    func paddedNumbers() {
        for width in [2, 4] {
            for value in -12_345...12_345 {
                #expect(padded(value, width) == String(format: "%0\(width)d", value), "\(value) width \(width)")
            }
        }
    }

    @Test("Bedtime texts are filled as replacingOccurrences fills them, every text and odd templates")
    func filledTemplates() {
        let templates =
            BedtimeNoticePlanner.texts + ["", "{", "{bed", "{{bed}}", "{wake}{bed}{wake}", "{ü}{bed}ü", "no token"]
        for template in templates {
            let expected = template.replacingOccurrences(of: "{bed}", with: "22:30")
                .replacingOccurrences(of: "{wake}", with: "06:30")
            #expect(BedtimeNoticePlanner.filled(template, bed: "22:30", wake: "06:30") == expected, "\(template)")
        }
    }
}

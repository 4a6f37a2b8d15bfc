// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

@testable import SleepTapCore

/// The hand-written encoder writes exactly the bytes Foundation's `JSONSerialization` wrote for
/// the same message (the encoder this codec had before, kept here as the reference), so peers and
/// recorded frames see no change.
@Suite("Wire protocol v1: the encoder's bytes")
struct WireEncodingTests {
    /// The previous encoder: a dictionary serialised with `.sortedKeys`.
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

    @Test("Each message type, and 5,000 seeded random messages, encode to JSONSerialization's bytes")
    func sameBytes() {
        let fixed: [WireMessage] = [
            .hello(nil), .hello(BatchRef(epoch: 1, seq: WireCodec.maxSeq, digest: UInt64.max)),
            .batch(WireProtocolTests.batch), .ack(WireProtocolTests.batch.ref, coverageEnd: nil),
            .upToDate(seq: 0), .error(reason: "a/b \"c\" \\ \u{8}\u{c}\n\r\t\u{1}\u{1f} ü"), .ping,
            .request(DateRequest(id: 1, nightsLeft: 2, coverageEnd: nil)),
        ]
        for message in fixed {
            #expect(WireCodec.encode(message) == Self.reference(message), "\(message)")
        }
        let seed: UInt64 = 0x5EED_0012
        var rng = SplitMix64(state: seed)
        for round in 0..<5_000 {
            let message = Self.message(&rng)
            let ours = WireCodec.encode(message)
            let theirs = Self.reference(message)
            #expect(ours == theirs, "seed \(seed) round \(round): \(String(decoding: ours, as: UTF8.self))")
            if ours != theirs { return }
        }
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

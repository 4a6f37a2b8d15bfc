// SPDX-License-Identifier: Apache-2.0
import Foundation
import SleepTapCore

/// Counts the bytes one side puts on the twin's link, each message measured as the frame
/// `WireCodec.encode` writes for it (the ZeroMQ envelope not included).
///
/// A message equal to the last one of its type measured has that one's size and is not encoded
/// again: the PINGs of a day are all the same, and a BATCH resent or answered again is too. A new
/// BATCH is sized as its frame without entries plus its entries (`WireCodec.encodedSize(of:)`),
/// each entry measured once: a day's batch shares all but one entry with the day before's. Any
/// other frame (and a BATCH's frame without entries) is sized by its `shape(of:)`: the message
/// with every field whose printed width does not depend on its value (hexadecimal ids, instants)
/// or depends only on its digit count (sequence numbers) set to one value of that width, so the
/// ACKs of a month, which differ only in such fields, are encoded once or twice, not once each.
struct LinkByteMeter {
    /// Whether messages are counted (`Twin.measureLinkBytes()`).
    var isOn = false
    /// The bytes counted so far.
    private(set) var bytes = 0
    /// The last message of each type measured and its size, by `slot(of:)`.
    private var last: [(message: WireMessage, size: Int)?] = Array(repeating: nil, count: 7)

    /// Adds `message`'s frame size when counting is on.
    mutating func count(_ message: WireMessage) {
        guard isOn else { return }
        let slot = Self.slot(of: message)
        if let known = last[slot], known.message == message {
            bytes += known.size
            return
        }
        let size = Self.size(of: message, entrySizes: &entrySizes, shapes: &shapes)
        last[slot] = (message, size)
        bytes += size
    }

    /// The sizes of the BATCH entries measured so far (cleared when it reaches `entryMemoLimit`).
    private var entrySizes: [WakeEntry: Int] = [:]
    private static let entryMemoLimit = 256
    /// The frame sizes of the shapes measured so far (`shape(of:)`), newest last; at most
    /// `shapeMemoLimit` (the oldest goes first).
    private var shapes: [(shape: WireMessage, size: Int)] = []
    private static let shapeMemoLimit = 32

    /// The size of `message`'s frame, `WireCodec.encode(message).count`: a BATCH's from its parts.
    static func size(of message: WireMessage, entrySizes: inout [WakeEntry: Int]) -> Int {
        var shapes: [(shape: WireMessage, size: Int)] = []
        return size(of: message, entrySizes: &entrySizes, shapes: &shapes)
    }

    /// `size(of:entrySizes:)`, with the frame sizes of shapes measured before in `shapes`.
    static func size(
        of message: WireMessage, entrySizes: inout [WakeEntry: Int], shapes: inout [(shape: WireMessage, size: Int)]
    ) -> Int {
        guard case .batch(var batch) = message, !batch.entries.isEmpty else {
            return frameSize(of: message, shapes: &shapes)
        }
        var size = batch.entries.count - 1
        for entry in batch.entries {
            if let known = entrySizes[entry] {
                size += known
            } else {
                if entrySizes.count >= entryMemoLimit { entrySizes.removeAll(keepingCapacity: true) }
                let measured = WireCodec.encodedSize(of: entry)
                entrySizes[entry] = measured
                size += measured
            }
        }
        batch.entries = []
        return size + frameSize(of: .batch(batch), shapes: &shapes)
    }

    /// `WireCodec.encode(message).count`, from `shapes` when a message of the same shape was
    /// measured before.
    private static func frameSize(of message: WireMessage, shapes: inout [(shape: WireMessage, size: Int)]) -> Int {
        guard let shape = shape(of: message) else { return WireCodec.encode(message).count }
        if let known = shapes.last(where: { $0.shape == shape }) { return known.size }
        let size = WireCodec.encode(shape).count
        if shapes.count >= shapeMemoLimit { shapes.removeFirst() }
        shapes.append((shape, size))
        return size
    }

    /// `message` with each field whose printed width does not depend on its value set to one
    /// value: ids (`Hex64`, always 16 digits) to 0, instants (`ISO8601.string`, 20 characters
    /// from 1970 to 9999) to 1970-01-01, and integers to the smallest of their digit count.
    /// `WireCodec.encode` writes as many bytes for the shape as for the message: integers in
    /// decimal digits, these strings without escapes (JSON, RFC 8259 §6 and §7). Strings of
    /// any other kind (a zone, a reason) are kept. nil when an instant lies outside 1970 to 9999.
    static func shape(of message: WireMessage) -> WireMessage? {
        switch message {
        case .hello(let held):
            return .hello(held.map(shape(of:)))
        case .batch(let batch):
            guard batch.entries.isEmpty, hasFixedWidth(batch.generatedAt) else { return nil }
            return .batch(
                WakeBatch(
                    epoch: 0, seq: smallest(ofWidthOf: batch.seq), generatedAt: shapeInstant,
                    timeZone: batch.timeZone, entries: []))
        case .ack(let acked, let coverageEnd):
            guard let end = coverageEnd else { return .ack(shape(of: acked), coverageEnd: nil) }
            guard hasFixedWidth(end) else { return nil }
            return .ack(shape(of: acked), coverageEnd: shapeInstant)
        case .upToDate(let seq):
            return .upToDate(seq: smallest(ofWidthOf: seq))
        case .error, .ping:
            return message
        case .request(let request):
            guard request.nightsLeft >= 0 else { return nil }
            var end: Date? = nil
            if let coverageEnd = request.coverageEnd {
                guard hasFixedWidth(coverageEnd) else { return nil }
                end = shapeInstant
            }
            let nights = Int(smallest(ofWidthOf: UInt64(request.nightsLeft)))
            return .request(DateRequest(id: smallest(ofWidthOf: request.id), nightsLeft: nights, coverageEnd: end))
        }
    }

    /// The instant every shape holds: 1970-01-01T00:00:00Z.
    private static let shapeInstant = Date(timeIntervalSince1970: 0)

    /// Whether `ISO8601.string` writes `date` in 20 characters (1970 to 9999).
    private static func hasFixedWidth(_ date: Date) -> Bool {
        ISO8601.fourDigitYears.contains(date.timeIntervalSince1970)
    }

    /// A batch reference's shape: both ids 0, the sequence number the smallest of its width.
    private static func shape(of ref: BatchRef) -> BatchRef {
        BatchRef(epoch: 0, seq: smallest(ofWidthOf: ref.seq), digest: 0)
    }

    /// The smallest number printed with as many decimal digits as `value` (1 for 0 to 9).
    private static func smallest(ofWidthOf value: UInt64) -> UInt64 {
        var rest = value
        var smallest: UInt64 = 1
        while rest >= 10 {
            rest /= 10
            smallest *= 10
        }
        return smallest
    }

    /// One slot per message type.
    private static func slot(of message: WireMessage) -> Int {
        switch message {
        case .hello: 0
        case .batch: 1
        case .ack: 2
        case .upToDate: 3
        case .error: 4
        case .ping: 5
        case .request: 6
        }
    }
}

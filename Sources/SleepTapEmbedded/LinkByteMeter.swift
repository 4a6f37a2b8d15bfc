// SPDX-License-Identifier: Apache-2.0
import SleepTapCore

/// Counts the bytes one side puts on the twin's link, each message measured as the frame
/// `WireCodec.encode` writes for it (the ZeroMQ envelope not included).
///
/// A message equal to the last one of its type measured has that one's size and is not encoded
/// again: the PINGs of a day are all the same, and a BATCH resent or answered again is too. A new
/// BATCH is sized as its frame without entries plus its entries (`WireCodec.encodedSize(of:)`),
/// each entry measured once: a day's batch shares all but one entry with the day before's.
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
        let size = Self.size(of: message, entrySizes: &entrySizes)
        last[slot] = (message, size)
        bytes += size
    }

    /// The sizes of the BATCH entries measured so far (cleared when it reaches `entryMemoLimit`).
    private var entrySizes: [WakeEntry: Int] = [:]
    private static let entryMemoLimit = 256

    /// The size of `message`'s frame, `WireCodec.encode(message).count`: a BATCH's from its parts.
    static func size(of message: WireMessage, entrySizes: inout [WakeEntry: Int]) -> Int {
        guard case .batch(var batch) = message, !batch.entries.isEmpty else { return WireCodec.encode(message).count }
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
        return size + WireCodec.encode(.batch(batch)).count
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

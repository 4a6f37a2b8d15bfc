// SPDX-License-Identifier: Apache-2.0
import SleepTapCore

/// Counts the bytes one side puts on the twin's link, each message measured as the frame
/// `WireCodec.encode` writes for it (the ZeroMQ envelope not included).
///
/// A message equal to the last one of its type measured has that one's size and is not encoded
/// again: the PINGs of a day are all the same, and a BATCH resent or answered again is too.
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
        let size = WireCodec.encode(message).count
        last[slot] = (message, size)
        bytes += size
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

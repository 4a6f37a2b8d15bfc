// SPDX-License-Identifier: Apache-2.0

public import Foundation
import SleepTapCore
import SleepTapOS

/// Faults an in-memory link injects, each a probability in 0...1 per message (seeded, so a
/// failing seed replays).
public struct LinkFaults: Equatable, Sendable {
    /// The message is lost.
    public var drop: Double
    /// The message is delivered twice.
    public var duplicate: Double
    /// The message is held back by a random delay up to `maxDelay` (which can reorder it behind
    /// later ones).
    public var delay: Double
    /// Upper bound of a delay, virtual seconds.
    public var maxDelay: TimeInterval

    /// Link faults with these probabilities (each from 0 to 1, per message) and delay bound.
    public init(drop: Double = 0, duplicate: Double = 0, delay: Double = 0, maxDelay: TimeInterval = 2) {
        self.drop = drop
        self.duplicate = duplicate
        self.delay = delay
        self.maxDelay = maxDelay
    }

    /// No faults: every message arrives once, in order, at once.
    public static let none = LinkFaults()
}

/// One direction of an in-memory link between the twin's phone and watch: messages in flight
/// with their arrival instants, seeded faults, and an up/down state (a link that is down loses
/// what is in flight, as a dropped TCP or ipc connection does).
public struct FaultyLink<Message: Sendable>: Sendable {
    /// A message on its way.
    public struct InFlight: Sendable {
        /// The virtual instant it arrives.
        public var arrival: Date
        /// The order it was sent in (breaks ties between equal arrivals).
        public var order: UInt64
        /// The message.
        public var message: Message
    }

    /// The probabilities of each fault.
    public var faults: LinkFaults
    /// Whether the link carries messages. Sending on a link that is down fails.
    public private(set) var isUp = true
    private var random: SplitMix64
    private var flight: [InFlight] = []
    private var nextOrder: UInt64 = 0
    /// Counts of what the link did, for reports and tests.
    public private(set) var sent = 0
    /// Messages lost to a drop fault.
    public private(set) var dropped = 0
    /// Messages delivered twice.
    public private(set) var duplicated = 0
    /// Messages held back by a delay.
    public private(set) var delayed = 0
    /// Messages in flight when the link went down, lost with it.
    public private(set) var lostOnDisconnect = 0

    /// - Parameters:
    ///   - faults: probabilities of each fault.
    ///   - seed: seeds the fault choices (SplitMix64).
    public init(faults: LinkFaults = .none, seed: UInt64) {
        self.faults = faults
        self.random = SplitMix64(state: seed)
    }

    private mutating func chance(_ probability: Double) -> Bool {
        guard probability > 0 else { return false }
        return Double(random.next() >> 11) / Double(1 << 53) < probability
    }

    /// Puts `message` on the link at `now`.
    /// - Returns: false when the link is down (nothing is queued: the sender sees a failed send).
    @discardableResult
    public mutating func send(_ message: Message, at now: Date) -> Bool {
        guard isUp else { return false }
        sent += 1
        if chance(faults.drop) {
            dropped += 1
            return true
        }
        var copies = 1
        if chance(faults.duplicate) {
            duplicated += 1
            copies = 2
        }
        for _ in 0..<copies {
            var arrival = now
            if chance(faults.delay) {
                delayed += 1
                arrival = now.addingTimeInterval(Double(random.next() % 1_000) / 1_000 * faults.maxDelay)
            }
            flight.append(InFlight(arrival: arrival, order: nextOrder, message: message))
            nextOrder += 1
        }
        return true
    }

    /// The arrival instant of the next message, if any is in flight.
    public var nextArrival: Date? {
        var earliest: Date?
        for item in flight where earliest.map({ item.arrival < $0 }) ?? true { earliest = item.arrival }
        return earliest
    }

    /// Takes every message that has arrived by `now`, in arrival order (ties in send order).
    public mutating func receive(upTo now: Date) -> [Message] {
        // Without delays every message in flight has arrived, in send order: take them all.
        if flight.allSatisfy({ $0.arrival <= now }), Self.inOrder(flight) {
            defer { flight.removeAll(keepingCapacity: true) }
            return flight.map(\.message)
        }
        let arrived = flight.filter { $0.arrival <= now }.sorted { ($0.arrival, $0.order) < ($1.arrival, $1.order) }
        flight.removeAll { $0.arrival <= now }
        return arrived.map(\.message)
    }

    /// Whether `items` are sorted by (arrival, order).
    private static func inOrder(_ items: [InFlight]) -> Bool {
        var index = 1
        while index < items.count {
            let (a, b) = (items[index - 1], items[index])
            if (b.arrival, b.order) < (a.arrival, a.order) { return false }
            index += 1
        }
        return true
    }

    /// Takes the link down: whatever is in flight is lost.
    public mutating func disconnect() {
        isUp = false
        lostOnDisconnect += flight.count
        flight.removeAll()
    }

    /// Brings the link back up.
    public mutating func reconnect() { isUp = true }
}

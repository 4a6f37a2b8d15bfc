// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// A virtual-time timer heap: the twin's event loop, in the manner of swift-nio's
/// `EmbeddedEventLoop.advanceTime(to:)`. Every armed timer fires, in deadline order; timers
/// due at the same instant fire in the order they were armed. Nothing waits on a real clock.
///
/// Each timer has an owner-chosen key: arming a key that is armed already replaces its
/// deadline (as the real poll loop does), so a node's "re-arm the resend timer" behaves the same
/// here and in the processes.
///
/// - Complexity: `arm` and `popDue` are O(log n) in the number of armed timers.
public struct VirtualScheduler<Key: Hashable & Sendable>: Sendable {
    private struct Entry: Sendable {
        var deadline: Date
        var order: UInt64
        var key: Key
    }

    /// The virtual now: the deadline of the last timer taken, or the start.
    public private(set) var now: Date
    private var heap: [Entry] = []
    /// The live (deadline, order) of each armed key; heap entries that disagree are stale.
    private var live: [Key: (deadline: Date, order: UInt64)] = [:]
    private var nextOrder: UInt64 = 0
    /// Whether the heap's top is known to be live (no timer armed, disarmed or taken since the
    /// last check), so the next check needs no look-up.
    private var topIsLive = false

    /// An empty heap whose virtual now is `start`.
    public init(start: Date) { now = start }

    /// Arms `key` to fire at `deadline` (a deadline in the past fires at `now`).
    public mutating func arm(_ key: Key, at deadline: Date) {
        let entry = Entry(deadline: max(deadline, now), order: nextOrder, key: key)
        nextOrder += 1
        live[key] = (entry.deadline, entry.order)
        heap.append(entry)
        siftUp(heap.count - 1)
        topIsLive = false
    }

    /// Moves `now` forward to `instant` (never back). A timer due before it stays armed and is
    /// the next one `popDue` takes.
    public mutating func advance(to instant: Date) { now = max(now, instant) }

    /// Disarms `key`; nothing happens if it is not armed.
    public mutating func cancel(_ key: Key) {
        live[key] = nil
        topIsLive = false
    }

    /// Whether `key` is armed.
    public func isArmed(_ key: Key) -> Bool { live[key] != nil }

    /// The deadline of the earliest armed timer, if any.
    public mutating func nextDeadline() -> Date? {
        dropStale()
        return heap.first?.deadline
    }

    /// Takes the earliest armed timer due at or before `limit`, disarms it and moves `now` to its
    /// deadline. Returns nil (and moves `now` to `limit`) when none is due by then.
    public mutating func popDue(notAfter limit: Date) -> (key: Key, at: Date)? {
        dropStale()
        guard let first = heap.first, first.deadline <= limit else {
            now = max(now, limit)
            return nil
        }
        removeTop()
        live[first.key] = nil
        now = max(now, first.deadline)
        return (first.key, first.deadline)
    }

    private mutating func dropStale() {
        if topIsLive { return }
        while let first = heap.first {
            if let current = live[first.key], current.order == first.order {
                topIsLive = true
                return
            }
            removeTop()
        }
    }

    private static func before(_ a: Entry, _ b: Entry) -> Bool {
        (a.deadline, a.order) < (b.deadline, b.order)
    }

    private mutating func removeTop() {
        topIsLive = false
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        if !heap.isEmpty { siftDown(0) }
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(heap[child], heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, Self.before(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count, Self.before(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

// SPDX-License-Identifier: Apache-2.0

public import Foundation

/// The watch face's complication: a timeline of the next alarm, built from the cached dates, that
/// stays right for as long as they last without a reload, and reloads only when they change,
/// within a daily budget.
///
/// The timeline follows WidgetKit's model ("Keeping a widget up to date",
/// developer.apple.com/documentation/widgetkit/keeping-a-widget-up-to-date): the app gives the
/// system future entries, each shown from its date on, and asks for a reload only when its data
/// changes; a frequently viewed widget gets about 40 to 70 reloads a day. Here there is one entry
/// per cached wake-up after the reload, the first shown from the reload, each later one from the
/// wake-up before it, and a last entry "no cached date" from the last wake-up on. The budget is
/// counted over the last 24 hours of virtual time (this model's assumption: Apple does not say
/// how the day is counted), and it is not kept across a restart of the watch process.
public struct Complication: Equatable, Sendable {
    /// One entry of the timeline: from `start` on (UTC), the face shows `wake` as the next alarm,
    /// or "no cached date" when `wake` is nil.
    public struct Entry: Equatable, Sendable {
        /// When the face starts showing this entry (UTC).
        public var start: Date
        /// The next alarm it shows (UTC), nil for "no cached date".
        public var wake: Date?

        /// An entry shown from `start`, with `wake` as the next alarm (nil: no cached date).
        public init(start: Date, wake: Date?) {
            self.start = start
            self.wake = wake
        }
    }

    /// What an offer of new dates did.
    public enum Outcome: Equatable, Sendable {
        /// The dates are the ones the timeline was built from: nothing to do.
        case unchanged
        /// The timeline was rebuilt; `reloads` counts the reloads in the last 24 h, this one included.
        case reloaded(reloads: Int)
        /// The budget is spent: the face keeps the old timeline until `retryAt`, when the newest
        /// dates are loaded.
        case budgetExhausted(reloads: Int, retryAt: Date)
    }

    /// The default budget, 40 reloads a day: the low end of what Apple gives a frequently viewed
    /// widget.
    public static let defaultBudget = 40
    /// The window the budget is counted over, seconds.
    public static let budgetWindow: TimeInterval = 86_400

    /// Reloads allowed in any 24 h.
    public let budget: Int
    /// The timeline the face shows, in start order; empty before the first reload.
    public private(set) var timeline: [Entry] = []
    /// The digest of the batch the timeline was built from (`WakeBatch.digest`), nil before the
    /// first reload.
    public private(set) var digest: UInt64?
    /// The newest dates, waiting for the budget: their digest and wake-ups.
    public private(set) var waiting: (digest: UInt64, wakes: [Date])?
    /// The instants of the reloads in the last 24 h, oldest first.
    private var reloads: [Date] = []

    /// A complication that allows `budget` reloads in any 24 h (at least 1).
    public init(budget: Int = Complication.defaultBudget) {
        self.budget = max(1, budget)
    }

    public static func == (lhs: Complication, rhs: Complication) -> Bool {
        lhs.budget == rhs.budget && lhs.timeline == rhs.timeline && lhs.digest == rhs.digest
            && lhs.waiting?.digest == rhs.waiting?.digest && lhs.waiting?.wakes == rhs.waiting?.wakes
            && lhs.reloads == rhs.reloads
    }

    /// The timeline for `wakes` built at `now`: one entry per wake-up after `now`, the first from
    /// `now`, each later one from the wake-up before it, then "no cached date" from the last.
    public static func timeline(for wakes: [Date], at now: Date) -> [Entry] {
        let ahead = wakes.filter { $0 > now }.sorted()
        var entries: [Entry] = []
        var start = now
        for wake in ahead {
            entries.append(Entry(start: start, wake: wake))
            start = wake
        }
        entries.append(Entry(start: start, wake: nil))
        return entries
    }

    /// The entry the face shows at `instant`: the last one whose start is at or before it; nil
    /// before the timeline begins.
    public func entry(at instant: Date) -> Entry? {
        timeline.last { $0.start <= instant }
    }

    /// Reloads in the 24 h before `now`.
    public func reloadsInWindow(at now: Date) -> Int {
        reloads.filter { now.timeIntervalSince($0) < Self.budgetWindow }.count
    }

    /// Offers the dates of the batch the watch holds now (`digest`, `wakes`), at `now`: a reload
    /// when they differ from the timeline's and the budget allows one.
    public mutating func offer(digest: UInt64, wakes: [Date], at now: Date) -> Outcome {
        if self.digest == digest {
            waiting = nil
            return .unchanged
        }
        if waiting?.digest == digest, let retryAt = retryAt(now) {
            return .budgetExhausted(reloads: reloadsInWindow(at: now), retryAt: retryAt)
        }
        waiting = (digest, wakes)
        return loadWaiting(at: now) ?? .unchanged
    }

    /// Loads the waiting dates if the budget allows it at `now`.
    /// - Returns: the outcome, or nil when nothing waits.
    public mutating func loadWaiting(at now: Date) -> Outcome? {
        guard let (digest, wakes) = waiting else { return nil }
        reloads.removeAll { now.timeIntervalSince($0) >= Self.budgetWindow }
        if let retryAt = retryAt(now) {
            return .budgetExhausted(reloads: reloads.count, retryAt: retryAt)
        }
        reloads.append(now)
        timeline = Self.timeline(for: wakes, at: now)
        self.digest = digest
        waiting = nil
        return .reloaded(reloads: reloads.count)
    }

    /// When the next reload is allowed, if not at `now`: 24 h after the oldest reload in the window.
    private func retryAt(_ now: Date) -> Date? {
        let recent = reloads.filter { now.timeIntervalSince($0) < Self.budgetWindow }
        guard recent.count >= budget, let oldest = recent.first else { return nil }
        return oldest.addingTimeInterval(Self.budgetWindow)
    }
}

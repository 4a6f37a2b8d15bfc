// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Order statistics of one measurement across all its rounds.
struct Summary: Sendable {
    /// Every sample, in the measurement's unit.
    let samples: [Double]
    /// The median of each round, in order.
    let roundMedians: [Double]

    init(rounds: [[Double]]) {
        samples = rounds.flatMap { $0 }.sorted()
        roundMedians = rounds.filter { !$0.isEmpty }.map { Self.percentile($0.sorted(), 50) }
    }

    var median: Double { Self.percentile(samples, 50) }
    var p90: Double { Self.percentile(samples, 90) }
    var p99: Double { Self.percentile(samples, 99) }
    /// How far apart the rounds were: (largest round median - smallest) / median, in percent.
    var spreadPercent: Double {
        guard let low = roundMedians.min(), let high = roundMedians.max(), median > 0 else { return 0 }
        return (high - low) / median * 100
    }

    /// The nearest-rank percentile of sorted values; NaN for none.
    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}

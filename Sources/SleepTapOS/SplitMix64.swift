// SPDX-License-Identifier: Apache-2.0

/// SplitMix64 (Steele, Lea, Flood, "Fast Splittable Pseudorandom Number Generators", OOPSLA 2014),
/// with the constants of Sebastiano Vigna's reference `splitmix64.c` (prng.di.unimi.it).
///
/// The state advances by the golden-gamma `0x9e3779b97f4a7c15` before mixing with
/// `0xbf58476d1ce4e5b9` and `0x94d049bb133111eb` (shifts 30, 27, 31); all arithmetic wraps
/// mod 2^64. Every random choice of the simulated OS (and of SleepTap) goes through one of these
/// so a seed replays.
public struct SplitMix64: RandomNumberGenerator, Codable, Equatable, Sendable {
    /// The current state; the next output is derived from `state &+ 0x9e3779b97f4a7c15`.
    public private(set) var state: UInt64

    /// - Parameter state: the seed.
    public init(state: UInt64) { self.state = state }

    /// The next 64-bit output.
    public mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

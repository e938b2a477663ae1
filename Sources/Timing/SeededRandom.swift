// SPDX-License-Identifier: MIT

/// The one seeded generator (SplitMix64): the simulator's devices and payloads, the link
/// code's reconnect jitter and the property tests draw from it. Written out here so that a
/// seed gives the same sequence on every platform and toolchain (the standard library's
/// `random(in:using:)` algorithms are not promised to stay fixed).
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// An independent stream for one purpose (one device's payloads, its RSSI walk ...),
    /// so that adding a consumer of randomness never shifts another one's sequence.
    public func derived(_ label: String, _ index: Int = 0) -> SeededRandom {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325  // FNV-1a
        for byte in label.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        var mixer = SeededRandom(seed: state ^ hash ^ (UInt64(bitPattern: Int64(index)) &* 0xD6E8_FEB8_6659_FD93))
        return SeededRandom(seed: mixer.next())
    }

    /// Uniform in [0, 1).
    public mutating func unit() -> Double {
        Double(next() >> 11) * (1.0 / 9_007_199_254_740_992.0)
    }

    public mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + unit() * (range.upperBound - range.lowerBound)
    }

    /// Uniform integer in the range (modulo bias is far below anything a test can see).
    public mutating func int(_ range: ClosedRange<Int>) -> Int {
        let span = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int(next() % span)
    }

    public mutating func chance(_ probability: Double) -> Bool {
        probability > 0 && unit() < probability
    }

    /// Standard normal (Box-Muller; one value per call keeps the stream simple).
    public mutating func gaussian() -> Double {
        let u1 = max(unit(), 1e-300)
        let u2 = unit()
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }

    public mutating func pick<T>(_ items: [T]) -> T {
        items[int(0...(items.count - 1))]
    }
}

#if canImport(Glibc)
import Glibc
#endif

// SPDX-License-Identifier: MIT
import Timing

/// One group commit: the records with these sequences are durable from `committedAt` on.
public struct CommitEvent: Sendable {
    /// First and last sequence of the transaction (contiguous).
    public var sequences: ClosedRange<Int64>
    public var count: Int { Int(sequences.upperBound - sequences.lowerBound + 1) }
    /// `CLOCK_MONOTONIC` nanoseconds right after COMMIT returned (compare with
    /// `MonotonicClock.nanoseconds()` taken at append).
    public var committedAt: UInt64
    /// How long the transaction itself took, nanoseconds.
    public var transactionNanoseconds: UInt64
}

// SPDX-License-Identifier: MIT

extension Duration {
    /// Seconds as a Double, for arithmetic with the policy code's seconds and for messages.
    @inlinable
    public var seconds: Double {
        let c = components
        return Double(c.seconds) + Double(c.attoseconds) / 1e18
    }

    /// Whole milliseconds (truncated), for SQLite columns, JSON and timers.
    @inlinable
    public var milliseconds: Int64 {
        let c = components
        return c.seconds * 1000 + c.attoseconds / 1_000_000_000_000_000
    }

    /// Whole nanoseconds (truncated), for timers that take an integer.
    @inlinable
    public var nanoseconds: Int64 {
        let c = components
        return c.seconds * 1_000_000_000 + c.attoseconds / 1_000_000_000
    }
}

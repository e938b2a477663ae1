// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif
import WearMetrics

/// Wall-clock time for status reports and HTTP-date arithmetic. Sleeping and measuring use
/// `ContinuousClock`, which a clock step cannot disturb; only what people read is wall time.
enum WallClock {
    static func now() -> UTCTimestamp { .now }
}

extension Duration {
    /// Seconds as a Double, for messages and arithmetic.
    var seconds: Double {
        let c = components
        return Double(c.seconds) + Double(c.attoseconds) / 1e18
    }

    /// Shortest readable form for log lines and status: `250ms`, `2.5s`, `3m10s`.
    var readable: String {
        let s = seconds
        if s < 1 { return "\(Int((s * 1000).rounded()))ms" }
        if s < 60 { return s == s.rounded() ? "\(Int(s))s" : "\((s * 10).rounded() / 10)s" }
        let whole = Int(s.rounded())
        return whole % 60 == 0 ? "\(whole / 60)m" : "\(whole / 60)m\(whole % 60)s"
    }
}

// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// CLOCK_MONOTONIC, for deadlines, pacing and intervals: a step of the wall clock (NTP,
/// a Pi that boots in 1970) cannot stretch or shrink them. Read directly rather than
/// through `ContinuousClock` where a plain integer is wanted (dispatcher threads, the
/// commit thread, atomics).
public enum MonotonicClock {
    @inlinable
    public static func nanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    @inlinable
    public static func milliseconds() -> Int64 { Int64(nanoseconds() / 1_000_000) }

    @inlinable
    public static func seconds() -> Double { Double(nanoseconds()) / 1e9 }
}

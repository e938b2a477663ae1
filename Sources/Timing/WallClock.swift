// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// CLOCK_REALTIME, for what people and the backend read (record timestamps, status, HTTP
/// dates). Without Foundation, so the notification path can stamp records with it; what
/// measures or paces time uses `MonotonicClock` or `ContinuousClock` instead.
public enum WallClock {
    @inlinable
    public static func milliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// Nanoseconds since the epoch, the unit of the kernel's arrival stamps on sockets.
    @inlinable
    public static func nanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    @inlinable
    public static func seconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

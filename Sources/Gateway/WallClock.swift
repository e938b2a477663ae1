// SPDX-License-Identifier: MIT
import WearMetrics
#if canImport(Glibc)
import Glibc
#endif

/// Time without Foundation: records are stamped on the notification path, where a
/// `Date` and its formatters would cost memory the gateway does not have.
enum WallClock {
    static func now() -> UTCTimestamp { .now }

    static func nowMilliseconds() -> Int64 { UTCTimestamp.now.millisecondsSince1970 }

    static func nowSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Seconds on CLOCK_MONOTONIC, for backoff and flapping (immune to clock steps).
    static func monotonic() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

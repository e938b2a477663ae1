// SPDX-License-Identifier: MIT
import WearMetrics
#if canImport(Glibc)
import Glibc
#endif

extension UTCTimestamp {
    /// The wall clock now, for the cache commands' "since" and "age".
    static var wallClockNow: UTCTimestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UTCTimestamp(millisecondsSince1970: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000)
    }
}

// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif
import WearMetrics

extension UTCTimestamp {
    /// Now, from CLOCK_REALTIME (what records and the backend use).
    static var now: UTCTimestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UTCTimestamp(millisecondsSince1970: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000)
    }
}

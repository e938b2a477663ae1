// SPDX-License-Identifier: MIT

/// How long a reader lets notifications gather before it reads them, adapted to what each
/// read found.
///
/// Gathering saves wake-ups only while the queue it lets fill never fills up: a kernel
/// socket holds a bounded number of messages (a bus socket about 170 signals of a few
/// hundred bytes, an AcquireNotify socket about 280 short datagrams: both measured on a
/// socketpair with the default 208 KiB buffer), and a full one makes the sender drop
/// (bluetoothd) or hold back (dbus-daemon) what comes next, so a reader that sleeps a
/// whole window at a time then reads at most one socketful a window, however much waits
/// behind it. So a read that found `burst` or more divides the window by `shrink`, down
/// to 0.5 ms, and reads that found fewer than a quarter of that double it back up to the
/// configured limit: under a flood or behind a starved sender the window shrinks within a
/// few reads, in steady traffic it stays as long as the socket allows.
public struct GatherWindow: Sendable, Equatable {
    /// The window in force, never more than the limit last given.
    public private(set) var nanoseconds: Int64
    /// What one read may find before the window shrinks.
    public let burst: Int
    /// What a read that found a burst divides the window by. Halving settles where a
    /// window brings between a quarter of a burst and a burst; quartering gets out of a
    /// flood in fewer reads but, where traffic is random, swings past that band.
    public let shrink: Int64

    public static let floorNanoseconds: Int64 = 500_000

    public init(limit: Int64, burst: Int, shrink: Int64 = 4) {
        nanoseconds = max(0, limit)
        self.burst = burst
        self.shrink = max(2, shrink)
    }

    /// After a read that found `found` items in the fullest queue, with `limit` the
    /// configured window (it may have changed since the last read).
    public mutating func adapt(found: Int, limit: Int64) {
        let limit = max(0, limit)
        if found >= burst {
            nanoseconds = max(nanoseconds / shrink, min(limit, Self.floorNanoseconds))
        } else if found < burst / 4 {
            // From nothing (gathering was off), the floor first.
            nanoseconds = min(max(nanoseconds, Self.floorNanoseconds / 2) * 2, limit)
        }
        nanoseconds = min(nanoseconds, limit)
    }
}

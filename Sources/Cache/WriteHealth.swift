// SPDX-License-Identifier: MIT
import WearMetrics

/// Whether the cache can write, for status and the journal. While commits fail (a full
/// disk, an I/O error) records wait in memory, up to `CacheOptions.maxBufferedRecords`;
/// beyond that the oldest waiting ones are dropped and counted.
public struct WriteHealth: Sendable, Equatable {
    /// When commits started failing; nil while they succeed.
    public var failingSince: UTCTimestamp?
    /// The failure was the disk (or the file system) being full.
    public var diskFull = false
    /// The last failure, as SQLite reported it.
    public var lastError: String?
    /// Records waiting in memory for a commit (with those of the commit under way).
    public var buffered = 0
    /// Records of the commit under way: out of the buffer, not yet on disk.
    public var committing = 0
    /// Records dropped because the memory bound was reached while commits failed, since start.
    public var dropped = 0
    /// Delivered records deleted to make room on a full disk, since start.
    public var prunedForSpace = 0

    /// One line for the journal and `blegate status`, nil when writing works:
    /// "disk full since 10:42:07, 1204 records held in memory, 3000 oldest delivered records pruned".
    public var summary: String? {
        guard let since = failingSince else { return nil }
        let time = String(since.iso8601.dropFirst(11).prefix(8))
        var s = (diskFull ? "disk full" : "writes failing") + " since \(time) UTC, \(buffered) records held in memory"
        if prunedForSpace > 0 { s += ", \(prunedForSpace) oldest delivered records pruned" }
        if dropped > 0 { s += ", \(dropped) records dropped (memory bound reached)" }
        if !diskFull, let lastError { s += ": \(lastError)" }
        return s
    }
}

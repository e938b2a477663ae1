// SPDX-License-Identifier: MIT
import BlegateTestSupport
@testable import Cache
import Foundation
import GRDB
import Testing
import WearMetrics
#if canImport(Glibc)
import Glibc
#endif

/// A real full disk: the cache on a 32 MiB tmpfs (mounting needs root), filled to the last
/// byte by a file beside it.
@Suite("A full disk", .serialized)
struct DiskFullTests {
    static let canMount = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/bin/mount")

    /// Writes until the file system refuses (ENOSPC); returns the file.
    private func fill(_ directory: String) -> String {
        let path = directory + "/filler"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(fd) }
        for size in [1 << 20, 1 << 12, 1] {
            let chunk = [UInt8](repeating: 0xA5, count: size)
            while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, size) }) == size {}
        }
        return path
    }

    @Test("disk full: delivered records are pruned first, memory stays bounded and drops are counted, deliveries are not sent again, and writing resumes by itself",
          .enabled(if: canMount))
    func diskFull() async throws {
        let dir = TempDir()
        let mount = dir.path + "/fs"
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        #expect(shellStatus("mount -t tmpfs -o size=32m blegate-full '\(mount)'") == 0)
        defer { _ = shellStatus("umount -l '\(mount)'") }

        let bound = 3000
        let cache = try RecordCache(path: mount + "/cache.sqlite",
                                    options: CacheOptions(groupCommitInterval: .milliseconds(20), maxBufferedRecords: bound))
        // 6,000 records, the oldest 4,000 delivered.
        let device = "AA:00:00:00:00:01"
        var appended = 0
        for _ in 0..<6 {
            cache.append((0..<1000).map { hrRecord(device, appended + $0) })
            appended += 1000
            try await cache.flush()
        }
        for _ in 0..<8 { try await cache.markDelivered(try await cache.pendingBatch(limit: 500).map(\.id)) }
        let before = try await cache.stats()
        #expect(before.delivered == 4000 && before.pending == 2000)
        let stillPending = try await cache.pendingBatch(limit: 2000).map(\.sequence)

        let filler = fill(mount)
        // More, as a gym would send them, until the reserve, the pruned pages and memory
        // are all taken (how many that is depends on how fast the writer keeps up).
        var stuck = false
        var health = cache.writeHealth
        for _ in 0..<200 {
            cache.append((0..<1000).map { hrRecord(device, appended + $0) })
            appended += 1000
            try? await Task.sleep(for: .milliseconds(50))
            health = cache.writeHealth
            if health.diskFull && health.dropped > 0 && health.prunedForSpace == 4000 {
                stuck = true
                break
            }
        }
        #expect(stuck, "\(health)")
        #expect(health.failingSince != nil)
        #expect(health.prunedForSpace == 4000, "every delivered record, and only those, pruned: \(health)")
        #expect(health.buffered <= bound, "\(health)")
        #expect(cache.bufferedCount <= bound)
        let summary = try #require(health.summary)
        #expect(summary.hasPrefix("disk full since ") && summary.contains("records held in memory")
                && summary.contains("4000 oldest delivered records pruned") && summary.contains("dropped"), "\(summary)")
        // flush() reports the failure. (The writer may still get a commit into pages a
        // checkpoint or the pruning freed: then more records, until one does not fit.)
        var flushFailed = false
        for _ in 0..<50 where !flushFailed {
            do {
                try await cache.flush()
                cache.append((0..<1000).map { hrRecord(device, appended + $0) })
                appended += 1000
            } catch is CacheError {
                flushFailed = true
            }
        }
        #expect(flushFailed, "\(cache.writeHealth)")

        // Sync on a full disk: a delivered batch is not handed out again.
        let batch = try await cache.pendingBatch(limit: 100)
        #expect(batch.count == 100)
        try await cache.markDelivered(batch.map(\.id))
        let next = try await cache.pendingBatch(limit: 100)
        #expect(Set(next.map(\.id)).isDisjoint(with: batch.map(\.id)))

        // Space comes back: everything held is written, without being asked.
        try FileManager.default.removeItem(atPath: filler)
        let recovered = await eventually(timeout: 60) { cache.writeHealth.failingSince == nil && cache.bufferedCount == 0 }
        #expect(recovered, "\(cache.writeHealth)")
        try await cache.flush()
        let dropped = cache.writeHealth.dropped
        // The next sync pass records the deliveries the full disk could not take.
        let resumed = try await cache.pendingBatch(limit: 500)
        #expect(Set(resumed.map(\.id)).isDisjoint(with: batch.map(\.id)))
        #expect(cache.unrecordedDeliveries == 0)
        let after = try await cache.stats()
        // The 100 delivered on the full disk may themselves be pruned for space if the disk
        // was still full once their delivery was written (on a busy machine it can be).
        let pruned = cache.writeHealth.prunedForSpace
        #expect(pruned >= 4000 && pruned <= 4100, "\(cache.writeHealth)")
        #expect(after.total == appended - pruned - dropped, "appended \(appended), pruned \(pruned), dropped \(dropped): \(after.total) kept")
        #expect(after.delivered == 100 - (pruned - 4000))
        // The records pending before the disk filled and not delivered since are all there.
        let kept = Set(try await cache.storedRecords(after: 0, limit: 100_000).map(\.sequence))
        let deliveredOnFullDisk = Set(batch.map(\.sequence))
        let missing = Set(stillPending).subtracting(deliveredOnFullDisk).subtracting(kept)
        #expect(missing.isEmpty, "pending records lost: \(missing.sorted().prefix(20))")
        let keptInOrder = try await cache.storedRecords(after: 0, limit: 100_000).map(\.sequence)
        #expect(keptInOrder == keptInOrder.sorted())
        let check = try await cache.database.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") }
        #expect(check == "ok")
        try await cache.close()
    }
}

/// Runs a shell command; its exit status.
func shellStatus(_ command: String) -> Int32 {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/bin/sh")
    p.arguments = ["-c", command]
    do {
        try p.run()
    } catch {
        return -1
    }
    p.waitUntilExit()
    return p.terminationStatus
}

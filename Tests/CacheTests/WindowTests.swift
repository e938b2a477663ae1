// SPDX-License-Identifier: MIT
import Cache
import Testing
import WearMetrics

@Suite("Records of a class window")
struct WindowTests {
    @Test("a device's records within a window, by timestamp, whatever order they arrived in")
    func oneDevice() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database, options: CacheOptions(create: true))
        // B's records arrive late and out of order; A's span the window's edges.
        cache.append((0..<20).map { hrRecord("AA:AA:AA:AA:AA:01", $0) })
        cache.append([15, 3, 9].map { hrRecord("BB:BB:BB:BB:BB:02", $0) })
        try await cache.flush()
        let from = base.millisecondsSince1970 + 5_000, to = base.millisecondsSince1970 + 15_000
        #expect(try await cache.devices(heardFrom: from, to: to) == ["AA:AA:AA:AA:AA:01", "BB:BB:BB:BB:BB:02"])
        let a = try await cache.records(device: "AA:AA:AA:AA:AA:01", from: from, to: to)
        #expect(a.map(\.record.timestamp.millisecondsSince1970) == (5...15).map { base.millisecondsSince1970 + Int64($0) * 1000 })
        let b = try await cache.records(device: "BB:BB:BB:BB:BB:02", from: from, to: to)
        #expect(b.map(\.record.timestamp.millisecondsSince1970) == [9, 15].map { base.millisecondsSince1970 + Int64($0) * 1000 })
        #expect(try await cache.devices(heardFrom: to + 10_000, to: to + 20_000).isEmpty)
        try await cache.close()
    }
}

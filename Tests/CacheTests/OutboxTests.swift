// SPDX-License-Identifier: MIT
import Cache
import Outbox
import Testing
import WearMetrics

@Suite("Outbox")
struct OutboxTests {
    @Test("batches come in append order across devices; delivered records leave the outbox")
    func ordering() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        let devices = ["AA:00:00:00:00:01", "AA:00:00:00:00:02", "AA:00:00:00:00:03"]
        let records = (0..<30).map { hrRecord(devices[$0 % 3], $0) }
        for r in records { cache.append(r) }
        try await cache.flush()

        let first = try await cache.pendingBatch(limit: 10)
        #expect(first.map(\.sequence) == Array(1...10))
        #expect(first.map(\.record) == Array(records[0..<10]))
        #expect(Set(first.map(\.id)).count == 10)
        // Asking again without marking gives the same batch with the same ids (replay).
        #expect(try await cache.pendingBatch(limit: 10) == first)

        try await cache.markDelivered(first.map(\.id))
        let second = try await cache.pendingBatch(limit: 10)
        #expect(second.map(\.sequence) == Array(11...20))
        // Marking an id twice, or an unknown one, changes nothing.
        try await cache.markDelivered(first.map(\.id) + ["00000000-0000-4000-8000-000000000000"])
        #expect(try await cache.stats().delivered == 10)
    }

    @Test("quarantined records keep their reason, are counted and never sent again")
    func quarantine() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        cache.append((0..<5).map { hrRecord("AA:00:00:00:00:01", $0) })
        try await cache.flush()
        let batch = try await cache.pendingBatch(limit: 5)
        try await cache.quarantine([OutboxRejection(id: batch[1].id, reason: "hr out of range"),
                                    OutboxRejection(id: batch[3].id, reason: "hr out of range")])
        try await cache.markDelivered([batch[0].id, batch[2].id])
        let rest = try await cache.pendingBatch(limit: 100)
        #expect(rest.map(\.id) == [batch[4].id])
        let stats = try await cache.stats()
        #expect(stats.quarantined == 2)
        #expect(stats.delivered == 2)
        #expect(stats.pending == 1)
        #expect(stats.quarantineReasons.first?.reason == "hr out of range")
        #expect(stats.quarantineReasons.first?.count == 2)
        let q = try #require(try await cache.storedRecord(id: batch[1].id))
        #expect(q.state == .quarantined)
        #expect(q.reason == "hr out of range")
        // A later markDelivered does not resurrect a quarantined record as delivered.
        try await cache.markDelivered([batch[1].id])
        #expect(try await cache.storedRecord(id: batch[1].id)?.state == .quarantined)
    }

    @Test("a rejection reason is stored cut to 500 characters, the cut marked")
    func longReason() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        cache.append((0..<2).map { hrRecord("AA:00:00:00:00:01", $0) })
        try await cache.flush()
        let batch = try await cache.pendingBatch(limit: 5)
        let page = String(repeating: "é backend said no ", count: 3000)
        try await cache.quarantine([OutboxRejection(id: batch[0].id, reason: page),
                                    OutboxRejection(id: batch[1].id, reason: String(page.prefix(500)))])
        let cut = try #require(try await cache.storedRecord(id: batch[0].id)?.reason)
        #expect(cut.hasPrefix(String(page.prefix(500))))
        #expect(cut.hasSuffix("… (cut at 500 characters)"))
        #expect(cut.count == 500 + "… (cut at 500 characters)".count)
        // One at the limit is kept whole.
        #expect(try await cache.storedRecord(id: batch[1].id)?.reason == String(page.prefix(500)))
    }

    @Test("unpaired = send: unpaired records go out with a null client_id, paired ones with theirs")
    func sendPolicy() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database, options: CacheOptions(unpaired: .send))
        try await cache.pair(address: "AA:00:00:00:00:01", clientID: "member-1")
        cache.append(hrRecord("AA:00:00:00:00:01", 0))
        cache.append(hrRecord("AA:00:00:00:00:02", 1))
        try await cache.flush()
        let batch = try await cache.pendingBatch(limit: 10)
        #expect(batch.map(\.clientID) == ["member-1", nil])
    }

    @Test("unpaired = hold: unpaired records wait; pairing gives them the member and releases them")
    func holdThenPair() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database, options: CacheOptions(unpaired: .hold))
        try await cache.pair(address: "AA:00:00:00:00:01", clientID: "member-1")
        for i in 0..<4 {
            cache.append(hrRecord("AA:00:00:00:00:01", i))
            cache.append(hrRecord("AA:00:00:00:00:02", i))
        }
        try await cache.flush()
        let paired = try await cache.pendingBatch(limit: 100)
        #expect(paired.count == 4)
        #expect(paired.allSatisfy { $0.clientID == "member-1" && $0.record.deviceID == "AA:00:00:00:00:01" })
        #expect(try await cache.stats().unpairedPending == 4)

        // Still buffered (not committed) at pairing time: must be assigned too.
        cache.append(hrRecord("AA:00:00:00:00:02", 100))
        let assigned = try await cache.pair(address: "AA:00:00:00:00:02", clientID: "member-2")
        #expect(assigned == 5)
        cache.append(hrRecord("AA:00:00:00:00:02", 101))
        try await cache.flush()
        let all = try await cache.pendingBatch(limit: 100)
        #expect(all.count == 10)
        #expect(all.map(\.sequence) == all.map(\.sequence).sorted())
        #expect(all.filter { $0.record.deviceID == "AA:00:00:00:00:02" }.allSatisfy { $0.clientID == "member-2" })
        let device = try #require(try await cache.device(address: "AA:00:00:00:00:02"))
        #expect(device.member?.clientID == "member-2")
    }

    @Test("pairing never re-attributes records already tagged with another member")
    func repairKeepsHistory() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database, options: CacheOptions(unpaired: .hold))
        try await cache.pair(address: "AA:00:00:00:00:01", clientID: "member-1")
        cache.append(hrRecord("AA:00:00:00:00:01", 0))
        try await cache.unpair(address: "AA:00:00:00:00:01")
        cache.append(hrRecord("AA:00:00:00:00:01", 1))
        try await cache.pair(address: "AA:00:00:00:00:01", clientID: "member-2")
        try await cache.flush()
        let batch = try await cache.pendingBatch(limit: 10)
        #expect(batch.map(\.clientID) == ["member-1", "member-2"])
    }

    @Test("members survive reopening")
    func membersPersist() async throws {
        let dir = TempDir()
        do {
            let cache = try RecordCache(path: dir.database)
            try await cache.pair(address: "AA:00:00:00:00:01", clientID: "member-1")
            try await cache.close()
        }
        let cache = try RecordCache(path: dir.database)
        cache.append(hrRecord("AA:00:00:00:00:01", 0))
        try await cache.flush()
        #expect(try await cache.pendingBatch(limit: 1).first?.clientID == "member-1")
    }

    @Test("device registry: upsert keeps known facts, last seen moves forward, records register their device")
    func registry() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        try await cache.upsertDevice(DeviceUpdate(address: "AA:00:00:00:00:01", name: "Polar H10 1", model: "H10",
                                                  battery: 0.8, lastSeen: UTCTimestamp(millisecondsSince1970: 2000)))
        try await cache.upsertDevice(DeviceUpdate(address: "AA:00:00:00:00:01", firmware: "5.0.0", battery: 0.7,
                                                  lastSeen: UTCTimestamp(millisecondsSince1970: 1000)))
        let d = try #require(try await cache.device(address: "AA:00:00:00:00:01"))
        #expect(d.name == "Polar H10 1")
        #expect(d.model == "H10")
        #expect(d.firmware == "5.0.0")
        #expect(d.battery == 0.7)
        #expect(d.lastSeen?.millisecondsSince1970 == 2000)
        #expect(d.member == nil)

        cache.append(hrRecord("BB:00:00:00:00:02", 5))
        try await cache.flush()
        let seen = try #require(try await cache.device(address: "BB:00:00:00:00:02"))
        #expect(seen.lastSeen == hrRecord("BB:00:00:00:00:02", 5).timestamp)
        #expect(try await cache.devices().count == 2)
    }
}

// SPDX-License-Identifier: MIT
@testable import Cache
import BackendContract
import BlegateTestSupport
import Foundation
import GRDB
import Outbox
import Sync
import TestBackend
import Testing
import WearMetrics

/// Caches written by the release build before the typed columns (records as compact JSON
/// text), opened by this build: migrated in place on the first open, every undelivered
/// record kept with its fields and its place in the outbox, then drained to the loopback
/// backend with nothing lost and nothing sent twice.
///
/// How the fixtures were made: `swift build -c release --product blegate` at the release's
/// commit, then, with that `blegate` and this tree's `blegate-test-backend`, the simulated
/// gym of `scripts/simulated-gym.sh` (`blegate simulate --private-bus --straps 3 --rate 1
/// --adapters 1 --seed 11`): `blegate pair` of one strap with a code added at the backend's
/// `/_admin/codes`; `blegate run` with the backend up for about 20 s (delivered records),
/// the backend then stopped and `blegate run` kept on for about 15 s more (pending records),
/// SIGTERM. One pending record was then quarantined with raw SQL as that build's outbox
/// did (`state = 2`, a reason, its sequence out of `outbox`), since the loopback backend
/// refuses nothing the gateway sends. `release-cache-encrypted.sqlite` is the same with
/// `cache.encryption_key_file` set to `release-cache.key` (`head -c 32 /dev/urandom`).
/// Each file is the cache `VACUUM INTO` a copy (one file, no WAL).
@Suite("Caches written by the release before typed columns", .serialized)
struct ReleaseCacheTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path

    /// A record as the old cache held it, read with raw SQL before the new code opens it.
    struct OldRecord {
        var sequence: Int64
        var id: String
        var clientID: String?
        var state: Int
        var reason: String?
        var record: WearMetrics
    }

    /// Every row of the old `record` table, decoded from its payload, and the pending
    /// sequences in outbox order.
    static func readOld(_ path: String, key: [UInt8]?) throws -> (records: [OldRecord], pending: [Int64], members: [String: String]) {
        let db = try RawConnection(path: path, readOnly: true)
        let cipher = try key.map { try PayloadCipher(keyBytes: $0) }
        let records = try db.rows("SELECT sequence, id, client_id, state, reason, encrypted, payload FROM record ORDER BY sequence") { row in
            let id: String = row["id"]
            let payload = Array((row["payload"] as Data?) ?? Data())
            return try OldRecord(sequence: row["sequence"], id: id, clientID: row["client_id"], state: row["state"], reason: row["reason"],
                                 record: LegacyPayload.record(id: id, encrypted: row["encrypted"], payload: payload, cipher: cipher))
        }
        let pending = try db.rows("SELECT sequence FROM outbox UNION ALL SELECT sequence FROM outbox_unpaired ORDER BY sequence") { $0[0] as Int64 }
        var members: [String: String] = [:]
        for (address, client) in try db.rows("SELECT address, client_id FROM device WHERE client_id IS NOT NULL", [], { ($0[0] as String, $0[1] as String) }) {
            members[address] = client
        }
        return (records, pending, members)
    }

    /// Copies a fixture into `dir` (the test opens, migrates and writes its copy).
    static func copy(_ name: String, to dir: TempDir) throws -> String {
        let path = dir.database
        try FileManager.default.copyItem(atPath: fixtures + "/" + name, toPath: path)
        return path
    }

    @Test("a release cache migrates in place and drains: every undelivered record with its fields, in outbox order, sent once",
          arguments: ["release-cache.sqlite", "release-cache-encrypted.sqlite"])
    func migratesAndDrains(fixture: String) async throws {
        let dir = TempDir()
        let path = try Self.copy(fixture, to: dir)
        let key: [UInt8]? = fixture.contains("encrypted")
            ? Array(try Data(contentsOf: URL(fileURLWithPath: Self.fixtures + "/release-cache.key"))) : nil
        let old = try Self.readOld(path, key: key)
        let pendingOld = old.pending.map { seq in old.records.first { $0.sequence == seq }! }
        let quarantinedOld = old.records.filter { $0.state == CacheSchema.quarantined }
        // The fixture is what it claims: undelivered and delivered records, a member.
        #expect(pendingOld.count >= 20)
        #expect(old.records.count > pendingOld.count + quarantinedOld.count)
        #expect(quarantinedOld.count == 1)
        #expect(!old.members.isEmpty)

        // Opened by this build: the migration runs once, in place.
        let cache = try RecordCache(path: path, options: CacheOptions(encryptionKey: key))
        let stats = try await cache.stats()
        #expect(stats.total == old.records.count)
        #expect(stats.pending == pendingOld.count)
        #expect(stats.quarantined == quarantinedOld.count)
        #expect(stats.delivered == old.records.count - pendingOld.count - quarantinedOld.count)
        // Every record with its id, sequence, member, state and fields; the quarantined with their reason.
        let stored = try await cache.storedRecords(limit: 100_000)
        #expect(stored.map(\.id) == old.records.map(\.id))
        #expect(stored.map(\.sequence) == old.records.map(\.sequence))
        #expect(stored.map(\.clientID) == old.records.map(\.clientID))
        #expect(stored.map(\.record) == old.records.map(\.record))
        #expect(stored.map { $0.record.jsonString() } == old.records.map { $0.record.jsonString() })
        #expect(stored.filter { $0.state == .quarantined }.map(\.reason) == quarantinedOld.map(\.reason))
        for (address, client) in old.members {
            #expect(try await cache.device(address: address)?.member?.clientID == client)
        }
        // The outbox hands out the undelivered records in the old outbox order.
        let batch = try await cache.pendingBatch(limit: 100_000)
        #expect(batch.map(\.id) == pendingOld.map(\.id))
        #expect(batch.map(\.record) == pendingOld.map(\.record))
        try await cache.close()

        // Reopened: nothing migrates again, the sequence goes on after the highest.
        let again = try RecordCache(path: path, options: CacheOptions(encryptionKey: key))
        let highest = old.records.map(\.sequence).max() ?? 0
        #expect(again.append(hrRecord("AA:00:00:00:00:09", 0, at: .now)) > highest)
        try await again.flush()
        let appended = try #require(try await again.storedRecords(after: highest, limit: 10).first)

        // Drained to the loopback backend: each undelivered record arrives once, nothing else.
        let backend = try TestBackend(.init(token: "release-cache-token"))
        try await backend.start()
        let client = try BackendClient(baseURL: backend.baseURL, token: TokenStore(token: "release-cache-token"),
                                       requestTimeout: .seconds(10), connectTimeout: .seconds(2))
        let engine = SyncEngine(outbox: again, client: client,
                                configuration: SyncConfiguration(gatewayID: "gym-release", batchSize: 50, interval: .milliseconds(100)))
        let run = Task { try await engine.run() }
        let drained = await eventually(timeout: 60) { (try? await again.stats().pending) == 0 }
        await engine.stop()
        _ = try? await run.value
        try? await client.shutdown()
        let received = backend.store.records
        let sent = backend.store.requests.filter { $0.path == "/api/v1/metrics" }.compactMap(\.items).reduce(0, +)
        await backend.stop()
        #expect(drained)
        let expected = pendingOld.map(\.id) + [appended.id]
        #expect(received.map(\.id) == expected)
        #expect(sent == expected.count, "records sent, in all requests: each once")
        // What the backend holds is each record's own JSON text, as the old cache would have sent it.
        for (r, o) in zip(received, pendingOld) {
            #expect(r.json["timestamp"]?.string == o.record.timestamp.iso8601)
            #expect(r.json["device_id"]?.string == o.record.deviceID)
            #expect(r.clientID == o.clientID)
            guard case var .object(fields) = r.json else {
                Issue.record("record \(r.id) is not an object at the backend")
                continue
            }
            fields["id"] = nil
            fields["client_id"] = nil
            #expect(ContractValue.object(fields) == (try JSONDecoder().decode(ContractValue.self, from: Data(o.record.jsonString().utf8))))
        }
        let after = try await again.stats()
        #expect(after.pending == 0 && after.quarantined == quarantinedOld.count)
        try await again.close()
    }
}

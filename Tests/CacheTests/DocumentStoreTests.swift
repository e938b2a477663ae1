// SPDX-License-Identifier: MIT
import Cache
import Outbox
import Testing

@Suite("Document outbox in the cache")
struct DocumentStoreTests {
    static func doc(_ id: String, _ value: Double) -> String {
        #"{"id":"\#(id)","client_id":"m1","metric":"weight","value":\#(value),"unit":"kg","measured_at":"2026-11-25T09:58:00.000Z","source":"blegate","device_id":"d1"}"#
    }

    @Test("new → revision 1 pending; changed → revision 2 pending again; same → nothing changes")
    func revisions() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        try await cache.putDocument(kind: .profileMetric, id: "a", json: Self.doc("a", 80))
        var pending = try await cache.pendingDocuments(kind: .profileMetric, limit: 10)
        #expect(pending == [OutboxDocument(id: "a", kind: .profileMetric, json: Self.doc("a", 80), revision: 1)])
        #expect(try await cache.pendingDocuments(kind: .workout, limit: 10).isEmpty)
        try await cache.markDocumentsDelivered(kind: .profileMetric, [pending[0].mark])
        try await cache.putDocument(kind: .profileMetric, id: "a", json: Self.doc("a", 80))
        #expect(try await cache.document(kind: .profileMetric, id: "a")?.state == .delivered)

        try await cache.putDocument(kind: .profileMetric, id: "a", json: Self.doc("a", 81))
        pending = try await cache.pendingDocuments(kind: .profileMetric, limit: 10)
        #expect(pending.map(\.revision) == [2])
        #expect(pending.first?.json == Self.doc("a", 81))
        #expect(try await cache.document(kind: .profileMetric, id: "a")?.deliveredAt == nil)
        try await cache.close()
    }

    @Test("marking an old revision delivered leaves a newer one stored meanwhile pending")
    func markRace() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        try await cache.putDocument(kind: .profileMetric, id: "a", json: Self.doc("a", 80))
        let inFlight = try await cache.pendingDocuments(kind: .profileMetric, limit: 10)
        try await cache.putDocument(kind: .profileMetric, id: "a", json: Self.doc("a", 82))
        try await cache.markDocumentsDelivered(kind: .profileMetric, inFlight.map(\.mark))
        try await cache.quarantineDocuments(kind: .profileMetric, inFlight.map { DocumentRejection(id: $0.id, revision: $0.revision, reason: "late") })
        let stored = try await cache.document(kind: .profileMetric, id: "a")
        #expect(stored?.state == .pending)
        #expect(stored?.revision == 2)
        #expect(try await cache.outboxDepth() == 1)
        try await cache.close()
    }

    @Test("text that is not a JSON object with the document's id is refused and stores nothing")
    func badInput() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database)
        for (id, json) in [("a", "not json"), ("a", "[1,2]"), ("a", Self.doc("b", 80)), ("", Self.doc("", 80))] {
            await #expect(throws: CacheError.self) { try await cache.putDocument(kind: .workout, id: id, json: json) }
        }
        #expect(try await cache.documents(kind: .workout).isEmpty)
        try await cache.close()
    }

    @Test("documents survive reopening the file; a cache written before documents existed upgrades in place")
    func durable() async throws {
        let dir = TempDir()
        do {
            let cache = try RecordCache(path: dir.database)
            try await cache.putDocument(kind: .workout, id: "w", json: #"{"id":"w"}"#)
            try await cache.close()
        }
        let cache = try RecordCache(path: dir.database, options: CacheOptions(create: false))
        #expect(try await cache.documents(kind: .workout).map(\.json) == [#"{"id":"w"}"#])
        #expect(try await cache.documentCounts()[.workout] == DocumentCounts(pending: 1))
        try await cache.close()
    }
}

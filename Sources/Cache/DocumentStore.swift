// SPDX-License-Identifier: MIT
import Foundation
import GRDB
import Outbox
import WearMetrics
import Timing

/// The document outbox (workouts, profile metrics) beside the records: one row per
/// document id and kind, holding its latest JSON text and revision.
///
/// A document stored again with other JSON becomes the next revision and pending again,
/// so a correction goes out after the backend got the earlier form; storing the same JSON
/// again changes nothing (a recompute of an unchanged workout sends nothing). Payloads are
/// sealed like records when the cache has a key, authenticated with kind, id and
/// revision so a payload moved to another row or revision fails to open.
enum DocumentStore {
    static func createTables(_ db: Database) throws {
        // state: 0 pending, 1 delivered, 2 quarantined (documents are few: a delivered one
        // is rewritten in place, unlike records).
        try db.execute(sql: """
            CREATE TABLE document (
                sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                kind TEXT NOT NULL,
                id TEXT NOT NULL,
                revision INTEGER NOT NULL,
                state INTEGER NOT NULL DEFAULT 0,
                stored_ms INTEGER NOT NULL,
                delivered_ms INTEGER,
                reason TEXT,
                encrypted INTEGER NOT NULL,
                payload BLOB NOT NULL,
                UNIQUE (kind, id)
            );
            CREATE INDEX document_pending ON document(kind, sequence) WHERE state = 0;
            """)
    }

    static let columns = "id, kind, revision, state, reason, delivered_ms, stored_ms, encrypted, payload"

    /// The additional authenticated data of a sealed document payload.
    static func sealingID(kind: DocumentKind, id: String, revision: Int) -> String {
        "\(kind.rawValue)/\(id)#\(revision)"
    }

    static func decode(_ row: Row, cipher: PayloadCipher?) throws(CacheError) -> StoredDocument {
        let id: String = row["id"]
        let kindText: String = row["kind"]
        guard let kind = DocumentKind(rawValue: kindText) else {
            throw CacheError(.unreadablePayload, "document \(id): unknown kind \(kindText)")
        }
        let revision: Int = row["revision"]
        let payload = Array((row["payload"] as Data?) ?? Data())
        let json = try text(kind: kind, id: id, revision: revision, encrypted: row["encrypted"], payload: payload, cipher: cipher)
        let state: StoredDocument.State = switch row["state"] as Int {
        case 1: .delivered
        case 2: .quarantined
        default: .pending
        }
        return StoredDocument(id: id, kind: kind, json: json, revision: revision, state: state, reason: row["reason"],
                              deliveredAt: (row["delivered_ms"] as Int64?).map(UTCTimestamp.init(millisecondsSince1970:)),
                              storedAt: UTCTimestamp(millisecondsSince1970: row["stored_ms"]))
    }

    static func text(kind: DocumentKind, id: String, revision: Int, encrypted: Bool, payload: [UInt8],
                     cipher: PayloadCipher?) throws(CacheError) -> String {
        guard encrypted else { return String(decoding: payload, as: UTF8.self) }
        guard let cipher else { throw CacheError(.keyRequired, "document \(id) is encrypted and no key was given") }
        let bytes: [UInt8]
        do {
            bytes = try cipher.open(payload, id: sealingID(kind: kind, id: id, revision: revision))
        } catch {
            throw CacheError(.unreadablePayload, "document \(id): payload fails AES-GCM authentication (wrong key or corrupted)")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The text must be a JSON object whose `id` is the document's id: a mismatch is a bug in
    /// the caller that would make the backend store the document under another id.
    static func validate(id: String, json: String) throws(CacheError) {
        guard !id.isEmpty else { throw CacheError(.invalidDocument, "a document needs a non-empty id") }
        let carried: Identified
        do {
            carried = try JSONDecoder().decode(Identified.self, from: Data(json.utf8))
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            throw CacheError(.invalidDocument, "document \(id) is not JSON: \(context.debugDescription)")
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty {
            throw CacheError(.invalidDocument, "document \(id) is not a JSON object")
        } catch {
            throw CacheError(.invalidDocument, "document \(id): its JSON must carry \"id\": \"\(id)\"")
        }
        guard carried.id == id else {
            throw CacheError(.invalidDocument, "document \(id): its JSON must carry \"id\": \"\(id)\"")
        }
    }

    /// The one field every document must carry.
    private struct Identified: Decodable {
        var id: String
    }
}

extension RecordCache {
    /// Stores a document for delivery. New id: revision 1, pending. Known id with other JSON:
    /// the next revision, pending again (sent as a correction). Same JSON: nothing changes.
    /// Throws `CacheError(.invalidDocument)` for text that is not a JSON object with this `id`.
    public func putDocument(kind: DocumentKind, id: String, json: String) async throws {
        try DocumentStore.validate(id: id, json: json)
        let cipher = self.cipher
        let now = UTCTimestamp.now.millisecondsSince1970
        try await write { db in
            var revision = 1
            let stored = try Row.fetchOne(db, sql: "SELECT revision, encrypted, payload FROM document WHERE kind = ? AND id = ?",
                                          arguments: [kind.rawValue, id])
                .map { row in (row["revision"] as Int, row["encrypted"] as Bool, Array((row["payload"] as Data?) ?? Data())) }
            if let (current, encrypted, payload) = stored {
                // A stored payload that no longer opens is replaced, as a changed one would be.
                let old = try? DocumentStore.text(kind: kind, id: id, revision: current, encrypted: encrypted, payload: payload, cipher: cipher)
                if old == json { return }
                revision = current + 1
            }
            var payload = Array(json.utf8)
            if let cipher {
                payload = try cipher.seal(payload, id: DocumentStore.sealingID(kind: kind, id: id, revision: revision))
            }
            try db.execute(sql: """
                INSERT INTO document (kind, id, revision, state, stored_ms, encrypted, payload) VALUES (?, ?, ?, 0, ?, ?, ?)
                ON CONFLICT (kind, id) DO UPDATE SET revision = excluded.revision, state = 0, stored_ms = excluded.stored_ms,
                    delivered_ms = NULL, reason = NULL, encrypted = excluded.encrypted, payload = excluded.payload
                """, arguments: [kind.rawValue, id, revision, now, cipher != nil, Data(payload)])
        }
    }

    /// Every document of `kind`, oldest first.
    public func documents(kind: DocumentKind) async throws -> [StoredDocument] {
        let cipher = self.cipher
        return try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT \(DocumentStore.columns) FROM document WHERE kind = ? ORDER BY sequence",
                             arguments: [kind.rawValue]).map { try DocumentStore.decode($0, cipher: cipher) }
        }
    }

    /// A document by kind and id.
    public func document(kind: DocumentKind, id: String) async throws -> StoredDocument? {
        let cipher = self.cipher
        return try await database.read { db in
            try Row.fetchOne(db, sql: "SELECT \(DocumentStore.columns) FROM document WHERE kind = ? AND id = ?",
                             arguments: [kind.rawValue, id]).map { try DocumentStore.decode($0, cipher: cipher) }
        }
    }

    /// Pending, delivered and quarantined documents per kind (kinds with none are absent).
    public func documentCounts() async throws -> [DocumentKind: DocumentCounts] {
        try await database.read { db in
            var counts: [DocumentKind: DocumentCounts] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT kind, state, count(*) FROM document GROUP BY kind, state") {
                guard let kind = DocumentKind(rawValue: row[0]) else { continue }
                let n: Int = row[2]
                switch row[1] as Int {
                case 1: counts[kind, default: DocumentCounts()].delivered += n
                case 2: counts[kind, default: DocumentCounts()].quarantined += n
                default: counts[kind, default: DocumentCounts()].pending += n
                }
            }
            return counts
        }
    }
}

extension RecordCache: DocumentOutbox {
    /// The oldest pending documents of `kind`. One whose payload cannot be read back is
    /// quarantined with the reason instead of blocking the others; an encrypted one read
    /// without a key is an error (`keyRequired`), not a reason to quarantine it.
    public func pendingDocuments(kind: DocumentKind, limit: Int) async throws -> [OutboxDocument] {
        guard limit > 0 else { return [] }
        let cipher = self.cipher
        while true {
            let (batch, bad) = try await database.read { db in
                var batch: [OutboxDocument] = []
                var bad: [DocumentRejection] = []
                for row in try Row.fetchAll(db, sql: "SELECT \(DocumentStore.columns) FROM document WHERE state = 0 AND kind = ? ORDER BY sequence LIMIT ?",
                                            arguments: [kind.rawValue, limit]) {
                    do {
                        let d = try DocumentStore.decode(row, cipher: cipher)
                        batch.append(OutboxDocument(id: d.id, kind: kind, json: d.json, revision: d.revision))
                    } catch let e as CacheError where e.code == .keyRequired {
                        // Opened without the key: the document is fine, the configuration is not.
                        throw e
                    } catch {
                        bad.append(DocumentRejection(id: row["id"], revision: row["revision"], reason: "unreadable in the cache: \((error as? CacheError)?.message ?? "\(error)")"))
                    }
                }
                return (batch, bad)
            }
            if bad.isEmpty { return batch }
            try await quarantineDocuments(kind: kind, bad)
        }
    }

    public func markDocumentsDelivered(kind: DocumentKind, _ revisions: [DocumentRevision]) async throws {
        guard !revisions.isEmpty else { return }
        let now = UTCTimestamp.now.millisecondsSince1970
        try await write { db in
            let update = try db.cachedStatement(sql: "UPDATE document SET state = 1, delivered_ms = ? WHERE kind = ? AND id = ? AND revision = ? AND state = 0")
            for r in revisions { try update.execute(arguments: [now, kind.rawValue, r.id, r.revision]) }
        }
    }

    public func quarantineDocuments(kind: DocumentKind, _ rejections: [DocumentRejection]) async throws {
        guard !rejections.isEmpty else { return }
        try await write { db in
            let update = try db.cachedStatement(sql: "UPDATE document SET state = 2, reason = ? WHERE kind = ? AND id = ? AND revision = ? AND state = 0")
            for r in rejections { try update.execute(arguments: [RecordCache.storedReason(r.reason), kind.rawValue, r.id, r.revision]) }
        }
    }

    public func outboxDepth() async throws -> Int {
        try await database.read { db in
            let r = try Int.fetchOne(db, sql: "SELECT (SELECT count(*) FROM outbox) + (SELECT count(*) FROM outbox_unpaired)") ?? 0
            let d = try Int.fetchOne(db, sql: "SELECT count(*) FROM document WHERE state = 0") ?? 0
            return r + d
        }
    }
}

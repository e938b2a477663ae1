// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Cache
import Outbox
import Sync
import TestBackend
import WearMetrics
import Timing

/// Contract-shaped documents (notes in docs/backend-openapi.yaml `Workout`, `ProfileMetric`).
enum Documents {
    static func uuid(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        return "6a1f0c2e-0000-4000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex
    }

    /// A workout whose zones add up to its duration (`zones` overrides them, to make a bad one).
    static func workout(_ id: String, avg: Double = 131.5, zones: [Int] = [60, 300, 900, 1200, 900, 240],
                        device: String = "Polar H10 8C4F2A1B") -> String {
        let duration = 3600
        return """
            {"id":"\(id)","client_id":"member-7","source":"blegate","gateway_id":"gym-test-1","device_id":"A0:9E:1A:00:00:07",\
            "workout_type":"hiit","class_name":"Tuesday HIIT","start_time":"2026-11-25T10:00:00.000Z",\
            "end_time":"2026-11-25T11:00:00.000Z","duration_seconds":\(duration),"calories_active":512.4,\
            "avg_heart_rate":\(avg),"max_heart_rate":182,"min_heart_rate":88,"seconds_in_zone":[\(zones.map(String.init).joined(separator: ","))],\
            "effort_points":42.5,"trimp":96.1,"hrv_rmssd_ms":38.2,"coverage":0.987,\
            "formulas":{"zones":"pct-hrmax-v1","kcal":"keytel-2005","points":"zone-points-v1"},"source_device":"\(device)"}
            """
    }

    static func profileMetric(_ id: String, metric: String = "weight", value: Double = 81.2, unit: String = "kg") -> String {
        """
        {"id":"\(id)","client_id":"member-7","metric":"\(metric)","value":\(value),"unit":"\(unit)",\
        "measured_at":"2026-11-25T09:58:00.000Z","source":"blegate","device_id":"C4:7C:8D:00:00:01"}
        """
    }
}

/// A cache file, a backend, a client and an engine draining both outboxes of the cache.
struct DocumentHarness {
    let directory: TemporaryDirectory
    let cache: RecordCache
    let backend: TestBackend
    let client: BackendClient
    let engine: SyncEngine
    let log: EventLog
    let run: Task<Void, any Error>

    var path: String { directory.path + "/cache.sqlite" }

    static func start(directory: TemporaryDirectory = TemporaryDirectory(), cache: RecordCache? = nil, key: [UInt8]? = nil,
                      backend: TestBackend? = nil, documents: (any DocumentOutbox)? = nil,
                      interval: Duration = .milliseconds(200)) async throws -> DocumentHarness {
        let cache = try cache ?? RecordCache(path: directory.path + "/cache.sqlite",
                                             options: CacheOptions(groupCommitInterval: .milliseconds(20), encryptionKey: key))
        // A backend passed in is started by the caller (it may be in an outage on purpose).
        var backend = backend
        if backend == nil {
            backend = try TestBackend(.init(token: Harness.token))
            try await backend?.start()
        }
        guard let backend else { throw TestSupportError("no backend") }
        let client = try BackendClient(baseURL: backend.baseURL, token: TokenStore(token: Harness.token),
                                       requestTimeout: .seconds(10), connectTimeout: .seconds(2))
        let engine = SyncEngine(outbox: cache, documents: documents ?? cache, client: client,
                                configuration: SyncConfiguration(gatewayID: "gym-test-1", batchSize: 50, interval: interval,
                                                                 backoff: Backoff(base: .milliseconds(50), cap: .milliseconds(300))))
        let log = EventLog(engine.events())
        let run = Task { try await engine.run() }
        return DocumentHarness(directory: directory, cache: cache, backend: backend, client: client, engine: engine, log: log, run: run)
    }

    /// Waits until the cache has nothing pending of either kind.
    func waitForDocuments(timeout: Double = 30) async throws -> Bool {
        try await eventually(timeout: timeout, every: .milliseconds(20)) { try await cache.documentCounts().values.allSatisfy { $0.pending == 0 } }
    }

    /// Stops the engine and the client; the backend and the cache stay.
    func stopEngine() async {
        await engine.stop()
        _ = try? await run.value
        try? await client.shutdown()
    }

    func finish(keepDirectory: Bool = false) async {
        await stopEngine()
        await backend.stop()
        try? await cache.close()
        if !keepDirectory { directory.remove() }
    }
}

/// Passes everything through to the cache except `markDocumentsDelivered`, which it drops:
/// the gateway "crashed" after the backend answered and before the cache recorded it.
struct MarksLost: DocumentOutbox {
    let cache: RecordCache

    func pendingDocuments(kind: DocumentKind, limit: Int) async throws -> [OutboxDocument] {
        try await cache.pendingDocuments(kind: kind, limit: limit)
    }

    func markDocumentsDelivered(kind: DocumentKind, _ revisions: [DocumentRevision]) async throws {}

    func quarantineDocuments(kind: DocumentKind, _ rejections: [DocumentRejection]) async throws {
        try await cache.quarantineDocuments(kind: kind, rejections)
    }

    func outboxDepth() async throws -> Int { try await cache.outboxDepth() }
}

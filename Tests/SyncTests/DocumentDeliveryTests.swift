// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif
import BlegateTestSupport
import Cache
import Outbox
import Sync
import TestBackend
import Testing
import WearMetrics

@Suite("Workouts and profile metrics: cache → engine → loopback backend")
struct DocumentDeliveryTests {
    @Test("exactly once across an outage: nothing reaches a backend that is down, everything once after it is up")
    func exactlyOnceAcrossOutage() async throws {
        let backend = try TestBackend(.init(token: Harness.token))
        try await backend.start()
        await backend.beginOutage()
        let h = try await DocumentHarness.start(backend: backend)
        for i in 1...3 { try await h.cache.putDocument(kind: .workout, id: Documents.uuid(i), json: Documents.workout(Documents.uuid(i))) }
        for i in 11...12 {
            try await h.cache.putDocument(kind: .profileMetric, id: Documents.uuid(i), json: Documents.profileMetric(Documents.uuid(i)))
        }
        await h.engine.wake()
        #expect(await h.log.wait { $0.filter { if case .backingOff = $0 { true } else { false } }.count >= 2 })
        #expect(try await h.cache.documentCounts()[.workout]?.pending == 3)
        try await backend.endOutage()
        #expect(try await h.waitForDocuments())
        #expect(backend.store.workouts.map(\.id) == (1...3).map(Documents.uuid))
        #expect(backend.store.profileMetrics.map(\.id) == (11...12).map(Documents.uuid))
        #expect(try await h.cache.documents(kind: .workout).allSatisfy { $0.state == .delivered && $0.deliveredAt != nil })
        // More passes send nothing again.
        await h.engine.wake()
        #expect(await h.log.wait { $0.filter { if case .caughtUp = $0 { true } else { false } }.count >= 2 })
        let posts = backend.store.requests.filter { $0.path == "/api/v1/workouts" && $0.status == 200 }
        #expect(posts.count == 1)
        let status = await h.engine.status
        #expect(status.documentsDelivered[.workout] == 3)
        #expect(status.documentsDelivered[.profileMetric] == 2)
        await h.finish()
    }

    @Test("a crash between send and mark: the same documents go again and the backend counts them as duplicates")
    func crashBetweenSendAndMark() async throws {
        let directory = TemporaryDirectory()
        let cache = try RecordCache(path: directory.path + "/cache.sqlite")
        for i in 1...4 { try await cache.putDocument(kind: .workout, id: Documents.uuid(i), json: Documents.workout(Documents.uuid(i))) }
        let first = try await DocumentHarness.start(directory: directory, cache: cache, documents: MarksLost(cache: cache))
        #expect(await first.log.wait { _ in first.log.reports.contains { $0.inserted == 4 } })
        await first.stopEngine()
        #expect(try await cache.documentCounts()[.workout]?.pending == 4)
        try await cache.close()

        // The gateway starts again on the same file.
        let reopened = try RecordCache(path: directory.path + "/cache.sqlite")
        let second = try await DocumentHarness.start(directory: directory, cache: reopened, backend: first.backend)
        #expect(try await second.waitForDocuments())
        #expect(await second.log.wait { _ in second.log.reports.reduce(0) { $0 + $1.duplicates } == 4 })
        #expect(second.log.reports.reduce(0) { $0 + $1.inserted } == 0)
        #expect(first.backend.store.workouts.count == 4)
        await second.finish()
    }

    @Test("a corrected workout goes out by PUT and replaces the backend's copy; the same JSON again sends nothing")
    func correctionByPut() async throws {
        let h = try await DocumentHarness.start()
        let id = Documents.uuid(1)
        try await h.cache.putDocument(kind: .workout, id: id, json: Documents.workout(id, avg: 120.0))
        #expect(await h.backend.wait(timeout: .seconds(30)) { $0.workouts.count == 1 })
        #expect(try await h.waitForDocuments())

        try await h.cache.putDocument(kind: .workout, id: id, json: Documents.workout(id, avg: 124.5))
        #expect(try await h.cache.document(kind: .workout, id: id)?.revision == 2)
        await h.engine.wake()
        #expect(await h.backend.wait(timeout: .seconds(30)) { $0.workouts.first?.replacements == 1 })
        #expect(h.backend.store.workouts.first?.json["avg_heart_rate"]?.number == 124.5)
        #expect(try await h.waitForDocuments())
        #expect(h.backend.store.requests.contains { $0.method == "PUT" && $0.path == "/api/v1/workouts" && $0.status == 200 })

        // Stored again unchanged: still revision 2 and delivered, nothing sent.
        try await h.cache.putDocument(kind: .workout, id: id, json: Documents.workout(id, avg: 124.5))
        let stored = try await h.cache.document(kind: .workout, id: id)
        #expect(stored?.revision == 2)
        #expect(stored?.state == .delivered)
        #expect(h.backend.store.requests.filter { $0.path == "/api/v1/workouts" }.count == 2)
        await h.finish()
    }

    @Test("a backend without PUT (405, or 404 for a route it lacks): a correction it cannot take counts as delivered; a workout it never got still arrives",
          arguments: [405, 404])
    func putRefused(status: Int) async throws {
        let backend = try TestBackend(.init(token: Harness.token, acceptsWorkoutCorrections: false, refusedCorrectionStatus: status))
        try await backend.start()
        let h = try await DocumentHarness.start(backend: backend)
        let known = Documents.uuid(1), unseen = Documents.uuid(2)
        try await h.cache.putDocument(kind: .workout, id: known, json: Documents.workout(known, avg: 120.0))
        #expect(await backend.wait(timeout: .seconds(30)) { $0.workouts.count == 1 })
        #expect(try await h.waitForDocuments())
        await h.engine.stop()
        _ = try? await h.run.value

        // Both at revision 2 while the engine is stopped; one never reached the backend.
        try await h.cache.putDocument(kind: .workout, id: known, json: Documents.workout(known, avg: 125.0))
        try await h.cache.putDocument(kind: .workout, id: unseen, json: Documents.workout(unseen, avg: 99.0))
        try await h.cache.putDocument(kind: .workout, id: unseen, json: Documents.workout(unseen, avg: 101.0))
        let again = try await DocumentHarness.start(directory: h.directory, cache: h.cache, backend: backend)
        #expect(try await again.waitForDocuments())
        #expect(backend.store.requests.filter { $0.method == "PUT" }.map(\.status) == [status])
        let stored = Dictionary(uniqueKeysWithValues: backend.store.workouts.map { ($0.id, $0) })
        #expect(stored[known]?.json["avg_heart_rate"]?.number == 120.0)
        #expect(stored[unseen]?.json["avg_heart_rate"]?.number == 101.0)
        #expect(try await h.cache.documents(kind: .workout).allSatisfy { $0.state == .delivered && $0.revision == 2 })
        // Learned once: a later correction goes by POST without trying PUT again.
        let puts = backend.store.requests.filter { $0.method == "PUT" }.count
        try await h.cache.putDocument(kind: .workout, id: known, json: Documents.workout(known, avg: 126.0))
        await again.engine.wake()
        #expect(try await again.waitForDocuments())
        #expect(backend.store.requests.filter { $0.method == "PUT" }.count == puts)
        try? await h.client.shutdown()
        await again.finish()
    }

    @Test("an answer whose counts do not add up: the workouts (or profile metrics) go again, and are delivered once it adds up")
    func miscountedAnswerResends() async throws {
        let backend = try TestBackend(.init(token: Harness.token))
        try await backend.start()
        backend.faults.add(.miscount(count: 1))
        // The three wait in the cache before the engine starts: one batch.
        let directory = TemporaryDirectory()
        let cache = try RecordCache(path: directory.path + "/cache.sqlite")
        for i in 1...3 { try await cache.putDocument(kind: .workout, id: Documents.uuid(i), json: Documents.workout(Documents.uuid(i))) }
        let h = try await DocumentHarness.start(directory: directory, cache: cache, backend: backend)
        #expect(try await h.waitForDocuments())
        let workoutErrors = h.log.all.compactMap { if case let .backingOff(error, _, _, _, _) = $0 { error } else { nil } }
        let workoutsCounted = await eventually(timeout: 10) { await h.engine.status.documentsDelivered[.workout] == 3 }
        await h.stopEngine()

        // The same for two profile metrics, stored while the engine is stopped: one batch.
        for i in 11...12 {
            try await cache.putDocument(kind: .profileMetric, id: Documents.uuid(i), json: Documents.profileMetric(Documents.uuid(i)))
        }
        backend.faults.add(.miscount(count: 1))
        let again = try await DocumentHarness.start(directory: directory, cache: cache, backend: backend)
        #expect(try await again.waitForDocuments())
        // Each batch was answered with a miscount once, then sent again whole.
        func items(_ path: String) -> [Int] { backend.store.requests.filter { $0.path == path && $0.status == 200 }.compactMap(\.items) }
        #expect(items("/api/v1/workouts") == [3, 3])
        #expect(items("/api/v1/profile-metrics") == [2, 2])
        #expect(backend.store.workouts.map(\.id) == (1...3).map(Documents.uuid))
        #expect(backend.store.profileMetrics.map(\.id) == (11...12).map(Documents.uuid))
        #expect(try await cache.documents(kind: .workout).allSatisfy { $0.state == .delivered })
        #expect(try await cache.documents(kind: .profileMetric).allSatisfy { $0.state == .delivered })
        let metricErrors = again.log.all.compactMap { if case let .backingOff(error, _, _, _, _) = $0 { error } else { nil } }
        #expect(workoutErrors.contains { $0.contains("accounted for 2 of 3 workouts; sending them again") }, "\(workoutErrors)")
        #expect(metricErrors.contains { $0.contains("accounted for 1 of 2 profile metrics; sending them again") }, "\(metricErrors)")
        #expect(workoutsCounted, "the engine counts the 3 workouts delivered")
        #expect(await eventually(timeout: 10) { await again.engine.status.documentsDelivered[.profileMetric] == 2 })
        await again.finish()
    }

    @Test("a rejected workout or profile metric is quarantined with the backend's reason; the others are delivered")
    func rejectedAreQuarantined() async throws {
        let h = try await DocumentHarness.start()
        let good = Documents.uuid(1), bad = Documents.uuid(2), badMetric = Documents.uuid(3)
        try await h.cache.putDocument(kind: .workout, id: good, json: Documents.workout(good))
        try await h.cache.putDocument(kind: .workout, id: bad, json: Documents.workout(bad, zones: [1, 2, 3, 4, 5, 6]))
        try await h.cache.putDocument(kind: .profileMetric, id: badMetric,
                                      json: Documents.profileMetric(badMetric, metric: "height", value: 180.3, unit: "kg"))
        #expect(try await h.waitForDocuments())
        let workouts = Dictionary(uniqueKeysWithValues: try await h.cache.documents(kind: .workout).map { ($0.id, $0) })
        #expect(workouts[good]?.state == .delivered)
        #expect(workouts[bad]?.state == .quarantined)
        #expect(workouts[bad]?.reason?.contains("seconds_in_zone") == true)
        let metric = try await h.cache.document(kind: .profileMetric, id: badMetric)
        #expect(metric?.state == .quarantined)
        #expect(metric?.reason?.contains("unit") == true)
        #expect(h.backend.store.workouts.map(\.id) == [good])
        #expect(try await h.cache.documentCounts()[.workout] == DocumentCounts(pending: 0, delivered: 1, quarantined: 1))
        await h.finish()
    }

    @Test("encryption on: the document never touches the disk in clear and reaches the backend intact")
    func encrypted() async throws {
        let key = (0..<32).map { UInt8($0 * 7 & 0xFF) }
        let directory = TemporaryDirectory()
        let cache = try RecordCache(path: directory.path + "/cache.sqlite", options: CacheOptions(encryptionKey: key))
        let id = Documents.uuid(5)
        let marker = "Polar H10 SECRETMARKER"
        try await cache.putDocument(kind: .workout, id: id, json: Documents.workout(id, device: marker))
        #expect(try await cache.document(kind: .workout, id: id)?.json == Documents.workout(id, device: marker))
        for suffix in ["", "-wal"] {
            let bytes = readAll(directory.path + "/cache.sqlite" + suffix)
            #expect(!bytes.isEmpty || suffix == "-wal")
            #expect(!contains(bytes, Array(marker.utf8)), "cache.sqlite\(suffix) holds the document in clear")
        }
        // Same JSON again is recognised through the sealing: no new revision.
        try await cache.putDocument(kind: .workout, id: id, json: Documents.workout(id, device: marker))
        #expect(try await cache.document(kind: .workout, id: id)?.revision == 1)

        let h = try await DocumentHarness.start(directory: directory, cache: cache)
        #expect(try await h.waitForDocuments())
        #expect(h.backend.store.workouts.first?.json["source_device"]?.string == marker)
        await h.finish(keepDirectory: true)

        // A correction, sealed, left pending.
        let keyed = try RecordCache(path: directory.path + "/cache.sqlite", options: CacheOptions(encryptionKey: key, create: false))
        try await keyed.putDocument(kind: .workout, id: id, json: Documents.workout(id, avg: 140.0, device: marker))
        try await keyed.close()
        // Without the key the documents cannot be read, and the outbox says why instead of
        // quarantining a document that is fine.
        let keyless = try RecordCache(path: directory.path + "/cache.sqlite", options: CacheOptions(create: false))
        await #expect(throws: CacheError.self) { try await keyless.documents(kind: .workout) }
        let error = await #expect(throws: CacheError.self) { try await keyless.pendingDocuments(kind: .workout, limit: 10) }
        #expect(error?.code == .keyRequired)
        #expect(try await keyless.documentCounts()[.workout] == DocumentCounts(pending: 1))
        try await keyless.close()
        directory.remove()
    }

    @Test("every request carries Blegate-Version and Blegate-Outbox-Depth (pending records plus documents)")
    func headers() async throws {
        let directory = TemporaryDirectory()
        let cache = try RecordCache(path: directory.path + "/cache.sqlite", options: CacheOptions(groupCommitInterval: .milliseconds(20)))
        cache.append(SyntheticRecords.heartRate(count: 120).map(\.record))
        try await cache.flush()
        for i in 1...2 { try await cache.putDocument(kind: .workout, id: Documents.uuid(i), json: Documents.workout(Documents.uuid(i))) }
        try await cache.putDocument(kind: .profileMetric, id: Documents.uuid(9), json: Documents.profileMetric(Documents.uuid(9)))
        #expect(try await cache.outboxDepth() == 123)
        let h = try await DocumentHarness.start(directory: directory, cache: cache)
        #expect(try await h.waitForDocuments())
        #expect(await h.backend.waitForRecords(120, timeout: .seconds(30)))
        // The backend logs a request once it has answered, after storing its records.
        func apiRequests() -> [RequestLogEntry] { h.backend.store.requests.filter { $0.path.hasPrefix("/api/") } }
        #expect(await eventually(timeout: 30) { apiRequests().count >= 5 })
        let requests = apiRequests()
        #expect(requests.count == 5)   // 3 record batches of 50, 1 of workouts, 1 of profile metrics
        // Interleaved: the documents go right after the first record batch, not after the backlog.
        #expect(requests.map(\.path) == ["/api/v1/metrics", "/api/v1/workouts", "/api/v1/profile-metrics", "/api/v1/metrics", "/api/v1/metrics"])
        #expect(requests.allSatisfy { $0.version == BlegateVersion.current })
        #expect(requests.first?.outboxDepth == 123)
        let depths = requests.compactMap(\.outboxDepth)
        #expect(depths.count == requests.count)
        #expect(depths == depths.sorted(by: >))
        #expect(h.backend.store.gateways["gym-test-1"]?.version == BlegateVersion.current)
        await h.finish()
    }

    @Test("the metrics machinery applies to documents: 413 splits, then quarantines one alone; 503 Retry-After is honoured; 401 pauses")
    func faults() async throws {
        let backend = try TestBackend(.init(token: Harness.token))
        try await backend.start()
        backend.faults.add(.status(503, retryAfter: "1", count: 1))
        backend.faults.add(.maxBatch(2, count: 2))
        let h = try await DocumentHarness.start(backend: backend)
        for i in 1...4 { try await h.cache.putDocument(kind: .workout, id: Documents.uuid(i), json: Documents.workout(Documents.uuid(i))) }
        await h.engine.wake()
        #expect(try await h.waitForDocuments())
        #expect(backend.store.workouts.map(\.id) == (1...4).map(Documents.uuid))
        let events = h.log.all
        #expect(events.contains { if case .backingOff(_, 503?, _, true, _) = $0 { true } else { false } })
        #expect(events.contains { if case .split(4) = $0 { true } else { false } })

        backend.faults.add(.maxBatch(0, count: 1))
        try await h.cache.putDocument(kind: .profileMetric, id: Documents.uuid(20), json: Documents.profileMetric(Documents.uuid(20)))
        await h.engine.wake()
        #expect(try await h.waitForDocuments())
        let alone = try await h.cache.document(kind: .profileMetric, id: Documents.uuid(20))
        #expect(alone?.state == .quarantined)
        #expect(alone?.reason?.contains("413") == true)

        backend.store.token = "another-token"
        try await h.cache.putDocument(kind: .workout, id: Documents.uuid(30), json: Documents.workout(Documents.uuid(30)))
        await h.engine.wake()
        #expect(await h.log.wait { $0.contains { if case .unauthorized = $0 { true } else { false } } })
        #expect(try await h.cache.document(kind: .workout, id: Documents.uuid(30))?.state == .pending)
        await h.finish()
    }

    @Test("the test backend's data file keeps workouts and profile metrics across a restart, still de-duplicating")
    func backendDataFile() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.path + "/backend.jsonl"
        let first = try TestBackend(.init(token: Harness.token, dataFile: file))
        try await first.start()
        let h = try await DocumentHarness.start(backend: first)
        try await h.cache.putDocument(kind: .workout, id: Documents.uuid(1), json: Documents.workout(Documents.uuid(1), avg: 120.0))
        try await h.cache.putDocument(kind: .profileMetric, id: Documents.uuid(2), json: Documents.profileMetric(Documents.uuid(2)))
        #expect(try await h.waitForDocuments())
        try await h.cache.putDocument(kind: .workout, id: Documents.uuid(1), json: Documents.workout(Documents.uuid(1), avg: 122.0))
        await h.engine.wake()
        #expect(await first.wait(timeout: .seconds(30)) { $0.workouts.first?.replacements == 1 })
        await h.finish()

        let second = try TestBackend(.init(token: Harness.token, dataFile: file))
        #expect(second.store.workouts.count == 1)
        #expect(second.store.workouts.first?.json["avg_heart_rate"]?.number == 122.0)
        #expect(second.store.profileMetrics.map(\.id) == [Documents.uuid(2)])
    }

    @Test("the request body splices each document's stored text unchanged")
    func bodyIsStoredText() {
        let text = #"{"id":"x","value":1.50,"z":"é","a":null}"#
        let body = DocumentRequest.body(gatewayID: "gw", kind: .profileMetric,
                                        documents: [OutboxDocument(id: "x", kind: .profileMetric, json: text, revision: 1)])
        #expect(body == #"{"gateway_id":"gw","metrics":["# + text + "]}")
    }

    private func readAll(_ path: String) -> [UInt8] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            out += chunk[0..<n]
        }
        return out
    }

    private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i..<(i + needle.count)]) == needle { return true }
        }
        return false
    }
}

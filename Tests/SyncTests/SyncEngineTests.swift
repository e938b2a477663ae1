// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif
import BlegateTestSupport
import Outbox
import Sync
import TestBackend
import Testing
import WearMetrics
import Timing

@Suite("SyncEngine against the loopback backend")
struct SyncEngineTests {
    @Test("happy path: every record arrives once, gzip-compressed, in order, and the outbox is empty")
    func happyPath() async throws {
        let records = SyntheticRecords.heartRate(count: 1_050, devices: 7)
        let h = try await Harness.start(records: records, batchSize: 200)
        #expect(await h.waitForCaughtUp())
        #expect(await h.log.waitForCaughtUp())
        let stored = h.backend.store.records
        #expect(stored.count == records.count)
        #expect(Set(stored.map(\.id)) == Set(records.map(\.id)))
        #expect(stored.allSatisfy { $0.gatewayID == "gym-test-1" })
        #expect(stored.first?.clientID == "member-0")
        #expect(devicesInOrder(stored))
        let metricsRequests = h.backend.store.requests.filter { $0.path == "/api/v1/metrics" }
        #expect(metricsRequests.count == 6)
        #expect(metricsRequests.allSatisfy { $0.gzip && $0.status == 200 })
        #expect(await h.outbox.deliveryMarks.values.allSatisfy { $0 == 1 })
        let status = await h.engine.status
        #expect(status.delivered == records.count)
        #expect(status.lastSync?.httpStatus == 200)
        #expect(status.lastSync?.inserted == 50)
        #expect(status.lastSync?.endpoint == h.backend.baseURL + "/api/v1/metrics")
        #expect(status.lastErrors.isEmpty)
        await h.finish()
    }

    @Test("wake() syncs new records without waiting for the interval")
    func wakeSyncsAtOnce() async throws {
        let h = try await Harness.start(interval: .seconds(3600))
        #expect(await h.log.wait { $0.contains { if case .caughtUp = $0 { true } else { false } } })
        await h.outbox.append(SyntheticRecords.heartRate(count: 3))
        await h.engine.wake()
        #expect(await h.backend.waitForRecords(3, timeout: .seconds(30)))
        await h.finish()
    }

    @Test("a replay after a crash is counted as duplicates and stores nothing twice")
    func replayIsDuplicates() async throws {
        let records = SyntheticRecords.heartRate(count: 300)
        let first = try await Harness.start(records: records)
        #expect(await first.waitForCaughtUp())
        await first.engine.stop()
        _ = try? await first.run.value
        try await first.client.shutdown()

        // The cache lost its "delivered" marks (crash between send and mark): same ids again.
        let second = try await Harness.start(records: records, backend: first.backend)
        #expect(await second.waitForCaughtUp())
        #expect(await second.log.wait { _ in second.log.reports.reduce(0) { $0 + $1.duplicates } == records.count })
        let reports = second.log.reports
        #expect(reports.reduce(0) { $0 + $1.inserted } == 0)
        #expect(first.backend.store.records.count == records.count)
        await second.finish()
    }

    @Test("rejected records are quarantined with the backend's reason and never sent again")
    func rejectedAreQuarantined() async throws {
        var records = SyntheticRecords.heartRate(count: 20)
        records[5].change { $0.deviceID = "" }            // the backend requires a device id
        records[12].change { $0.source = "" }
        let h = try await Harness.start(records: records, batchSize: 8)
        #expect(await h.waitForCaughtUp())
        let quarantined = await h.outbox.quarantined
        #expect(quarantined.map(\.id) == [records[5].id, records[12].id])
        #expect(quarantined[0].reason.contains("device_id"))
        #expect(quarantined[1].reason.contains("source"))
        #expect(h.backend.store.records.count == 18)
        // More syncing sends nothing further: nothing is pending.
        await h.outbox.append(SyntheticRecords.heartRate(count: 1, firstSequence: 100))
        await h.engine.wake()
        #expect(await h.backend.waitForRecords(19, timeout: .seconds(30)))
        let sentIDs = h.backend.store.requests.filter { $0.path == "/api/v1/metrics" }.compactMap(\.items).reduce(0, +)
        #expect(sentIDs == 21)
        #expect(await h.engine.status.quarantined == 2)
        await h.finish()
    }

    @Test("500s back off and then recover with nothing lost")
    func serverErrorsThenRecovery() async throws {
        let backend = try TestBackend(.init(token: Harness.token))
        try await backend.start()
        backend.faults.add(.status(500, count: 3))
        let records = SyntheticRecords.heartRate(count: 250)
        let h = try await Harness.start(records: records, backend: backend)
        #expect(await h.waitForCaughtUp())
        #expect(await h.log.waitForCaughtUp())
        let backoffs = h.log.all.compactMap { e -> (Int?, Bool)? in
            if case let .backingOff(_, status, _, honoured, _) = e { (status, honoured) } else { nil }
        }
        #expect(backoffs.count == 3)
        #expect(backoffs.allSatisfy { $0.0 == 500 && !$0.1 })
        #expect(backend.store.records.count == 250)
        let status = await h.engine.status
        #expect(status.consecutiveFailures == 0)
        #expect(status.lastErrors.count == 3)
        #expect(status.lastErrors.allSatisfy { $0.category == .backend && $0.httpStatus == 500 })
        await h.finish()
    }

    @Test("429 with Retry-After: the next attempt waits at least that long")
    func retryAfterIsHonoured() async throws {
        let backend = try TestBackend(.init(token: Harness.token))
        try await backend.start()
        backend.faults.add(.status(429, retryAfter: "2", count: 1))
        let h = try await Harness.start(records: SyntheticRecords.heartRate(count: 10), backend: backend)
        #expect(await h.waitForCaughtUp())
        let backoff = h.log.all.compactMap { e -> (Duration, Bool, ContinuousClock.Instant)? in
            if case let .backingOff(_, 429?, delay, honoured, at) = e { (delay, honoured, at) } else { nil }
        }
        #expect(backoff.count == 1)
        #expect(backoff.first?.0 == .seconds(2))
        #expect(backoff.first?.1 == true)
        // At the backend: the retry arrived no sooner than Retry-After after the 429.
        let requests = backend.store.requests.filter { $0.path == "/api/v1/metrics" }
        #expect(requests.map(\.status) == [429, 200])
        if requests.count == 2 { #expect(requests[1].at - requests[0].at >= .milliseconds(1_950)) }
        await h.finish()
    }

    @Test("503 with Retry-After as an HTTP-date is honoured too")
    func retryAfterDate() async throws {
        let backend = try TestBackend(.init(token: Harness.token))
        try await backend.start()
        // A whole second (HTTP-dates have no fractions) 5 to 6 s ahead: later than any
        // backoff the engine would choose by itself after one 503.
        let date = UTCTimestamp(millisecondsSince1970: (UTCTimestamp.now.millisecondsSince1970 / 1000 + 6) * 1000)
        backend.faults.add(.status(503, retryAfter: RetryAfter.httpDate(date), count: 1))
        let h = try await Harness.start(records: SyntheticRecords.heartRate(count: 5), backend: backend)
        #expect(await h.waitForCaughtUp())
        let honoured = h.log.all.contains { if case .backingOff(_, 503?, _, true, _) = $0 { true } else { false } }
        #expect(honoured)
        let requests = backend.store.requests.filter { $0.path == "/api/v1/metrics" }
        #expect(requests.map(\.status) == [503, 200])
        // The retry waited for the date (by the wall clock, as the date is given): the
        // records cannot be through before it, however long the start-up took.
        #expect(UTCTimestamp.now.millisecondsSince1970 >= date.millisecondsSince1970 - 50)
        await h.finish()
    }

    @Test("413 splits the batch until it fits; a single oversized record is quarantined")
    func payloadTooLargeSplits() async throws {
        let backend = try TestBackend(.init(token: Harness.token))
        try await backend.start()
        backend.faults.add(.maxBatch(30))
        let records = SyntheticRecords.heartRate(count: 200, devices: 4)
        let h = try await Harness.start(records: records, backend: backend, batchSize: 100)
        #expect(await h.waitForCaughtUp())
        #expect(backend.store.records.count == 200)
        #expect(devicesInOrder(backend.store.records))
        let accepted = backend.store.requests.filter { $0.status == 200 }.compactMap(\.items)
        #expect(accepted.allSatisfy { $0 <= 30 })
        #expect(h.log.all.contains { if case .split(100) = $0 { true } else { false } })

        backend.faults.clear()
        backend.faults.add(.maxBatch(0))
        await h.outbox.append(SyntheticRecords.heartRate(count: 1, firstSequence: 1_000))
        await h.engine.wake()
        #expect(await h.log.wait { $0.contains { if case .quarantined = $0 { true } else { false } } })
        let quarantined = await h.outbox.quarantined
        #expect(quarantined.count == 1)
        #expect(quarantined.first?.reason.contains("413") == true)
        await h.finish()
    }

    @Test("an answer whose counts do not add up to the batch: the batch is sent again, and marked delivered once it adds up")
    func miscountedAnswerResends() async throws {
        let backend = try TestBackend(.init(token: Harness.token))
        try await backend.start()
        backend.faults.add(.miscount(count: 1))
        let records = SyntheticRecords.heartRate(count: 30)
        let h = try await Harness.start(records: records, backend: backend, batchSize: 100)
        #expect(await h.waitForCaughtUp())
        // The same 30 went twice: stored once, the second answer counting them as duplicates.
        let posts = backend.store.requests.filter { $0.path == "/api/v1/metrics" && $0.status == 200 }
        #expect(posts.compactMap(\.items) == [30, 30])
        #expect(backend.store.records.count == 30)
        #expect(await h.outbox.deliveryMarks.count == 30)
        #expect(await h.outbox.deliveryMarks.values.allSatisfy { $0 == 1 })
        let errors = h.log.all.compactMap { if case let .backingOff(error, _, _, _, _) = $0 { error } else { nil } }
        #expect(errors.contains { $0.contains("accounted for 29 of 30 records; sending them again") }, "\(errors)")
        #expect(await h.log.wait { _ in h.log.reports.contains { $0.duplicates == 30 } })
        let status = await h.engine.status
        #expect(status.delivered == 30)
        #expect(status.lastErrors.contains { $0.message.contains("accounted for 29 of 30") })
        await h.finish()
    }

    @Test("401 stops syncing and says so; a new token file resumes it")
    func unauthorizedUntilTokenChanges() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let file = dir.write("token", "wrong-token\n")
        let records = SyntheticRecords.heartRate(count: 40)
        let clock = ManualClock()
        let h = try await Harness.start(records: records, token: TokenStore(file: file), clock: clock)
        #expect(await h.log.wait { $0.contains { if case .unauthorized = $0 { true } else { false } } })
        let status = await h.engine.status
        guard case let .unauthorized(reason) = status.state else {
            Issue.record("state is \(status.state), not unauthorized")
            await h.finish()
            return
        }
        #expect(reason.contains("refused the token"))
        #expect(reason.contains(file))
        #expect(!reason.contains("wrong-token"))
        #expect(status.lastErrors.allSatisfy { !$0.message.contains("wrong-token") })
        // It stays paused: five intervals later, each ended by the engine going back to
        // sleep, nothing more was sent.
        for _ in 0..<5 {
            #expect(await eventually(timeout: 30, every: .milliseconds(10)) { clock.sleepers == 1 })
            clock.advance(by: .milliseconds(200))
        }
        #expect(await eventually(timeout: 30, every: .milliseconds(10)) { clock.sleepers == 1 })
        #expect(h.backend.store.requests.filter { $0.path == "/api/v1/metrics" }.count == 1)
        #expect(await h.outbox.pendingCount == 40)

        dir.write("token", Harness.token + "\n")
        clock.advance(by: .milliseconds(200))
        #expect(await h.waitForCaughtUp())
        #expect(h.backend.store.records.count == 40)
        #expect(h.log.all.contains { if case .tokenReloaded = $0 { true } else { false } })
        await h.finish()
    }

    @Test("reloadToken() resumes at once after the token is fixed")
    func reloadTokenResumes() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let file = dir.write("token", "stale")
        let h = try await Harness.start(records: SyntheticRecords.heartRate(count: 5), token: TokenStore(file: file),
                                        interval: .seconds(3600))
        #expect(await h.log.wait { $0.contains { if case .unauthorized = $0 { true } else { false } } })
        dir.write("token", Harness.token)
        await h.engine.reloadToken()
        #expect(await h.waitForCaughtUp())
        await h.finish()
    }

    @Test("a missing or world-readable token file is a config error, not a crash")
    func badTokenFile() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let file = dir.write("token", Harness.token, mode: 0o644)
        let h = try await Harness.start(records: SyntheticRecords.heartRate(count: 3), token: TokenStore(file: file),
                                        interval: .milliseconds(100))
        #expect(await h.log.wait { $0.contains { if case .unauthorized = $0 { true } else { false } } })
        let status = await h.engine.status
        #expect(status.lastErrors.first?.category == .config)
        #expect(status.lastErrors.first?.message.contains("chmod 600") == true)
        #expect(h.backend.store.requests.isEmpty)
        dir.write("token", Harness.token, mode: 0o600)
        #expect(await h.waitForCaughtUp())
        await h.finish()
    }

    @Test("outage (listener closed): records pile up, then all arrive once, in order")
    func outageThenRecovery() async throws {
        let records = SyntheticRecords.heartRate(count: 600, devices: 5)
        let h = try await Harness.start(records: Array(records[..<200]))
        #expect(await h.waitForCaughtUp())
        await h.backend.outage(for: .seconds(2))
        #expect(await !h.backend.isListening)
        await h.outbox.append(Array(records[200...]))
        await h.engine.wake()
        #expect(await h.log.wait { events in
            events.contains { if case .backingOff(_, nil, _, _, _) = $0 { true } else { false } }
        })
        let status = await h.engine.status
        // Connections cut by the outage may fail first; a refused one must be among them.
        #expect(status.lastErrors.contains { $0.message.contains("unreachable") }, "\(status.lastErrors)")
        #expect(await h.waitForCaughtUp(timeout: 60))
        let stored = h.backend.store.records
        #expect(stored.count == 600)
        #expect(Set(stored.map(\.id)).count == 600)
        #expect(devicesInOrder(stored))
        await h.finish()
    }

    @Test("per-device order survives splits, rejections and errors")
    func orderUnderFaults() async throws {
        let backend = try TestBackend(.init(token: Harness.token))
        try await backend.start()
        backend.faults.add(.maxBatch(70, count: 3))
        backend.faults.add(.status(503, count: 2))
        var records = SyntheticRecords.heartRate(count: 1_500, devices: 9)
        for i in stride(from: 13, to: 1_500, by: 97) { records[i].change { $0.deviceID = "" } }
        let h = try await Harness.start(records: records, backend: backend, batchSize: 250)
        #expect(await h.waitForCaughtUp())
        let stored = backend.store.records
        let quarantined = await h.outbox.quarantined.count
        #expect(stored.count + quarantined == 1_500)
        #expect(devicesInOrder(stored))
        // Global order too: the backend saw sequence numbers (encoded in the ids) ascending.
        #expect(stored.map(\.id) == stored.map(\.id).sorted())
        await h.finish()
    }

    @Test("a slow backend beyond the request timeout is retried, and nothing is lost")
    func slowBackend() async throws {
        let backend = try TestBackend(.init(token: Harness.token))
        try await backend.start()
        backend.faults.add(.delay(.seconds(3), count: 1))
        let outbox = InMemoryOutbox(SyntheticRecords.heartRate(count: 50))
        let client = try BackendClient(baseURL: backend.baseURL, token: TokenStore(token: Harness.token),
                                       requestTimeout: .seconds(1), connectTimeout: .seconds(1))
        let engine = SyncEngine(outbox: outbox, client: client,
                                configuration: SyncConfiguration(gatewayID: "g", interval: .milliseconds(100),
                                                                 backoff: Backoff(base: .milliseconds(50), cap: .milliseconds(200))))
        let log = EventLog(engine.events())
        let run = Task { try await engine.run() }
        #expect(await backend.waitForRecords(50, timeout: .seconds(30)))
        #expect(await log.wait { $0.contains { if case .caughtUp = $0 { true } else { false } } })
        let timedOut = await engine.status.lastErrors.contains { $0.message.contains("did not answer within") }
        #expect(timedOut)
        await engine.stop()
        _ = try? await run.value
        try await client.shutdown()
        await backend.stop()
    }

    @Test("a storage error is reported with category storage and retried")
    func storageError() async throws {
        let outbox = InMemoryOutbox(SyntheticRecords.heartRate(count: 10))
        await outbox.failNext(1)
        let h = try await Harness.start(outbox: outbox)
        #expect(await h.waitForCaughtUp())
        #expect(await h.engine.status.lastErrors.first?.category == .storage)
        #expect(h.backend.store.records.count == 10)
        await h.finish()
    }

    @Test("drain delivers what is pending, then run() returns")
    func drainThenStop() async throws {
        let records = SyntheticRecords.heartRate(count: 400)
        let backend = try TestBackend(.init(token: Harness.token))
        try await backend.start()
        let outbox = InMemoryOutbox(records)
        let client = try BackendClient(baseURL: backend.baseURL, token: TokenStore(token: Harness.token))
        let engine = SyncEngine(outbox: outbox, client: client,
                                configuration: SyncConfiguration(gatewayID: "g", batchSize: 50, interval: .seconds(3600),
                                                                 drainTimeout: .seconds(60)))
        await engine.drain()
        try await engine.run()
        #expect(backend.store.records.count == 400)
        #expect(await engine.status.state == .stopped)
        try await client.shutdown()
        await backend.stop()
    }

    @Test("the drain's deadline is on the engine's clock")
    func drainDeadlineOnInjectedClock() async throws {
        let backend = try TestBackend(.init(token: Harness.token))
        try await backend.start()
        let client = try BackendClient(baseURL: backend.baseURL, token: TokenStore(token: Harness.token))
        let clock = ManualClock()
        let engine = SyncEngine(outbox: InMemoryOutbox(SyntheticRecords.heartRate(count: 100)), client: client,
                                configuration: SyncConfiguration(gatewayID: "g", batchSize: 50, interval: .seconds(3600),
                                                                 drainTimeout: .seconds(10)),
                                clock: clock)
        await engine.drain()
        // The drain's time is up on the engine's clock before its first pass: nothing is sent.
        clock.advance(by: .seconds(11))
        try await engine.run()
        #expect(backend.store.records.isEmpty)
        #expect(await engine.status.state == .stopped)
        try await client.shutdown()
        await backend.stop()
    }
}


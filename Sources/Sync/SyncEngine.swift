// SPDX-License-Identifier: MIT
import Logging
import Outbox
import ServiceLifecycle
import Synchronization
import WearMetrics
import Timing

/// Moves records from the outbox to the backend, one request at a time, oldest first.
///
/// One request in flight keeps each device's records in measurement order at the backend
/// (the outbox hands them out in insertion order; a failed batch is retried whole before
/// anything newer goes). Nothing is forgotten on failure: a record stays pending until the
/// backend has answered for it, so a crash or outage only means a replay, which the backend
/// de-duplicates by record id. Retry policy by status: docs/sync.md.
///
/// As a `Service`, `run()` ends on graceful shutdown after delivering what it can within
/// `drainTimeout`, or at once on cancellation.
public actor SyncEngine: Service {
    private let outbox: any SyncOutbox
    private let documents: (any DocumentOutbox)?
    private let client: BackendClient
    public nonisolated let configuration: SyncConfiguration
    private let logger: Logger
    private let clock: any Clock<Duration>
    /// Time on `clock` since the engine was made: deadlines and request durations.
    private let elapsed: @Sendable () -> Duration

    private var current: SyncStatus
    private var stopRequested = false
    /// When the drain gives up, in `elapsed` time.
    private var drainDeadline: Duration?
    private var wakeRequested = false
    private var tokenReloadRequested = false
    private var sleeper: Task<Void, Never>?
    private var pauseKind: PauseKind?
    /// Pending records and documents as last counted, less what was settled since.
    private var depth: Int?
    /// A `PUT` of workouts was answered 404/405: corrections go by `POST` from then on.
    private var backendRefusesPut = false
    private let subscribers = Mutex<(next: Int, continuations: [Int: AsyncStream<SyncEvent>.Continuation])>((0, [:]))

    private enum PauseKind { case idle, backoff, unauthorized }

    /// `documents`: workouts and profile metrics to deliver besides the records (the cache
    /// is both outboxes); nil sends records only.
    /// `clock` paces the waits between passes (interval, backoff, a refused token); tests
    /// pass one they advance themselves.
    public init(outbox: any SyncOutbox, documents: (any DocumentOutbox)? = nil, client: BackendClient,
                configuration: SyncConfiguration, logger: Logger = Logger(label: "blegate.sync"),
                clock: any Clock<Duration> = ContinuousClock()) {
        self.clock = clock
        self.elapsed = Self.stopwatch(clock)
        self.outbox = outbox
        self.documents = documents
        self.client = client
        self.configuration = configuration
        self.logger = logger
        self.current = SyncStatus(endpoint: configuration.sink == .wearmetrics ? client.metricsURL : client.samplesURL)
    }

    private static func stopwatch<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }

    /// The current snapshot for `blegate status`.
    public var status: SyncStatus { current }

    /// Every event from now on, until `run()` returns. Each call is a separate subscription.
    public nonisolated func events() -> AsyncStream<SyncEvent> {
        let (stream, continuation) = AsyncStream<SyncEvent>.makeStream(bufferingPolicy: .unbounded)
        // Removed by `emit` once its consumer has gone, not by an onTermination that
        // takes the lock it yields under: a consumer's cancellation runs onTermination
        // holding its task's status lock, which the yield may need (lock inversion).
        subscribers.withLock { s in
            s.continuations[s.next] = continuation
            s.next += 1
        }
        return stream
    }

    /// New records are in the outbox: sync now instead of at the next interval. Ignored
    /// while backing off, so a stream of new records cannot hammer a failing backend.
    public func wake() {
        if pauseKind == .idle { sleeper?.cancel() } else { wakeRequested = true }
    }

    /// Read the token file again and, if unauthorized, try again with it.
    public func reloadToken() {
        tokenReloadRequested = true
        if pauseKind == .unauthorized || pauseKind == .idle { sleeper?.cancel() }
    }

    /// Finish the request in flight and return from `run()`.
    public func stop() {
        stopRequested = true
        sleeper?.cancel()
    }

    /// Deliver what is pending (for at most `drainTimeout`), then return from `run()`.
    /// A failure ends the drain at once: the records are safe in the cache.
    public func drain() {
        if drainDeadline == nil { drainDeadline = elapsed() + configuration.drainTimeout }
        sleeper?.cancel()
    }

    // MARK: Loop

    public func run() async throws {
        let loop = Task { await self.loop() }
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await loop.value
            } onGracefulShutdown: {
                Task {
                    await self.drain()
                    // A pass still under way when the drain's time is up (a backend that
                    // trickles its answer) is cut short, so a stop never waits for the
                    // request timeout: what it carried stays pending in the cache.
                    try? await self.clock.sleep(for: self.configuration.drainTimeout, tolerance: nil)
                    loop.cancel()
                }
            }
        } onCancel: {
            loop.cancel()
        }
    }

    private var shouldStop: Bool {
        stopRequested || Task.isCancelled || drainDeadline.map { elapsed() >= $0 } ?? false
    }

    private var draining: Bool { drainDeadline != nil }

    private func loop() async {
        logger.info("sync started", metadata: ["endpoint": "\(current.endpoint)", "sink": "\(configuration.sink.rawValue)",
                                                "batch_size": "\(configuration.batchSize)"])
        if client.token.path != nil { loadToken() }
        while !shouldStop {
            if case .unauthorized = current.state {
                if tokenReloadRequested || client.token.fileChanged() {
                    tokenReloadRequested = false
                    if !loadToken() { await pause(configuration.interval, .unauthorized) }
                } else if draining {
                    break
                } else {
                    await pause(configuration.interval, .unauthorized)
                }
                continue
            }
            if tokenReloadRequested {
                tokenReloadRequested = false
                loadToken()
                continue
            }
            switch await syncPass() {
            case .caughtUp:
                current.state = .idle
                emit(.caughtUp)
                if !draining { await pause(configuration.interval, .idle) }
            case let .failed(message, status, retryAfter):
                current.consecutiveFailures += 1
                guard !draining else { break }
                // Retry-After: 0 over and over must not become a busy loop on a Pi.
                let delay = retryAfter.map { min(max($0, .milliseconds(100)), configuration.maximumRetryAfter) }
                    ?? configuration.backoff.delay(afterFailures: current.consecutiveFailures)
                current.state = .backingOff(until: UTCTimestamp.now.adding(delay), reason: message)
                logger.warning("sync failed, retrying", metadata: ["error": "\(message)", "retry_in": "\(delay.readable)",
                                                                  "failures": "\(current.consecutiveFailures)"])
                emit(.backingOff(error: message, status: status, delay: delay, honouredRetryAfter: retryAfter != nil, at: .now))
                await pause(delay, .backoff)
            case let .unauthorized(message):
                current.state = .unauthorized(reason: message)
                logger.error("sync paused: token refused", metadata: ["error": "\(message)"])
                emit(.unauthorized(message))
            case .stopped:
                break
            }
            // A drain is one pass: what could not be sent now stays in the cache.
            if draining { break }
        }
        current.state = .stopped
        logger.info("sync stopped")
        emit(.stopped)
        // Finish outside the lock: finishing resumes waiting consumers.
        let ending = subscribers.withLock { s in
            defer { s.continuations.removeAll() }
            return Array(s.continuations.values)
        }
        for c in ending { c.finish() }
    }

    /// Reads the token file; on failure the engine is unauthorized until the file changes.
    @discardableResult
    private func loadToken() -> Bool {
        do {
            try client.token.reload()
            if case .unauthorized = current.state {
                current.state = .idle
                current.consecutiveFailures = 0
                logger.info("token reloaded, sync resumes")
            }
            emit(.tokenReloaded)
            return true
        } catch {
            current.record(SyncErrorEntry(at: UTCTimestamp.now, category: .config, message: error.message))
            current.state = .unauthorized(reason: error.message)
            logger.error("cannot read the backend token", metadata: ["error": "\(error.message)"])
            emit(.unauthorized(error.message))
            return false
        }
    }

    private func pause(_ duration: Duration, _ kind: PauseKind) async {
        if kind == .idle, wakeRequested { wakeRequested = false; return }
        if kind != .backoff, tokenReloadRequested { return }
        guard !shouldStop, duration > .zero else { return }
        let sleep = Task<Void, Never> { [clock] in _ = try? await clock.sleep(for: duration) }
        sleeper = sleep
        pauseKind = kind
        await withTaskCancellationHandler { await sleep.value } onCancel: { sleep.cancel() }
        sleeper = nil
        pauseKind = nil
        if kind == .idle { wakeRequested = false }
    }

    // MARK: Delivery

    private enum Outcome {
        case caughtUp
        case failed(String, status: Int?, retryAfter: Duration?)
        case unauthorized(String)
        case stopped
    }

    /// Sends batches until nothing is pending or something fails. Each round sends one
    /// batch of records and then one batch of each document kind, so a long record backlog
    /// (catching up after an outage) does not hold workouts back, nor the other way round.
    private func syncPass() async -> Outcome {
        depth = await readDepth()
        while true {
            if shouldStop { return .stopped }
            var sent = false
            let batch: [OutboxRecord]
            do {
                batch = try await outbox.pendingBatch(limit: configuration.batchSize)
            } catch {
                return storageFailure("cannot read pending records from the cache: \(error)")
            }
            if !batch.isEmpty {
                sent = true
                current.state = .syncing
                if let failure = await deliverRecords(batch[...]) { return failure }
                current.consecutiveFailures = 0
            }
            if let documents {
                for kind in DocumentKind.allCases {
                    if shouldStop { return .stopped }
                    let pending: [OutboxDocument]
                    do {
                        pending = try await documents.pendingDocuments(kind: kind, limit: configuration.batchSize)
                    } catch {
                        return storageFailure("cannot read pending \(kind.plural) from the cache: \(error)")
                    }
                    if pending.isEmpty { continue }
                    sent = true
                    current.state = .syncing
                    if let failure = await deliverDocuments(pending, documents: documents) { return failure }
                    current.consecutiveFailures = 0
                }
            }
            if !sent { return .caughtUp }
        }
    }

    /// Pending records and documents, for `Blegate-Outbox-Depth`; nil without a document
    /// outbox (which knows the count) or when the cache cannot say.
    private func readDepth() async -> Int? {
        guard let documents else { return nil }
        return try? await documents.outboxDepth()
    }

    private func settled(_ count: Int) {
        depth = depth.map { max(0, $0 - count) }
    }

    private func deliverRecords(_ records: ArraySlice<OutboxRecord>) async -> Outcome? {
        await deliver(records, endpoint: current.endpoint, attempt: { batch, started throws(BackendError) in
            switch configuration.sink {
            case .wearmetrics:
                let result = try await client.postMetrics(gatewayID: configuration.gatewayID, records: Array(batch), outboxDepth: depth)
                return await settle(batch, result: result, started: started)
            case .samples:
                return try await deliverSamples(batch, started: started)
            }
        }, quarantineAlone: { record, reason in
            await quarantine([OutboxRejection(id: record.id, reason: reason)])
        })
    }

    /// Workouts at revision 1 go by `POST`, later revisions (corrections) by `PUT`; a backend
    /// without `PUT` (404/405) gets them by `POST` instead, so one it never received is still
    /// inserted, and one it holds comes back as a duplicate: the correction is dropped, which
    /// is logged once.
    private func deliverDocuments(_ pending: [OutboxDocument], documents: any DocumentOutbox) async -> Outcome? {
        let kind = pending[0].kind
        let corrections = kind == .workout && !backendRefusesPut ? pending.filter { $0.revision > 1 } : []
        let fresh = corrections.isEmpty ? pending : pending.filter { $0.revision <= 1 }
        if !fresh.isEmpty, let failure = await deliver(fresh[...], kind: kind, replace: false, documents: documents) { return failure }
        if !corrections.isEmpty, let failure = await deliver(corrections[...], kind: kind, replace: true, documents: documents) {
            return failure
        }
        return nil
    }

    private func deliver(_ items: ArraySlice<OutboxDocument>, kind: DocumentKind, replace: Bool,
                         documents: any DocumentOutbox) async -> Outcome? {
        let endpoint = client.documentsURL(kind)
        return await deliver(items, endpoint: endpoint, attempt: { batch, started throws(BackendError) in
            let result: MetricsResult
            do throws(BackendError) {
                result = try await client.postDocuments(gatewayID: configuration.gatewayID, kind: kind, documents: Array(batch),
                                                        replace: replace, outboxDepth: depth)
            } catch {
                guard replace, error.kind == .notFound || error.kind == .methodNotAllowed else { throw error }
                backendRefusesPut = true
                logger.warning("backend does not accept workout corrections", metadata: ["endpoint": "\(endpoint)", "status": "\(error.status ?? 0)"])
                return await deliver(batch, kind: kind, replace: false, documents: documents)
            }
            return await settle(batch, result: result, started: started, endpoint: endpoint, documents: documents)
        }, quarantineAlone: { document, reason in
            await quarantine(kind: kind, [DocumentRejection(id: document.id, revision: document.revision, reason: reason)], documents: documents)
        })
    }

    /// Sends `items` with `attempt` (splitting on 413 down to single items, which
    /// `quarantineAlone` then sets aside); nil when every item is settled.
    private func deliver<Item: Sendable>(_ items: ArraySlice<Item>, endpoint: String,
                               attempt: (ArraySlice<Item>, Duration) async throws(BackendError) -> Outcome?,
                               quarantineAlone: (Item, String) async -> Outcome?) async -> Outcome? {
        let started = elapsed()
        do throws(BackendError) {
            return try await attempt(items, started)
        } catch {
            report(items.count, status: error.status, started: started, endpoint: endpoint, error: error.message)
            switch error.kind {
            case .payloadTooLarge:
                if items.count == 1 {
                    return await quarantineAlone(items[items.startIndex], "too large for the backend even on its own (413)")
                }
                emit(.split(records: items.count))
                logger.notice("backend refused the batch as too large, splitting", metadata: ["items": "\(items.count)", "endpoint": "\(endpoint)"])
                let middle = items.startIndex + items.count / 2
                if let failure = await deliver(items[..<middle], endpoint: endpoint, attempt: attempt, quarantineAlone: quarantineAlone) {
                    return failure
                }
                return await deliver(items[middle...], endpoint: endpoint, attempt: attempt, quarantineAlone: quarantineAlone)
            case .tokenRefused:
                current.record(SyncErrorEntry(at: UTCTimestamp.now, category: .backend, message: error.message, httpStatus: error.status))
                return .unauthorized(error.message)
            default:
                current.record(SyncErrorEntry(at: UTCTimestamp.now, category: .backend, message: error.message, httpStatus: error.status))
                return .failed(error.message, status: error.status, retryAfter: error.retryAfter)
            }
        }
    }

    private func deliverSamples(_ records: ArraySlice<OutboxRecord>, started: Duration) async throws(BackendError) -> Outcome? {
        var samples: [Sample] = []
        var skipped = 0
        for r in records {
            let s = SampleMapping.samples(for: r)
            if s.isEmpty { skipped += 1 }
            samples += s
        }
        var result = SamplesResult(inserted: 0, duplicates: 0, status: 0)
        if !samples.isEmpty {
            result = try await client.postSamples(samples, outboxDepth: depth)
            guard result.inserted + result.duplicates == samples.count else {
                let message = "backend \(current.endpoint) accounted for \(result.inserted + result.duplicates) of \(samples.count) samples; sending them again"
                throw BackendError(kind: .invalidResponse, endpoint: current.endpoint, status: result.status, message: message)
            }
        }
        do {
            try await outbox.markDelivered(records.map(\.id))
        } catch {
            return storageFailure("cannot mark \(records.count) records delivered in the cache: \(error)")
        }
        current.delivered += records.count
        settled(records.count)
        let r = report(records.count, status: samples.isEmpty ? nil : result.status, started: started, endpoint: current.endpoint,
                       inserted: result.inserted, duplicates: result.duplicates, skipped: skipped)
        emit(.delivered(r, at: .now))
        return nil
    }

    /// Marks what the backend holds, quarantines what it refused.
    private func settle(_ records: ArraySlice<OutboxRecord>, result: MetricsResult, started: Duration) async -> Outcome? {
        let endpoint = current.endpoint
        return await settle(records, id: \.id, result: result, started: started, endpoint: endpoint, what: "records") { rejections, delivered in
            if !rejections.isEmpty { try await outbox.quarantine(rejections.map { $0.rejection }) }
            try await outbox.markDelivered(delivered.map(\.id))
        } counted: { delivered, quarantined in
            current.delivered += delivered
            current.quarantined += quarantined
        }
    }

    private func settle(_ batch: ArraySlice<OutboxDocument>, result: MetricsResult, started: Duration, endpoint: String,
                        documents: any DocumentOutbox) async -> Outcome? {
        let kind = batch[batch.startIndex].kind
        return await settle(batch, id: \.id, result: result, started: started, endpoint: endpoint, what: kind.plural) { rejections, delivered in
            if !rejections.isEmpty {
                try await documents.quarantineDocuments(kind: kind, rejections.map {
                    DocumentRejection(id: $0.item.id, revision: $0.item.revision, reason: $0.rejection.reason)
                })
            }
            try await documents.markDocumentsDelivered(kind: kind, delivered.map(\.mark))
        } counted: { delivered, quarantined in
            current.documentsDelivered[kind, default: 0] += delivered
            current.documentsQuarantined[kind, default: 0] += quarantined
        }
    }

    /// The backend's answer for `items`: counts that do not add up are a failure (the batch is
    /// sent again: harmless, idempotent; losing items is not); otherwise `store` quarantines
    /// the rejected items with their reasons and marks the rest delivered.
    private func settle<Item: Sendable>(_ items: ArraySlice<Item>, id: (Item) -> String, result: MetricsResult, started: Duration,
                              endpoint: String, what: String,
                              store: ([(item: Item, rejection: OutboxRejection)], [Item]) async throws -> Void,
                              counted: (_ delivered: Int, _ quarantined: Int) -> Void) async -> Outcome? {
        var reasons: [String: OutboxRejection] = [:]
        for r in result.rejected where reasons[r.id] == nil { reasons[r.id] = r }
        var rejections: [(item: Item, rejection: OutboxRejection)] = []
        var delivered: [Item] = []
        for item in items {
            if let r = reasons.removeValue(forKey: id(item)) { rejections.append((item, r)) } else { delivered.append(item) }
        }
        guard result.inserted + result.duplicates + rejections.count == items.count else {
            let message = "backend \(endpoint) accounted for \(result.inserted + result.duplicates + rejections.count) of \(items.count) \(what); sending them again"
            report(items.count, status: result.status, started: started, endpoint: endpoint, error: message)
            current.record(SyncErrorEntry(at: UTCTimestamp.now, category: .backend, message: message, httpStatus: result.status))
            return .failed(message, status: result.status, retryAfter: nil)
        }
        do {
            try await store(rejections, delivered)
        } catch {
            return storageFailure("cannot record the backend's answer for \(items.count) \(what) in the cache: \(error)")
        }
        counted(delivered.count, rejections.count)
        settled(items.count)
        if !rejections.isEmpty {
            let list = rejections.map { $0.rejection }
            logger.warning("backend rejected \(what); quarantined", metadata: ["count": "\(list.count)", "endpoint": "\(endpoint)"])
            emit(.quarantined(list))
        }
        let r = report(items.count, status: result.status, started: started, endpoint: endpoint,
                       inserted: result.inserted, duplicates: result.duplicates, rejected: rejections.count)
        emit(.delivered(r, at: .now))
        return nil
    }

    private func quarantine(_ rejections: [OutboxRejection]) async -> Outcome? {
        do {
            try await outbox.quarantine(rejections)
        } catch {
            return storageFailure("cannot quarantine \(rejections.count) records in the cache: \(error)")
        }
        current.quarantined += rejections.count
        settled(rejections.count)
        logger.warning("record quarantined", metadata: ["reason": "\(rejections.first?.reason ?? "")"])
        emit(.quarantined(rejections))
        return nil
    }

    private func quarantine(kind: DocumentKind, _ rejections: [DocumentRejection], documents: any DocumentOutbox) async -> Outcome? {
        do {
            try await documents.quarantineDocuments(kind: kind, rejections)
        } catch {
            return storageFailure("cannot quarantine \(rejections.count) \(kind.plural) in the cache: \(error)")
        }
        current.documentsQuarantined[kind, default: 0] += rejections.count
        settled(rejections.count)
        logger.warning("\(kind.rawValue) quarantined", metadata: ["reason": "\(rejections.first?.reason ?? "")"])
        emit(.quarantined(rejections.map { OutboxRejection(id: $0.id, reason: $0.reason) }))
        return nil
    }

    private func storageFailure(_ message: String) -> Outcome {
        current.record(SyncErrorEntry(at: UTCTimestamp.now, category: .storage, message: message))
        return .failed(message, status: nil, retryAfter: nil)
    }

    @discardableResult
    private func report(_ records: Int, status: Int?, started: Duration, endpoint: String,
                        inserted: Int = 0, duplicates: Int = 0, rejected: Int = 0, skipped: Int = 0, error: String? = nil) -> SyncReport {
        let r = SyncReport(records: records, inserted: inserted, duplicates: duplicates, rejected: rejected, skipped: skipped,
                           duration: elapsed() - started, endpoint: endpoint, httpStatus: status, at: UTCTimestamp.now, error: error)
        current.lastSync = r
        // A pass with nothing the samples sink takes made no request.
        if status != nil || error != nil {
            current.requests.count(status: status, failed: error != nil)
            if error == nil { current.lastSuccessAt = r.at }
        }
        return r
    }

    private func emit(_ event: SyncEvent) {
        subscribers.withLock { s in
            for (id, c) in s.continuations {
                if case .terminated = c.yield(event) { s.continuations[id] = nil }
            }
        }
    }
}

extension DocumentKind {
    /// For messages: "workouts", "profile metrics".
    var plural: String {
        switch self {
        case .workout: "workouts"
        case .profileMetric: "profile metrics"
        }
    }
}

extension UTCTimestamp {
    func adding(_ d: Duration) -> UTCTimestamp {
        UTCTimestamp(millisecondsSince1970: millisecondsSince1970 + Int64((d.seconds * 1000).rounded()))
    }
}

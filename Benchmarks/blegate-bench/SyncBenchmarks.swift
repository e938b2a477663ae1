// SPDX-License-Identifier: MIT
import Logging
import Outbox
import Sync
import TestBackend
import Timing

/// `blegate-bench sync`: records/s from an in-memory outbox through the sync engine to the
/// loopback TestBackend (in this process, so its JSON parsing shares the CPU), and the
/// client-side encode+gzip alone. The catch-up target: a 216,000-record backlog in ≤ 30 s.
enum SyncBenchmarks {
    static func run(_ args: [String]) async throws {
        let count = option(args, "--records").flatMap(Int.init) ?? 216_000
        let batches = option(args, "--batch").map { $0.split(separator: ",").compactMap { Int($0) } } ?? [500, 1000, 5000]
        let sink = option(args, "--sink").flatMap(SyncSink.init(rawValue:)) ?? .wearmetrics
        print("sync: \(count) heart-rate records (30 straps), sink \(sink.rawValue), loopback TestBackend in-process")
        let records = SyntheticRecords.heartRate(count: count, devices: 30)
        for batch in batches {
            try await measure(records, batch: batch, sink: sink)
        }
        try encodeOnly(records)
    }

    static func measure(_ records: [OutboxRecord], batch: Int, sink: SyncSink) async throws {
        let backend = try TestBackend(.init(token: "bench"))
        try await backend.start()
        let outbox = InMemoryOutbox(records)
        let client = try BackendClient(baseURL: backend.baseURL, token: TokenStore(token: "bench"))
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let engine = SyncEngine(outbox: outbox, client: client,
                                configuration: SyncConfiguration(gatewayID: "bench", sink: sink, batchSize: batch,
                                                                 interval: .seconds(3600), drainTimeout: .seconds(3600)),
                                logger: logger)
        // A drain requested before run() makes run() deliver everything and return.
        await engine.drain()
        let clock = ContinuousClock()
        let elapsed = try await clock.measure { try await engine.run() }
        let stored = sink == .wearmetrics ? backend.store.records.count : backend.store.samples.count
        let requests = backend.store.requests.count
        let status = await engine.status
        let seconds = elapsed.seconds
        let rate = Double(records.count) / seconds
        print("  batch \(batch): \(records.count) records in \(round2(seconds)) s = \(Int(rate.rounded())) records/s "
              + "(\(requests) requests, backend holds \(stored), last HTTP \(status.lastSync?.httpStatus.map(String.init) ?? "-"), "
              + "pending \(await outbox.pendingCount))")
        try await client.shutdown()
        await backend.stop()
    }

    /// What the gateway itself spends per record: JSON body + gzip, no network.
    static func encodeOnly(_ records: [OutboxRecord]) throws {
        let clock = ContinuousClock()
        var bytes = 0
        var plain = 0
        let elapsed = try clock.measure {
            var i = 0
            while i < records.count {
                let slice = Array(records[i..<min(i + 1000, records.count)])
                let (p, g) = try MetricsRequest.encodedSizes(gatewayID: "bench", records: slice)
                plain += p
                bytes += g
                i += 1000
            }
        }
        let rate = Double(records.count) / elapsed.seconds
        print("  client encode+gzip only: \(Int(rate.rounded())) records/s; \(plain / records.count) B/record JSON, "
              + "\(bytes / records.count) B/record gzip (ratio \(round2(Double(plain) / Double(max(bytes, 1)))))")
    }

    private static func round2(_ x: Double) -> Double { (x * 100).rounded() / 100 }
}


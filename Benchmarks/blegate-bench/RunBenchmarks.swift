// SPDX-License-Identifier: MIT
import Cache
import Config
import DBus
import Foundation
import GATT
import StrapLinks
import BlegateRun
import Logging
import Simulator
import Sync
import Synchronization
import TestBackend
import WearMetrics
import Timing

/// `blegate-bench catchup`: a real cache holding a backlog (default 60 straps × 1 h =
/// 216,000 records) drained by the sync engine into the loopback TestBackend.
/// `blegate-bench latency`: notification → committed-in-cache through the gateway's own
/// runtime (`GatewayRuntime`, what `blegate run` runs) against the simulator.
enum RunBenchmarks {
    static func catchup(_ args: [String]) async throws {
        let devices = CacheBenchmarks.intOption(args, "--devices") ?? 60
        let seconds = CacheBenchmarks.intOption(args, "--seconds") ?? 3600
        let batches = CacheBenchmarks.stringOption(args, "--batch").map { $0.split(separator: ",").compactMap { Int($0) } } ?? [500, 1000, 5000]
        let directory = NSTemporaryDirectory() + "blegate-bench-catchup-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        print("catch-up: backlog of \(devices * seconds) records (\(devices) straps × \(seconds) s) in a real cache (SQLite, WAL, synchronous=FULL) → sync engine → loopback TestBackend (in this process)")
        for batch in batches {
            let path = "\(directory)/backlog-\(batch).sqlite"
            try await CacheBenchmarks.backlog(["--path", path, "--devices", "\(devices)", "--seconds", "\(seconds)"])
            let cache = try RecordCache(path: path)
            let backend = try TestBackend(.init(token: "bench"))
            try await backend.start()
            let client = try BackendClient(baseURL: backend.baseURL, token: TokenStore(token: "bench"))
            var logger = Logger(label: "bench")
            logger.logLevel = .error
            let engine = SyncEngine(outbox: cache, client: client,
                                    configuration: SyncConfiguration(gatewayID: "bench", batchSize: batch, interval: .seconds(3600),
                                                                     drainTimeout: .seconds(3600)),
                                    logger: logger)
            await engine.drain()
            let cpuBefore = processCPUSeconds()
            let elapsed = try await ContinuousClock().measure { try await engine.run() }
            let cpu = processCPUSeconds() - cpuBefore
            let stats = try await cache.stats()
            let t = elapsed.seconds
            print("  batch \(batch): caught up \(stats.delivered) records in \(CacheBenchmarks.fmt(t, 2)) s = \(Int((Double(stats.delivered) / t).rounded())) records/s; "
                + "backend holds \(backend.store.records.count), \(stats.pending) still pending, \(backend.store.requests.count) requests, "
                + "CPU \(CacheBenchmarks.fmt(cpu, 1)) s (gateway and backend together) (target ≤ 30 s)")
            try await cache.close()
            try await client.shutdown()
            await backend.stop()
        }
    }

    static func latency(_ args: [String]) async throws {
        let straps = CacheBenchmarks.intOption(args, "--straps") ?? 10
        let seconds = CacheBenchmarks.intOption(args, "--seconds") ?? 60
        let rate = Double(CacheBenchmarks.stringOption(args, "--rate") ?? "1") ?? 1
        let commitMs = CacheBenchmarks.intOption(args, "--commit-interval")
            ?? Int(GatewayRuntime.defaultCommitInterval.milliseconds)
        let directory = NSTemporaryDirectory() + "blegate-bench-latency-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        var simConfig = SimulatorConfiguration()
        simConfig.straps = straps
        simConfig.rate = rate
        simConfig.adapters = max(1, (straps + 6) / 7)
        simConfig.seed = 77
        let bus = try PrivateBus.start()
        defer { bus.stop() }
        let sim = try SimulatedBlueZ(configuration: simConfig, bus: bus.busAddress)
        try await sim.start()

        var config = GatewayConfiguration()
        config.gateway.id = "bench"
        config.gateway.stateDirectory = directory
        config.status.socket = directory + "/status.sock"
        let appended = Mutex<[Int64: (device: String, ordinal: Int)]>([:])
        let ordinals = Mutex<[String: Int]>([:])
        let commits = Mutex<[(ClosedRange<Int64>, UInt64)]>([])
        let hooks = RuntimeHooks(
            onAppend: { record, kind, sequence in
                guard kind == .heartRate else { return }
                let n = ordinals.withLock { o -> Int in
                    defer { o[record.deviceID, default: 0] += 1 }
                    return o[record.deviceID, default: 0]
                }
                appended.withLock { $0[sequence] = (record.deviceID, n) }
            },
            onCommit: { event in commits.withLock { $0.append((event.sequences, event.committedAt)) } })
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let runtime = try GatewayRuntime(configuration: config, bus: bus.busAddress, logger: logger, commitInterval: .milliseconds(commitMs), hooks: hooks)
        let running = Task { try await runtime.run(signals: false) }
        print("latency: \(straps) simulated straps at \(rate) Hz for \(seconds) s, group commit interval \(commitMs) ms; simulator → GatewayRuntime (blegate run's services) → cache commit, all in this process")
        try await Task.sleep(for: .seconds(seconds))
        await runtime.shutdown()
        try await running.value
        await sim.stop()

        // The k-th heart-rate record of a device is the k-th well-formed 2A37 payload sent to it.
        var sentAt: [String: [Double]] = [:]
        for r in sim.payloadLog.records() where r.uuid == bluetoothUUID(0x2A37) && !r.malformed { sentAt[r.address] = [] }
        for address in Array(sentAt.keys) {
            let ordered = sim.payloadLog.records(address: address)
                .filter { $0.uuid == bluetoothUUID(0x2A37) && !$0.malformed }
                .sorted { $0.sequence < $1.sequence }
            sentAt[address] = ordered.map(\.monotonicMilliseconds)
        }
        let appendedAll = appended.withLock { $0 }
        var latencies: [Double] = []
        for (range, committedAt) in commits.withLock({ $0 }) {
            for sequence in range {
                guard let a = appendedAll[sequence], let times = sentAt[a.device], a.ordinal < times.count else { continue }
                latencies.append(Double(committedAt) / 1e6 - times[a.ordinal])
            }
        }
        latencies.sort()
        guard !latencies.isEmpty else {
            print("  no heart-rate records committed: nothing to measure")
            return
        }
        func pct(_ p: Double) -> Double { latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
        print("  \(latencies.count) notifications matched (\(appendedAll.count) heart-rate records appended): "
            + "notification → committed p50 \(CacheBenchmarks.fmt(pct(0.5), 1)) ms, p99 \(CacheBenchmarks.fmt(pct(0.99), 1)) ms, "
            + "max \(CacheBenchmarks.fmt(latencies.last!, 1)) ms (target p99 ≤ the commit interval \(commitMs) ms + one transaction)")
    }
}

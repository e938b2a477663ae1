// SPDX-License-Identifier: MIT
import Cache
import Foundation
import GATT
import Normalization
import WearMetrics
import Timing

/// `blegate-bench cache`: cache insert rate (records/s, clear and AES-256-GCM), the
/// caller's cost per `append`, and notification→committed latency p50/p99 at a steady
/// offered rate. `blegate-bench cache-backlog`: writes a catch-up backlog (default 60
/// devices × 1 h at 1 Hz = 216,000 pending records) for the sync benchmark.
enum CacheBenchmarks {
    static func run(_ args: [String]) async throws {
        let records = intOption(args, "--records") ?? 200_000
        let rate = intOption(args, "--rate") ?? 2000
        let seconds = intOption(args, "--seconds") ?? 10
        let directory = NSTemporaryDirectory() + "blegate-bench-cache-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        print("cache benchmark: \(records) records of 60 straps (HR + 2 RR each), SQLite WAL, synchronous=FULL, group commit 250 ms / 1000 records")
        for (label, k) in [("clear", nil), ("AES-256-GCM", key)] as [(String, [UInt8]?)] {
            try await insertRate(path: "\(directory)/insert-\(label).sqlite", records: records, key: k, label: label)
        }
        for (label, k) in [("clear", nil), ("AES-256-GCM", key)] as [(String, [UInt8]?)] {
            try await latency(path: "\(directory)/latency-\(label).sqlite", rate: rate, seconds: seconds, key: k, label: label)
        }
    }

    /// A strap's record as the normalizer makes it.
    static func record(device: Int, second: Int, start: Int64) -> WearMetrics {
        let bpm = UInt16(60 + (device * 7 + second) % 90)
        let rr = [UInt16(1024 * 60 / Int(bpm)), UInt16(1024 * 60 / Int(bpm) + 3)]
        let m = HeartRateMeasurement(flags: 0x16, heartRate: bpm, rrIntervalTicks: rr)
        return WearMetricsNormalizer.record(heartRate: m, deviceID: address(device),
                                            at: UTCTimestamp(millisecondsSince1970: start + Int64(second) * 1000))
    }

    static func address(_ device: Int) -> String {
        "A0:9E:1A:00:" + hex2(device / 256) + ":" + hex2(device % 256)
    }

    static func hex2(_ v: Int) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return s.count == 1 ? "0" + s : s
    }

    static func insertRate(path: String, records n: Int, key: [UInt8]?, label: String) async throws {
        // Every record waits in memory until its commit: the bound that keeps memory flat
        // while the disk is full would drop most of an append this fast.
        let cache = try RecordCache(path: path, options: CacheOptions(encryptionKey: key, maxBufferedRecords: n))
        let start: Int64 = 1_767_238_262_000
        let input = (0..<n).map { record(device: $0 % 60, second: $0 / 60, start: start) }
        let clock = ContinuousClock()
        var appendTime = Duration.zero
        let cpuBefore = processCPUSeconds()
        let total = try await clock.measure {
            // One record per call, as the notification path does.
            appendTime = clock.measure { for r in input { cache.append(r) } }
            try await cache.flush()
        }
        let cpu = processCPUSeconds() - cpuBefore
        let dropped = cache.writeHealth.dropped
        guard dropped == 0 else { throw BenchError("insert \(label): \(dropped) of \(n) records dropped by the memory bound") }
        let rate = Double(n) / total.seconds
        print("  insert \(label): \(n) records in \(fmt(total.seconds, 2)) s = \(Int(rate)) records/s committed; "
            + "append() \(fmt(appendTime.seconds * 1e9 / Double(n), 0)) ns per record on the caller; "
            + "process CPU \(fmt(cpu * 1e6 / Double(n), 1)) µs per record, both threads")
        let stats = try await cache.stats()
        print("    database \(stats.usedBytes / 1_048_576) MiB in use, \(stats.usedBytes / Int64(n)) bytes per record")
        // The sync engine's side: read a batch of 500, mark it delivered, until empty.
        var drained = 0
        let drain = try await clock.measure {
            while true {
                let batch = try await cache.pendingBatch(limit: 500)
                if batch.isEmpty { break }
                try await cache.markDelivered(batch.map(\.id))
                drained += batch.count
            }
        }
        print("    outbox drain \(label): \(drained) records in \(fmt(drain.seconds, 2)) s = \(Int(Double(drained) / drain.seconds)) records/s (pendingBatch 500 + markDelivered)")
        try await cache.close()
    }

    static func latency(path: String, rate: Int, seconds: Int, key: [UInt8]?, label: String) async throws {
        let cache = try RecordCache(path: path, options: CacheOptions(encryptionKey: key))
        let total = rate * seconds
        let appendedAt = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: total + 1)
        defer { appendedAt.deallocate() }
        let latencies = LatencyLog(capacity: total)
        let firstSequence = cache.append(record(device: 0, second: 0, start: 0)) + 1
        try await cache.flush()
        let base = Int(firstSequence)
        let addr = UInt(bitPattern: appendedAt.baseAddress)
        cache.onCommit { event in
            let stamps = UnsafeMutablePointer<UInt64>(bitPattern: addr)!
            for s in event.sequences where Int(s) >= base && Int(s) - base < total {
                latencies.add(event.committedAt &- stamps[Int(s) - base])
            }
        }
        // Pace in 10 ms ticks, like notifications spread over 60 straps.
        let start: Int64 = 1_767_238_262_000
        let t0 = MonotonicClock.nanoseconds()
        var sent = 0
        while sent < total {
            let due = Int(Double(MonotonicClock.nanoseconds() - t0) / 1e9 * Double(rate)) + 1
            while sent < min(due, total) {
                let r = record(device: sent % 60, second: sent / 60, start: start)
                appendedAt[sent] = MonotonicClock.nanoseconds()
                cache.append(r)
                sent += 1
            }
            usleep(2000)
        }
        try await cache.flush()
        cache.onCommit(nil)
        let values = latencies.sorted()
        guard !values.isEmpty else { print("  latency \(label): no commits observed"); return }
        func pct(_ p: Double) -> Double { Double(values[min(values.count - 1, Int(Double(values.count) * p))]) / 1e6 }
        print("  append→committed \(label) at \(rate)/s for \(seconds) s: p50 \(fmt(pct(0.5), 1)) ms, p99 \(fmt(pct(0.99), 1)) ms, "
            + "max \(fmt(Double(values.last!) / 1e6, 1)) ms (\(values.count) records)")
        try await cache.close()
    }

    /// `blegate-bench cache-backlog --path FILE [--devices 60] [--seconds 3600] [--key-file K]`
    static func backlog(_ args: [String]) async throws {
        guard let path = stringOption(args, "--path") else {
            print("usage: blegate-bench cache-backlog --path FILE [--devices 60] [--seconds 3600] [--key-file FILE]")
            return
        }
        let devices = intOption(args, "--devices") ?? 60
        let seconds = intOption(args, "--seconds") ?? 3600
        var key: [UInt8]?
        if let keyFile = stringOption(args, "--key-file") {
            let data = try Data(contentsOf: URL(fileURLWithPath: keyFile))
            key = Array(data.prefix(32))
        }
        // Every record may wait in memory: the backlog is appended far faster than any
        // writer commits, and the default bound would drop most of it.
        let cache = try RecordCache(path: path, options: CacheOptions(encryptionKey: key, maxBufferedRecords: devices * seconds))
        let start = UTCTimestamp.now.millisecondsSince1970 - Int64(seconds) * 1000
        let clock = ContinuousClock()
        let elapsed = try await clock.measure {
            for s in 0..<seconds {
                cache.append((0..<devices).map { record(device: $0, second: s, start: start) })
            }
            try await cache.flush()
        }
        let stats = try await cache.stats()
        print("backlog: \(devices * seconds) records (\(devices) devices × \(seconds) s at 1 Hz) written to \(path) in \(fmt(elapsed.seconds, 2)) s; "
            + "\(stats.pending) pending, \(stats.usedBytes / 1_048_576) MiB")
        try await cache.close()
    }

    static func fmt(_ v: Double, _ decimals: Int) -> String { String(format: "%.\(decimals)f", v) }

    static func intOption(_ args: [String], _ name: String) -> Int? {
        guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
        return Int(args[i + 1])
    }

    static func stringOption(_ args: [String], _ name: String) -> String? {
        guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
        return args[i + 1]
    }
}

/// User + system CPU seconds of this process so far.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

/// Latencies collected on the cache's writer thread.
final class LatencyLog: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [UInt64]

    init(capacity: Int) { values = []; values.reserveCapacity(capacity) }
    func add(_ v: UInt64) { lock.lock(); values.append(v); lock.unlock() }
    func sorted() -> [UInt64] { lock.lock(); defer { lock.unlock() }; return values.sorted() }
}



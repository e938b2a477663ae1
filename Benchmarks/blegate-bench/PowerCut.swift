// SPDX-License-Identifier: MIT
import Cache
import Foundation
import Outbox
import Timing
import WearMetrics
#if canImport(Glibc)
import Glibc
#endif

/// The two halves of the power-cut test (scripts/powercut-vm.sh): a writer that appends
/// records and delivers them like `blegate run` until the power goes, logging every
/// commit and every recorded delivery as acknowledged; and a checker that opens what the
/// disk kept and compares it with those acknowledgements.
enum PowerCut {
    /// `powercut-writer --path DB --log FILE [--interval-ms 1000]`: the log (on a disk that
    /// keeps its data) gets "A <last sequence> <ms>" after each batch of appends,
    /// "C <last sequence> <ms>" after each commit event, "S <id>" before a record is sent
    /// and "D <id>" once `markDelivered` has returned (ms: the monotonic clock), so the
    /// checker can tell how long before the cut each lost record was appended.
    static func writer(_ args: [String]) async throws {
        guard let path = CacheBenchmarks.stringOption(args, "--path"), let logPath = CacheBenchmarks.stringOption(args, "--log") else {
            print("usage: blegate-bench powercut-writer --path DB --log FILE [--interval-ms 1000]")
            exit(2)
        }
        let interval = CacheBenchmarks.intOption(args, "--interval-ms") ?? 1000
        let log = AckLog(path: logPath)
        let cache = try RecordCache(path: path, options: CacheOptions(groupCommitInterval: .milliseconds(Int64(interval))))
        cache.onCommit { event in log.write("C \(event.sequences.upperBound) \(MonotonicClock.milliseconds())\n") }
        let delivery = Task {
            while !Task.isCancelled {
                if let batch = try? await cache.pendingBatch(limit: 50), !batch.isEmpty {
                    log.write(batch.map { "S \($0.id)\n" }.joined())
                    try? await cache.markDelivered(batch.map(\.id))
                    log.write(batch.map { "D \($0.id)\n" }.joined())
                }
                try? await Task.sleep(for: .milliseconds(150))
            }
        }
        var i = 0
        while true {
            var last: Int64 = 0
            for d in 0..<30 {
                var metrics = KeyValueList<Double>()
                metrics["hr"] = Double(60 + (i + d) % 100)
                last = cache.append(WearMetrics(timestamp: UTCTimestamp(millisecondsSince1970: 1_767_238_262_000 + Int64(i) * 1000),
                                         deviceID: String(format: "AA:00:00:00:00:%02X", d), source: "ble_hrm",
                                         metrics: metrics, rrIntervals: [812.5, 790.0]))
            }
            log.write("A \(last) \(MonotonicClock.milliseconds())\n")
            i += 1
            try await Task.sleep(for: .milliseconds(100))
        }
        _ = delivery
    }

    /// `powercut-check --path DB --log FILE`: opens the cache as the next start would and
    /// prints one line of figures; exits 1 when a committed record is missing, an
    /// acknowledged delivery is pending again, or the file fails `integrity_check`.
    static func check(_ args: [String]) async throws {
        guard let path = CacheBenchmarks.stringOption(args, "--path"), let logPath = CacheBenchmarks.stringOption(args, "--log") else {
            print("usage: blegate-bench powercut-check --path DB --log FILE")
            exit(2)
        }
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        var committed: Int64 = 0, lastCommitAt: Int64 = 0, cutAt: Int64 = 0
        var appends: [(sequence: Int64, at: Int64)] = []
        var sent = Set<String>(), delivered = Set<String>()
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count >= 2 else { continue }
            let at = parts.count > 2 ? Int64(parts[2]) ?? 0 : 0
            cutAt = max(cutAt, at)
            switch parts[0] {
            case "A": appends.append((Int64(parts[1]) ?? 0, at))
            case "C":
                let sequence = Int64(parts[1]) ?? 0
                if sequence > committed { committed = sequence; lastCommitAt = at }
            case "S": sent.insert(String(parts[1]))
            case "D": delivered.insert(String(parts[1]))
            default: break
            }
        }
        if access(path, F_OK) != 0 {
            // The cut came before the writer had created the cache (a slow start in the VM):
            // a pass when nothing was acknowledged, a loss otherwise.
            print("powercut: no cache file; committed before the cut \(committed), deliveries acknowledged \(delivered.count): \(committed == 0 ? "ok" : "FAILED")")
            exit(committed == 0 ? 0 : 1)
        }
        let cache = try RecordCache(path: path, options: CacheOptions(create: false))
        let integrity = try await cache.integrityCheck()
        var present = Set<Int64>()
        var after: Int64 = 0
        while true {
            let page = try await cache.storedRecords(after: after, limit: 10_000)
            guard let last = page.last else { break }
            for r in page { present.insert(r.sequence) }
            after = last.sequence
        }
        let lost = committed > 0 ? (1...committed).filter { !present.contains($0) }.count : 0
        // Records appended but never acknowledged as committed: the ones kept and the ones
        // the cut took, and how long before the last thing the writer logged (it was frozen
        // at the cut) the oldest lost one was appended. The promise: a cut loses at most
        // what was appended since the last commit began, so that age stays within about
        // one commit interval plus the commit's own time.
        let appended = appends.last?.sequence ?? committed
        let unacknowledged = appended > committed ? Array((committed + 1)...appended) : []
        let lostUnacknowledged = unacknowledged.filter { !present.contains($0) }
        let oldestLostAge: Int64 = lostUnacknowledged.first.flatMap { first in
            appends.first { $0.sequence >= first }.map { cutAt - $0.at }
        } ?? 0
        var pendingIDs = Set<String>()
        for r in try await cache.pendingBatch(limit: 10_000_000) { pendingIDs.insert(r.id) }
        let resentAcknowledged = pendingIDs.intersection(delivered).count
        let resentUnacknowledged = pendingIDs.intersection(sent.subtracting(delivered)).count
        try await cache.close()
        let ok = lost == 0 && resentAcknowledged == 0 && integrity == "ok"
        print("powercut: committed before the cut \(committed), present \(present.count), lost \(lost), "
            + "appended after the last acknowledged commit \(unacknowledged.count) (kept \(unacknowledged.count - lostUnacknowledged.count), "
            + "gone \(lostUnacknowledged.count), the oldest gone appended \(oldestLostAge) ms before the cut; "
            + (lastCommitAt > 0 ? "last commit \(cutAt - lastCommitAt) ms before it), " : "no commit acknowledged yet), ")
            + "deliveries acknowledged \(delivered.count), sent again after acknowledgement \(resentAcknowledged), "
            + "sent without acknowledgement and pending again \(resentUnacknowledged), integrity_check \(integrity): \(ok ? "ok" : "FAILED")")
        exit(ok ? 0 : 1)
    }
}

/// Appends lines to a file with O_APPEND, one write(2) each.
final class AckLog: @unchecked Sendable {
    let fd: Int32
    init(path: String) { fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644) }
    func write(_ s: String) {
        var s = s
        s.withUTF8 { b in _ = Glibc.write(fd, b.baseAddress, b.count) }
    }
}

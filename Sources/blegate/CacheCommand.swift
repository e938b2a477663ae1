// SPDX-License-Identifier: MIT
import ArgumentParser
import Cache
import Config
import GATT
import ScanStreamCommands
import WearMetrics
import Timing

/// `blegate cache stats|export|prune`: look into the gateway's cache, from another
/// process while the gateway runs (SQLite WAL lets readers in beside the writer).
struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect, export and prune the local record cache.",
        discussion: "Exit status: 0 done, 1 cache error, 78 configuration error.",
        subcommands: [CacheStatsCommand.self, CacheExportCommand.self, CachePruneCommand.self]
    )
}

struct CacheStatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stats", abstract: "Record counts, sizes and sync backlog.")

    @OptionGroup var gateway: GatewayOptions

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() async throws {
        let config = try gateway.load()
        let cache = try gateway.openCache(config)
        let stats: CacheStats
        do {
            stats = try await cache.stats()
        } catch {
            printError("blegate cache stats: \(error)")
            throw ExitCode(1)
        }
        let now = UTCTimestamp.now
        print(try json ? JSONOutput.text(CacheStatsFormat.JSONForm(stats, path: cache.path, now: now))
                       : CacheStatsFormat.text(stats, path: cache.path, now: now))
    }
}

struct CacheExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write records measured since a time as JSON lines or CSV.",
        discussion: """
            --since takes an ISO 8601 date or date-time (2026-01-02, 2026-01-02T08:00:00Z), \
            a duration back from now (24h, 7d), or "all". JSON lines hold the WearMetrics \
            record plus id, sequence, client_id, synced and state.
            """
    )

    @OptionGroup var gateway: GatewayOptions

    @Option(help: "Records measured at or after this time.")
    var since: String

    @Option(help: "jsonl or csv.")
    var format: String = "jsonl"

    @Option(help: "Write to FILE (created mode 0600) instead of standard output.")
    var output: String?

    func validate() throws {
        guard ExportFormat(rawValue: format) != nil else { throw ValidationError("--format must be jsonl or csv, got \"\(format)\"") }
        guard ExportSince.parse(since, now: .now) != nil else {
            throw ValidationError("--since must be an ISO 8601 date or date-time (2026-01-02T08:00:00Z), a duration back from now (24h, 7d) or \"all\", got \"\(since)\"")
        }
    }

    func run() async throws {
        let config = try gateway.load()
        let cache = try gateway.openCache(config)
        let start = ExportSince.parse(since, now: .now)!
        do {
            let out = try OutputFile(path: output)
            let n = try await cache.export(since: start, format: ExportFormat(rawValue: format)!) { try out.write($0) }
            try out.close()
            if output != nil { print("exported \(n) records to \(output!)") }
        } catch {
            printError("blegate cache export: \(error)")
            throw ExitCode(1)
        }
    }
}

struct CachePruneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Apply retention now (cache.retention, cache.max_size, cache.delete_unsynced).",
        discussion: "Undelivered records are kept unless cache.delete_unsynced = true."
    )

    @OptionGroup var gateway: GatewayOptions

    @Flag(help: "Report what would be deleted, delete nothing.")
    var dryRun = false

    func run() async throws {
        let config = try gateway.load()
        let cache = try gateway.openCache(config)
        do {
            let r = try await cache.prune(dryRun: dryRun)
            let verb = dryRun ? "would delete" : "deleted"
            print("\(verb) \(r.deleted) records: \(r.deletedByAge) older than \(ConfigDuration.format(config.cache.retention)), "
                + "\(r.deletedBySize) to stay under \(ByteSize.format(config.cache.maxSize))"
                + (r.deletedUnsynced > 0 ? " (\(r.deletedUnsynced) of them undelivered)" : ""))
            print("database: \(ByteSize.format(r.bytesBefore)) → \(ByteSize.format(r.bytesAfter)) in use")
            if r.overLimitWithUnsynced {
                print("still above cache.max_size: what is left is not delivered yet and is kept (cache.delete_unsynced = false)")
            }
        } catch {
            printError("blegate cache prune: \(error)")
            throw ExitCode(1)
        }
    }
}

/// `--since` values.
enum ExportSince {
    static func parse(_ s: String, now: UTCTimestamp) -> UTCTimestamp? {
        if s == "all" { return UTCTimestamp(millisecondsSince1970: .min / 2) }
        if let t = UTCTimestamp(iso8601: s) { return t }
        if let d = ConfigDuration.parse(s) { return UTCTimestamp(millisecondsSince1970: now.millisecondsSince1970 - d.milliseconds) }
        return nil
    }
}

enum CacheStatsFormat {
    /// `blegate cache stats --json`; unknown times are null.
    struct JSONForm: Encodable {
        let s: CacheStats
        let path: String
        let now: UTCTimestamp

        init(_ s: CacheStats, path: String, now: UTCTimestamp) {
            self.s = s
            self.path = path
            self.now = now
        }

        enum Key: String, CodingKey {
            case path, records, pending, unpairedPending = "unpaired_pending", delivered, quarantined
            case oldestPending = "oldest_pending", oldestPendingAgeS = "oldest_pending_age_s", fileBytes = "file_bytes"
            case usedBytes = "used_bytes", encrypted, unpairedPolicy = "unpaired_policy", quarantineReasons = "quarantine_reasons"
            case devices
        }

        struct Reason: Encodable {
            var reason: String
            var count: Int
        }

        struct Device: Encodable {
            var deviceID: String
            var records, pending, delivered, quarantined: Int
            var lastTimestamp: String?

            enum CodingKeys: String, CodingKey {
                case deviceID = "device_id", records, pending, delivered, quarantined, lastTimestamp = "last_timestamp"
            }

            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(deviceID, forKey: .deviceID)
                try c.encode(records, forKey: .records)
                try c.encode(pending, forKey: .pending)
                try c.encode(delivered, forKey: .delivered)
                try c.encode(quarantined, forKey: .quarantined)
                try c.encode(lastTimestamp, forKey: .lastTimestamp)
            }
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(path, forKey: .path)
            try c.encode(s.total, forKey: .records)
            try c.encode(s.pending, forKey: .pending)
            try c.encode(s.unpairedPending, forKey: .unpairedPending)
            try c.encode(s.delivered, forKey: .delivered)
            try c.encode(s.quarantined, forKey: .quarantined)
            try c.encode(s.oldestPending?.iso8601, forKey: .oldestPending)
            try c.encode(s.oldestPendingAge(now: now).map { ($0 * 1000).rounded() / 1000 }, forKey: .oldestPendingAgeS)
            try c.encode(Int(s.fileBytes), forKey: .fileBytes)
            try c.encode(Int(s.usedBytes), forKey: .usedBytes)
            try c.encode(s.encrypted, forKey: .encrypted)
            try c.encode(s.unpairedPolicy.rawValue, forKey: .unpairedPolicy)
            try c.encode(s.quarantineReasons.map { Reason(reason: $0.reason, count: $0.count) }, forKey: .quarantineReasons)
            try c.encode(s.devices.map {
                Device(deviceID: $0.deviceID, records: $0.total, pending: $0.pending, delivered: $0.delivered,
                       quarantined: $0.quarantined, lastTimestamp: $0.lastTimestamp?.iso8601)
            }, forKey: .devices)
        }
    }

    static func text(_ s: CacheStats, path: String, now: UTCTimestamp) -> String {
        var lines = [
            "cache: \(path) (\(ByteSize.format(s.fileBytes)) on disk, \(ByteSize.format(s.usedBytes)) in use\(s.encrypted ? ", payloads encrypted" : ""))",
            "records: \(s.total) total, \(s.pending) pending (\(s.unpairedPending) unpaired, policy \(s.unpairedPolicy.rawValue)), \(s.delivered) delivered, \(s.quarantined) quarantined",
        ]
        if let t = s.oldestPending, let age = s.oldestPendingAge(now: now) {
            lines.append("oldest pending: measured \(LocalTime.text(t)), stored \(formatAge(age)) ago")
        }
        if !s.quarantineReasons.isEmpty {
            lines.append("quarantine reasons:")
            for q in s.quarantineReasons { lines.append("  \(pad(String(q.count), 8, right: true))  \(q.reason)") }
        }
        if !s.devices.isEmpty {
            lines.append("")
            lines.append(pad("DEVICE", 24) + pad("RECORDS", 10, right: true) + pad("PENDING", 10, right: true)
                + pad("DELIVERED", 11, right: true) + pad("QUARANT.", 10, right: true) + "  LAST")
            for d in s.devices {
                lines.append(pad(d.deviceID, 24) + pad(String(d.total), 10, right: true) + pad(String(d.pending), 10, right: true)
                    + pad(String(d.delivered), 11, right: true) + pad(String(d.quarantined), 10, right: true)
                    + "  " + (d.lastTimestamp?.iso8601 ?? "-"))
            }
        }
        return lines.joined(separator: "\n")
    }
}

func formatAge(_ seconds: Double) -> String {
    let s = Int(seconds.rounded())
    if s < 60 { return "\(s)s" }
    if s < 3600 { return "\(s / 60)m \(s % 60)s" }
    if s < 86_400 { return "\(s / 3600)h \(s / 60 % 60)m" }
    return "\(s / 86_400)d \(s / 3600 % 24)h"
}

// SPDX-License-Identifier: MIT
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Cache
import StrapLinks
import Outbox
import Sync
import WearMetrics
import Timing

extension StatusReport {
    /// The report of a gateway that is not running: devices from the registry, the outbox
    /// from the cache now, the last sync and errors as the gateway saved them.
    public static func fromDatabase(cache: RecordCache, gatewayID: String) async throws -> StatusReport {
        let stats = try await cache.stats()
        var report = StatusReport(source: "database", gatewayID: gatewayID, generatedAt: UTCTimestamp.now.iso8601,
                                  cacheFile: cache.path, outbox: outbox(stats))
        try await report.outbox.addDocuments(from: cache)
        report.devices = try await cache.devices().map { d in
            DeviceStatus(address: d.address, name: d.name, adapter: nil, state: "offline", reason: "the gateway is not running", connected: false,
                         lastHeartRate: nil, battery: d.battery.map { Int(($0 * 100).rounded()) }, rssi: nil,
                         reconnects: nil, notifications: nil, malformed: nil, tooFast: nil, oversized: nil, rrDropped: nil, flag: nil,
                         model: d.model, firmware: d.firmware,
                         lastSeen: d.lastSeen?.iso8601, paired: d.member != nil)
        }
        if let text = try await cache.loadMetaText(key: SavedServiceState.key),
           let saved = try? decoder.decode(SavedServiceState.self, from: Data(text.utf8)) {
            report.startedAt = saved.startedAt
            report.savedAt = saved.savedAt
            report.sync = saved.sync
            report.errors = saved.errors
        }
        return report
    }

    static func outbox(_ s: CacheStats) -> OutboxStatus {
        OutboxStatus(pending: s.pending, unpairedPending: s.unpairedPending, unpairedPolicy: s.unpairedPolicy.rawValue,
                     delivered: s.delivered, quarantined: s.quarantined, total: s.total,
                     oldestPendingAgeSeconds: s.oldestPendingAge(now: .now).map { ($0 * 10).rounded() / 10 },
                     oldestPendingTimestamp: s.oldestPending?.iso8601, buffered: s.buffered, fileBytes: s.fileBytes,
                     writeProblem: nil, dropped: nil, prunedForSpace: nil)
    }

    static func sync(_ s: SyncStatus) -> SyncState {
        var reason: String?
        switch s.state {
        case let .backingOff(_, r), let .unauthorized(r): reason = r
        default: break
        }
        return SyncState(state: s.state.name, reason: reason, endpoint: s.endpoint, consecutiveFailures: s.consecutiveFailures,
                         deliveredSinceStart: s.delivered, quarantinedSinceStart: s.quarantined,
                         workoutsDeliveredSinceStart: s.documentsDelivered[.workout] ?? 0,
                         profileMetricsDeliveredSinceStart: s.documentsDelivered[.profileMetric] ?? 0,
                         lastSync: s.lastSync.map { r in
                             LastSync(at: r.at.iso8601, records: r.records, inserted: r.inserted, duplicates: r.duplicates,
                                      rejected: r.rejected, durationMilliseconds: (r.duration.seconds * 10_000).rounded() / 10,
                                      endpoint: r.endpoint, httpStatus: r.httpStatus, error: r.error)
                         },
                         requests: s.requests, lastSuccessAt: s.lastSuccessAt?.iso8601)
    }

    static func totals(_ t: LinkTotals, committed: [RecordKind: Int]) -> Totals {
        Totals(heartRateNotifications: t.heartRateNotifications, batteryNotifications: t.batteryNotifications,
               advertisements: t.advertisements, undecodable: t.undecodable, oversized: t.oversized, tooFast: t.tooFast,
               reconnects: t.reconnects,
               recordsCommitted: Dictionary(uniqueKeysWithValues: committed.map { ($0.key.rawValue, $0.value) }))
    }

    static func adapter(_ a: AdapterLinks) -> AdapterStatus {
        AdapterStatus(adapter: a.adapter, links: a.held, connecting: a.connecting, limit: a.limit, learnedLimit: a.learned,
                      maxLinks: a.maximum, probing: a.probing, devices: a.devices)
    }

    /// A followed device, merged with what the registry knows of it.
    static func device(_ link: LinkStatus, registry: DeviceEntry?) -> DeviceStatus {
        DeviceStatus(address: link.address, name: link.name ?? registry?.name, adapter: link.adapter, state: link.state.rawValue,
                     reason: link.reason,
                     connected: link.state == .streaming || link.state == .resolving,
                     lastHeartRate: link.counters.lastHeartRate.map(Int.init),
                     battery: link.counters.lastBattery.map(Int.init) ?? registry?.battery.map { Int(($0 * 100).rounded()) },
                     rssi: link.rssi.map(Int.init), reconnects: link.reconnects, notifications: link.counters.heartRate,
                     malformed: link.counters.malformed, tooFast: link.counters.tooFast, oversized: link.counters.oversized,
                     rrDropped: link.counters.rrDropped, flag: link.counters.flag, model: registry?.model, firmware: registry?.firmware,
                     lastSeen: registry?.lastSeen?.iso8601, paired: registry?.member != nil)
    }
}


extension StatusReport.OutboxStatus {
    /// Workouts and profile metrics waiting in the document outbox, beside the records.
    mutating func addDocuments(from cache: RecordCache) async throws {
        let counts = try await cache.documentCounts()
        pendingWorkouts = counts[.workout]?.pending ?? 0
        pendingProfileMetrics = counts[.profileMetric]?.pending ?? 0
        quarantinedDocuments = counts.values.reduce(0) { $0 + $1.quarantined }
    }
}

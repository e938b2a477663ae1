// SPDX-License-Identifier: MIT
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Sync

/// What `blegate status` shows, from the running gateway (over the status socket) or,
/// when it is not running, from the cache database. Field by field in docs/status.md.
/// Holds no token and no member id: `paired` says only whether a device has a member.
public struct StatusReport: Sendable, Codable, Equatable {
    /// `service`: live from the running gateway; `database`: read from the cache file.
    public var source: String
    public var gatewayID: String
    public var generatedAt: String
    /// When the gateway started (the last run, for `database`).
    public var startedAt: String?
    /// For `database`: when the stopped gateway last saved its sync state.
    public var savedAt: String?
    public var cacheFile: String
    public var devices: [DeviceStatus]
    /// Adapter name → HCI recoveries. nil: this build of the gateway does not count them.
    public var adapterRecoveries: [String: Int]?
    /// Links per adapter (live only).
    public var adapters: [AdapterStatus]?
    /// How long notifications may gather once they come densely, in ms (live only): 200
    /// while a wall screen watches, 500 while none does.
    public var notifyWindowMilliseconds: Int?
    public var outbox: OutboxStatus
    /// nil when no backend is configured (cache only).
    public var sync: SyncState?
    /// The last 10 errors, oldest first.
    public var errors: [ErrorEntry]
    /// The class running now (live only).
    public var currentClass: ClassReport?
    /// What the straps sent and the cache committed since start (live only): the totals
    /// Prometheus counts.
    public var totals: Totals?

    /// The names `encoder` and `decoder` convert: `gateway_id` reads back as `gatewayId`
    /// (JSONDecoder's `.convertFromSnakeCase`), so `gatewayID` is named that way.
    enum CodingKeys: String, CodingKey {
        case source, gatewayID = "gatewayId", generatedAt, startedAt, savedAt, cacheFile, devices, adapterRecoveries, adapters
        case notifyWindowMilliseconds, outbox, sync, errors, currentClass, totals
    }

    public struct Totals: Sendable, Codable, Equatable {
        public var heartRateNotifications: Int
        public var batteryNotifications: Int
        /// Advertisements that made a record.
        public var advertisements: Int
        public var undecodable: Int
        public var oversized: Int
        public var tooFast: Int
        public var reconnects: Int
        /// Records committed to the cache by kind: `heart_rate`, `hrv`, `device`, `measurement`.
        public var recordsCommitted: [String: Int]
    }

    public struct DeviceStatus: Sendable, Codable, Equatable {
        public var address: String
        public var name: String?
        public var adapter: String?
        /// waiting, waiting-for-link, not-seen, advertised, denied, connecting, resolving,
        /// streaming, backing-off, stopped; `offline` from the database.
        public var state: String
        /// Why it is in that state, for people; nil when streaming needs no explanation.
        public var reason: String?
        public var connected: Bool
        public var lastHeartRate: Int?
        /// Percent.
        public var battery: Int?
        public var rssi: Int?
        public var reconnects: Int?
        public var notifications: Int?
        public var malformed: Int?
        /// Notifications dropped for coming faster than a heart beats, or longer than BLE
        /// allows, and RR intervals cut from records carrying too many (live only).
        public var tooFast: Int?
        public var oversized: Int?
        public var rrDropped: Int?
        /// Why the device is flagged (it notifies too fast, sends oversized values).
        public var flag: String?
        public var model: String?
        public var firmware: String?
        public var lastSeen: String?
        public var paired: Bool
    }

    public struct AdapterStatus: Sendable, Codable, Equatable {
        public var adapter: String
        /// Links up now, and connects under way.
        public var links: Int
        public var connecting: Int
        /// Links allowed now: the learned limit, or `max_links` while nothing was refused.
        public var limit: Int
        /// What refusals taught (remembered across restarts by adapter address); nil: never refused.
        public var learnedLimit: Int?
        public var maxLinks: Int
        public var probing: Bool
        /// Device objects bluetoothd has under the adapter now: every device it heard,
        /// strap or not (nil: this build of the gateway does not count them).
        public var devices: Int?
    }

    public struct OutboxStatus: Sendable, Codable, Equatable {
        /// Records not yet at the backend (including held ones).
        public var pending: Int
        /// Pending records of unpaired devices, which `backend.unpaired = "hold"` keeps back.
        public var unpairedPending: Int
        public var unpairedPolicy: String
        public var delivered: Int
        public var quarantined: Int
        public var total: Int
        /// Seconds since the oldest pending record was stored.
        public var oldestPendingAgeSeconds: Double?
        /// Measurement time of the oldest pending record.
        public var oldestPendingTimestamp: String?
        /// Appended, not yet committed (always 0 from the database).
        public var buffered: Int
        public var fileBytes: Int64
        /// The cache's file system, as `df` shows it (live only).
        public var filesystemFreeBytes: Int64?
        public var filesystemSizeBytes: Int64?
        /// Documents not yet at the backend, and documents it refused (nil from a gateway
        /// that keeps no documents).
        public var pendingWorkouts: Int?
        public var pendingProfileMetrics: Int?
        public var quarantinedDocuments: Int?
        /// While commits fail (live only): "disk full since 10:42:07 UTC, 1204 records held
        /// in memory, 2000 oldest delivered records pruned".
        public var writeProblem: String?
        /// Records dropped since start because memory held the most it may while commits
        /// failed, and delivered records deleted to make room on a full disk (live only).
        public var dropped: Int?
        public var prunedForSpace: Int?
    }

    public struct SyncState: Sendable, Codable, Equatable {
        /// starting, idle, syncing, backing_off, unauthorized, stopped.
        public var state: String
        /// Why it is backing off or unauthorized.
        public var reason: String?
        public var endpoint: String
        public var consecutiveFailures: Int
        /// Records delivered and quarantined since the gateway started.
        public var deliveredSinceStart: Int
        public var quarantinedSinceStart: Int
        public var workoutsDeliveredSinceStart: Int?
        public var profileMetricsDeliveredSinceStart: Int?
        public var lastSync: LastSync?
        /// Requests since start by how they ended, and when the backend last took one.
        public var requests: SyncRequestCounts?
        public var lastSuccessAt: String?
    }

    public struct LastSync: Sendable, Codable, Equatable {
        public var at: String
        public var records: Int
        public var inserted: Int
        public var duplicates: Int
        public var rejected: Int
        public var durationMilliseconds: Double
        public var endpoint: String
        /// nil when no answer arrived.
        public var httpStatus: Int?
        public var error: String?
    }

    /// snake_case keys (`gatewayID` as `gateway_id`), sorted, nil fields left out, `/`
    /// written `\/`: the text every answer of the status socket and every saved state
    /// has held, which clients and stopped gateways read.
    static var encoder: JSONEncoder {
        let e = JSONEncoder()
        e.keyEncodingStrategy = .convertToSnakeCase
        e.outputFormatting = [.sortedKeys]
        return e
    }

    static var decoder: JSONDecoder {
        let d = JSONDecoder()
        d.keyDecodingStrategy = .convertFromSnakeCase
        return d
    }

    /// `value` as one line of the gateway's JSON (`encoder`). Plain structs of strings and
    /// numbers: encoding cannot fail.
    static func text<T: Encodable>(_ value: T) -> String {
        String(decoding: (try? encoder.encode(value)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// One line of JSON (snake_case keys, sorted; `/` written `\/`).
    public func json() -> String { Self.text(self) }

    public init(json: String) throws {
        self = try Self.decoder.decode(StatusReport.self, from: Data(json.utf8))
    }

    init(source: String, gatewayID: String, generatedAt: String, cacheFile: String, outbox: OutboxStatus) {
        self.source = source
        self.gatewayID = gatewayID
        self.generatedAt = generatedAt
        self.cacheFile = cacheFile
        self.devices = []
        self.outbox = outbox
        self.errors = []
    }
}

/// What a running gateway saves in its cache so a stopped one can still answer
/// "what was the last sync, what went wrong".
struct SavedServiceState: Codable {
    var startedAt: String
    var savedAt: String
    var sync: StatusReport.SyncState?
    var errors: [ErrorEntry]

    static let key = "service_state"
}

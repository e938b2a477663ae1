// SPDX-License-Identifier: MIT
import GRDB
import WearMetrics
import Timing

/// The gym member a device is paired to.
public struct DeviceMember: Sendable, Equatable {
    public var clientID: String
    public var pairedAt: UTCTimestamp

    public init(clientID: String, pairedAt: UTCTimestamp) {
        self.clientID = clientID
        self.pairedAt = pairedAt
    }
}

/// A device the gateway has seen. `address` is the key records carry as `device_id`.
public struct DeviceEntry: Sendable, Equatable {
    public var address: String
    public var name: String?
    public var model: String?
    public var firmware: String?
    /// 0…1, as WearMetrics' `meta.battery`.
    public var battery: Double?
    public var firstSeen: UTCTimestamp?
    public var lastSeen: UTCTimestamp?
    public var member: DeviceMember?
}

/// Facts learned about a device; nil fields leave the stored value as it is.
public struct DeviceUpdate: Sendable, Equatable {
    public var address: String
    public var name: String?
    public var model: String?
    public var firmware: String?
    public var battery: Double?
    public var lastSeen: UTCTimestamp?

    public init(address: String, name: String? = nil, model: String? = nil, firmware: String? = nil,
                battery: Double? = nil, lastSeen: UTCTimestamp? = nil) {
        self.address = address
        self.name = name
        self.model = model
        self.firmware = firmware
        self.battery = battery
        self.lastSeen = lastSeen
    }
}

extension RecordCache {
    /// Inserts or updates a device. `lastSeen` only moves forward.
    public func upsertDevice(_ u: DeviceUpdate) async throws {
        try await upsertDevices([u])
    }

    /// Several devices in one transaction (one fsync, not one per device).
    public func upsertDevices(_ updates: [DeviceUpdate]) async throws {
        guard !updates.isEmpty else { return }
        try await write { db in
            for u in updates { try RecordCache.upsert(u, in: db) }
        }
    }

    private static func upsert(_ u: DeviceUpdate, in db: Database) throws {
        let seen = u.lastSeen?.millisecondsSince1970
        try db.cachedStatement(sql: """
                INSERT INTO device (address, name, model, firmware, battery, first_seen_ms, last_seen_ms)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(address) DO UPDATE SET
                    name = coalesce(excluded.name, name),
                    model = coalesce(excluded.model, model),
                    firmware = coalesce(excluded.firmware, firmware),
                    battery = coalesce(excluded.battery, battery),
                    first_seen_ms = coalesce(first_seen_ms, excluded.first_seen_ms),
                    last_seen_ms = max(coalesce(last_seen_ms, 0), coalesce(excluded.last_seen_ms, 0))
                """).execute(arguments: [u.address, u.name, u.model, u.firmware, u.battery, seen, seen])
    }

    /// Pairs a device with a member: records appended from now on carry `clientID`, and
    /// so do the device's pending records that have none (held under `unpaired = hold`,
    /// or not yet sent under `send`). Returns how many pending records were assigned.
    @discardableResult
    public func pair(address: String, clientID: String, at time: UTCTimestamp? = nil) async throws -> Int {
        committer.setMember(clientID, for: address)
        // Records appended before the line above were tagged unpaired: commit them first
        // so the update below reaches them too.
        try await flush()
        let paired = (time ?? .now).millisecondsSince1970
        return try await write { db in
            try db.execute(sql: """
                INSERT INTO device (address, client_id, paired_ms) VALUES (?, ?, ?)
                ON CONFLICT(address) DO UPDATE SET client_id = excluded.client_id, paired_ms = excluded.paired_ms
                """, arguments: [address, clientID, paired])
            try db.execute(sql: "UPDATE record SET client_id = ? WHERE sequence IN (SELECT sequence FROM outbox_unpaired WHERE device_id = ?)",
                           arguments: [clientID, address])
            let assigned = db.changesCount
            try db.execute(sql: "INSERT INTO outbox (sequence) SELECT sequence FROM outbox_unpaired WHERE device_id = ?", arguments: [address])
            try db.execute(sql: "DELETE FROM outbox_unpaired WHERE device_id = ?", arguments: [address])
            return assigned
        }
    }

    /// Ends a pairing: records appended from now on have no member. Stored records keep
    /// the member they were measured for.
    public func unpair(address: String) async throws {
        committer.setMember(nil, for: address)
        try await write { db in
            try db.execute(sql: "UPDATE device SET client_id = NULL, paired_ms = NULL WHERE address = ?", arguments: [address])
        }
    }

    public func device(address: String) async throws -> DeviceEntry? {
        try await database.read { db in
            try DeviceRow.fetchOne(db, sql: "SELECT * FROM device WHERE address = ?", arguments: [address])?.entry
        }
    }

    /// Every known device, most recently seen first.
    public func devices() async throws -> [DeviceEntry] {
        try await database.read { db in
            try DeviceRow.fetchAll(db, sql: "SELECT * FROM device ORDER BY last_seen_ms DESC, address").map(\.entry)
        }
    }
}

/// One row of the `device` table, by column name.
struct DeviceRow: FetchableRecord, Sendable {
    enum Columns {
        static let key = Column("key")
        static let address = Column("address")
        static let name = Column("name")
        static let model = Column("model")
        static let firmware = Column("firmware")
        static let battery = Column("battery")
        static let firstSeenMs = Column("first_seen_ms")
        static let lastSeenMs = Column("last_seen_ms")
        static let clientID = Column("client_id")
        static let pairedMs = Column("paired_ms")
    }

    var entry: DeviceEntry

    init(row: Row) throws {
        let client: String? = row[Columns.clientID]
        let paired: Int64? = row[Columns.pairedMs]
        entry = DeviceEntry(
            address: row[Columns.address], name: row[Columns.name], model: row[Columns.model], firmware: row[Columns.firmware],
            battery: row[Columns.battery],
            firstSeen: (row[Columns.firstSeenMs] as Int64?).map(UTCTimestamp.init(millisecondsSince1970:)),
            lastSeen: (row[Columns.lastSeenMs] as Int64?).map(UTCTimestamp.init(millisecondsSince1970:)),
            member: client.map { DeviceMember(clientID: $0, pairedAt: UTCTimestamp(millisecondsSince1970: paired ?? 0)) }
        )
    }
}

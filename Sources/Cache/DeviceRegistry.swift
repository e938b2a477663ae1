// SPDX-License-Identifier: MIT
import SQLite
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
        try await writer.write { db in
            for u in updates { try RecordCache.upsert(u, in: db) }
        }
    }

    private static func upsert(_ u: DeviceUpdate, in db: Connection) throws {
        let seen = u.lastSeen?.millisecondsSince1970
        try db.cachedStatement("""
                INSERT INTO device (address, name, model, firmware, battery, first_seen_ms, last_seen_ms)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(address) DO UPDATE SET
                    name = coalesce(excluded.name, name),
                    model = coalesce(excluded.model, model),
                    firmware = coalesce(excluded.firmware, firmware),
                    battery = coalesce(excluded.battery, battery),
                    first_seen_ms = coalesce(first_seen_ms, excluded.first_seen_ms),
                    last_seen_ms = max(coalesce(last_seen_ms, 0), coalesce(excluded.last_seen_ms, 0))
                """).execute([u.address, u.name, u.model, u.firmware, u.battery, seen, seen])
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
        return try await writer.write { db in
            try db.execute("""
                INSERT INTO device (address, client_id, paired_ms) VALUES (?, ?, ?)
                ON CONFLICT(address) DO UPDATE SET client_id = excluded.client_id, paired_ms = excluded.paired_ms
                """, [address, clientID, paired])
            try db.execute("UPDATE record SET client_id = ? WHERE sequence IN (SELECT sequence FROM outbox_unpaired WHERE device_id = ?)",
                           [clientID, address])
            let assigned = db.changes
            try db.execute("INSERT INTO outbox (sequence) SELECT sequence FROM outbox_unpaired WHERE device_id = ?", [address])
            try db.execute("DELETE FROM outbox_unpaired WHERE device_id = ?", [address])
            return assigned
        }
    }

    /// Ends a pairing: records appended from now on have no member. Stored records keep
    /// the member they were measured for.
    public func unpair(address: String) async throws {
        committer.setMember(nil, for: address)
        try await writer.write { db in
            try db.execute("UPDATE device SET client_id = NULL, paired_ms = NULL WHERE address = ?", [address])
        }
    }

    public func device(address: String) async throws -> DeviceEntry? {
        try await reader.read { db in
            try db.rows("SELECT \(RecordCache.deviceColumns) FROM device WHERE address = ?", [address], RecordCache.deviceEntry).first
        }
    }

    /// Every known device, most recently seen first.
    public func devices() async throws -> [DeviceEntry] {
        try await reader.read { db in
            try db.rows("SELECT \(RecordCache.deviceColumns) FROM device ORDER BY last_seen_ms DESC, address", [], RecordCache.deviceEntry)
        }
    }

    static let deviceColumns = "address, name, model, firmware, battery, first_seen_ms, last_seen_ms, client_id, paired_ms"

    static func deviceEntry(_ row: Statement) -> DeviceEntry {
        let client = row.optionalText(7)
        let paired = row.optionalInt64(8)
        return DeviceEntry(
            address: row.text(0), name: row.optionalText(1), model: row.optionalText(2), firmware: row.optionalText(3),
            battery: row.optionalDouble(4),
            firstSeen: row.optionalInt64(5).map(UTCTimestamp.init(millisecondsSince1970:)),
            lastSeen: row.optionalInt64(6).map(UTCTimestamp.init(millisecondsSince1970:)),
            member: client.map { DeviceMember(clientID: $0, pairedAt: UTCTimestamp(millisecondsSince1970: paired ?? 0)) }
        )
    }
}

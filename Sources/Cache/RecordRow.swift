// SPDX-License-Identifier: MIT
import Foundation
import GRDB
import WearMetrics

/// One row of the `record` table, by column name.
///
/// A clear row holds the record's fields in typed columns (`RecordFields`); a sealed row
/// (a cache with a key) holds them in `sealed` instead, and its typed columns stay empty.
/// Time, device, source, member and the delivery columns are in clear either way: the
/// outbox, retention and the time-window reads query them.
struct RecordRow: FetchableRecord, PersistableRecord, Sendable {
    static let databaseTableName = "record"

    enum Columns {
        static let sequence = Column("sequence")
        static let id = Column("id")
        static let timestampMs = Column("timestamp_ms")
        static let device = Column("device")
        static let source = Column("source")
        static let clientID = Column("client_id")
        static let state = Column("state")
        static let storedMs = Column("stored_ms")
        static let deliveredMs = Column("delivered_ms")
        static let reason = Column("reason")
        static let deviceInfo = Column("device_info")
        static let hr = Column("hr")
        static let rr = Column("rr")
        static let contact = Column("contact")
        static let hrStatus = Column("hr_status")
        static let rrCount = Column("rr_count")
        static let energyKJ = Column("energy_kj")
        static let rmssd = Column("hrv_rmssd")
        static let meanRR = Column("hrv_mean_rr")
        static let meanHR = Column("hrv_mean_hr")
        static let sdnn = Column("hrv_sdnn")
        static let pnn50 = Column("hrv_pnn50")
        static let sd1 = Column("hrv_sd1")
        static let sd2 = Column("hrv_sd2")
        static let hrvWindow = Column("hrv_window_s")
        static let hrvNNCount = Column("hrv_nn_count")
        static let hrvArtifact = Column("hrv_artifact_pct")
        static let sdnnWindow = Column("hrv_sdnn_window_s")
        static let sdnnNNCount = Column("hrv_sdnn_nn_count")
        static let sdnnArtifact = Column("hrv_sdnn_artifact_pct")
        static let extra = Column("extra")
        static let sealed = Column("sealed")

        /// Every column, in the order `values` gives them.
        static let all: [Column] = [
            sequence, id, timestampMs, device, source, clientID, state, storedMs, deliveredMs, reason, deviceInfo,
            hr, rr, contact, hrStatus, rrCount, energyKJ, rmssd, meanRR, meanHR, sdnn, pnn50, sd1, sd2,
            hrvWindow, hrvNNCount, hrvArtifact, sdnnWindow, sdnnNNCount, sdnnArtifact, extra, sealed,
        ]
    }

    /// The table as the current schema creates it (`CacheSchema`, v4).
    static let createTable = """
        CREATE TABLE record (
            sequence INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            timestamp_ms INTEGER NOT NULL,
            device INTEGER NOT NULL,
            source INTEGER NOT NULL,
            client_id TEXT,
            state INTEGER NOT NULL DEFAULT 0,
            stored_ms INTEGER NOT NULL,
            delivered_ms INTEGER,
            reason TEXT,
            device_info INTEGER,
            hr REAL,
            rr BLOB,
            contact INTEGER,
            hr_status INTEGER,
            rr_count INTEGER,
            energy_kj REAL,
            hrv_rmssd REAL,
            hrv_mean_rr REAL,
            hrv_mean_hr REAL,
            hrv_sdnn REAL,
            hrv_pnn50 REAL,
            hrv_sd1 REAL,
            hrv_sd2 REAL,
            hrv_window_s REAL,
            hrv_nn_count REAL,
            hrv_artifact_pct REAL,
            hrv_sdnn_window_s REAL,
            hrv_sdnn_nn_count REAL,
            hrv_sdnn_artifact_pct REAL,
            extra BLOB,
            sealed BLOB
        )
        """

    var sequence: Int64
    var id: String
    var timestampMs: Int64
    /// `device.key`.
    var device: Int64
    /// `SourceKind` code.
    var source: Int
    var clientID: String?
    /// 2 quarantined; anything else is not (`CacheSchema.quarantined`).
    var state: Int
    var storedMs: Int64
    var deliveredMs: Int64?
    var reason: String?
    /// `device_info.key`: the device's facts this record carries in its `meta`.
    var deviceInfo: Int64?
    var fields: RecordFields
    /// `RecordFields.body`, AES-GCM sealed (`PayloadCipher.recordAAD`).
    var sealed: [UInt8]?

    init(sequence: Int64, id: String, timestampMs: Int64, device: Int64, source: Int, clientID: String?, state: Int = 0,
         storedMs: Int64, deliveredMs: Int64? = nil, reason: String? = nil, deviceInfo: Int64?, fields: RecordFields,
         sealed: [UInt8]?) {
        self.sequence = sequence
        self.id = id
        self.timestampMs = timestampMs
        self.device = device
        self.source = source
        self.clientID = clientID
        self.state = state
        self.storedMs = storedMs
        self.deliveredMs = deliveredMs
        self.reason = reason
        self.deviceInfo = deviceInfo
        self.fields = fields
        self.sealed = sealed
    }

    init(row: Row) throws {
        sequence = row[Columns.sequence]
        id = row[Columns.id]
        timestampMs = row[Columns.timestampMs]
        device = row[Columns.device]
        source = row[Columns.source]
        clientID = row[Columns.clientID]
        state = row[Columns.state]
        storedMs = row[Columns.storedMs]
        deliveredMs = row[Columns.deliveredMs]
        reason = row[Columns.reason]
        deviceInfo = row[Columns.deviceInfo]
        var f = RecordFields()
        f.hr = row[Columns.hr]
        f.rr = (row[Columns.rr] as Data?).map { Array($0) }
        f.contact = row[Columns.contact]
        f.hrStatus = row[Columns.hrStatus]
        f.rrCount = row[Columns.rrCount]
        f.energyKJ = row[Columns.energyKJ]
        f.rmssd = row[Columns.rmssd]
        f.meanRR = row[Columns.meanRR]
        f.meanHR = row[Columns.meanHR]
        f.sdnn = row[Columns.sdnn]
        f.pnn50 = row[Columns.pnn50]
        f.sd1 = row[Columns.sd1]
        f.sd2 = row[Columns.sd2]
        f.hrvWindow = row[Columns.hrvWindow]
        f.hrvNNCount = row[Columns.hrvNNCount]
        f.hrvArtifact = row[Columns.hrvArtifact]
        f.sdnnWindow = row[Columns.sdnnWindow]
        f.sdnnNNCount = row[Columns.sdnnNNCount]
        f.sdnnArtifact = row[Columns.sdnnArtifact]
        f.extra = (row[Columns.extra] as Data?).map { Array($0) }
        fields = f
        sealed = (row[Columns.sealed] as Data?).map { Array($0) }
    }

    /// The column values in `Columns.all` order.
    var values: [(any DatabaseValueConvertible)?] {
        let f = fields
        return [
            sequence, id, timestampMs, device, source, clientID, state, storedMs, deliveredMs, reason, deviceInfo,
            f.hr, f.rr.map { Data($0) }, f.contact, f.hrStatus, f.rrCount, f.energyKJ, f.rmssd, f.meanRR, f.meanHR,
            f.sdnn, f.pnn50, f.sd1, f.sd2, f.hrvWindow, f.hrvNNCount, f.hrvArtifact, f.sdnnWindow, f.sdnnNNCount,
            f.sdnnArtifact, f.extra.map { Data($0) }, sealed.map { Data($0) },
        ]
    }

    /// The same columns for GRDB's own persistence methods (`insert(_:)`, `update(_:)`);
    /// the group commit binds `values` to one cached statement instead (`insert(with:)`).
    func encode(to container: inout PersistenceContainer) throws {
        for (column, value) in zip(Columns.all, values) { container[column] = value }
    }

    /// The INSERT of a whole row, for a cached statement (`values` as its arguments): the
    /// group commit runs it per record, without building SQL each time.
    static let insertSQL = "INSERT INTO record (\(Columns.all.map(\.name).joined(separator: ", "))) VALUES (\(Columns.all.map { _ in "?" }.joined(separator: ", ")))"

    /// The connection's cached INSERT of a whole row, for `insert(with:)`: taken once per
    /// transaction (finding it in the cache hashes the SQL text).
    static func insertStatement(_ db: Database) throws -> Statement {
        try db.cachedStatement(sql: insertSQL)
    }

    /// Writes the row with `insertStatement`.
    func insert(with statement: Statement) throws {
        statement.setUncheckedArguments(StatementArguments(values))
        try statement.execute()
    }

    /// The record this row stands for; `address` is its device's, `deviceInfo` the facts
    /// its `device_info` names.
    func record(address: String, deviceInfo: [(key: String, value: String)], cipher: PayloadCipher?) throws(CacheError) -> WearMetrics {
        let time = UTCTimestamp(millisecondsSince1970: timestampMs)
        do {
            if let sealed {
                guard let cipher else { throw CacheError(.keyRequired, "record \(id) is encrypted and no key was given") }
                let body = try cipher.open(sealed, aad: PayloadCipher.recordAAD(id: id, timestampMs: timestampMs, device: address, source: source),
                                           what: "record \(id)")
                return try RecordFields.record(body: body, timestamp: time, deviceID: address, source: source, deviceInfo: deviceInfo)
            }
            return try fields.record(timestamp: time, deviceID: address, source: source, deviceInfo: deviceInfo)
        } catch let e as DamagedFields {
            throw CacheError(.unreadablePayload, "record \(id): its stored fields cannot be read back (corrupted: \(e.what))")
        } catch let e as CacheError {
            throw e
        } catch {
            throw CacheError(.unreadablePayload, "record \(id): \(error)")
        }
    }
}

// SPDX-License-Identifier: MIT
import Foundation
import GRDB
import WearMetrics

public enum ExportFormat: String, Sendable, CaseIterable {
    /// One JSON object per line: `client_id`, `id`, `reason` (quarantined records),
    /// `sequence`, `state`, `synced` in key order, then the WearMetrics record's own keys
    /// as the backend receives them.
    case jsonl
    /// RFC 4180 CSV with a header; `metrics` and `meta` as JSON objects, `rr_ms` as
    /// space-separated milliseconds.
    case csv
}

extension RecordCache {
    /// Writes every record whose timestamp is at or after `since`, in timestamp order,
    /// one line at a time through `write` (called on a database reader thread). Returns
    /// how many records were written. An unreadable payload stops the export with an
    /// error naming the record.
    @discardableResult
    public func export(since: UTCTimestamp, format: ExportFormat,
                       write: @escaping @Sendable (String) throws -> Void) async throws -> Int {
        try await database.read { db in
            if format == .csv { try write("id,sequence,client_id,synced,state,timestamp,device_id,source,hr,rr_ms,metrics,meta,reason\n") }
            var count = 0
            let rows = try Row.fetchCursor(db, sql: """
                \(RecordCache.recordSelect) WHERE record.timestamp_ms >= ? ORDER BY record.timestamp_ms, record.sequence
                """, arguments: [since.millisecondsSince1970])
            while let row = try rows.next() {
                let s = try self.decode(row, db)
                try write(format == .jsonl ? RecordCache.jsonLine(s) : RecordCache.csvLine(s))
                count += 1
            }
            return count
        }
    }

    static func jsonLine(_ s: StoredRecord) -> String {
        // The cache's own fields through JSONEncoder; the record's text spliced after them,
        // so the line holds the record exactly as sync sends it. Strings and integers:
        // encoding cannot fail.
        let head = (try? exportEncoder.encode(ExportFields(s))) ?? Data("{}".utf8)
        var out = Array(head.dropLast())   // its "}"
        out.append(UInt8(ascii: ","))
        var record: [UInt8] = []
        s.record.appendJSON(to: &record)
        out.append(contentsOf: record.dropFirst())   // the record's own keys, after its "{"
        out.append(UInt8(ascii: "\n"))
        return String(decoding: out, as: UTF8.self)
    }

    /// Sorted keys, slashes as they are (reasons and ids are read by people).
    private static var exportEncoder: JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }

    /// What the cache adds to a record in an export line; `client_id` null when unpaired.
    private struct ExportFields: Encodable {
        var id: String
        var sequence: Int64
        var clientID: String?
        var synced: Bool
        var state: String
        var reason: String?

        init(_ s: StoredRecord) {
            id = s.id
            sequence = s.sequence
            clientID = s.clientID
            synced = s.state == .delivered
            state = s.state.rawValue
            reason = s.reason
        }

        enum CodingKeys: String, CodingKey {
            case id, sequence, clientID = "client_id", synced, state, reason
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encode(sequence, forKey: .sequence)
            try c.encode(clientID, forKey: .clientID)
            try c.encode(synced, forKey: .synced)
            try c.encode(state, forKey: .state)
            try c.encodeIfPresent(reason, forKey: .reason)
        }
    }

    static func csvLine(_ s: StoredRecord) -> String {
        let r = s.record
        let hr = r[metric: "hr"].map(WearMetrics.numberText) ?? ""
        let rr = (r.rrIntervals ?? []).map(WearMetrics.numberText).joined(separator: " ")
        var metrics: [UInt8] = [], meta: [UInt8] = []
        r.appendMetricsJSON(to: &metrics)
        r.appendMetaJSON(to: &meta)
        let fields = [
            s.id, String(s.sequence), s.clientID ?? "", s.state == .delivered ? "true" : "false", s.state.rawValue,
            r.timestamp.iso8601, r.deviceID, r.source, hr, rr,
            String(decoding: metrics, as: UTF8.self), String(decoding: meta, as: UTF8.self), s.reason ?? "",
        ]
        return fields.map(csvField).joined(separator: ",") + "\n"
    }

    static func csvField(_ s: String) -> String {
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
        var out = "\""
        for c in s {
            if c == "\"" { out += "\"\"" } else { out.append(c) }
        }
        return out + "\""
    }
}

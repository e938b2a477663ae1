// SPDX-License-Identifier: MIT
import GRDB
import JSON
import WearMetrics

public enum ExportFormat: String, Sendable, CaseIterable {
    /// One JSON object per line: `id`, `sequence`, `client_id`, `synced`, `state`, then
    /// the WearMetrics record's own keys.
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
        var out = "{\"id\":"
        JSONValue.writeString(s.id, to: &out)
        out += ",\"sequence\":" + String(s.sequence) + ",\"client_id\":"
        if let c = s.clientID { JSONValue.writeString(c, to: &out) } else { out += "null" }
        out += ",\"synced\":" + (s.state == .delivered ? "true" : "false") + ",\"state\":\"" + s.state.rawValue + "\""
        if let r = s.reason {
            out += ",\"reason\":"
            JSONValue.writeString(r, to: &out)
        }
        out += ","
        out += s.record.jsonString().dropFirst()   // the record's own keys, after its "{"
        out += "\n"
        return out
    }

    static func csvLine(_ s: StoredRecord) -> String {
        let r = s.record
        var hr = ""
        if let v = r[metric: "hr"] { JSONValue.writeNumber(v, to: &hr) }
        var rr = ""
        for (i, v) in (r.rrIntervals ?? []).enumerated() {
            if i > 0 { rr += " " }
            JSONValue.writeNumber(v, to: &rr)
        }
        let json = r.json()
        let fields = [
            s.id, String(s.sequence), s.clientID ?? "", s.state == .delivered ? "true" : "false", s.state.rawValue,
            r.timestamp.iso8601, r.deviceID, r.source, hr, rr,
            json["metrics"]?.serialized() ?? "{}", json["meta"]?.serialized() ?? "{}", s.reason ?? "",
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

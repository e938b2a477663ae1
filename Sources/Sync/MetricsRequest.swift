// SPDX-License-Identifier: MIT
import JSON
import Outbox
import WearMetrics

/// The body of `POST /api/v1/metrics`.
///
/// Built as text around each record's stored JSON, so the record's JSON is exactly the
/// WearMetrics v1.0 form the cache holds, with `id` and `client_id` in front; no record is
/// parsed or re-encoded on the way.
public enum MetricsRequest {
    public static func body(gatewayID: String, records: [OutboxRecord]) -> String {
        var out = "{\"gateway_id\":"
        out.reserveCapacity(64 + records.count * 320)
        JSONValue.writeString(gatewayID, to: &out)
        out += ",\"records\":["
        for (i, r) in records.enumerated() {
            if i > 0 { out += "," }
            out += "{\"id\":"
            JSONValue.writeString(r.id, to: &out)
            out += ",\"client_id\":"
            if let c = r.clientID { JSONValue.writeString(c, to: &out) } else { out += "null" }
            // Splice: the record's object without its opening brace.
            let members = r.json.utf8.dropFirst()
            if members.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) != UInt8(ascii: "}") { out += "," }
            out += Substring(members)
        }
        out += "]}"
        return out
    }

    /// Bytes of the body as JSON and as sent (gzip), for benchmarks and diagnostics.
    public static func encodedSizes(gatewayID: String, records: [OutboxRecord]) throws -> (json: Int, gzip: Int) {
        let text = body(gatewayID: gatewayID, records: records)
        return (text.utf8.count, try Gzip.compress(text).readableBytes)
    }
}

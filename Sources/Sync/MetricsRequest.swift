// SPDX-License-Identifier: MIT
import Outbox
import WearMetrics

/// The body of `POST /api/v1/metrics`.
///
/// Written as bytes in one buffer: each record's WearMetrics v1.0 JSON (the record's own
/// writer, `appendJSON`) with `id` and `client_id` in front, no intermediate values.
public enum MetricsRequest {
    public static func body(gatewayID: String, records: [OutboxRecord]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(64 + records.count * 420)
        var one: [UInt8] = []
        out.append(contentsOf: #"{"gateway_id":"#.utf8)
        JSONBytes.writeString(gatewayID, to: &out)
        out.append(contentsOf: #","records":["#.utf8)
        for (i, r) in records.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #"{"id":"#.utf8)
            JSONBytes.writeString(r.id, to: &out)
            out.append(contentsOf: #","client_id":"#.utf8)
            if let c = r.clientID { JSONBytes.writeString(c, to: &out) } else { out.append(contentsOf: "null".utf8) }
            // The record's object without its opening brace.
            one.removeAll(keepingCapacity: true)
            r.record.appendJSON(to: &one)
            if one.count > 2 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: one[1...])
        }
        out.append(contentsOf: "]}".utf8)
        return String(decoding: out, as: UTF8.self)
    }

    /// Bytes of the body as JSON and as sent (gzip), for benchmarks and diagnostics.
    public static func encodedSizes(gatewayID: String, records: [OutboxRecord]) throws -> (json: Int, gzip: Int) {
        let text = body(gatewayID: gatewayID, records: records)
        return (text.utf8.count, try Gzip.compress(text).readableBytes)
    }
}

// SPDX-License-Identifier: MIT
import Outbox
import WearMetrics

/// The body of `POST`/`PUT /api/v1/workouts` and `POST /api/v1/profile-metrics`.
///
/// Built as text around each document's stored JSON, which goes out byte for byte as its
/// producer wrote it (key order, number formatting): the gateway never re-encodes it.
public enum DocumentRequest {
    /// The array's key in the body.
    public static func arrayKey(_ kind: DocumentKind) -> String {
        switch kind {
        case .workout: "workouts"
        case .profileMetric: "metrics"
        }
    }

    public static func body(gatewayID: String, kind: DocumentKind, documents: [OutboxDocument]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(64 + documents.reduce(0) { $0 + $1.json.utf8.count + 1 })
        out.append(contentsOf: #"{"gateway_id":"#.utf8)
        JSONBytes.writeString(gatewayID, to: &out)
        out.append(contentsOf: ",\"\(arrayKey(kind))\":[".utf8)
        for (i, d) in documents.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: d.json.utf8)
        }
        out.append(contentsOf: "]}".utf8)
        return String(decoding: out, as: UTF8.self)
    }
}

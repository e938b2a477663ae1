// SPDX-License-Identifier: MIT
import WearMetrics

/// A scale's record → the member's profile metrics (height, weight, body fat), as the
/// JSON documents `POST /api/v1/profile-metrics` takes (docs/backend-openapi.yaml).
///
/// Pure: the same record always gives the same documents, ids included, so a record seen
/// twice (a replay, a restart) yields the same ids and the outbox stores them once.
public enum ProfileMetricMapping {
    /// One profile metric of one record.
    public struct Document: Sendable, Equatable {
        /// Version-5 UUID of `<record id>/<metric>` in `NameBasedUUID.sampleNamespace`.
        public var id: String
        /// `height`, `weight`, `body_fat`.
        public var metric: String
        public var value: Double
        /// The JSON object, keys sorted (the same record always gives the same text).
        public var json: String
    }

    /// Record metric → (profile metric, unit, decimals kept). Decimals follow the scales'
    /// resolution: 0.005 kg (0.01 lb ≈ 0.0045 kg), 0.1 cm (0.1 in = 0.254 cm), 0.1 %.
    static let table: [(key: String, metric: String, unit: String, decimals: Double)] = [
        ("height_cm", "height", "cm", 10),
        ("weight_kg", "weight", "kg", 1000),
        ("body_fat_pct", "body_fat", "percent", 10),
    ]

    /// The contract's `ProfileMetric`.
    struct Body: Encodable {
        var id: String
        var clientID: String
        var metric: String
        var value: Double
        var unit: String
        var measuredAt: String
        var source = "blegate"
        var deviceID: String

        enum CodingKeys: String, CodingKey {
            case id, metric, value, unit, source
            case clientID = "client_id"
            case measuredAt = "measured_at"
            case deviceID = "device_id"
        }
    }

    /// Whether a record may carry a profile metric: a cheap test for the record path, which
    /// sees every heart-rate notification.
    public static func mayCarryProfileMetric(_ record: WearMetrics) -> Bool {
        record.source == "ble_wss" || record.source == "ble_bcs"
    }

    /// The profile metrics of a stored record: none without a member (`clientID` nil: the
    /// backend could not tell whose they are) or without a positive, finite value.
    public static func documents(recordID: String, clientID: String?, record: WearMetrics) -> [Document] {
        guard let clientID, !clientID.isEmpty else { return [] }
        var out: [Document] = []
        for entry in table {
            guard let raw = record[metric: entry.key], raw.isFinite, raw > 0,
                  let id = NameBasedUUID.v5(namespace: NameBasedUUID.sampleNamespace, name: "\(recordID)/\(entry.metric)") else { continue }
            let value = (raw * entry.decimals).rounded() / entry.decimals
            let json = Wire.encode(Body(id: id, clientID: clientID, metric: entry.metric, value: value, unit: entry.unit,
                                        measuredAt: record.timestamp.iso8601, deviceID: record.deviceID))
            out.append(Document(id: id, metric: entry.metric, value: value, json: json))
        }
        return out
    }
}

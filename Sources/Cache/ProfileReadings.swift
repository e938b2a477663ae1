// SPDX-License-Identifier: MIT
import Foundation
import Outbox
import WearMetrics

/// A member's latest measured value of one profile metric (from a scale).
public struct ProfileReading: Sendable, Equatable {
    public var value: Double
    /// `measured_at` of the document: when the scale measured it.
    public var measuredAt: String
    /// The profile metric document's id.
    public var documentID: String
}

extension RecordCache {
    /// The latest value of `metric` (`weight` in kg, `height` in cm, `body_fat` in percent)
    /// per member (`client_id`), from the profile metrics in the document outbox, delivered
    /// or not. Quarantined ones are left out: the backend refused them. For the wall's and
    /// workouts' `MemberProfile` (kcal needs the weight).
    public func latestProfileReadings(metric: String) async throws -> [String: ProfileReading] {
        var latest: [String: ProfileReading] = [:]
        let decoder = JSONDecoder()
        for d in try await documents(kind: .profileMetric) where d.state != .quarantined {
            guard let m = try? decoder.decode(Measured.self, from: Data(d.json.utf8)), m.metric == metric,
                  let client = m.clientID else { continue }
            let value = m.value, at = m.measuredAt
            // ISO 8601 UTC with milliseconds sorts as text.
            if let known = latest[client], known.measuredAt >= at { continue }
            latest[client] = ProfileReading(value: value, measuredAt: at, documentID: d.id)
        }
        return latest
    }

    /// The fields of a profile metric document this reads; a document without them is
    /// skipped.
    private struct Measured: Decodable {
        var metric: String
        var clientID: String?
        var value: Double
        var measuredAt: String

        enum CodingKeys: String, CodingKey {
            case metric, clientID = "client_id", value, measuredAt = "measured_at"
        }
    }

    /// The latest weight in kg per member: `latestProfileReadings(metric: "weight")`.
    public func latestWeights() async throws -> [String: ProfileReading] {
        try await latestProfileReadings(metric: "weight")
    }
}

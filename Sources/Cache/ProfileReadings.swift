// SPDX-License-Identifier: MIT
import JSON
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
        for d in try await documents(kind: .profileMetric) where d.state != .quarantined {
            guard let v = try? JSONValue.parse(d.json), v["metric"]?.stringValue == metric,
                  let client = v["client_id"]?.stringValue, let value = v["value"]?.doubleValue,
                  let at = v["measured_at"]?.stringValue else { continue }
            // ISO 8601 UTC with milliseconds sorts as text.
            if let known = latest[client], known.measuredAt >= at { continue }
            latest[client] = ProfileReading(value: value, measuredAt: at, documentID: d.id)
        }
        return latest
    }

    /// The latest weight in kg per member: `latestProfileReadings(metric: "weight")`.
    public func latestWeights() async throws -> [String: ProfileReading] {
        try await latestProfileReadings(metric: "weight")
    }
}

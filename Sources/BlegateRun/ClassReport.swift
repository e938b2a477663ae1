// SPDX-License-Identifier: MIT
import Classes
import WearMetrics

/// A class as `blegate class` and `status` show it.
public struct ClassReport: Sendable, Equatable, Codable {
    public var name: String?
    public var type: String
    public var origin: String
    public var startTime: String
    /// Set once the class ended.
    public var endTime: String?
    /// When a scheduled class ends by itself.
    public var plannedEndTime: String?

    init(_ s: ClassSession) {
        name = s.name
        type = s.type.rawValue
        origin = s.origin.rawValue
        startTime = UTCTimestamp(millisecondsSince1970: s.startMs).iso8601
        endTime = s.endMs.map { UTCTimestamp(millisecondsSince1970: $0).iso8601 }
        plannedEndTime = s.plannedEndMs.map { UTCTimestamp(millisecondsSince1970: $0).iso8601 }
    }
}

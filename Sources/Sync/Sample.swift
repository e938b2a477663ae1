// SPDX-License-Identifier: MIT
import JSON
import WearMetrics

/// One measurement as the samples sink sends it (a Flō-style `samples` item).
public struct Sample: Sendable, Equatable {
    /// `heartRate`, `heartRateVariabilityRMSSD`, `heartRateVariabilitySDNN`.
    public var dataType: String
    public var value: Double
    /// `count/min` or `ms`.
    public var unit: String
    public var startDate: UTCTimestamp
    public var endDate: UTCTimestamp
    /// Version-5 UUID of `<record id>/<dataType>`: the same record always yields the same
    /// sample uuids, so the backend de-duplicates replays.
    public var uuid: String
    public var sourceName: String
    public var deviceName: String
    public var deviceID: String
    public var clientID: String?
    public var recordID: String

    public init(dataType: String, value: Double, unit: String, startDate: UTCTimestamp, endDate: UTCTimestamp,
                uuid: String, sourceName: String = "blegate", deviceName: String, deviceID: String,
                clientID: String?, recordID: String) {
        self.dataType = dataType
        self.value = value
        self.unit = unit
        self.startDate = startDate
        self.endDate = endDate
        self.uuid = uuid
        self.sourceName = sourceName
        self.deviceName = deviceName
        self.deviceID = deviceID
        self.clientID = clientID
        self.recordID = recordID
    }

    var json: JSONValue {
        .object([
            ("dataType", .string(dataType)),
            ("value", .double(value)),
            ("unit", .string(unit)),
            ("startDate", .string(startDate.iso8601)),
            ("endDate", .string(endDate.iso8601)),
            ("uuid", .string(uuid)),
            ("sourceName", .string(sourceName)),
            ("deviceName", .string(deviceName)),
            ("deviceId", .string(deviceID)),
            ("clientId", clientID.map { .string($0) } ?? .null),
            ("recordId", .string(recordID)),
        ])
    }

    static func requestBody(_ samples: [Sample]) -> String {
        JSONValue.object([("samples", .array(samples.map(\.json)))]).serialized()
    }
}

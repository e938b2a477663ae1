// SPDX-License-Identifier: MIT
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

    /// The samples sink's body: `{"samples": [...]}`.
    static func requestBody(_ samples: [Sample]) -> String {
        struct Body: Encodable { var samples: [Sample] }
        return Wire.encode(Body(samples: samples))
    }
}

extension Sample: Encodable {
    enum CodingKeys: String, CodingKey {
        case dataType, value, unit, startDate, endDate, uuid, sourceName, deviceName
        case deviceID = "deviceId"
        case clientID = "clientId"
        case recordID = "recordId"
    }

    /// Times as the contract's ISO 8601 text; `clientId` null while the strap is unpaired
    /// (the synthesized form would leave it out).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(dataType, forKey: .dataType)
        try c.encode(value, forKey: .value)
        try c.encode(unit, forKey: .unit)
        try c.encode(startDate.iso8601, forKey: .startDate)
        try c.encode(endDate.iso8601, forKey: .endDate)
        try c.encode(uuid, forKey: .uuid)
        try c.encode(sourceName, forKey: .sourceName)
        try c.encode(deviceName, forKey: .deviceName)
        try c.encode(deviceID, forKey: .deviceID)
        try c.encode(clientID, forKey: .clientID)
        try c.encode(recordID, forKey: .recordID)
    }
}

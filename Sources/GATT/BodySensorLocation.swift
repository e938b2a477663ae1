// SPDX-License-Identifier: MIT

/// Body Sensor Location 0x2A38. Static per connection: read once after connecting.
/// It tells ECG-derived R-R (chest) from optical pulse intervals (wrist, finger, ear).
public struct BodySensorLocation: Sendable, Equatable {
    public var rawValue: UInt8
    public var ignoredTrailingBytes: Int

    public init(rawValue: UInt8, ignoredTrailingBytes: Int = 0) {
        self.rawValue = rawValue
        self.ignoredTrailingBytes = ignoredTrailingBytes
    }

    public init(bytes: UnsafeRawBufferPointer) throws(GATTDecodeError) {
        var r = ByteReader(bytes, .bodySensorLocation)
        rawValue = try r.u8("body sensor location")
        ignoredTrailingBytes = r.remaining
    }

    /// `meta.body_sensor_location`: RFU values keep their number (`reserved_7`).
    public var label: String {
        switch rawValue {
        case 0: "other"
        case 1: "chest"
        case 2: "wrist"
        case 3: "finger"
        case 4: "hand"
        case 5: "ear_lobe"
        case 6: "foot"
        default: "reserved_\(rawValue)"
        }
    }

    /// Human name as in the SIG table (`Ear Lobe`).
    public var displayName: String {
        switch rawValue {
        case 0: "Other"
        case 1: "Chest"
        case 2: "Wrist"
        case 3: "Finger"
        case 4: "Hand"
        case 5: "Ear Lobe"
        case 6: "Foot"
        default: "Reserved"
        }
    }

    /// Wrist, finger, hand and ear lobe sensors deliver optical pulse-to-pulse intervals.
    public var isOptical: Bool { (2...5).contains(rawValue) }
}

extension BodySensorLocation: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var o = FieldWriter(encoder)
        try o.add("body_sensor_location", Int(rawValue))
        try o.add("name", displayName)
        try o.add("label", label)
        try o.addTrailingBytesWarning(ignoredTrailingBytes)
    }
}

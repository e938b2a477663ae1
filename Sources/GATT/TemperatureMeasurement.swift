// SPDX-License-Identifier: MIT

/// Temperature Measurement 0x2A1C (and Intermediate Temperature 0x2A1E, same layout).
public struct TemperatureMeasurement: Sendable, Equatable {
    public var characteristic: GATTCharacteristic
    public var flags: UInt8
    /// In °C or °F according to `isFahrenheit`.
    public var value: IEEE11073Value
    public var timestamp: GATTDateTime?
    public var temperatureType: UInt8?
    public var ignoredTrailingBytes: Int

    public var isFahrenheit: Bool { flags & 0x01 != 0 }
    public var rfuFlagBits: UInt8 { flags & 0xF8 }

    /// °C; nil for special values.
    public var celsius: Double? {
        guard let v = value.finite else { return nil }
        return isFahrenheit ? (v - 32) * 5 / 9 : v
    }

    public init(bytes: UnsafeRawBufferPointer, characteristic: GATTCharacteristic = .temperatureMeasurement) throws(GATTDecodeError) {
        self.characteristic = characteristic
        var r = ByteReader(bytes, characteristic)
        flags = try r.u8("flags")
        value = try r.float32("temperature measurement value")
        if flags & 0x02 != 0 { timestamp = try r.dateTime("time stamp") }
        if flags & 0x04 != 0 { temperatureType = try r.u8("temperature type") }
        ignoredTrailingBytes = r.remaining
    }

    /// `meta.temperature_site`; 0 and 10…255 are reserved.
    public var temperatureTypeLabel: String? {
        guard let t = temperatureType else { return nil }
        switch t {
        case 1: return "armpit"
        case 2: return "body"
        case 3: return "ear"
        case 4: return "finger"
        case 5: return "gastrointestinal_tract"
        case 6: return "mouth"
        case 7: return "rectum"
        case 8: return "toe"
        case 9: return "tympanum"
        default: return "reserved_\(t)"
        }
    }
}

extension TemperatureMeasurement: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var o = FieldWriter(encoder)
        try o.add("flags", Int(flags))
        try o.add("unit", isFahrenheit ? "degF" : "degC")
        try o.add("temperature", value)
        try o.add("temperature_c", celsius)
        try o.add("timestamp", timestamp)
        try o.add("temperature_type", temperatureType.map(Int.init))
        try o.add("temperature_type_name", temperatureTypeLabel)
        try o.add("rfu_flag_bits", rfuFlagBits != 0 ? Int(rfuFlagBits) : nil)
        try o.add("ignored_trailing_bytes", ignoredTrailingBytes > 0 ? ignoredTrailingBytes : nil)
    }
}

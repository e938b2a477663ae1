// SPDX-License-Identifier: MIT
import JSON

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

extension TemperatureMeasurement: JSONRepresentable {
    public var json: JSONValue {
        var o = JSONObjectBuilder()
        o.add("flags", .int(Int(flags)))
        o.add("unit", .string(isFahrenheit ? "degF" : "degC"))
        o.add("temperature", value)
        o.add("temperature_c", celsius)
        if let timestamp { o.add("timestamp", timestamp.json) }
        o.add("temperature_type", temperatureType.map(Int.init))
        o.add("temperature_type_name", temperatureTypeLabel)
        o.add("rfu_flag_bits", rfuFlagBits != 0 ? Int(rfuFlagBits) : nil)
        o.add("ignored_trailing_bytes", ignoredTrailingBytes > 0 ? ignoredTrailingBytes : nil)
        return o.object
    }
}

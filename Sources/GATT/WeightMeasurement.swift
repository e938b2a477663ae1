// SPDX-License-Identifier: MIT

/// Converts WSS/BCS mass and height fields, whose resolution depends on the unit flag.
enum BodyUnits {
    static let poundsToKilograms = 0.45359237
    static let inchesToMeters = 0.0254

    /// SI: 0.005 kg (÷ 200); imperial: 0.01 lb, converted to kg.
    static func kilograms(raw: UInt16, imperial: Bool) -> Double {
        imperial ? Double(raw) / 100 * poundsToKilograms : Double(raw) / 200
    }

    /// SI: 0.001 m; imperial: 0.1 in, converted to m.
    static func meters(raw: UInt16, imperial: Bool) -> Double {
        imperial ? Double(raw) / 10 * inchesToMeters : Double(raw) / 1000
    }

    /// The same in cm, computed from the raw value directly (1 mm = 0.1 cm, 0.1 in =
    /// 0.254 cm) so an SI 1718 reads 171.8, not 171.79999999999998.
    static func centimeters(raw: UInt16, imperial: Bool) -> Double {
        imperial ? Double(raw) * 0.254 : Double(raw) / 10
    }

    /// What the scale showed in its own unit, for imperial readings: lb (0.01) or in (0.1).
    static func pounds(raw: UInt16) -> Double { Double(raw) / 100 }
    static func inches(raw: UInt16) -> Double { Double(raw) / 10 }
}

/// Weight Measurement 0x2A9D.
public struct WeightMeasurement: Sendable, Equatable {
    public var flags: UInt8
    /// 0xFFFF = "Measurement Unsuccessful"
    public var weightRaw: UInt16
    public var timestamp: GATTDateTime?
    /// 0xFF = unknown user
    public var userID: UInt8?
    /// 0.1 kg/m²
    public var bmiRaw: UInt16?
    public var heightRaw: UInt16?
    public var ignoredTrailingBytes: Int

    public var isImperial: Bool { flags & 0x01 != 0 }
    public var rfuFlagBits: UInt8 { flags & 0xF0 }
    public var isMeasurementUnsuccessful: Bool { weightRaw == 0xFFFF }

    public var weightKilograms: Double? {
        isMeasurementUnsuccessful ? nil : BodyUnits.kilograms(raw: weightRaw, imperial: isImperial)
    }
    public var bmi: Double? { bmiRaw.map { Double($0) / 10 } }
    public var heightMeters: Double? { heightRaw.map { BodyUnits.meters(raw: $0, imperial: isImperial) } }
    public var heightCentimeters: Double? { heightRaw.map { BodyUnits.centimeters(raw: $0, imperial: isImperial) } }

    public init(bytes: UnsafeRawBufferPointer) throws(GATTDecodeError) {
        var r = ByteReader(bytes, .weightMeasurement)
        flags = try r.u8("flags")
        weightRaw = try r.u16("weight")
        if flags & 0x02 != 0 { timestamp = try r.dateTime("time stamp") }
        if flags & 0x04 != 0 { userID = try r.u8("user id") }
        if flags & 0x08 != 0 {
            bmiRaw = try r.u16("bmi")
            heightRaw = try r.u16("height")
        }
        ignoredTrailingBytes = r.remaining
    }
}

extension WeightMeasurement: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var o = FieldWriter(encoder)
        try o.add("flags", Int(flags))
        try o.add("units", isImperial ? "imperial" : "si")
        if isMeasurementUnsuccessful { try o.add("measurement_unsuccessful", true) }
        try o.add("weight_raw", Int(weightRaw))
        try o.add("weight_kg", weightKilograms)
        if isImperial, !isMeasurementUnsuccessful { try o.add("weight_lb", BodyUnits.pounds(raw: weightRaw)) }
        try o.add("timestamp", timestamp)
        try o.add("user_id", userID.map(Int.init))
        try o.add("bmi", bmi)
        try o.add("height_m", heightMeters)
        try o.add("height_cm", heightCentimeters)
        if isImperial { try o.add("height_in", heightRaw.map(BodyUnits.inches)) }
        try o.add("rfu_flag_bits", rfuFlagBits != 0 ? Int(rfuFlagBits) : nil)
        try o.add("ignored_trailing_bytes", ignoredTrailingBytes > 0 ? ignoredTrailingBytes : nil)
    }
}

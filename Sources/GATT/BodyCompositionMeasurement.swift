// SPDX-License-Identifier: MIT

/// Body Composition Measurement 0x2A9C.
///
/// When Body Fat is 0xFFFF ("measurement unsuccessful") only the Time Stamp and User ID
/// are parsed (if flagged) and the rest is ignored: scales disagree on what follows an
/// unsuccessful measurement, and none of it is a metric worth reporting.
public struct BodyCompositionMeasurement: Sendable, Equatable {
    public var flags: UInt16
    /// 0.1 %; 0xFFFF = measurement unsuccessful
    public var bodyFatRaw: UInt16
    public var timestamp: GATTDateTime?
    public var userID: UInt8?
    public var basalMetabolismKJ: UInt16?
    public var musclePercentageRaw: UInt16?
    public var muscleMassRaw: UInt16?
    public var fatFreeMassRaw: UInt16?
    public var softLeanMassRaw: UInt16?
    public var bodyWaterMassRaw: UInt16?
    /// 0.1 Ω (XML; the GSS text is inconsistent)
    public var impedanceRaw: UInt16?
    public var weightRaw: UInt16?
    public var heightRaw: UInt16?
    public var ignoredTrailingBytes: Int

    public var isImperial: Bool { flags & 0x0001 != 0 }
    public var isMultiplePacket: Bool { flags & 0x1000 != 0 }
    public var rfuFlagBits: UInt16 { flags & 0xE000 }
    public var isMeasurementUnsuccessful: Bool { bodyFatRaw == 0xFFFF }

    public var bodyFatPercent: Double? { isMeasurementUnsuccessful ? nil : Double(bodyFatRaw) / 10 }
    public var musclePercent: Double? { musclePercentageRaw.map { Double($0) / 10 } }
    public var muscleMassKilograms: Double? { muscleMassRaw.map { BodyUnits.kilograms(raw: $0, imperial: isImperial) } }
    public var fatFreeMassKilograms: Double? { fatFreeMassRaw.map { BodyUnits.kilograms(raw: $0, imperial: isImperial) } }
    public var softLeanMassKilograms: Double? { softLeanMassRaw.map { BodyUnits.kilograms(raw: $0, imperial: isImperial) } }
    public var bodyWaterMassKilograms: Double? { bodyWaterMassRaw.map { BodyUnits.kilograms(raw: $0, imperial: isImperial) } }
    public var impedanceOhms: Double? { impedanceRaw.map { Double($0) / 10 } }
    public var weightKilograms: Double? { weightRaw.map { BodyUnits.kilograms(raw: $0, imperial: isImperial) } }
    public var heightMeters: Double? { heightRaw.map { BodyUnits.meters(raw: $0, imperial: isImperial) } }
    public var heightCentimeters: Double? { heightRaw.map { BodyUnits.centimeters(raw: $0, imperial: isImperial) } }

    public init(bytes: UnsafeRawBufferPointer) throws(GATTDecodeError) {
        var r = ByteReader(bytes, .bodyCompositionMeasurement)
        flags = try r.u16("flags")
        bodyFatRaw = try r.u16("body fat percentage")
        if flags & 0x0002 != 0 { timestamp = try r.dateTime("time stamp") }
        if flags & 0x0004 != 0 { userID = try r.u8("user id") }
        if bodyFatRaw == 0xFFFF {
            ignoredTrailingBytes = r.remaining
            return
        }
        if flags & 0x0008 != 0 { basalMetabolismKJ = try r.u16("basal metabolism") }
        if flags & 0x0010 != 0 { musclePercentageRaw = try r.u16("muscle percentage") }
        if flags & 0x0020 != 0 { muscleMassRaw = try r.u16("muscle mass") }
        if flags & 0x0040 != 0 { fatFreeMassRaw = try r.u16("fat free mass") }
        if flags & 0x0080 != 0 { softLeanMassRaw = try r.u16("soft lean mass") }
        if flags & 0x0100 != 0 { bodyWaterMassRaw = try r.u16("body water mass") }
        if flags & 0x0200 != 0 { impedanceRaw = try r.u16("impedance") }
        if flags & 0x0400 != 0 { weightRaw = try r.u16("weight") }
        if flags & 0x0800 != 0 { heightRaw = try r.u16("height") }
        ignoredTrailingBytes = r.remaining
    }
}

extension BodyCompositionMeasurement: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var o = FieldWriter(encoder)
        try o.add("flags", Int(flags))
        try o.add("units", isImperial ? "imperial" : "si")
        if isMeasurementUnsuccessful { try o.add("measurement_unsuccessful", true) }
        try o.add("body_fat_pct", bodyFatPercent)
        try o.add("timestamp", timestamp)
        try o.add("user_id", userID.map(Int.init))
        try o.add("basal_metabolism_kj", basalMetabolismKJ.map(Int.init))
        try o.add("muscle_pct", musclePercent)
        try o.add("muscle_mass_kg", muscleMassKilograms)
        try o.add("fat_free_mass_kg", fatFreeMassKilograms)
        try o.add("soft_lean_mass_kg", softLeanMassKilograms)
        try o.add("body_water_mass_kg", bodyWaterMassKilograms)
        try o.add("impedance_ohm", impedanceOhms)
        try o.add("weight_kg", weightKilograms)
        if isImperial { try o.add("weight_lb", weightRaw.map(BodyUnits.pounds)) }
        try o.add("height_m", heightMeters)
        try o.add("height_cm", heightCentimeters)
        if isImperial { try o.add("height_in", heightRaw.map(BodyUnits.inches)) }
        if isMultiplePacket { try o.add("multiple_packet", true) }
        try o.add("rfu_flag_bits", rfuFlagBits != 0 ? Int(rfuFlagBits) : nil)
        try o.add("ignored_trailing_bytes", ignoredTrailingBytes > 0 ? ignoredTrailingBytes : nil)
    }
}

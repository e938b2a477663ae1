// SPDX-License-Identifier: MIT

/// Cycling Power Measurement 0x2A63. Flags are uint16; Instantaneous Power is
/// mandatory and signed (coasting meters report small negative values).
public struct CyclingPowerMeasurement: Sendable, Equatable {
    public var flags: UInt16
    public var instantaneousPowerWatts: Int16
    /// 1/2 %
    public var pedalPowerBalanceRaw: UInt8?
    /// 1/32 N·m
    public var accumulatedTorqueRaw: UInt16?
    public var cumulativeWheelRevolutions: UInt32?
    /// 1/2048 s — twice as fine as CSC's wheel time.
    public var lastWheelEventTime: UInt16?
    public var cumulativeCrankRevolutions: UInt16?
    /// 1/1024 s
    public var lastCrankEventTime: UInt16?
    public var maximumForceNewtons: Int16?
    public var minimumForceNewtons: Int16?
    /// 1/32 N·m
    public var maximumTorqueRaw: Int16?
    public var minimumTorqueRaw: Int16?
    /// degrees (two uint12 packed in 3 octets: low 12 bits maximum, high 12 bits minimum)
    public var maximumAngleDegrees: UInt16?
    public var minimumAngleDegrees: UInt16?
    public var topDeadSpotAngleDegrees: UInt16?
    public var bottomDeadSpotAngleDegrees: UInt16?
    public var accumulatedEnergyKJ: UInt16?
    public var ignoredTrailingBytes: Int

    public var pedalBalanceReferenceIsLeft: Bool { flags & 0x0002 != 0 }
    public var torqueSourceIsCrank: Bool { flags & 0x0008 != 0 }
    public var offsetCompensationIndicator: Bool { flags & 0x1000 != 0 }
    public var rfuFlagBits: UInt16 { flags & 0xE000 }
    public var pedalPowerBalancePercent: Double? { pedalPowerBalanceRaw.map { Double($0) / 2 } }
    public var accumulatedTorqueNewtonMeters: Double? { accumulatedTorqueRaw.map { Double($0) / 32 } }

    public init(bytes: UnsafeRawBufferPointer) throws(GATTDecodeError) {
        var r = ByteReader(bytes, .cyclingPowerMeasurement)
        flags = try r.u16("flags")
        instantaneousPowerWatts = try r.s16("instantaneous power")
        if flags & 0x0001 != 0 { pedalPowerBalanceRaw = try r.u8("pedal power balance") }
        if flags & 0x0004 != 0 { accumulatedTorqueRaw = try r.u16("accumulated torque") }
        if flags & 0x0010 != 0 {
            cumulativeWheelRevolutions = try r.u32("cumulative wheel revolutions")
            lastWheelEventTime = try r.u16("last wheel event time")
        }
        if flags & 0x0020 != 0 {
            cumulativeCrankRevolutions = try r.u16("cumulative crank revolutions")
            lastCrankEventTime = try r.u16("last crank event time")
        }
        if flags & 0x0040 != 0 {
            maximumForceNewtons = try r.s16("maximum force magnitude")
            minimumForceNewtons = try r.s16("minimum force magnitude")
        }
        if flags & 0x0080 != 0 {
            maximumTorqueRaw = try r.s16("maximum torque magnitude")
            minimumTorqueRaw = try r.s16("minimum torque magnitude")
        }
        if flags & 0x0100 != 0 {
            let packed = try r.u24("extreme angles")
            maximumAngleDegrees = UInt16(packed & 0xFFF)
            minimumAngleDegrees = UInt16(packed >> 12)
        }
        if flags & 0x0200 != 0 { topDeadSpotAngleDegrees = try r.u16("top dead spot angle") }
        if flags & 0x0400 != 0 { bottomDeadSpotAngleDegrees = try r.u16("bottom dead spot angle") }
        if flags & 0x0800 != 0 { accumulatedEnergyKJ = try r.u16("accumulated energy") }
        ignoredTrailingBytes = r.remaining
    }
}

extension CyclingPowerMeasurement: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var o = FieldWriter(encoder)
        try o.add("flags", Int(flags))
        try o.add("instantaneous_power_w", Int(instantaneousPowerWatts))
        try o.add("pedal_power_balance_pct", pedalPowerBalancePercent)
        if pedalPowerBalanceRaw != nil {
            try o.add("pedal_balance_reference", pedalBalanceReferenceIsLeft ? "left" : "unknown")
        }
        try o.add("accumulated_torque_nm", accumulatedTorqueNewtonMeters)
        if accumulatedTorqueRaw != nil { try o.add("torque_source", torqueSourceIsCrank ? "crank" : "wheel") }
        try o.add("cumulative_wheel_revs", cumulativeWheelRevolutions.map(Int.init))
        try o.add("last_wheel_event_time_1_2048s", lastWheelEventTime.map(Int.init))
        try o.add("cumulative_crank_revs", cumulativeCrankRevolutions.map(Int.init))
        try o.add("last_crank_event_time_1_1024s", lastCrankEventTime.map(Int.init))
        try o.add("maximum_force_n", maximumForceNewtons.map(Int.init))
        try o.add("minimum_force_n", minimumForceNewtons.map(Int.init))
        try o.add("maximum_torque_nm", maximumTorqueRaw.map { Double($0) / 32 })
        try o.add("minimum_torque_nm", minimumTorqueRaw.map { Double($0) / 32 })
        try o.add("maximum_angle_deg", maximumAngleDegrees.map(Int.init))
        try o.add("minimum_angle_deg", minimumAngleDegrees.map(Int.init))
        try o.add("top_dead_spot_angle_deg", topDeadSpotAngleDegrees.map(Int.init))
        try o.add("bottom_dead_spot_angle_deg", bottomDeadSpotAngleDegrees.map(Int.init))
        try o.add("accumulated_energy_kj", accumulatedEnergyKJ.map(Int.init))
        try o.add("offset_compensation_indicator", offsetCompensationIndicator ? true : nil)
        try o.add("rfu_flag_bits", rfuFlagBits != 0 ? Int(rfuFlagBits) : nil)
        try o.add("ignored_trailing_bytes", ignoredTrailingBytes > 0 ? ignoredTrailingBytes : nil)
    }
}

// SPDX-License-Identifier: MIT

/// RSC Measurement 0x2A53 (foot pods, running sensors).
public struct RSCMeasurement: Sendable, Equatable {
    public var flags: UInt8
    /// 1/256 m/s
    public var speedRaw: UInt16
    /// steps per minute
    public var cadence: UInt8
    /// 1/100 m
    public var strideLengthRaw: UInt16?
    /// 1/10 m
    public var totalDistanceRaw: UInt32?
    public var ignoredTrailingBytes: Int

    public var speedMetersPerSecond: Double { Double(speedRaw) / 256 }
    public var strideLengthMeters: Double? { strideLengthRaw.map { Double($0) / 100 } }
    public var totalDistanceMeters: Double? { totalDistanceRaw.map { Double($0) / 10 } }
    /// Meaningful only if RSC Feature bit 2 says the sensor supports it.
    public var isRunning: Bool { flags & 0x04 != 0 }
    public var rfuFlagBits: UInt8 { flags & 0xF8 }

    public init(bytes: UnsafeRawBufferPointer) throws(GATTDecodeError) {
        var r = ByteReader(bytes, .rscMeasurement)
        flags = try r.u8("flags")
        speedRaw = try r.u16("instantaneous speed")
        cadence = try r.u8("instantaneous cadence")
        strideLengthRaw = flags & 0x01 != 0 ? try r.u16("instantaneous stride length") : nil
        totalDistanceRaw = flags & 0x02 != 0 ? try r.u32("total distance") : nil
        ignoredTrailingBytes = r.remaining
    }
}

extension RSCMeasurement: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var o = FieldWriter(encoder)
        try o.add("flags", Int(flags))
        try o.add("speed_mps", speedMetersPerSecond)
        try o.add("cadence_per_min", Int(cadence))
        try o.add("running", isRunning)
        try o.add("stride_length_m", strideLengthMeters)
        try o.add("total_distance_m", totalDistanceMeters)
        try o.add("rfu_flag_bits", rfuFlagBits != 0 ? Int(rfuFlagBits) : nil)
        try o.add("ignored_trailing_bytes", ignoredTrailingBytes > 0 ? ignoredTrailingBytes : nil)
    }
}

// SPDX-License-Identifier: MIT

/// CSC Measurement 0x2A5B. It carries counters, not rates: speed and cadence come from
/// two consecutive packets through `RevolutionRateTracker`.
public struct CSCMeasurement: Sendable, Equatable {
    public var flags: UInt8
    public var cumulativeWheelRevolutions: UInt32?
    /// 1/1024 s, rolls over every 64 s
    public var lastWheelEventTime: UInt16?
    public var cumulativeCrankRevolutions: UInt16?
    /// 1/1024 s, rolls over every 64 s
    public var lastCrankEventTime: UInt16?
    public var ignoredTrailingBytes: Int

    public var rfuFlagBits: UInt8 { flags & 0xFC }

    public init(bytes: UnsafeRawBufferPointer) throws(GATTDecodeError) {
        var r = ByteReader(bytes, .cscMeasurement)
        flags = try r.u8("flags")
        if flags & 0x01 != 0 {
            cumulativeWheelRevolutions = try r.u32("cumulative wheel revolutions")
            lastWheelEventTime = try r.u16("wheel time")
        }
        if flags & 0x02 != 0 {
            cumulativeCrankRevolutions = try r.u16("cumulative crank revolutions")
            lastCrankEventTime = try r.u16("crank time")
        }
        ignoredTrailingBytes = r.remaining
    }
}

extension CSCMeasurement: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var o = FieldWriter(encoder)
        try o.add("flags", Int(flags))
        try o.add("cumulative_wheel_revs", cumulativeWheelRevolutions.map(Int.init))
        try o.add("last_wheel_event_time_1_1024s", lastWheelEventTime.map(Int.init))
        try o.add("cumulative_crank_revs", cumulativeCrankRevolutions.map(Int.init))
        try o.add("last_crank_event_time_1_1024s", lastCrankEventTime.map(Int.init))
        try o.add("rfu_flag_bits", rfuFlagBits != 0 ? Int(rfuFlagBits) : nil)
        try o.add("ignored_trailing_bytes", ignoredTrailingBytes > 0 ? ignoredTrailingBytes : nil)
    }
}

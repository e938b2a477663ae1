// SPDX-License-Identifier: MIT
import JSON

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

extension CSCMeasurement: JSONRepresentable {
    public var json: JSONValue {
        var o = JSONObjectBuilder()
        o.add("flags", .int(Int(flags)))
        o.add("cumulative_wheel_revs", cumulativeWheelRevolutions.map(Int.init))
        o.add("last_wheel_event_time_1_1024s", lastWheelEventTime.map(Int.init))
        o.add("cumulative_crank_revs", cumulativeCrankRevolutions.map(Int.init))
        o.add("last_crank_event_time_1_1024s", lastCrankEventTime.map(Int.init))
        o.add("rfu_flag_bits", rfuFlagBits != 0 ? Int(rfuFlagBits) : nil)
        o.add("ignored_trailing_bytes", ignoredTrailingBytes > 0 ? ignoredTrailingBytes : nil)
        return o.object
    }
}

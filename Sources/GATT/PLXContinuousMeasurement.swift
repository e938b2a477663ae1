// SPDX-License-Identifier: MIT

/// A pulse-oximeter SpO2 / pulse-rate pair (SFLOAT each).
public struct SpO2PR: Sendable, Equatable {
    public var spo2: IEEE11073Value
    public var pulseRate: IEEE11073Value
}

/// PLX Continuous Measurement 0x2A5F.
public struct PLXContinuousMeasurement: Sendable, Equatable {
    public var flags: UInt8
    public var normal: SpO2PR
    public var fast: SpO2PR?
    public var slow: SpO2PR?
    public var measurementStatus: UInt16?
    /// 24-bit field
    public var deviceAndSensorStatus: UInt32?
    public var pulseAmplitudeIndex: IEEE11073Value?
    public var ignoredTrailingBytes: Int

    public var rfuFlagBits: UInt8 { flags & 0xE0 }

    /// Measurement Status bits 13 (unavailable), 14 (questionable) or 15 (invalid):
    /// the values must not be reported as measurements.
    public var isStatusUnusable: Bool { (measurementStatus ?? 0) & 0xE000 != 0 }

    public init(bytes: UnsafeRawBufferPointer) throws(GATTDecodeError) {
        var r = ByteReader(bytes, .plxContinuousMeasurement)
        flags = try r.u8("flags")
        normal = SpO2PR(spo2: try r.sfloat("SpO2PR-Normal SpO2"), pulseRate: try r.sfloat("SpO2PR-Normal PR"))
        if flags & 0x01 != 0 {
            fast = SpO2PR(spo2: try r.sfloat("SpO2PR-Fast SpO2"), pulseRate: try r.sfloat("SpO2PR-Fast PR"))
        }
        if flags & 0x02 != 0 {
            slow = SpO2PR(spo2: try r.sfloat("SpO2PR-Slow SpO2"), pulseRate: try r.sfloat("SpO2PR-Slow PR"))
        }
        if flags & 0x04 != 0 { measurementStatus = try r.u16("measurement status") }
        if flags & 0x08 != 0 { deviceAndSensorStatus = try r.u24("device and sensor status") }
        if flags & 0x10 != 0 { pulseAmplitudeIndex = try r.sfloat("pulse amplitude index") }
        ignoredTrailingBytes = r.remaining
    }
}

extension PLXContinuousMeasurement: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var o = FieldWriter(encoder)
        try o.add("flags", Int(flags))
        try o.add("spo2_pct", normal.spo2)
        try o.add("pulse_rate_bpm", normal.pulseRate)
        try o.add("spo2_fast_pct", fast?.spo2)
        try o.add("pulse_rate_fast_bpm", fast?.pulseRate)
        try o.add("spo2_slow_pct", slow?.spo2)
        try o.add("pulse_rate_slow_bpm", slow?.pulseRate)
        try o.add("measurement_status", measurementStatus.map(Int.init))
        try o.add("device_and_sensor_status", deviceAndSensorStatus.map(Int.init))
        try o.add("pulse_amplitude_index_pct", pulseAmplitudeIndex)
        if isStatusUnusable { try o.add("status_unusable", true) }
        try o.add("rfu_flag_bits", rfuFlagBits != 0 ? Int(rfuFlagBits) : nil)
        try o.add("ignored_trailing_bytes", ignoredTrailingBytes > 0 ? ignoredTrailingBytes : nil)
    }
}

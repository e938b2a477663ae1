// SPDX-License-Identifier: MIT

/// Sensor Contact Status, flags bits 1–2 of 0x2A37.
public enum SensorContact: UInt8, Sendable, Equatable {
    /// Values 0 and 1: the feature is not supported in this connection.
    case unsupported = 0
    /// Value 2: supported, but the strap is not touching skin (HR is stale or 0).
    case notDetected = 2
    /// Value 3: supported and detected.
    case detected = 3

    init(flags: UInt8) {
        switch (flags >> 1) & 0x3 {
        case 2: self = .notDetected
        case 3: self = .detected
        default: self = .unsupported
        }
    }

    /// `meta.sensor_contact` value.
    public var label: String {
        switch self {
        case .unsupported: "unsupported"
        case .notDetected: "not_detected"
        case .detected: "detected"
        }
    }
}

/// Policy switches for 0x2A37 (reference §1.4 rule 3).
public struct HeartRateDecodingOptions: Sendable, Equatable {
    /// When true, a payload whose RR flag is set but carries no RR value is rejected
    /// (Nordic's behaviour). The default keeps the HR: at a gym losing the heart rate is
    /// worse than losing an RR list that does not exist.
    public var rejectRRFlagWithoutValues: Bool

    public init(rejectRRFlagWithoutValues: Bool = false) {
        self.rejectRRFlagWithoutValues = rejectRRFlagWithoutValues
    }

    public static let lenient = HeartRateDecodingOptions()
    public static let strict = HeartRateDecodingOptions(rejectRRFlagWithoutValues: true)
}

/// Heart Rate Measurement 0x2A37.
///
/// The hot path of the gateway: decoding allocates nothing except the RR array (and
/// not even that when the notification carries no RR).
public struct HeartRateMeasurement: Sendable, Equatable {
    public var flags: UInt8
    /// bpm; 0 means "no reading" to most straps and is dropped by the normalizer.
    public var heartRate: UInt16
    public var isUInt16Format: Bool { flags & 0x01 != 0 }
    public var sensorContact: SensorContact { SensorContact(flags: flags) }
    /// Cumulative kJ since the last reset; 0xFFFF means saturated.
    public var energyExpendedKJ: UInt16?
    /// RR intervals in 1/1024 s ticks, oldest first.
    public var rrIntervalTicks: [UInt16]
    /// The RR flag was set but no complete RR value followed (spec violation).
    public var rrFlagWithoutValues: Bool
    /// Bytes that did not form a complete RR value (an odd dangling byte).
    public var ignoredTrailingBytes: Int

    public var rfuFlagBits: UInt8 { flags & 0xE0 }
    public var rrFlag: Bool { flags & 0x10 != 0 }
    public var energyExpendedFlag: Bool { flags & 0x08 != 0 }

    /// RR in ms, exact (`ticks × 1000 / 1024` is representable in binary floating point).
    public var rrIntervalsMilliseconds: [Double] { rrIntervalTicks.map(HeartRateMeasurement.milliseconds(ticks:)) }

    @inline(__always)
    public static func milliseconds(ticks: UInt16) -> Double { Double(ticks) * 1000 / 1024 }

    public init(flags: UInt8, heartRate: UInt16, energyExpendedKJ: UInt16? = nil, rrIntervalTicks: [UInt16] = [],
                rrFlagWithoutValues: Bool = false, ignoredTrailingBytes: Int = 0) {
        self.flags = flags
        self.heartRate = heartRate
        self.energyExpendedKJ = energyExpendedKJ
        self.rrIntervalTicks = rrIntervalTicks
        self.rrFlagWithoutValues = rrFlagWithoutValues
        self.ignoredTrailingBytes = ignoredTrailingBytes
    }

    public init(bytes: UnsafeRawBufferPointer, options: HeartRateDecodingOptions = .lenient) throws(GATTDecodeError) {
        var r = ByteReader(bytes, .heartRateMeasurement)
        flags = try r.u8("flags")
        heartRate = flags & 0x01 != 0 ? try r.u16("heart rate value (uint16)") : UInt16(try r.u8("heart rate value (uint8)"))
        energyExpendedKJ = flags & 0x08 != 0 ? try r.u16("energy expended") : nil
        rrIntervalTicks = []
        rrFlagWithoutValues = false
        ignoredTrailingBytes = 0
        if flags & 0x10 != 0 {
            let count = r.remaining / 2
            if count == 0 {
                if options.rejectRRFlagWithoutValues {
                    throw GATTDecodeError(characteristic: .heartRateMeasurement, field: "rr-interval",
                                          offset: r.offset, reason: .missingRRIntervals)
                }
                rrFlagWithoutValues = true
            } else {
                rrIntervalTicks.reserveCapacity(count)
                for _ in 0..<count { rrIntervalTicks.append(try r.u16("rr-interval")) }
            }
        }
        ignoredTrailingBytes = r.remaining
    }

    public init<C: Collection<UInt8>>(bytes: C, options: HeartRateDecodingOptions = .lenient) throws(GATTDecodeError) {
        self = try withPayload(bytes) { buffer in
            Result { () throws(GATTDecodeError) in try HeartRateMeasurement(bytes: buffer, options: options) }
        }
    }

    /// Diagnostics worth logging; empty for a well-formed notification.
    public var warnings: [String] {
        var w: [String] = []
        if rrFlagWithoutValues { w.append("RR flag set but no RR value present (spec requires >=1)") }
        if ignoredTrailingBytes > 0 { w.append("\(ignoredTrailingBytes) trailing byte(s) ignored") }
        if rfuFlagBits != 0 { w.append("RFU flag bits set: 0x" + hexString([rfuFlagBits])) }
        return w
    }
}

extension HeartRateMeasurement: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var o = FieldWriter(encoder)
        try o.add("flags", Int(flags))
        try o.add("hr_format", isUInt16Format ? "uint16" : "uint8")
        try o.add("sensor_contact", sensorContact.label)
        try o.add("hr_bpm", Int(heartRate))
        try o.add("energy_expended_kj", energyExpendedKJ.map(Int.init))
        if rrFlag {
            try o.add("rr_raw_1_1024s", rrIntervalTicks.map(Int.init))
            try o.add("rr_ms", rrIntervalsMilliseconds)
        }
        let w = warnings
        if !w.isEmpty { try o.add("warnings", w) }
    }
}

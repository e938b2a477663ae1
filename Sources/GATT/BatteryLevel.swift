// SPDX-License-Identifier: MIT

/// Battery Level 0x2A19: percent 0…100; 101…255 are RFU and rejected (a "150 %"
/// battery would be reported to the consumer as a fraction above 1).
public struct BatteryLevel: Sendable, Equatable {
    public var percent: UInt8
    /// Extra bytes after the level: accepted and counted (policy rule 4), unlike Nordic.
    public var ignoredTrailingBytes: Int

    public init(percent: UInt8, ignoredTrailingBytes: Int = 0) {
        self.percent = percent
        self.ignoredTrailingBytes = ignoredTrailingBytes
    }

    public init(bytes: UnsafeRawBufferPointer) throws(GATTDecodeError) {
        var r = ByteReader(bytes, .batteryLevel)
        percent = try r.u8("battery level")
        if percent > 100 {
            throw GATTDecodeError(characteristic: .batteryLevel, field: "battery level", offset: 0,
                                  reason: .outOfRange(value: Int(percent), allowed: 0...100))
        }
        ignoredTrailingBytes = r.remaining
    }

    /// Fraction 0…1 as Synheart's `meta.battery` wants it.
    public var fraction: Double { Double(percent) / 100 }
}

extension BatteryLevel: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var o = FieldWriter(encoder)
        try o.add("battery_pct", Int(percent))
        try o.add("meta_battery", formatFixed(fraction, decimals: 2))
        try o.addTrailingBytesWarning(ignoredTrailingBytes)
    }
}

/// Fixed-point formatting without Foundation's `String(format:)` (which drags ICU in).
/// Rounds half away from zero on the decimal value.
public func formatFixed(_ value: Double, decimals: Int) -> String {
    guard value.isFinite else { return "0" }
    var scale: Int64 = 1
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(value) * Double(scale)).rounded(.toNearestOrAwayFromZero)
    guard scaled < 9e15 else { return String(value) }
    let n = Int64(scaled)
    let intPart = n / scale
    var s = (value < 0 && n != 0 ? "-" : "") + String(intPart)
    if decimals > 0 {
        var frac = String(n % scale)
        while frac.count < decimals { frac = "0" + frac }
        s += "." + frac
    }
    return s
}

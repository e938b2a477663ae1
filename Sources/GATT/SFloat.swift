// SPDX-License-Identifier: MIT

/// An IEEE 11073-20601 SFLOAT (16-bit) or FLOAT (32-bit) value.
///
/// The special values exist only with exponent 0 and are tested on the whole raw word
/// before splitting, as Wireshark and Nordic do; `0x17FF` is therefore 20470, not NaN.
/// Only `.value` may reach `metrics` (JSON has no NaN or infinity).
public enum IEEE11073Value: Equatable, Sendable {
    case value(Double)
    case nan
    case nres
    case positiveInfinity
    case negativeInfinity
    case reserved

    /// The finite value, or nil for every special value.
    public var finite: Double? {
        if case let .value(v) = self { return v }
        return nil
    }

    /// Name for diagnostics (`"NaN"`, `"NRes"`, ...).
    public var specialName: String? {
        switch self {
        case .value: nil
        case .nan: "NaN"
        case .nres: "NRes"
        case .positiveInfinity: "+INFINITY"
        case .negativeInfinity: "-INFINITY"
        case .reserved: "reserved"
        }
    }

    public init(sfloat raw: UInt16) {
        switch raw {
        case 0x07FF: self = .nan
        case 0x0800: self = .nres
        case 0x07FE: self = .positiveInfinity
        case 0x0802: self = .negativeInfinity
        case 0x0801: self = .reserved
        default:
            let exponent = Int(Int16(bitPattern: raw) >> 12)               // sign-extends 4 bits
            let mantissa = Int(Int16(bitPattern: raw << 4) >> 4)           // sign-extends 12 bits
            self = .value(IEEE11073Value.scale(mantissa, exponent))
        }
    }

    public init(float raw: UInt32) {
        switch raw {
        case 0x007F_FFFF: self = .nan
        case 0x0080_0000: self = .nres
        case 0x007F_FFFE: self = .positiveInfinity
        case 0x0080_0002: self = .negativeInfinity
        case 0x0080_0001: self = .reserved
        default:
            let exponent = Int(Int8(truncatingIfNeeded: raw >> 24))
            let mantissa = Int(Int32(bitPattern: raw << 8) >> 8)            // sign-extends 24 bits
            self = .value(IEEE11073Value.scale(mantissa, exponent))
        }
    }

    /// Divides by the power of ten for negative exponents, so 3760e-2 is exactly the
    /// Double nearest 37.6 (multiplying by 0.01 would not be).
    static func scale(_ mantissa: Int, _ exponent: Int) -> Double {
        let m = Double(mantissa)
        if exponent == 0 { return m }
        let p = powerOfTen(abs(exponent))
        return exponent > 0 ? m * p : m / p
    }

    /// 10^n. Exact up to 10^22 (the table); beyond that repeated multiplication is
    /// within a few ulps, which is irrelevant at such magnitudes.
    static func powerOfTen(_ n: Int) -> Double {
        if n < exactPowers.count { return exactPowers[n] }
        var result = exactPowers[exactPowers.count - 1]
        for _ in exactPowers.count - 1 ..< n { result *= 10 }
        return result
    }

    private static let exactPowers: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]
}

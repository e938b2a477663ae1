// SPDX-License-Identifier: MIT

/// A rejected payload.
///
/// It names the characteristic, the field being read and the byte offset, because a
/// payload from the field is only debuggable when the log line says *where* the layout
/// assumption broke (FTMS versions and vendor quirks shift every later field).
public struct GATTDecodeError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable {
        /// A mandatory or flagged fixed-size field does not fit in the remaining bytes.
        case truncated(needed: Int, available: Int)
        /// A value outside the range the specification allows (e.g. battery level 101).
        case outOfRange(value: Int, allowed: ClosedRange<Int>)
        /// The FTMS record length matches neither the FTMS v1.0 nor the GSS layout.
        case layoutMismatch(length: Int, expectedV1: Int, expectedGSS: Int)
        /// The RR flag is set but no RR value follows and the strict policy is active.
        case missingRRIntervals
        /// The UUID is not one of the characteristics blegate decodes (vendor UUIDs are
        /// never run through the SIG parsers).
        case unsupportedCharacteristic(String)
    }

    public var characteristic: GATTCharacteristic?
    public var field: String
    public var offset: Int
    public var reason: Reason

    public init(characteristic: GATTCharacteristic?, field: String, offset: Int, reason: Reason) {
        self.characteristic = characteristic
        self.field = field
        self.offset = offset
        self.reason = reason
    }

    public var description: String {
        let what = characteristic.map { "\($0.name) (\($0.hex16))" } ?? "characteristic"
        switch reason {
        case let .truncated(needed, available):
            return "\(what): \(field): need \(needed) byte(s) at offset \(offset), only \(available) left"
        case let .outOfRange(value, allowed):
            return "\(what): \(field): value \(value) at offset \(offset) outside \(allowed.lowerBound)...\(allowed.upperBound)"
        case let .layoutMismatch(length, v1, gss):
            return "\(what): \(field): record length \(length) matches neither the FTMS v1.0 layout (\(v1) bytes) nor the GSS layout (\(gss) bytes)"
        case .missingRRIntervals:
            return "\(what): \(field): RR flag set at offset \(offset) but no RR value present (strict policy)"
        case let .unsupportedCharacteristic(uuid):
            return "unsupported characteristic \(uuid)"
        }
    }
}

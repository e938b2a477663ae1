// SPDX-License-Identifier: MIT

/// The FIT binary layer (Garmin's FIT protocol, "FIT File Structure"): a 14-byte header,
/// definition and data messages in little-endian, and CRC-16 trailers. Knows no profile:
/// `FITWriter` says which messages and fields a workout becomes.
struct FITEncoder {
    /// One field value; its FIT base type and size follow from the case.
    enum Value {
        case enumeration(UInt8)
        case uint8(UInt8)
        case uint16(UInt16)
        case uint32(UInt32)
        case uint32z(UInt32)
        case uint8Array([UInt8])
        case uint32Array([UInt32])
        /// Null-terminated UTF-8 in a fixed number of bytes (padding included).
        case string(String, size: Int)

        var baseType: UInt8 {
            switch self {
            case .enumeration: 0x00
            case .uint8, .uint8Array: 0x02
            case .uint16: 0x84
            case .uint32, .uint32Array: 0x86
            case .uint32z: 0x8C
            case .string: 0x07
            }
        }

        var size: Int {
            switch self {
            case .enumeration, .uint8: 1
            case .uint16: 2
            case .uint32, .uint32z: 4
            case let .uint8Array(a): a.count
            case let .uint32Array(a): 4 * a.count
            case let .string(_, size): size
            }
        }

        func append(to out: inout [UInt8]) {
            switch self {
            case let .enumeration(v), let .uint8(v): out.append(v)
            case let .uint16(v): FITEncoder.appendLittleEndian(UInt32(v), bytes: 2, to: &out)
            case let .uint32(v), let .uint32z(v): FITEncoder.appendLittleEndian(v, bytes: 4, to: &out)
            case let .uint8Array(a): out.append(contentsOf: a)
            case let .uint32Array(a): for v in a { FITEncoder.appendLittleEndian(v, bytes: 4, to: &out) }
            case let .string(s, size):
                // Cut at a character boundary so the bytes stay valid UTF-8, keep the NUL.
                var bytes: [UInt8] = []
                for ch in s.unicodeScalars {
                    let utf8 = Array(String(ch).utf8)
                    if bytes.count + utf8.count > size - 1 { break }
                    bytes.append(contentsOf: utf8)
                }
                out.append(contentsOf: bytes)
                out.append(contentsOf: [UInt8](repeating: 0, count: size - bytes.count))
            }
        }
    }

    /// Protocol 2.0 and the profile version of the FIT SDK the field numbers were checked
    /// against (21.218, written as major × 1000 + minor).
    static let protocolVersion: UInt8 = 0x20
    static let profileVersion: UInt16 = 21_218

    private(set) var records: [UInt8] = []
    /// The field layout last defined for each local message type.
    private var definitions: [UInt8: [UInt16]] = [:]

    /// Appends one data message, preceded by a definition message when the local type's
    /// layout (global number, field numbers and sizes) differs from the last one given.
    mutating func write(global: UInt16, local: UInt8, fields: [(number: UInt8, value: Value)]) {
        let layout = [global] + fields.map { UInt16($0.number) << 8 | UInt16($0.value.size) }
        if definitions[local] != layout {
            definitions[local] = layout
            records.append(0x40 | local)                              // definition, normal header
            records.append(0)                                          // reserved
            records.append(0)                                          // little-endian
            FITEncoder.appendLittleEndian(UInt32(global), bytes: 2, to: &records)
            records.append(UInt8(fields.count))
            for f in fields {
                records.append(f.number)
                records.append(UInt8(f.value.size))
                records.append(f.value.baseType)
            }
        }
        records.append(local)                                          // data, normal header
        for f in fields { f.value.append(to: &records) }
    }

    /// Header, records and the file CRC: the complete `.fit` file.
    func file() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(14 + records.count + 2)
        out.append(14)
        out.append(FITEncoder.protocolVersion)
        FITEncoder.appendLittleEndian(UInt32(FITEncoder.profileVersion), bytes: 2, to: &out)
        FITEncoder.appendLittleEndian(UInt32(records.count), bytes: 4, to: &out)
        out.append(contentsOf: Array(".FIT".utf8))
        FITEncoder.appendLittleEndian(UInt32(FITEncoder.crc16(out)), bytes: 2, to: &out)
        out.append(contentsOf: records)
        FITEncoder.appendLittleEndian(UInt32(FITEncoder.crc16(out)), bytes: 2, to: &out)
        return out
    }

    /// FIT's CRC-16: polynomial x¹⁶ + x¹⁵ + x² + 1 processed LSB first (reflected 0xA001),
    /// initial value 0, no final XOR (the parameters also known as CRC-16/ARC).
    static func crc16<C: Collection<UInt8>>(_ bytes: C) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xA001 : crc >> 1 }
        }
        return crc
    }

    static func appendLittleEndian(_ value: UInt32, bytes: Int, to out: inout [UInt8]) {
        for i in 0..<bytes { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(i)))) }
    }
}

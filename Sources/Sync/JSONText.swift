// SPDX-License-Identifier: MIT

/// A JSON string literal written straight into a request body being built as bytes.
///
/// The record batch (`MetricsRequest`) and the document batch (`DocumentRequest`) splice
/// JSON text that is already written (each record's `appendJSON`, each stored document) and
/// only need their few strings quoted: `JSONEncoder` would mean a call, an encoder and a
/// `Data` per id on the hottest path of the gateway.
enum JSONText {
    /// `s` quoted and escaped as RFC 8259 requires: `"` `\` and control characters.
    static func appendString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Ids and most names need no escape: appended whole.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out.append(contentsOf: s.utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                        hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: out.append(byte)   // UTF-8 passes through: JSON text is UTF-8
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

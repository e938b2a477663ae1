// SPDX-License-Identifier: MIT
import PrintableText

/// One Device Information string (0x2A29, 0x2A24–0x2A28).
///
/// UTF-8 without length or terminator, but firmwares pad with NULs or spaces and some
/// send Latin-1; decoding is lenient and never fails. Whoever is in radio range chooses
/// these bytes, and they reach `blegate devices`, `status` and the journal: the value is
/// made printable as it is decoded (control characters, C1 controls and bidirectional
/// overrides become U+FFFD, at most `PrintableText.nameLimit` characters kept).
public struct DeviceInformationString: Sendable, Equatable {
    public var characteristic: GATTCharacteristic
    public var value: String
    /// True when the bytes were not valid UTF-8 and were read as Latin-1 instead.
    public var decodedAsLatin1: Bool
    /// Hex of the original bytes when they were not valid UTF-8 or not printable as they
    /// came, for diagnostics.
    public var rawHex: String?

    public init(characteristic: GATTCharacteristic, value: String, decodedAsLatin1: Bool = false, rawHex: String? = nil) {
        self.characteristic = characteristic
        self.value = value
        self.decodedAsLatin1 = decodedAsLatin1
        self.rawHex = rawHex
    }

    public init(characteristic: GATTCharacteristic, bytes: UnsafeRawBufferPointer) {
        self.characteristic = characteristic
        // A C-string ends at its first NUL; whatever follows is padding or garbage.
        let end = bytes.firstIndex(of: 0) ?? bytes.count
        let body = UnsafeRawBufferPointer(rebasing: bytes[0..<end])
        if let s = String(validating: body, as: UTF8.self) {
            value = s
            decodedAsLatin1 = false
            rawHex = nil
        } else {
            var s = ""
            for b in body { s.unicodeScalars.append(Unicode.Scalar(b)) }
            value = s
            decodedAsLatin1 = true
            rawHex = hexString(bytes)
        }
        value = DeviceInformationString.trimmed(value)
        if !PrintableText.isClean(value, limit: PrintableText.nameLimit) {
            value = PrintableText.clean(value, limit: PrintableText.nameLimit)
            rawHex = hexString(bytes)
        }
    }

    /// The WearMetrics `meta` key for this string.
    public var metaKey: String {
        switch characteristic {
        case .manufacturerName: "manufacturer_name"
        case .modelNumber: "model_number"
        case .serialNumber: "serial_number"
        case .firmwareRevision: "firmware_version"
        case .hardwareRevision: "hardware_version"
        case .softwareRevision: "software_version"
        default: characteristic.name
        }
    }

    static func trimmed(_ s: String) -> String {
        let scalars = s.unicodeScalars
        func isTrim(_ c: Unicode.Scalar) -> Bool { c.properties.isWhitespace || c.value == 0 }
        guard let first = scalars.firstIndex(where: { !isTrim($0) }),
              let last = scalars.lastIndex(where: { !isTrim($0) }) else { return "" }
        return String(scalars[first...last])
    }
}

extension DeviceInformationString: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var o = FieldWriter(encoder)
        try o.add(metaKey, value)
        if decodedAsLatin1 { try o.add("decoded_as", "latin1") }
        if let rawHex { try o.add("raw_hex", rawHex) }
    }
}

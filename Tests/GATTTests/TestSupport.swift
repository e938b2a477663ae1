// SPDX-License-Identifier: MIT
import Foundation
import GATT
import Testing

/// Bytes from the hex notation used in the reference tables (`1E 55 32 00`).
func bytes(_ hex: String) -> [UInt8] {
    guard let b = parseHex(hex) else { fatalError("bad hex in test: \(hex)") }
    return b
}

func decode(_ c: GATTCharacteristic, _ hex: String) throws(GATTDecodeError) -> DecodedCharacteristic {
    try GATTDecoder.decode(c, bytes: bytes(hex))
}

/// The error a payload is rejected with, or nil if it decodes.
func rejection(_ c: GATTCharacteristic, _ hex: String) -> GATTDecodeError? {
    do {
        _ = try decode(c, hex)
        return nil
    } catch {
        return error
    }
}

func approx(_ a: Double?, _ b: Double, tolerance: Double = 1e-9) -> Bool {
    guard let a else { return false }
    return abs(a - b) <= tolerance
}


/// The decoded fields as `blegate decode` writes them: JSONEncoder, keys sorted.
func jsonText(_ value: some Encodable) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

/// The decoded fields read back as a dictionary, for checks of single fields.
func fields(_ value: some Encodable) throws -> [String: Any] {
    try JSONSerialization.jsonObject(with: Data(jsonText(value).utf8)) as? [String: Any] ?? [:]
}

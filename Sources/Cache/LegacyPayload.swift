// SPDX-License-Identifier: MIT
import Foundation
import WearMetrics

/// The `payload` of a record as caches before the typed columns stored it, read once by
/// the migration that converts those rows (`CacheSchema`, "v4").
///
/// A payload was the record's WearMetrics JSON text, either plain or in a compact form:
/// a 0x01 marker, then the text with each of 30 recurring pieces written as one byte
/// 0x02...0x1F (JSON text never holds a raw byte below 0x20). With encryption, that
/// text was AES-GCM sealed with the record's id as additional data.
enum LegacyPayload {
    /// Byte 0x02 + i stood for `pieces[i]`: part of that file format.
    static let pieces: [[UInt8]] = [
        #"{"timestamp":"20"#, #"Z","device_id":""#, #"","source":"ble_"#, #"","metrics":{"#, #"},"meta":{"#,
        #""hr":"#, #""sensor_contact":""#, #"","rr_count":""#, #"","manufacturer_name":""#, #"","model_number":""#,
        #"","serial_number":""#, #"","firmware_version":""#, #"","hardware_version":""#, #"","software_version":""#,
        #"","body_sensor_location":""#, #""battery":"#, #""},"rr_ms":["#, #"","hrv_"#, "detected", "unsupported",
        #"",""#, #""}}"#, "chest", #"window_s":""#, #"_count":""#, #""device_timestamp":""#, #""hr_source":""#,
        #"_pct":""#, "device", #""energy_expended_kj":"#,
    ].map { Array($0.utf8) }

    /// The JSON text of a stored payload, compact or plain; nil for a compact payload
    /// holding a byte no piece stands for (corrupted).
    static func expand(_ stored: [UInt8]) -> [UInt8]? {
        guard stored.first == 0x01 else { return stored }
        var out: [UInt8] = []
        out.reserveCapacity(stored.count * 3)
        for b in stored.dropFirst() {
            if b >= 0x20 {
                out.append(b)
            } else if b >= 0x02 {
                out.append(contentsOf: pieces[Int(b - 0x02)])
            } else {
                return nil
            }
        }
        return out
    }

    /// The record a stored payload holds (opened with `cipher` when `encrypted`).
    static func record(id: String, encrypted: Bool, payload: [UInt8], cipher: PayloadCipher?) throws(CacheError) -> WearMetrics {
        var bytes = payload
        if encrypted {
            guard let cipher else { throw CacheError(.keyRequired, "record \(id) is encrypted and no key was given") }
            bytes = try cipher.open(payload, aad: Array(id.utf8), what: "record \(id)")
        }
        guard let text = expand(bytes) else {
            throw CacheError(.unreadablePayload, "record \(id): the stored text holds a byte the cache never writes (corrupted)")
        }
        do {
            return try JSONDecoder().decode(WearMetrics.self, from: Data(text))
        } catch {
            throw CacheError(.unreadablePayload, "record \(id): \(error)")
        }
    }
}

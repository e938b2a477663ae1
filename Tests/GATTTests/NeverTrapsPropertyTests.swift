// SPDX-License-Identifier: MIT
import GATT
import Testing
import Timing

/// A trap would kill the test process, so completing these loops is the assertion; the
/// inner checks make sure whatever decodes also encodes to JSON (JSONEncoder refuses NaN
/// and infinities).
@Suite("Decoding any byte string up to 64 bytes never traps")
struct NeverTrapsPropertyTests {
    @Test("random byte strings, every characteristic", arguments: GATTCharacteristic.allCases)
    func randomBytes(characteristic: GATTCharacteristic) {
        var rng = SeededRandom(seed: 0xB1E6A7E ^ UInt64(characteristic.rawValue))
        var decoded = 0
        let iterations = 10_000
        for i in 0..<iterations {
            let length = i < 65 ? i : Int.random(in: 0...64, using: &rng)
            var payload = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            // Bias half the runs towards short flag values so optional fields get reached.
            if i % 2 == 0, !payload.isEmpty { payload[0] &= 0x1F }
            if let d = try? GATTDecoder.decode(characteristic, bytes: payload) {
                decoded += 1
                if (try? jsonText(d)) == nil { Issue.record("does not encode (a non-finite number?) for \(payload)") }
            }
            // Same bytes as a slice not starting at 0.
            let padded = [0xAA] + payload
            _ = try? GATTDecoder.decode(characteristic, bytes: padded[1...])
        }
        #expect(decoded > 0)
    }

    @Test("every 0x2A37 payload of up to 3 bytes")
    func exhaustiveShortHeartRate() {
        var accepted = 0
        for a in 0...255 {
            for b in 0...255 {
                if (try? HeartRateMeasurement(bytes: [UInt8(a), UInt8(b)])) != nil { accepted += 1 }
                for c in stride(from: 0, through: 255, by: 17) {
                    _ = try? HeartRateMeasurement(bytes: [UInt8(a), UInt8(b), UInt8(c)])
                }
            }
        }
        // Two bytes decode exactly when flags need no more than one HR byte (bit 0 and bit 3 clear).
        #expect(accepted == 256 * 64)
    }
}

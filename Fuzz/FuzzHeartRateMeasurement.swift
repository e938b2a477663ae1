// SPDX-License-Identifier: MIT
// libFuzzer entry for Heart Rate Measurement 0x2A37 (fast path, both policies, Collection path, JSON). Compiled together with Sources/GATT/*.swift by scripts/fuzz.sh,
// so the decoder is called directly (no module import). Any trap is a finding.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = UnsafeRawBufferPointer(start: data, count: size)
    if let m = try? HeartRateMeasurement(bytes: buffer) {
        _ = m.rrIntervalsMilliseconds
        fuzzEncodeJSON(m)
    }
    _ = try? HeartRateMeasurement(bytes: buffer, options: .strict)
    _ = try? HeartRateMeasurement(bytes: Array(buffer).dropFirst())   // a slice that does not start at 0
    return 0
}

// SPDX-License-Identifier: MIT
// libFuzzer entry for GATT characteristic .weightMeasurement. Compiled together with Sources/GATT/*.swift by scripts/fuzz.sh,
// so the decoder is called directly (no module import). Any trap is a finding.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = UnsafeRawBufferPointer(start: data, count: size)
    if let decoded = try? GATTDecoder.decode(.weightMeasurement, buffer: buffer) { fuzzEncodeJSON(decoded) }
    return 0
}

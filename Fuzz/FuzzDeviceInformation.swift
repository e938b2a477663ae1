// SPDX-License-Identifier: MIT
// libFuzzer entry for the six Device Information strings (lenient UTF-8 / Latin-1). Compiled together with Sources/GATT/*.swift by scripts/fuzz.sh,
// so the decoder is called directly (no module import). Any trap is a finding.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = UnsafeRawBufferPointer(start: data, count: size)
    for c in [GATTCharacteristic.manufacturerName, .modelNumber, .serialNumber, .firmwareRevision, .hardwareRevision, .softwareRevision] {
        if let decoded = try? GATTDecoder.decode(c, buffer: buffer) { fuzzEncodeJSON(decoded) }
    }
    return 0
}

// SPDX-License-Identifier: MIT
// libFuzzer entry for IEEE-11073 SFLOAT and FLOAT over every 2/4-byte window. Compiled together with Sources/GATT/*.swift by scripts/fuzz.sh,
// so the decoder is called directly (no module import). Any trap is a finding.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = UnsafeRawBufferPointer(start: data, count: size)
    var i = 0
    while i + 4 <= size {
        let raw = UInt32(buffer[i]) | UInt32(buffer[i + 1]) << 8 | UInt32(buffer[i + 2]) << 16 | UInt32(buffer[i + 3]) << 24
        let f = IEEE11073Value(float: raw)
        let s = IEEE11073Value(sfloat: UInt16(truncatingIfNeeded: raw))
        if let v = f.finite, !v.isFinite { fatalError("non-finite FLOAT value") }
        if let v = s.finite, !v.isFinite { fatalError("non-finite SFLOAT value") }
        i += 1
    }
    return 0
}

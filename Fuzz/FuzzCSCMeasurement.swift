// SPDX-License-Identifier: MIT
// libFuzzer entry for CSC Measurement 0x2A5B plus the rollover-safe rate trackers fed with consecutive packets. Compiled together with Sources/GATT/*.swift by scripts/fuzz.sh,
// so the decoder is called directly (no module import). Any trap is a finding.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = UnsafeRawBufferPointer(start: data, count: size)
    var wheel = RevolutionRateTracker.cscWheel()
    var crank = RevolutionRateTracker.crank()
    var offset = 0
    // Treat the input as a sequence of length-prefixed packets so the trackers see deltas.
    while offset < size {
        let length = min(Int(buffer[offset]) % 16, size - offset - 1)
        let packet = UnsafeRawBufferPointer(rebasing: buffer[(offset + 1)..<(offset + 1 + length)])
        offset += 1 + length
        guard let m = try? CSCMeasurement(bytes: packet) else { continue }
        fuzzEncodeJSON(m)
        if let revs = m.cumulativeWheelRevolutions, let t = m.lastWheelEventTime {
            _ = wheel.update(revolutions: revs, eventTime: t, receivedAt: Double(offset))
        }
        if let revs = m.cumulativeCrankRevolutions, let t = m.lastCrankEventTime {
            _ = crank.update(revolutions: UInt32(revs), eventTime: t)
        }
    }
    return 0
}

/// Heart rate that Polar sensors put in their advertisements (manufacturer data of
/// company 0x006B), so a scan can show it without connecting.
///
/// Polar does not publish this layout as a specification; it is taken from the public
/// descriptions in Polar's own open-source BLE SDK (docs/bluez-client.md, "Polar
/// advertisement"). The payload, after the company identifier, is either one heart
/// rate block of 3 bytes (H6, old H7) or 4 bytes (H7 update, H10, OH1, Verity), or a
/// sequence of blocks where bit 6 of a block's first byte marks a length-prefixed
/// "GPB" block to skip.
///
/// A heart rate block: byte 0 flags (bit 0 battery status, bit 1 sensor contact,
/// bits 2-4 a frame counter that moves when the value is fresh, bit 5 broadcast,
/// bit 6 data type, 0 = heart rate), byte 1 a 5 kHz code, byte 2 the fast average,
/// byte 3 (when present) the slow average, which Polar's apps display.
public struct PolarHeartRate: Sendable, Hashable {
    public static let companyID: UInt16 = 0x006B

    /// Beats per minute as Polar's apps show it: the slow average when present.
    public var heartRate: UInt8
    public var fastAverage: UInt8
    public var sensorContact: Bool
    /// 0-7; a changed counter means a new measurement.
    public var frameCounter: UInt8
    /// Bit 0 of the flags. Polar's SDK names it "battery status" without saying which
    /// value means low, so it is passed on as the raw bit.
    public var batteryStatusBit: Bool

    /// nil when the payload carries no heart rate block.
    public init?(manufacturerData payload: [UInt8]) {
        if payload.count == 3 || payload.count == 4 {
            self.init(block: payload[...])
            return
        }
        var offset = 0
        while offset < payload.count {
            if payload[offset] & 0x40 != 0 {
                // GPB block: flags, length, then `length` bytes.
                guard offset + 1 < payload.count else { return nil }
                offset += 2 + Int(payload[offset + 1])
                continue
            }
            guard offset + 3 <= payload.count else { return nil }
            // The public sources disagree on how long a heart rate block is when more
            // follows; taking at most 4 bytes keeps the slow average when it is there.
            self.init(block: payload[offset..<min(offset + 4, payload.count)])
            return
        }
        return nil
    }

    private init(block: ArraySlice<UInt8>) {
        let b = Array(block)
        batteryStatusBit = b[0] & 0x01 != 0
        sensorContact = b[0] & 0x02 != 0
        frameCounter = (b[0] >> 2) & 0x07
        fastAverage = b[2]
        heartRate = b.count >= 4 ? b[3] : b[2]
    }

    /// The Polar heart rate of a device, if it advertises one that is not zero
    /// (zero is what a strap without skin contact sends).
    public static func of(_ device: Device) -> PolarHeartRate? {
        guard let payload = device.manufacturerData[companyID],
              let hr = PolarHeartRate(manufacturerData: payload), hr.heartRate > 0 else { return nil }
        return hr
    }
}

/// Bluetooth UUID spelling.
///
/// BlueZ reports 128-bit lower-case UUIDs, while people and specifications write
/// "2A37" or "0x180D": every UUID that enters the mirror, and every UUID a lookup is
/// given, goes through `normalized` so that the two always compare equal.
public enum BluetoothUUID {
    public static let baseSuffix = "-0000-1000-8000-00805f9b34fb"

    /// Lower-case 128-bit form: "2a37", "0x2A37" and "00002A37" all become
    /// "00002a37-0000-1000-8000-00805f9b34fb". Anything that is not a 16-, 32- or
    /// 128-bit UUID is returned lower-cased, so that it still matches itself.
    public static func normalized(_ uuid: String) -> String {
        var s = uuid.lowercased()
        if s.hasPrefix("0x") { s.removeFirst(2) }
        let isHex = !s.isEmpty && s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
        if isHex && s.utf8.count == 4 { return "0000" + s + baseSuffix }
        if isHex && s.utf8.count == 8 { return s + baseSuffix }
        if isHex && s.utf8.count == 32 {
            let u = Array(s)
            return String(u[0..<8]) + "-" + String(u[8..<12]) + "-" + String(u[12..<16]) + "-" + String(u[16..<20]) + "-" + String(u[20..<32])
        }
        return s
    }

    /// The 128-bit form of a 16-bit assigned number.
    public static func from16(_ value: UInt16) -> String {
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex + baseSuffix
    }
}

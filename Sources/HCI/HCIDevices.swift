import CBluetooth
#if canImport(Glibc)
import Glibc
#endif

/// A Bluetooth controller as the kernel sees it, below BlueZ: what `blegate doctor`
/// compares with what bluetoothd shows over D-Bus (an adapter that is up in the
/// kernel but missing from D-Bus points at bluetoothd; one that is down, at rfkill
/// or a stuck controller).
public struct HCIDevice: Sendable, Hashable {
    public var id: UInt16
    /// `hci0`.
    public var name: String
    /// `AA:BB:CC:DD:EE:FF`, most significant byte first.
    public var address: String
    public var isUp: Bool
    public var isRunning: Bool
}

public struct HCIError: Error, Sendable, CustomStringConvertible {
    public var operation: String
    public var errno: Int32

    public var description: String {
        let reason = String(cString: strerror(errno))
        if errno == EAFNOSUPPORT {
            return "\(operation): this kernel has no Bluetooth support (AF_BLUETOOTH: \(reason)); load the bluetooth module or use the simulator"
        }
        if errno == EPERM || errno == EACCES {
            return "\(operation): \(reason); this needs CAP_NET_ADMIN or membership of the bluetooth group"
        }
        return "\(operation): \(reason)"
    }
}

public enum HCIDevices {
    /// Every controller the kernel knows, through HCIGETDEVLIST and HCIGETDEVINFO.
    public static func list() throws(HCIError) -> [HCIDevice] {
        let sock = socket(CBT_AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), CBT_BTPROTO_HCI)
        guard sock >= 0 else { throw HCIError(operation: "opening an HCI socket", errno: errno) }
        defer { close(sock) }
        var ids = [UInt16](repeating: 0, count: Int(CBT_HCI_MAX_DEV))
        let n = cbt_list_devices(sock, &ids, CBT_HCI_MAX_DEV)
        guard n >= 0 else { throw HCIError(operation: "listing HCI devices", errno: -n) }
        var devices: [HCIDevice] = []
        for id in ids.prefix(Int(n)) {
            var name = [CChar](repeating: 0, count: 9)
            var address = [UInt8](repeating: 0, count: 6)
            var flags: UInt = 0
            let rc = cbt_device_info(sock, id, &name, &address, &flags)
            guard rc == 0 else { throw HCIError(operation: "reading hci\(id)", errno: -rc) }
            devices.append(HCIDevice(
                id: id,
                name: String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                address: formatAddress(address),
                isUp: cbt_flag_set(flags, CBT_HCI_UP) != 0,
                isRunning: cbt_flag_set(flags, CBT_HCI_RUNNING) != 0))
        }
        return devices
    }

    /// bdaddr_t is little-endian on the wire; people read it the other way round.
    public static func formatAddress(_ littleEndian: [UInt8]) -> String {
        littleEndian.reversed().map { b in
            let s = String(b, radix: 16, uppercase: true)
            return s.count == 1 ? "0" + s : s
        }.joined(separator: ":")
    }
}

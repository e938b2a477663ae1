// SPDX-License-Identifier: MIT
import CBluetooth
#if canImport(Glibc)
import Glibc
#endif

/// The last resort for a controller that has stopped answering: what `hciconfig hciN
/// reset` does, without libbluetooth. Powering off through `Adapter1.Powered` is tried
/// first by the caller; this goes below bluetoothd, which sees the controller go down
/// and come back through the kernel's management interface and re-powers it itself.
public enum HCIAdapterReset {
    /// How the controller is reset.
    public enum Method: String, Sendable, CaseIterable {
        /// HCIDEVDOWN then HCIDEVUP: closes the device and runs its whole init sequence
        /// (HCI_Reset included) again, which also clears a hung transport.
        case downUp = "down-up"
        /// HCIDEVRESET: the kernel's reset of an open device (queues flushed, HCI_Reset
        /// sent); lighter, but does not help when the device cannot be closed.
        case reset
    }

    /// Resets controller `id` (hci`id`). Needs CAP_NET_ADMIN (see `ProcessCapabilities`).
    /// A controller that is already down is brought up; one that comes up by itself
    /// meanwhile (EALREADY) counts as up.
    public static func reset(id: UInt16, method: Method = .downUp) throws(HCIResetError) {
        let sock = socket(CBT_AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), CBT_BTPROTO_HCI)
        guard sock >= 0 else { throw HCIResetError(device: id, step: .openSocket, errno: errno) }
        defer { close(sock) }
        switch method {
        case .downUp:
            let down = cbt_device_ioctl(sock, CBT_HCIDEVDOWN, id)
            // EALREADY: already down; fine, the up below is what matters.
            if down < 0 && -down != EALREADY { throw HCIResetError(device: id, step: .down, errno: -down) }
            let up = cbt_device_ioctl(sock, CBT_HCIDEVUP, id)
            if up < 0 && -up != EALREADY { throw HCIResetError(device: id, step: .up, errno: -up) }
        case .reset:
            let rc = cbt_device_ioctl(sock, CBT_HCIDEVRESET, id)
            if rc < 0 { throw HCIResetError(device: id, step: .reset, errno: -rc) }
        }
    }

    /// `hci0` → 0; nil for anything else.
    public static func deviceID(interfaceName: String) -> UInt16? {
        guard interfaceName.hasPrefix("hci") else { return nil }
        let digits = interfaceName.dropFirst(3)
        guard !digits.isEmpty, digits.allSatisfy(\.isNumber), digits.count <= 5 else { return nil }
        return UInt16(digits)
    }
}

/// Why a reset failed, with the step and what to do about it.
public struct HCIResetError: Error, Sendable, CustomStringConvertible {
    public enum Step: String, Sendable {
        case openSocket = "opening an HCI socket"
        case down = "HCIDEVDOWN"
        case up = "HCIDEVUP"
        case reset = "HCIDEVRESET"
    }

    public var device: UInt16
    public var step: Step
    public var errno: Int32

    public init(device: UInt16, step: Step, errno: Int32) {
        self.device = device
        self.step = step
        self.errno = errno
    }

    /// True when the process lacks the permission, as opposed to a controller problem:
    /// the caller then stops trying resets instead of counting failures.
    public var isPermissionDenied: Bool { errno == EPERM || errno == EACCES }

    public var description: String {
        let reason = String(cString: strerror(errno))
        let what = "resetting hci\(device) (\(step.rawValue))"
        switch errno {
        case EAFNOSUPPORT:
            return "\(what): this kernel has no Bluetooth support (AF_BLUETOOTH: \(reason)); load the bluetooth module"
        case EPERM, EACCES:
            return "\(what): \(reason); an HCI reset needs CAP_NET_ADMIN: set [bluetooth] adapter_reset = true and reinstall with `install.sh --adapter-reset`, or run `sudo hciconfig hci\(device) reset`"
        case ENODEV:
            return "\(what): no controller hci\(device) in the kernel (unplugged?)"
        case ERFKILL:
            return "\(what): hci\(device) is blocked by rfkill: rfkill unblock bluetooth"
        case ETIMEDOUT:
            return "\(what): the controller did not answer its init sequence (\(reason)); unplug and replug the dongle, or power-cycle the Pi"
        default:
            return "\(what): \(reason)"
        }
    }
}

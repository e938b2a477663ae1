// SPDX-License-Identifier: MIT

/// An adapter's rfkill switch as sysfs shows it (`/sys/class/bluetooth/hciN/rfkillM`).
/// A soft block is undone with `rfkill unblock`; a hard block is a physical switch or
/// the firmware, and no command helps.
public struct RFKillSwitch: Sendable, Hashable {
    public var name: String
    public var soft: Bool
    public var hard: Bool

    public var blocked: Bool { soft || hard }

    /// The switch of adapter `interface`, or nil if it has none (simulated adapters, or
    /// a kernel without rfkill).
    public static func of(_ interface: String, files: HostFiles = HostFiles()) -> RFKillSwitch? {
        let dir = "/sys/class/bluetooth/\(interface)"
        guard let entry = files.list(dir).first(where: { $0.hasPrefix("rfkill") }) else { return nil }
        let soft = files.readLine("\(dir)/\(entry)/soft") == "1"
        let hard = files.readLine("\(dir)/\(entry)/hard") == "1"
        return RFKillSwitch(name: entry, soft: soft, hard: hard)
    }

    public func check(adapter: String) -> DoctorCheck {
        let name = "rfkill \(adapter)"
        if hard {
            return .fail(name, "hard-blocked (\(self.name)): a hardware switch or the firmware turns the radio off",
                         fix: "check the device's radio switch or BIOS/firmware setting; on a Pi, remove `dtoverlay=disable-bt` from /boot/firmware/config.txt")
        }
        if soft {
            return .fail(name, "soft-blocked (\(self.name))",
                         fix: "sudo rfkill unblock bluetooth (and disable whatever blocks it at boot, e.g. `systemctl status systemd-rfkill`)")
        }
        return .ok(name, "not blocked")
    }
}

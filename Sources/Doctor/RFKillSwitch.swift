// SPDX-License-Identifier: MIT
import HCI

extension RFKillSwitch {
    /// The switch of adapter `interface` under `files`' root.
    public static func of(_ interface: String, files: HostFiles) -> RFKillSwitch? {
        of(interface, root: files.root)
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

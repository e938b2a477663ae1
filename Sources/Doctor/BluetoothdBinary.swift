// SPDX-License-Identifier: MIT

/// Where Debian and Raspberry Pi OS put bluetoothd, and what its version means for
/// blegate.
public enum BluetoothdBinary {
    public static let paths = ["/usr/libexec/bluetooth/bluetoothd", "/usr/lib/bluetooth/bluetoothd", "/usr/sbin/bluetoothd"]

    /// `5.66` from `bluetoothd --version` output; nil if it is not a version.
    public static func parseVersion(_ output: String) -> (major: Int, minor: Int)? {
        let t = output.trimmed()
        let parts = t.split(separator: ".")
        guard parts.count >= 2, let major = Int(parts[0]), let minor = Int(parts[1].prefix { $0.isNumber }) else { return nil }
        return (major, minor)
    }

    /// `path` nil: not installed. `versionOutput` nil: it could not be run.
    /// `onSystemBus` false: whatever serves org.bluez is not this machine's daemon (the
    /// simulator), so a missing binary is only a warning.
    public static func check(path: String?, versionOutput: String?, onSystemBus: Bool) -> DoctorCheck {
        let name = "bluetoothd"
        guard let path else {
            let message = "not installed (looked in \(paths.joined(separator: ", ")))"
            let fix = "sudo apt-get install bluez"
            return onSystemBus ? .fail(name, message, fix: fix) : .warn(name, message + "; this bus is not the system bus", fix: fix)
        }
        guard let output = versionOutput, let (major, minor) = parseVersion(output) else {
            return .warn(name, "\(path) is installed but `--version` gave no version (\(versionOutput?.trimmed() ?? "it did not run"))",
                         fix: "sudo apt-get install --reinstall bluez")
        }
        // AcquireNotify (blegate's default notification path) is stable from 5.50 on.
        if major < 5 || (major == 5 && minor < 50) {
            return .warn(name, "BlueZ \(major).\(minor) at \(path) is older than 5.50: AcquireNotify is unreliable",
                         fix: "upgrade the OS (Debian 12 ships 5.66), or set [bluetooth] notify = \"start\"")
        }
        return .ok(name, "BlueZ \(major).\(minor) (\(path))")
    }
}

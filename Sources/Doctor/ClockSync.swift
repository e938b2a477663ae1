// SPDX-License-Identifier: MIT
import CTimex
#if canImport(Glibc)
import Glibc
#endif

/// Whether the kernel considers its clock synchronized. A Pi has no battery-backed
/// clock: after a power cut it starts from the last shutdown's time until NTP corrects
/// it, and every record stamped before then carries a wrong time.
public enum ClockSync {
    /// adjtimex's clock state (TIME_ERROR = 5) and status word (STA_UNSYNC = 0x40).
    public static func isSynchronized(state: Int32, status: Int32) -> Bool {
        state != 5 && (status & 0x40) == 0
    }

    /// Reads the kernel's NTP state without changing it (modes = 0).
    public static func read() -> (state: Int32, status: Int32)? {
        var status: Int32 = 0
        let state = ctimex_read(&status)
        guard state >= 0 else { errno = -state; return nil }
        return (state, status)
    }

    public static func check() -> DoctorCheck {
        let name = "clock"
        guard let (state, status) = read() else {
            return .warn(name, "cannot read the kernel's clock state (adjtimex: \(String(cString: strerror(errno))))",
                         fix: "timedatectl status")
        }
        if isSynchronized(state: state, status: status) {
            return .ok(name, "synchronized (NTP)")
        }
        return .warn(name, "not synchronized: records are stamped with this machine's clock, which after a power cut on a Pi (no real-time clock) can be hours or days off",
                     fix: "sudo timedatectl set-ntp true (systemd-timesyncd) and let the network reach an NTP server; check with: timedatectl status")
    }
}

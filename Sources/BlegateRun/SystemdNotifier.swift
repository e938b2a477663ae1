// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// systemd's notification protocol (sd_notify(3)), spoken directly: one datagram per
/// message to `$NOTIFY_SOCKET`. Under `Type=notify` the unit is started once `READY=1`
/// arrives, and with `WatchdogSec=` systemd restarts a gateway that stops sending
/// `WATCHDOG=1`. Without the variables (a terminal, a test) every call does nothing.
public struct SystemdNotifier: Sendable {
    let socketPath: [UInt8]?
    /// Half of `WatchdogSec=`: how often `WATCHDOG=1` must go out; nil without a watchdog.
    public let watchdogInterval: Duration?

    public init(environment: [String: String] = SystemdNotifier.environment()) {
        if let path = environment["NOTIFY_SOCKET"], !path.isEmpty, path.utf8.count < 108 {
            var bytes = Array(path.utf8)
            if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }   // abstract namespace
            socketPath = bytes
        } else {
            socketPath = nil
        }
        // WATCHDOG_PID names the process the watchdog is meant for (not a child's).
        let forUs = environment["WATCHDOG_PID"].map { Int32($0) == getpid() } ?? true
        if forUs, let usec = environment["WATCHDOG_USEC"].flatMap(UInt64.init), usec > 0 {
            watchdogInterval = .microseconds(Int64(usec / 2))
        } else {
            watchdogInterval = nil
        }
    }

    /// The variables the protocol uses, from this process's environment.
    public static func environment() -> [String: String] {
        var found: [String: String] = [:]
        for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] {
            if let value = getenv(name) { found[name] = String(cString: value) }
        }
        return found
    }

    public var isActive: Bool { socketPath != nil }

    /// Sends `state` (`READY=1`, `WATCHDOG=1`, `STOPPING=1`, `STATUS=...`); false when
    /// there is no socket or the datagram could not be sent.
    @discardableResult
    public func notify(_ state: String) -> Bool {
        guard let path = socketPath else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in path.enumerated() { raw[i] = b }
        }
        // An abstract address's length counts its bytes exactly (no terminating NUL).
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (path.first == 0 ? 0 : 1))
        let bytes = Array(state.utf8)
        let sent = withUnsafePointer(to: &addr) { a in
            a.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), sa, length) }
            }
        }
        return sent == bytes.count
    }
}

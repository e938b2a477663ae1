// SPDX-License-Identifier: MIT
import BlueZ
import DBus
import HCI
#if canImport(Glibc)
import Glibc
#endif

/// The checks that ask the bus: is bluetoothd there, may this user call it, which
/// adapters does it have and are they powered.
package struct DoctorBusChecks {
    let address: DBusBusAddress
    let onSystemBus: Bool

    package init(address: DBusBusAddress, onSystemBus: Bool) {
        self.address = address
        self.onSystemBus = onSystemBus
    }

    package struct Result {
        package var checks: [DoctorCheck] = []
        /// Adapters bluetoothd reports (interface names), for the HCI and radio checks.
        package var adapters: [String] = []
        /// bluetoothd's argv (without argv[0]), when its process could be read.
        package var daemonArguments: [String]?
        package var daemonRunning = false
    }

    package func run() async -> Result {
        var result = Result()
        let connection: DBusConnection
        do {
            connection = try await DBusConnection.connect(address)
        } catch {
            result.checks.append(.fail("D-Bus", "cannot reach the \(address): \(error)",
                                       fix: onSystemBus ? "sudo systemctl start dbus (the system bus must run before bluetoothd and blegate)" : "check --bus"))
            return result
        }
        defer { connection.close() }
        let mirror = BlueZMirror(connection: connection)
        do {
            try await mirror.start()
        } catch {
            if error.is(.accessDenied) {
                result.checks.append(policyDenied(error))
            } else {
                result.checks.append(.fail("bluetoothd running", "cannot read bluetoothd's objects: \(error)",
                                           fix: "sudo systemctl restart bluetooth; then: journalctl -u bluetooth -n 50"))
            }
            return result
        }
        defer { mirror.stop() }
        guard mirror.isBlueZPresent else {
            result.checks.append(.fail("bluetoothd running", "nothing owns org.bluez on the \(address): bluetoothd is not running",
                                       fix: onSystemBus ? "sudo systemctl enable --now bluetooth; if it fails: journalctl -u bluetooth -n 50" : "start the simulator (blegate simulate) on this bus"))
            result.checks.append(staticPolicy(liveVerdict: nil))
            return result
        }
        result.daemonRunning = true
        let owner = (try? await connection.nameOwner(of: BlueZMirror.busName)) ?? nil
        var process = ""
        if let pid = try? await connection.call(destination: "org.freedesktop.DBus", path: DBusObjectPath("/org/freedesktop/DBus"),
                                                interface: "org.freedesktop.DBus", member: "GetConnectionUnixProcessID",
                                                [.string(BlueZMirror.busName)], timeout: .seconds(5)).first?.integerValue {
            let files = HostFiles()
            let comm = files.readLine("/proc/\(pid)/comm") ?? "?"
            process = ", pid \(pid) (\(comm))"
            if comm == "bluetoothd", let cmdline = files.readRaw("/proc/\(pid)/cmdline") {
                result.daemonArguments = Array(cmdline.split(separator: 0, omittingEmptySubsequences: false).dropFirst()
                    .filter { !$0.isEmpty }.map { String(decoding: $0, as: UTF8.self) })
            }
        }
        result.checks.append(.ok("bluetoothd running", "org.bluez is owned by \(owner ?? "?")\(process)"))
        result.checks.append(staticPolicy(liveVerdict: true))

        // bluetoothd can own its name a moment before it has added its adapters.
        _ = try? await mirror.waitUntil(timeout: .seconds(2)) { !$0.adapters.isEmpty }
        let adapters = mirror.adapters.sorted { $0.interfaceName < $1.interfaceName }
        guard !adapters.isEmpty else {
            result.checks.append(.fail("adapters", "bluetoothd reports no adapter",
                                       fix: "plug in a Bluetooth adapter; check the kernel sees it: dmesg | grep -i bluetooth; btmgmt info"))
            return result
        }
        for adapter in adapters {
            result.adapters.append(adapter.interfaceName)
            result.checks.append(check(adapter))
        }
        return result
    }

    private func check(_ adapter: Adapter) -> DoctorCheck {
        let name = "adapter \(adapter.interfaceName)"
        let label = "\(adapter.address)" + (adapter.name.map { $0.isEmpty ? "" : " \"\($0)\"" } ?? "")
        if adapter.powered {
            return .ok(name, "\(label), powered" + (adapter.discovering ? ", discovering" : ""))
        }
        if onSystemBus, let rfkill = RFKillSwitch.of(adapter.interfaceName), rfkill.blocked {
            return .fail(name, "\(label) is powered off: blocked by rfkill (\(rfkill.hard ? "hard" : "soft"))",
                         fix: rfkill.hard ? "a hardware switch or the firmware blocks the radio" : "sudo rfkill unblock bluetooth; then: bluetoothctl power on")
        }
        return .fail(name, "\(label) is powered off",
                     fix: "bluetoothctl power on (and keep `AutoEnable=true` under [Policy] in /etc/bluetooth/main.conf so it comes up after a reboot)")
    }

    private func policyDenied(_ error: DBusError) -> DoctorCheck {
        let user = DoctorHost.userName(uid: geteuid())
        let groups = DoctorHost.systemBusPolicy().grantingGroups
        let group = groups.first ?? "bluetooth"
        return .fail("D-Bus policy", "the bus refuses calls from \(user) to org.bluez: \(error.message)",
                     fix: "sudo usermod -aG \(group) \(user), then log in again (or restart the service)")
    }

    /// What the policy files say, beside the live answer. As root this also checks the
    /// service user, which is what matters for the installed service.
    private func staticPolicy(liveVerdict: Bool?) -> DoctorCheck {
        let name = "D-Bus policy"
        let uid = geteuid()
        let user = DoctorHost.userName(uid: uid)
        var subjects: [(String, [String])] = [(user, DoctorHost.groupNames(user: user, gid: getegid()))]
        if uid == 0, let pw = getpwnam("blegate") {
            subjects.append(("blegate", DoctorHost.groupNames(user: "blegate", gid: pw.pointee.pw_gid)))
        }
        guard onSystemBus else {
            let verdict = liveVerdict == true ? "\(user) may call org.bluez on this bus" : "not checked"
            return .ok(name, verdict + " (a private bus: the system bus's policy files do not apply)")
        }
        let policy = DoctorHost.systemBusPolicy()
        var refused: [String] = []
        var allowed: [String] = []
        for (who, groups) in subjects where who != "root" {
            if policy.allows(user: who, groups: groups) { allowed.append(who) } else { refused.append(who) }
        }
        let grant = policy.grantingGroups.first ?? "bluetooth"
        if !refused.isEmpty {
            return .fail(name, "the policy files in \(DBusPolicy.directories.joined(separator: " and ")) give \(refused.joined(separator: ", ")) no access to org.bluez",
                         fix: refused.map { "sudo usermod -aG \(grant) \($0)" }.joined(separator: "; ") + ", then restart blegate")
        }
        let who = ([user] + allowed).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        return .ok(name, "\(who.joined(separator: " and ")) may call org.bluez" + (liveVerdict == true ? " (GetManagedObjects answered)" : ""))
    }
}

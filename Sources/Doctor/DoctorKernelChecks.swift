// SPDX-License-Identifier: MIT
import HCI
#if canImport(Glibc)
import Glibc
#endif

/// The checks that ask the kernel (HCI ioctls, rfkill, capabilities) and the Wi-Fi radio
/// beside the adapter.
package enum DoctorKernelChecks {
    /// The kernel's view (HCI ioctls, rfkill): only meaningful when the bus is this
    /// machine's system bus.
    package static func adapters(busAdapters: [String], onSystemBus: Bool) -> [DoctorCheck] {
        guard onSystemBus else {
            return [.warn("kernel adapters", "not checked: the adapters on a private bus (the simulator) are not this kernel's", fix: nil)]
        }
        let devices: [HCIDevice]
        do {
            devices = try HCIDevices.list()
        } catch {
            if error.errno == EAFNOSUPPORT {
                return [.fail("kernel adapters", "this kernel has no Bluetooth support (AF_BLUETOOTH unavailable)",
                              fix: "sudo modprobe bluetooth (and the adapter's driver: btusb for dongles, hci_uart on a Pi); on a Pi check that /boot/firmware/config.txt has no dtoverlay=disable-bt")]
            }
            return [.fail("kernel adapters", error.description, fix: "sudo modprobe bluetooth")]
        }
        if devices.isEmpty {
            return [.fail("kernel adapters", "the kernel knows no Bluetooth controller",
                          fix: "plug in a dongle (lsusb) or, on a Pi, enable the built-in radio (no dtoverlay=disable-bt; sudo systemctl enable --now hciuart)")]
        }
        var checks: [DoctorCheck] = []
        for device in devices {
            let name = "kernel \(device.name)"
            if device.isUp {
                checks.append(.ok(name, "\(device.address) up" + (device.isRunning ? ", running" : "")))
            } else {
                checks.append(.fail(name, "\(device.address) is down in the kernel",
                                    fix: "sudo rfkill unblock bluetooth; bluetoothctl power on; if it stays down, unplug and replug the adapter"))
            }
            if let rfkill = RFKillSwitch.of(device.name) {
                checks.append(rfkill.check(adapter: device.name))
            }
            if !busAdapters.isEmpty && !busAdapters.contains(device.name) {
                checks.append(.fail("bluetoothd \(device.name)", "the kernel has \(device.name) but bluetoothd does not show it",
                                    fix: "sudo systemctl restart bluetooth"))
            }
        }
        return checks
    }

    package static func coexistence(adapters: [String], files: HostFiles) -> DoctorCheck {
        var links: [String: String?] = [:]
        if RadioCoexistence.piModel(files: files) != nil {
            for interface in RadioCoexistence.wifiInterfaces(files: files) {
                let run = DoctorHost.run(["iw", "dev", interface, "link"])
                links[interface] = run?.status == 0 ? run?.output : nil
            }
        }
        return RadioCoexistence.check(adapters: adapters, files: files, links: links)
    }

    package static func adapterReset(required: Bool) -> DoctorCheck {
        let name = "adapter reset"
        let caps: ProcessCapabilities
        do {
            caps = try ProcessCapabilities.current()
        } catch {
            return .warn(name, error.message, fix: nil)
        }
        if caps.hasNetAdmin {
            return .ok(name, "CAP_NET_ADMIN held: a hung adapter can be reset through HCI")
        }
        let message = "CAP_NET_ADMIN not held: a hung adapter is only power-cycled through bluetoothd"
        let fix = "set [bluetooth] adapter_reset = true and run: sudo scripts/install.sh --adapter-reset"
        return required ? .fail(name, message, fix: fix) : .ok(name, message)
    }
}

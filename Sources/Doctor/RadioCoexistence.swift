// SPDX-License-Identifier: MIT

/// A Raspberry Pi's built-in Bluetooth and Wi-Fi share one chip and one antenna; with
/// Wi-Fi on 2.4 GHz the chip time-slices the two, and Bluetooth connections see missed
/// events and supervision timeouts. A USB dongle or 5 GHz Wi-Fi avoids it.
public enum RadioCoexistence {
    /// `Raspberry Pi 4 Model B Rev 1.4`, or nil when this is not a Pi.
    public static func piModel(files: HostFiles) -> String? {
        guard let model = files.read("/proc/device-tree/model")?.trimmed(), model.hasPrefix("Raspberry Pi") else { return nil }
        return model
    }

    /// Built in = not on USB (a Pi's radio hangs off a UART or SDIO).
    public static func isUSB(adapter: String, files: HostFiles) -> Bool? {
        guard let device = files.resolved("/sys/class/bluetooth/\(adapter)") else { return nil }
        return device.split(separator: "/").contains { $0.hasPrefix("usb") }
    }

    /// Network interfaces with a `wireless` directory.
    public static func wifiInterfaces(files: HostFiles) -> [String] {
        files.list("/sys/class/net").filter { files.isDirectory("/sys/class/net/\($0)/wireless") }
    }

    /// The frequency in MHz from `iw dev IF link` output (`freq: 2437` or `freq: 2437.0`);
    /// nil when not connected.
    public static func frequency(iwLinkOutput: String) -> Double? {
        for line in iwLinkOutput.split(separator: "\n") {
            let t = line.trimmed()
            guard t.hasPrefix("freq:") else { continue }
            return Double(t.dropFirst(5).trimmed())
        }
        return nil
    }

    public static func is24GHz(_ mhz: Double) -> Bool { (2400...2500).contains(mhz) }

    /// `links`: interface → `iw dev IF link` output, nil when iw could not be run.
    public static func check(adapters: [String], files: HostFiles, links: [String: String?]) -> DoctorCheck {
        let name = "radio coexistence"
        guard let model = piModel(files: files) else {
            return .ok(name, "not a Raspberry Pi: no shared Bluetooth/Wi-Fi radio to worry about")
        }
        let builtIn = adapters.filter { isUSB(adapter: $0, files: files) == false }
        if builtIn.isEmpty {
            return .ok(name, "\(model): no adapter in use is the built-in radio")
        }
        var on24: [String] = []
        var unknown: [String] = []
        for (interface, output) in links.sorted(by: { $0.key < $1.key }) {
            guard let output else { unknown.append(interface); continue }
            if let mhz = frequency(iwLinkOutput: output), is24GHz(mhz) { on24.append("\(interface) at \(Int(mhz)) MHz") }
        }
        let radios = builtIn.joined(separator: ", ")
        if !on24.isEmpty {
            return .warn(name, "\(model): \(radios) is the built-in radio and Wi-Fi is on 2.4 GHz (\(on24.joined(separator: ", "))); they share one antenna, so straps drop out under Wi-Fi traffic",
                         fix: "join a 5 GHz network (or use Ethernet), or plug in a USB Bluetooth dongle on a short extension cable and list it in [bluetooth] adapters")
        }
        if !unknown.isEmpty {
            return .warn(name, "\(model): \(radios) is the built-in radio; the Wi-Fi band of \(unknown.joined(separator: ", ")) could not be read",
                         fix: "sudo apt-get install iw, then run blegate doctor again")
        }
        return .ok(name, "\(model): \(radios) is the built-in radio; Wi-Fi is not on 2.4 GHz")
    }
}

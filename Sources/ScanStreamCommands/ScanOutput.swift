#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BlueZ
import DBus
import GATT
import Synchronization
import WearMetrics
#if canImport(Glibc)
import Glibc
#endif

/// The devices a scan has seen and how they are shown: a JSON line per sighting, or
/// a table sorted by RSSI. Fed by mirror events on the dispatcher thread.
final class ScanOutput: Sendable {
    let json: Bool
    let all: Bool
    let adapter: String
    private let rows = Mutex<[DBusObjectPath: Advertisement]>([:])

    /// The Device1/Battery1 properties a scan shows; other changes print nothing.
    static let shown: Set<String> = [
        "RSSI", "Name", "Alias", "UUIDs", "ManufacturerData", "ServiceData", "Appearance",
        "AddressType", "Connected", "Paired", "ServicesResolved", "Percentage",
    ]

    init(json: Bool, all: Bool, adapter: String) {
        self.json = json
        self.all = all
        self.adapter = adapter
    }

    /// Returns the failure that ends the scan, if the event is one.
    func handle(_ event: BlueZEvent, adapter path: DBusObjectPath) -> ScanFailure? {
        switch event {
        case .deviceAdded(let d) where d.adapter == path:
            update(d)
        case .deviceChanged(let d, let changed) where d.adapter == path && !changed.isDisjoint(with: Self.shown):
            update(d)
        case .deviceRemoved(let d):
            _ = rows.withLock { $0.removeValue(forKey: d.path) }
        case .adapterRemoved(let a) where a.path == path:
            return ScanFailure(exit: .noAdapter, message: "\(adapter) was removed")
        case .adapterChanged(let a, let changed) where a.path == path && changed.contains("Powered") && !a.powered:
            return ScanFailure(exit: .poweredOff, message: "\(adapter) was powered off: bluetoothctl power on")
        case .bluezVanished:
            return ScanFailure(exit: .bluetoothdNotRunning, message: "bluetoothd stopped: sudo systemctl start bluetooth")
        default:
            break
        }
        return nil
    }

    func update(_ device: Device) {
        let ad = Advertisement(device: device)
        guard all || ad.isFitness else { return }
        rows.withLock { $0[device.path] = ad }
        if json { emit(Self.jsonLine(ad, adapter: adapter, time: Self.now())) }
    }

    static func now() -> UTCTimestamp { .now }

    static func jsonLine(_ ad: Advertisement, adapter: String, time: UTCTimestamp) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings, integers and booleans: encoding cannot fail.
        let line = (try? encoder.encode(Sighting(ad, adapter: adapter, time: time))) ?? Data("{}".utf8)
        return String(decoding: line, as: UTF8.self)
    }

    /// One JSON line of `blegate scan --json`: what is unknown is null, so every line has
    /// every key.
    struct Sighting: Encodable {
        var address: String
        var addressType: String
        var name: String?
        var rssi: Int?
        var uuids: [String]
        var battery: Int?
        var heartRate: Int?
        var connectable: Bool?
        var adapter: String
        var time: String

        init(_ ad: Advertisement, adapter: String, time: UTCTimestamp) {
            address = ad.address
            addressType = ad.addressKind.rawValue
            name = ad.name
            rssi = ad.rssi.map { Int($0) }
            uuids = ad.uuids
            battery = ad.battery.map { Int($0) }
            heartRate = ad.polar.map { Int($0.heartRate) }
            connectable = ad.connectable
            self.adapter = adapter
            self.time = time.iso8601
        }

        enum CodingKeys: String, CodingKey {
            case address, addressType = "address_type", name, rssi, uuids, battery, heartRate = "heart_rate", connectable, adapter, time
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(address, forKey: .address)
            try c.encode(addressType, forKey: .addressType)
            try c.encode(name, forKey: .name)
            try c.encode(rssi, forKey: .rssi)
            try c.encode(uuids, forKey: .uuids)
            try c.encode(battery, forKey: .battery)
            try c.encode(heartRate, forKey: .heartRate)
            try c.encode(connectable, forKey: .connectable)
            try c.encode(adapter, forKey: .adapter)
            try c.encode(time, forKey: .time)
        }
    }

    /// Redraws every second on a terminal; elsewhere prints the table every 5 s so a
    /// log stays readable.
    func redrawLoop() async {
        let tty = isatty(1) != 0
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(tty ? 1 : 5))
            if Task.isCancelled { return }
            draw(final: false)
        }
    }

    func draw(final: Bool) {
        let tty = isatty(1) != 0
        let list = rows.withLock { Array($0.values) }.sorted {
            ($0.rssi ?? Int16.min, $1.address) > ($1.rssi ?? Int16.min, $0.address)
        }
        var out = tty && !final ? "\u{1B}[2J\u{1B}[H" : ""
        out += Self.table(list)
        emit(out, newline: false)
    }

    static func table(_ list: [Advertisement]) -> String {
        var out = pad("name", 22) + pad("address", 19) + pad("type", 22) + pad("RSSI", 6) + pad("HR", 5)
            + pad("batt", 6) + pad("conn", 5) + "services\n"
        for ad in list {
            out += pad(ad.name ?? "?", 22) + pad(ad.address, 19) + pad(ad.addressKind.rawValue, 22)
                + pad(ad.rssi.map(String.init) ?? "-", 6) + pad(ad.polar.map { String($0.heartRate) } ?? "-", 5)
                + pad(ad.battery.map { "\($0)%" } ?? "-", 6) + pad(ad.connectable == true ? "yes" : "?", 5)
                + ad.uuids.map(shortUUID).joined(separator: ",") + "\n"
        }
        return out
    }

    /// "180D" for a SIG UUID, the 128-bit form otherwise.
    static func shortUUID(_ uuid: String) -> String {
        guard uuid.hasPrefix("0000"), uuid.hasSuffix(BluetoothUUID.baseSuffix), uuid.count == 36 else { return uuid }
        return String(uuid.dropFirst(4).prefix(4)).uppercased()
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? String(s.prefix(width - 1)) + " " : s + String(repeating: " ", count: width - s.count)
    }

    private let writeLock = Mutex(())

    private func emit(_ text: String, newline: Bool = true) {
        writeLock.withLock { _ in
            print(text, terminator: newline ? "\n" : "")
            fflush(nil)
        }
    }
}

import DBus
import GATT
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `blegate simulate --live`: a BlueZ client on a second connection that discovers
/// the simulated straps, connects to each, subscribes to Heart Rate Measurement and
/// shows what arrives: the whole path (D-Bus, the simulator, the decoder) on any
/// machine. It is a view for people; `blegate stream` is the real client.
final class LiveView: Sendable {
    struct Row: Sendable {
        var name = ""
        var address = ""
        var connected = false
        var heartRate: UInt16?
        var rr: [Double] = []
        var contact = ""
        var battery: Int?
        var notifications = 0
        var malformed = 0
        /// The Heart Rate Measurement path below the device, once known.
        var hrSuffix = "/?"
    }

    let connection: DBusConnection
    let rows = Mutex<[DBusObjectPath: Row]>([:])

    init(connection: DBusConnection) { self.connection = connection }

    static let hrService = "0000180d-0000-1000-8000-00805f9b34fb"
    static let hrMeasurement = "00002a37-0000-1000-8000-00805f9b34fb"
    static let batteryLevel = "00002a19-0000-1000-8000-00805f9b34fb"

    func run() async throws {
        let objects = try await managedObjects()
        guard let adapter = objects.first(where: { $0.value["org.bluez.Adapter1"] != nil })?.key else {
            print("live: no adapter on the bus")
            return
        }
        let added = try await connection.signals(matching: DBusMatchRule(sender: "org.bluez", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded"))
        _ = try await connection.subscribeRaw(matching: DBusMatchRule(sender: "org.bluez", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", pathNamespace: adapter)) { view in
            guard let path = view.path, let device = path.parent?.parent else { return }
            view.withChangedBytes("Value") { bytes in
                self.rows.withLock { rows in
                    guard rows[device] != nil else { return }
                    if path.rawValue.hasSuffix(rows[device]!.hrSuffix) {
                        do {
                            let m = try HeartRateMeasurement(bytes: bytes)
                            rows[device]!.heartRate = m.heartRate
                            rows[device]!.rr = m.rrIntervalsMilliseconds
                            rows[device]!.contact = m.sensorContact.label
                            rows[device]!.notifications += 1
                        } catch {
                            rows[device]!.malformed += 1
                        }
                    }
                }
            }
        }
        try await connection.call(destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1", member: "SetDiscoveryFilter",
                                  [.properties([("Transport", .string("le")), ("UUIDs", .strings([Self.hrService]))])])
        try await connection.call(destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1", member: "StartDiscovery")
        let printer = Task { await self.printLoop() }
        defer { printer.cancel() }
        await withTaskGroup(of: Void.self) { group in
            for await signal in added {
                guard let path = signal.body.first?.objectPathValue,
                      let device = signal.body.last?.stringKeyedValue?["org.bluez.Device1"]?.stringKeyedValue,
                      device["UUIDs"]?.stringArrayValue?.contains(Self.hrService) == true else { continue }
                let isNew = rows.withLock { rows -> Bool in
                    guard rows[path] == nil else { return false }
                    rows[path] = Row(name: device["Name"]?.stringValue ?? "?", address: device["Address"]?.stringValue ?? "?")
                    return true
                }
                if isNew { group.addTask { await self.follow(path) } }
            }
        }
    }

    /// Connects and subscribes; a failure is shown and retried after a pause.
    func follow(_ device: DBusObjectPath) async {
        while !Task.isCancelled {
            do {
                try await connection.call(destination: "org.bluez", path: device, interface: "org.bluez.Device1", member: "Connect", timeout: .seconds(30))
                var characteristic: DBusObjectPath?
                for _ in 0..<100 where characteristic == nil {
                    characteristic = try await managedObjects().first { path, ifaces in
                        path.isDescendant(of: device) && ifaces["org.bluez.GattCharacteristic1"]?["UUID"]?.stringValue == Self.hrMeasurement
                    }?.key
                    if characteristic == nil { try await Task.sleep(for: .milliseconds(100)) }
                }
                guard let characteristic else { throw DBusError(.failed, "no Heart Rate Measurement characteristic") }
                rows.withLock {
                    $0[device]?.connected = true
                    $0[device]?.hrSuffix = String(characteristic.rawValue.dropFirst(device.rawValue.count))
                }
                try await connection.call(destination: "org.bluez", path: characteristic, interface: "org.bluez.GattCharacteristic1", member: "StartNotify")
                let battery = try? await connection.call(destination: "org.bluez", path: device, interface: "org.freedesktop.DBus.Properties", member: "Get",
                                                         [.string("org.bluez.Battery1"), .string("Percentage")]).first?.integerValue
                rows.withLock { $0[device]?.battery = battery.map { Int($0) } }
                return
            } catch {
                rows.withLock { $0[device]?.contact = "connect failed: \((error as? DBusError).map { String($0.name.split(separator: ".").last ?? "") } ?? "\(error)")" }
                try? await Task.sleep(for: .seconds(2))
            }
        }
    }

    func managedObjects() async throws -> [DBusObjectPath: [String: [String: DBusValue]]] {
        let reply = try await connection.call(destination: "org.bluez", path: .root, interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
        var out: [DBusObjectPath: [String: [String: DBusValue]]] = [:]
        for entry in reply.first?.dictionaryEntries ?? [] {
            guard let path = entry.key.objectPathValue, let ifaces = entry.value.stringKeyedValue else { continue }
            out[path] = ifaces.compactMapValues { $0.stringKeyedValue }
        }
        return out
    }

    func printLoop() async {
        let tty = isatty(1) != 0
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(tty ? 1 : 5))
            let snapshot = rows.withLock { $0.values.sorted { $0.name < $1.name } }
            var out = tty ? "\u{1B}[2J\u{1B}[H" : ""
            out += pad("strap", 22) + pad("address", 19) + pad("HR", 5) + pad("RR ms", 18) + pad("contact", 16) + pad("batt", 6) + "notif/bad\n"
            for r in snapshot {
                let rr = r.rr.map { String(Int($0.rounded())) }.joined(separator: ",")
                out += pad(r.name, 22) + pad(r.address, 19) + pad(r.heartRate.map(String.init) ?? "-", 5) + pad(rr.isEmpty ? "-" : rr, 18)
                    + pad(r.connected ? r.contact : (r.contact.isEmpty ? "connecting" : r.contact), 16)
                    + pad(r.battery.map { "\($0)%" } ?? "-", 6) + "\(r.notifications)/\(r.malformed)\n"
            }
            print(out, terminator: "")
            fflush(nil)
        }
    }

    private func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? String(s.prefix(width - 1)) + " " : s + String(repeating: " ", count: width - s.count)
    }
}

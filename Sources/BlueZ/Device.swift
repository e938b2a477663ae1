import DBus
import PrintableText

/// An `org.bluez.Device1` (with its `org.bluez.Battery1`, when present) as last
/// reported by bluetoothd.
///
/// `connected` and `servicesResolved` are only as good as BlueZ's signals: 5.66 was
/// seen not to emit `Connected=true`/`ServicesResolved=true` at all on some connects
/// (docs/simulator.md), so a client decides readiness from the GATT objects
/// (`BlueZSnapshot.hasResolvedGATT`) and from its own Connect reply.
public struct Device: Sendable, Hashable, Identifiable {
    public let path: DBusObjectPath
    public var adapter: DBusObjectPath
    public var address: String = ""
    /// "public" or "random".
    public var addressType: String?
    public var name: String?
    public var alias: String?
    /// nil when BlueZ has invalidated it (discovery stopped) or never reported it.
    public var rssi: Int16?
    public var txPower: Int16?
    /// GAP Appearance (category << 6 | subcategory), when the device advertises one.
    public var appearance: UInt16?
    /// Advertised or resolved service UUIDs, normalised.
    public var uuids: [String] = []
    /// Company identifier → payload.
    public var manufacturerData: [UInt16: [UInt8]] = [:]
    /// Normalised service UUID → payload.
    public var serviceData: [String: [UInt8]] = [:]
    public var connected = false
    public var servicesResolved = false
    public var paired = false
    public var trusted = false
    /// From `org.bluez.Battery1.Percentage`; nil while that interface is absent
    /// (BlueZ removes it on every disconnect).
    public var batteryPercentage: UInt8?

    public var id: DBusObjectPath { path }
    /// What to show a person: the alias, else the name, else the address.
    public var displayName: String { alias ?? name ?? address }

    public init(path: DBusObjectPath, adapter: DBusObjectPath? = nil) {
        self.path = path
        self.adapter = adapter ?? path.parent ?? .root
    }

    static let interface = "org.bluez.Device1"
    static let batteryInterface = "org.bluez.Battery1"
    static let keptProperties: Set<String> = [
        "Adapter", "Address", "AddressType", "Name", "Alias", "RSSI", "TxPower", "Appearance", "UUIDs",
        "ManufacturerData", "ServiceData", "Connected", "ServicesResolved", "Paired", "Trusted",
    ]

    static func printable(_ name: String) -> String {
        PrintableText.isClean(name, limit: PrintableText.nameLimit) ? name : PrintableText.clean(name, limit: PrintableText.nameLimit)
    }

    static let keptBatteryProperties: Set<String> = ["Percentage"]

    mutating func apply(_ updates: [(String, PropertyUpdate)]) -> Set<String> {
        var c = ChangeSet()
        for (name, update) in updates {
            let v = update.value
            switch name {
            case "Adapter": c.set(&adapter, v?.objectPathValue ?? path.parent ?? .root, name)
            case "Address": c.set(&address, v?.stringValue ?? "", name)
            case "AddressType": c.set(&addressType, v?.stringValue, name)
            // Anyone in range chooses these: made printable at the door.
            case "Name": c.set(&self.name, v?.stringValue.map(Self.printable), name)
            case "Alias": c.set(&alias, v?.stringValue.map(Self.printable), name)
            case "RSSI": c.set(&rssi, v?.int16Value, name)
            case "TxPower": c.set(&txPower, v?.int16Value, name)
            case "Appearance": c.set(&appearance, v?.uint16Value, name)
            case "UUIDs": c.set(&uuids, (v?.stringArrayValue ?? []).map(BluetoothUUID.normalized), name)
            case "ManufacturerData": c.set(&manufacturerData, v?.manufacturerData ?? [:], name)
            case "ServiceData": c.set(&serviceData, v?.serviceData ?? [:], name)
            case "Connected": c.set(&connected, v?.boolValue ?? false, name)
            case "ServicesResolved": c.set(&servicesResolved, v?.boolValue ?? false, name)
            case "Paired": c.set(&paired, v?.boolValue ?? false, name)
            case "Trusted": c.set(&trusted, v?.boolValue ?? false, name)
            default: break
            }
        }
        return c.names
    }

    /// Battery1 properties; the change is named "Percentage".
    mutating func applyBattery(_ updates: [(String, PropertyUpdate)]) -> Set<String> {
        var c = ChangeSet()
        for (name, update) in updates where name == "Percentage" {
            c.set(&batteryPercentage, update.value?.uint8Value, name)
        }
        return c.names
    }
}

import DBus

/// An `org.bluez.GattService1`: exists only once bluetoothd has discovered it (or
/// kept it in its cache), which is what makes it a trustworthy readiness signal.
public struct GattService: Sendable, Hashable, Identifiable {
    public let path: DBusObjectPath
    public var uuid: String = ""
    public var device: DBusObjectPath
    public var primary = true

    public var id: DBusObjectPath { path }

    public init(path: DBusObjectPath) {
        self.path = path
        self.device = path.parent ?? .root
    }

    static let interface = "org.bluez.GattService1"
    static let keptProperties: Set<String> = ["UUID", "Device", "Primary"]

    mutating func apply(_ updates: [(String, PropertyUpdate)]) -> Set<String> {
        var c = ChangeSet()
        for (name, update) in updates {
            let v = update.value
            switch name {
            case "UUID": c.set(&uuid, BluetoothUUID.normalized(v?.stringValue ?? ""), name)
            case "Device": c.set(&device, v?.objectPathValue ?? path.parent ?? .root, name)
            case "Primary": c.set(&primary, v?.boolValue ?? true, name)
            default: break
            }
        }
        return c.names
    }
}

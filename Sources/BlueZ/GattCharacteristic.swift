import DBus

/// An `org.bluez.GattCharacteristic1`, without its `Value`: values are the
/// notification hot path and are read by the notification layer straight from the
/// signal (`subscribeRaw`), never through the mirror.
public struct GattCharacteristic: Sendable, Hashable, Identifiable {
    public let path: DBusObjectPath
    public var uuid: String = ""
    public var service: DBusObjectPath
    /// The device the characteristic belongs to (through its service).
    public var device: DBusObjectPath
    /// "read", "notify", "indicate", "write", ...
    public var flags: [String] = []
    public var notifying = false
    public var notifyAcquired = false
    /// ATT MTU of the link, when bluetoothd exports it.
    public var mtu: UInt16?

    public var id: DBusObjectPath { path }
    public var canNotify: Bool { flags.contains("notify") || flags.contains("indicate") }

    public init(path: DBusObjectPath) {
        self.path = path
        self.service = path.parent ?? .root
        self.device = path.parent?.parent ?? .root
    }

    static let interface = "org.bluez.GattCharacteristic1"
    static let keptProperties: Set<String> = ["UUID", "Service", "Flags", "Notifying", "NotifyAcquired", "MTU"]

    mutating func apply(_ updates: [(String, PropertyUpdate)]) -> Set<String> {
        var c = ChangeSet()
        for (name, update) in updates {
            let v = update.value
            switch name {
            case "UUID": c.set(&uuid, BluetoothUUID.normalized(v?.stringValue ?? ""), name)
            case "Service":
                let service = v?.objectPathValue ?? path.parent ?? .root
                c.set(&self.service, service, name)
                c.set(&device, service.parent ?? .root, "Device")
            case "Flags": c.set(&flags, v?.stringArrayValue ?? [], name)
            case "Notifying": c.set(&notifying, v?.boolValue ?? false, name)
            case "NotifyAcquired": c.set(&notifyAcquired, v?.boolValue ?? false, name)
            case "MTU": c.set(&mtu, v?.uint16Value, name)
            default: break
            }
        }
        c.names.remove("Device")
        return c.names
    }
}

/// A service or characteristic, as carried by GATT events.
public enum GattObject: Sendable, Hashable {
    case service(GattService)
    case characteristic(GattCharacteristic)

    public var path: DBusObjectPath {
        switch self {
        case .service(let s): s.path
        case .characteristic(let c): c.path
        }
    }

    public var device: DBusObjectPath {
        switch self {
        case .service(let s): s.device
        case .characteristic(let c): c.device
        }
    }

    public var uuid: String {
        switch self {
        case .service(let s): s.uuid
        case .characteristic(let c): c.uuid
        }
    }
}

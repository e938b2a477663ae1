import DBus

/// An `org.bluez.Adapter1` as last reported by bluetoothd.
public struct Adapter: Sendable, Hashable, Identifiable {
    public let path: DBusObjectPath
    public var address: String = ""
    /// The controller's `Name` (the host name by default, not "hci0": see `interfaceName`).
    public var name: String?
    public var alias: String?
    public var powered = false
    public var discovering = false

    public var id: DBusObjectPath { path }
    /// "hci0": the last element of the object path, the name every tool uses.
    public var interfaceName: String { String(path.lastElement) }

    public init(path: DBusObjectPath) { self.path = path }

    static let interface = "org.bluez.Adapter1"
    static let keptProperties: Set<String> = ["Address", "Name", "Alias", "Powered", "Discovering"]

    mutating func apply(_ updates: [(String, PropertyUpdate)]) -> Set<String> {
        var c = ChangeSet()
        for (name, update) in updates {
            let v = update.value
            switch name {
            case "Address": c.set(&address, v?.stringValue ?? "", name)
            case "Name": c.set(&self.name, v?.stringValue, name)
            case "Alias": c.set(&alias, v?.stringValue, name)
            case "Powered": c.set(&powered, v?.boolValue ?? false, name)
            case "Discovering": c.set(&discovering, v?.boolValue ?? false, name)
            default: break
            }
        }
        return c.names
    }
}

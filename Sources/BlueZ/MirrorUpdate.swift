import DBus

/// One decoded BlueZ signal, already reduced to the interfaces and properties the
/// mirror keeps, so that a buffered update holds nothing it will not use.
enum MirrorUpdate: Sendable {
    case added(DBusObjectPath, [String: [String: DBusValue]])
    case removed(DBusObjectPath, [String])
    case changed(DBusObjectPath, interface: String, [String: DBusValue], invalidated: [String])

    func apply(to snapshot: inout BlueZSnapshot, into events: inout [BlueZEvent]) {
        switch self {
        case .added(let path, let interfaces):
            snapshot.interfacesAdded(path, interfaces, into: &events)
        case .removed(let path, let interfaces):
            snapshot.interfacesRemoved(path, interfaces, into: &events)
        case .changed(let path, let interface, let changed, let invalidated):
            snapshot.propertiesChanged(path, interface: interface, changed, invalidated: invalidated, into: &events)
        }
    }

    /// `oa{sa{sv}}` → kept interfaces with kept properties (nil when nothing is kept).
    static func interfacesAdded(_ body: [DBusValue]) -> MirrorUpdate? {
        guard body.count >= 2, let path = body[0].objectPathValue, path.isDescendant(of: BlueZMirror.root) else { return nil }
        let interfaces = keptInterfaces(body[1])
        return interfaces.isEmpty ? nil : .added(path, interfaces)
    }

    static func keptInterfaces(_ bag: DBusValue) -> [String: [String: DBusValue]] {
        var out: [String: [String: DBusValue]] = [:]
        for (name, props) in bag.stringKeyedValue ?? [:] where BlueZSnapshot.keptInterfaces.contains(name) {
            let kept = BlueZSnapshot.keptProperties(of: name)
            out[name] = (props.stringKeyedValue ?? [:]).filter { kept.contains($0.key) }
        }
        return out
    }

    /// `oas`.
    static func interfacesRemoved(_ body: [DBusValue]) -> MirrorUpdate? {
        guard body.count >= 2, let path = body[0].objectPathValue, path.isDescendant(of: BlueZMirror.root) else { return nil }
        let interfaces = (body[1].stringArrayValue ?? []).filter { BlueZSnapshot.keptInterfaces.contains($0) }
        return interfaces.isEmpty ? nil : .removed(path, interfaces)
    }

    /// `sa{sv}as` of PropertiesChanged; `Value` and anything else the mirror does
    /// not keep are dropped here.
    static func propertiesChanged(path: DBusObjectPath?, _ body: [DBusValue]) -> MirrorUpdate? {
        guard let path, body.count >= 2, let interface = body[0].stringValue,
              BlueZSnapshot.keptInterfaces.contains(interface) else { return nil }
        let kept = BlueZSnapshot.keptProperties(of: interface)
        let changed = (body[1].stringKeyedValue ?? [:]).filter { kept.contains($0.key) }
        let invalidated = body.count >= 3 ? (body[2].stringArrayValue ?? []).filter { kept.contains($0) } : []
        guard !changed.isEmpty || !invalidated.isEmpty else { return nil }
        return .changed(path, interface: interface, changed, invalidated: invalidated)
    }
}

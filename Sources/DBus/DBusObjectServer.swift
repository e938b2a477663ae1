import Synchronization

/// Serves a tree of objects on a connection: method dispatch, the standard
/// Properties interface (Get/GetAll/Set and PropertiesChanged), ObjectManager
/// (GetManagedObjects, InterfacesAdded/InterfacesRemoved) and Introspect,
/// including the intermediate nodes a client walks down from "/".
public final class DBusObjectServer: Sendable {
    public static let propertiesInterface = "org.freedesktop.DBus.Properties"
    public static let introspectableInterface = "org.freedesktop.DBus.Introspectable"
    public static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"

    public let connection: DBusConnection
    /// Where org.freedesktop.DBus.ObjectManager is served; nil for none.
    public let objectManagerPath: DBusObjectPath?

    struct Exported {
        var definition: DBusInterface
        var values: [String: DBusValue]
    }

    struct Object {
        var interfaces: [Exported] = []
        func interface(_ name: String) -> Exported? { interfaces.first { $0.definition.name == name } }
    }

    private let objects = Mutex<[DBusObjectPath: Object]>([:])

    public init(connection: DBusConnection, objectManagerPath: DBusObjectPath? = .root) {
        self.connection = connection
        self.objectManagerPath = objectManagerPath
        connection.setMethodCallHandler { [weak self] message in
            guard let self else { return }
            self.handle(message)
        }
    }

    // MARK: Tree changes

    /// Adds interfaces to the object at `path` (creating it) and announces them with
    /// InterfacesAdded. An interface already present is replaced.
    public func add(_ path: DBusObjectPath, _ interfaces: [DBusInterface]) throws(DBusError) {
        for i in interfaces where !DBusNameCheck.isValidInterface(i.name) {
            throw DBusError(.invalidArgs, "invalid interface name '\(i.name)'")
        }
        let exported = interfaces.map { def in
            Exported(definition: def, values: Dictionary(def.properties.compactMap { p in p.value.map { (p.name, $0) } }, uniquingKeysWith: { $1 }))
        }
        objects.withLock { objs in
            var object = objs[path] ?? Object()
            for e in exported {
                object.interfaces.removeAll { $0.definition.name == e.definition.name }
                object.interfaces.append(e)
            }
            objs[path] = object
        }
        if let manager = objectManagerPath, path.isDescendant(of: manager) {
            let body: [DBusValue] = [.objectPath(path), Self.interfacesDictionary(exported, includeStandard: true)]
            try connection.emit(path: manager, interface: Self.objectManagerInterface, member: "InterfacesAdded", body)
        }
    }

    /// Removes some interfaces (or all, with nil) and announces it with InterfacesRemoved.
    public func remove(_ path: DBusObjectPath, interfaces names: [String]? = nil) {
        let removed: [String] = objects.withLock { objs in
            guard var object = objs[path] else { return [] }
            let gone = object.interfaces.map(\.definition.name).filter { names?.contains($0) ?? true }
            object.interfaces.removeAll { gone.contains($0.definition.name) }
            objs[path] = object.interfaces.isEmpty ? nil : object
            if object.interfaces.isEmpty { return Self.standardInterfaces + gone }
            return gone
        }
        guard !removed.isEmpty, let manager = objectManagerPath, path.isDescendant(of: manager) else { return }
        try? connection.emit(path: manager, interface: Self.objectManagerInterface, member: "InterfacesRemoved",
                             [.objectPath(path), .strings(removed)])
    }

    /// Removes `path` and every object below it, deepest first (as BlueZ does when a
    /// device goes: characteristics, then services, then the device).
    public func removeSubtree(_ path: DBusObjectPath) {
        let paths = objects.withLock { objs in objs.keys.filter { $0.isDescendant(of: path) } }
        for p in paths.sorted(by: { $0.rawValue.count > $1.rawValue.count }) { remove(p) }
    }

    /// Drops everything without signals (a daemon that is about to vanish from the bus).
    public func removeAllSilently() {
        objects.withLock { $0.removeAll() }
    }

    public func exists(_ path: DBusObjectPath) -> Bool { objects.withLock { $0[path] != nil } }

    public var paths: [DBusObjectPath] { objects.withLock { Array($0.keys) } }

    public func hasInterface(_ path: DBusObjectPath, _ interface: String) -> Bool {
        objects.withLock { $0[path]?.interface(interface) != nil }
    }

    // MARK: Properties

    public func property(_ path: DBusObjectPath, _ interface: String, _ name: String) -> DBusValue? {
        objects.withLock { $0[path]?.interface(interface)?.values[name] }
    }

    /// Sets one property and emits PropertiesChanged when its value changed (nil
    /// removes it and reports it invalidated).
    public func setProperty(_ path: DBusObjectPath, _ interface: String, _ name: String, _ value: DBusValue?) {
        setProperties(path, interface, [(name, value)])
    }

    /// Sets several properties with one PropertiesChanged, as BlueZ groups them.
    /// `force` emits even unchanged values (a GATT `Value` repeated by a notification).
    public func setProperties(_ path: DBusObjectPath, _ interface: String, _ updates: [(String, DBusValue?)], force: Bool = false) {
        var changed: [(String, DBusValue)] = []
        var invalidated: [String] = []
        objects.withLock { objs in
            // Mutated in place: a copy here would duplicate the property dictionary
            // on every GATT notification.
            guard let index = objs[path]?.interfaces.firstIndex(where: { $0.definition.name == interface }) else { return }
            for (name, value) in updates {
                guard let def = objs[path]!.interfaces[index].definition.properties.first(where: { $0.name == name }) else { continue }
                if !force, objs[path]!.interfaces[index].values[name] == value { continue }
                objs[path]!.interfaces[index].values[name] = value
                switch def.emitsChange {
                case .yes:
                    if let value { changed.append((name, value)) } else { invalidated.append(name) }
                case .invalidates:
                    invalidated.append(name)
                case .no:
                    break
                }
            }
        }
        guard !changed.isEmpty || !invalidated.isEmpty else { return }
        try? connection.emit(path: path, interface: Self.propertiesInterface, member: "PropertiesChanged",
                             [.string(interface), .properties(changed), .strings(invalidated)])
    }

    /// Emits a signal from an object.
    public func emit(_ path: DBusObjectPath, _ interface: String, _ member: String, _ args: [DBusValue] = []) throws(DBusError) {
        try connection.emit(path: path, interface: interface, member: member, args)
    }

    // MARK: Managed objects

    /// The GetManagedObjects value (`a{oa{sa{sv}}}`) for everything below the manager.
    public func managedObjects() -> DBusValue {
        let snapshot = objects.withLock { $0 }
        let root = objectManagerPath ?? .root
        let entries = snapshot.filter { $0.key.isDescendant(of: root) && $0.key != root }
            .sorted { $0.key < $1.key }
            .map { DBusDictEntry(.objectPath($0.key), Self.interfacesDictionary($0.value.interfaces, includeStandard: true)) }
        return .dictionary(key: "o", value: "a{sa{sv}}", entries)
    }

    static let standardInterfaces = [introspectableInterface, propertiesInterface]

    static func interfacesDictionary(_ interfaces: [Exported], includeStandard: Bool) -> DBusValue {
        var entries: [DBusDictEntry] = []
        if includeStandard {
            for name in standardInterfaces { entries.append(DBusDictEntry(.string(name), .properties([]))) }
        }
        for e in interfaces {
            entries.append(DBusDictEntry(.string(e.definition.name), readableProperties(e)))
        }
        return .dictionary(key: "s", value: "a{sv}", entries)
    }

    static func readableProperties(_ e: Exported) -> DBusValue {
        .properties(e.definition.properties.compactMap { p in
            guard p.access != .write, let v = e.values[p.name] else { return nil }
            return (p.name, v)
        })
    }

    // MARK: Dispatch (dispatcher thread)

    private func handle(_ message: DBusMessage) {
        guard let path = message.path, let member = message.member else {
            connection.reply(to: message, error: DBusError(.unknownMethod, "method call without path or member"))
            return
        }
        let interface = message.interface
        switch interface {
        case Self.introspectableInterface?:
            guard member == "Introspect" else { return unknownMethod(message) }
            replyChecked(message, [.string(introspect(path))])
            return
        case Self.objectManagerInterface?:
            guard path == objectManagerPath, member == "GetManagedObjects" else { return unknownMethod(message) }
            replyChecked(message, [managedObjects()])
            return
        case Self.propertiesInterface?:
            handleProperties(message, path: path, member: member)
            return
        default:
            break
        }
        let found: (DBusMethod, String)? = objects.withLock { objs in
            guard let object = objs[path] else { return nil }
            for e in object.interfaces where interface == nil || e.definition.name == interface {
                if let m = e.definition.methods.first(where: { $0.name == member }) { return (m, e.definition.name) }
            }
            return nil
        }
        guard let (method, interfaceName) = found else {
            if !exists(path) {
                connection.reply(to: message, error: DBusError(.unknownObject, "no object at \(path)"))
            } else {
                unknownMethod(message)
            }
            return
        }
        guard message.signature == method.inSignature else {
            connection.reply(to: message, error: DBusError(.invalidArgs, "Invalid arguments in method call"))
            return
        }
        let invocation = DBusMethodInvocation(message: message, path: path, interface: interfaceName)
        let connection = self.connection
        Task {
            do {
                let out = try await method.handler(invocation)
                do throws(DBusError) {
                    try connection.reply(to: message, out)
                } catch {
                    connection.reply(to: message, error: error)
                }
            } catch let error as DBusError {
                connection.reply(to: message, error: error)
            } catch {
                connection.reply(to: message, error: DBusError(.failed, "\(error)"))
            }
        }
    }

    private func unknownMethod(_ message: DBusMessage) {
        connection.reply(to: message, error: DBusError(
            .unknownMethod,
            "Method \"\(message.member ?? "")\" with signature \"\(message.signature)\" on interface \"\(message.interface ?? "")\" doesn't exist"))
    }

    private func replyChecked(_ message: DBusMessage, _ values: [DBusValue]) {
        do throws(DBusError) {
            try connection.reply(to: message, values)
        } catch {
            connection.reply(to: message, error: error)
        }
    }

    private func handleProperties(_ message: DBusMessage, path: DBusObjectPath, member: String) {
        let args = message.body
        switch (member, message.signature) {
        case ("Get", "ss"):
            let iface = args[0].stringValue ?? "", name = args[1].stringValue ?? ""
            let result: Result<DBusValue, DBusError> = objects.withLock { objs in
                guard let e = objs[path]?.interface(iface) else {
                    return .failure(DBusError(.invalidArgs, "No such interface '\(iface)'"))
                }
                guard let def = e.definition.properties.first(where: { $0.name == name }), def.access != .write,
                      let v = e.values[name] else {
                    return .failure(DBusError(.invalidArgs, "No such property '\(name)'"))
                }
                return .success(v)
            }
            switch result {
            case .success(let v): replyChecked(message, [.variant(v)])
            case .failure(let e): connection.reply(to: message, error: e)
            }
        case ("GetAll", "s"):
            let iface = args[0].stringValue ?? ""
            let value: DBusValue? = objects.withLock { objs in
                if let e = objs[path]?.interface(iface) { return Self.readableProperties(e) }
                if objs[path] != nil, Self.standardInterfaces.contains(iface) { return .properties([]) }
                return nil
            }
            if let value {
                replyChecked(message, [value])
            } else {
                connection.reply(to: message, error: DBusError(.invalidArgs, "No such interface '\(iface)'"))
            }
        case ("Set", "ssv"):
            let iface = args[0].stringValue ?? "", name = args[1].stringValue ?? ""
            guard case .variant(let newValue) = args[2] else { return }
            let def: Result<DBusProperty, DBusError> = objects.withLock { objs in
                guard let e = objs[path]?.interface(iface) else { return .failure(DBusError(.invalidArgs, "No such interface '\(iface)'")) }
                guard let d = e.definition.properties.first(where: { $0.name == name }) else {
                    return .failure(DBusError(.invalidArgs, "No such property '\(name)'"))
                }
                guard d.access != .read else { return .failure(DBusError(.propertyReadOnly, "Property '\(name)' is not writable")) }
                guard d.signature.rawValue == newValue.signatureString else {
                    return .failure(DBusError(.invalidArgs, "Property '\(name)' has type '\(d.signature)', not '\(newValue.signatureString)'"))
                }
                return .success(d)
            }
            switch def {
            case .failure(let e):
                connection.reply(to: message, error: e)
            case .success(let d):
                let connection = self.connection
                Task {
                    do {
                        let stored = try await d.onSet?(newValue) ?? newValue
                        self.setProperty(path, iface, name, stored)
                        try connection.reply(to: message, [])
                    } catch let error as DBusError {
                        connection.reply(to: message, error: error)
                    } catch {
                        connection.reply(to: message, error: DBusError(.failed, "\(error)"))
                    }
                }
            }
        default:
            unknownMethod(message)
        }
    }

    // MARK: Introspection

    /// Introspection XML for `path`: its interfaces (with the standard ones) and its
    /// direct children, also for paths that only lead to objects ("/", "/org").
    public func introspect(_ path: DBusObjectPath) -> String {
        let (object, children) = objects.withLock { objs -> (Object?, [String]) in
            var names = Set<String>()
            let prefix = path.rawValue == "/" ? "/" : path.rawValue + "/"
            for p in objs.keys where p.rawValue.hasPrefix(prefix) && p != path {
                let rest = p.rawValue.dropFirst(prefix.count)
                if let first = rest.split(separator: "/").first { names.insert(String(first)) }
            }
            return (objs[path], names.sorted())
        }
        var xml = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
        "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>

        """
        xml += Self.introspectableXML
        if object != nil || path == objectManagerPath {
            xml += Self.propertiesXML
        }
        if path == objectManagerPath {
            xml += Self.objectManagerXML
        }
        for e in object?.interfaces ?? [] {
            xml += "  <interface name=\"\(e.definition.name)\">\n"
            for m in e.definition.methods {
                xml += "    <method name=\"\(m.name)\">\n"
                for a in m.inArgs { xml += "      <arg name=\"\(a.name)\" type=\"\(Self.escape(a.signature.rawValue))\" direction=\"in\"/>\n" }
                for a in m.outArgs { xml += "      <arg name=\"\(a.name)\" type=\"\(Self.escape(a.signature.rawValue))\" direction=\"out\"/>\n" }
                xml += "    </method>\n"
            }
            for s in e.definition.signals {
                xml += "    <signal name=\"\(s.name)\">\n"
                for a in s.args { xml += "      <arg name=\"\(a.name)\" type=\"\(Self.escape(a.signature.rawValue))\"/>\n" }
                xml += "    </signal>\n"
            }
            for p in e.definition.properties {
                xml += "    <property name=\"\(p.name)\" type=\"\(Self.escape(p.signature.rawValue))\" access=\"\(p.access.rawValue)\"/>\n"
            }
            xml += "  </interface>\n"
        }
        for child in children { xml += "  <node name=\"\(child)\"/>\n" }
        xml += "</node>\n"
        return xml
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for ch in s {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(ch)
            }
        }
        return out
    }

    static let introspectableXML = """
      <interface name="org.freedesktop.DBus.Introspectable">
        <method name="Introspect">
          <arg name="xml" type="s" direction="out"/>
        </method>
      </interface>

    """

    static let propertiesXML = """
      <interface name="org.freedesktop.DBus.Properties">
        <method name="Get">
          <arg name="interface" type="s" direction="in"/>
          <arg name="name" type="s" direction="in"/>
          <arg name="value" type="v" direction="out"/>
        </method>
        <method name="Set">
          <arg name="interface" type="s" direction="in"/>
          <arg name="name" type="s" direction="in"/>
          <arg name="value" type="v" direction="in"/>
        </method>
        <method name="GetAll">
          <arg name="interface" type="s" direction="in"/>
          <arg name="properties" type="a{sv}" direction="out"/>
        </method>
        <signal name="PropertiesChanged">
          <arg name="interface" type="s"/>
          <arg name="changed_properties" type="a{sv}"/>
          <arg name="invalidated_properties" type="as"/>
        </signal>
      </interface>

    """

    static let objectManagerXML = """
      <interface name="org.freedesktop.DBus.ObjectManager">
        <method name="GetManagedObjects">
          <arg name="objects" type="a{oa{sa{sv}}}" direction="out"/>
        </method>
        <signal name="InterfacesAdded">
          <arg name="object" type="o"/>
          <arg name="interfaces" type="a{sa{sv}}"/>
        </signal>
        <signal name="InterfacesRemoved">
          <arg name="object" type="o"/>
          <arg name="interfaces" type="as"/>
        </signal>
      </interface>

    """
}

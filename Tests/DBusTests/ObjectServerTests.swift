import BlegateTestSupport
import DBus
import Synchronization
import Testing

@Suite("Serving objects")
struct ObjectServerTests {
    static func adapter(powered: Bool = true, onSet: DBusProperty.Setter? = nil) -> DBusInterface {
        DBusInterface("org.bluez.Adapter1", methods: [
            DBusMethod("StartDiscovery") { _ in [] },
        ], properties: [
            DBusProperty("Address", "s", value: .string("00:AA:01:00:00:00")),
            DBusProperty("Powered", "b", access: .readwrite, value: .bool(powered), onSet: onSet),
            DBusProperty("Name", "s", value: .string("hci0")),
            DBusProperty("Missing", "n"),
        ])
    }

    @Test("Get, GetAll, Set and PropertiesChanged")
    func properties() async throws {
        let t = try await TestBus.start()
        defer { t.stop() }
        let server = DBusObjectServer(connection: t.server)
        try server.add("/org/bluez/hci0", [Self.adapter(onSet: { v in
            guard v != .bool(false) || true else { throw DBusError(name: "org.bluez.Error.Failed", message: "no") }
            return v
        })])
        let dest = t.server.uniqueName
        let props = "org.freedesktop.DBus.Properties"
        let changes = try await t.client.signals(matching: DBusMatchRule(sender: dest, interface: props, member: "PropertiesChanged", path: "/org/bluez/hci0"))

        let address = try await t.client.call(destination: dest, path: "/org/bluez/hci0", interface: props, member: "Get", ["org.bluez.Adapter1", "Address"])
        #expect(address == [.variant(.string("00:AA:01:00:00:00"))])
        let all = try await t.client.call(destination: dest, path: "/org/bluez/hci0", interface: props, member: "GetAll", ["org.bluez.Adapter1"])
        let dict = all.first?.stringKeyedValue
        #expect(dict?.keys.sorted() == ["Address", "Name", "Powered"])  // absent properties are left out

        try await t.client.call(destination: dest, path: "/org/bluez/hci0", interface: props, member: "Set", ["org.bluez.Adapter1", "Powered", .variant(.bool(false))])
        #expect(server.property("/org/bluez/hci0", "org.bluez.Adapter1", "Powered") == .bool(false))
        let changed = try await nextSignal(changes, "PropertiesChanged")
        #expect(changed.body == [.string("org.bluez.Adapter1"), .properties([("Powered", .bool(false))]), .strings([])])

        await #expect(throws: DBusError.self) {
            try await t.client.call(destination: dest, path: "/org/bluez/hci0", interface: props, member: "Set", ["org.bluez.Adapter1", "Address", .variant(.string("x"))])
        }
        do throws(DBusError) {
            try await t.client.call(destination: dest, path: "/org/bluez/hci0", interface: props, member: "Get", ["org.bluez.Adapter1", "Missing"])
            Issue.record("absent property was returned")
        } catch {
            #expect(error.is(.invalidArgs))
        }
        do throws(DBusError) {
            try await t.client.call(destination: dest, path: "/org/bluez/hci0", interface: props, member: "Set", ["org.bluez.Adapter1", "Powered", .variant(.string("yes"))])
            Issue.record("wrong type accepted")
        } catch {
            #expect(error.is(.invalidArgs))
        }
        // Setting a property from code emits, removing it reports it invalidated.
        server.setProperty("/org/bluez/hci0", "org.bluez.Adapter1", "Name", nil)
        let invalidated = try await nextSignal(changes, "invalidation")
        #expect(invalidated.body.last == .strings(["Name"]))
    }

    @Test("ObjectManager: GetManagedObjects, InterfacesAdded and InterfacesRemoved")
    func objectManager() async throws {
        let t = try await TestBus.start()
        defer { t.stop() }
        let server = DBusObjectServer(connection: t.server)
        let dest = t.server.uniqueName
        let added = try await t.client.signals(matching: DBusMatchRule(sender: dest, interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded"))
        let removed = try await t.client.signals(matching: DBusMatchRule(sender: dest, interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved"))
        try server.add("/org/bluez/hci0", [Self.adapter()])
        try server.add("/org/bluez/hci0/dev_AA", [DBusInterface("org.bluez.Device1", properties: [DBusProperty("Name", "s", value: "Polar H10 8C4F2A1B")])])

        let objects = try await t.client.call(destination: dest, path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
        #expect(objects.first?.signature == "a{oa{sa{sv}}}")
        let entries = objects.first?.dictionaryEntries ?? []
        #expect(entries.map(\.key) == [.objectPath("/org/bluez/hci0"), .objectPath("/org/bluez/hci0/dev_AA")])
        let device = entries.last?.value.stringKeyedValue
        #expect(device?["org.bluez.Device1"]?.stringKeyedValue?["Name"] == .variant(.string("Polar H10 8C4F2A1B")))
        #expect(device?["org.freedesktop.DBus.Properties"] != nil)

        let first = try await nextSignal(added, "InterfacesAdded")
        #expect(first.body.first == .objectPath("/org/bluez/hci0"))
        #expect(first.path == "/")

        server.removeSubtree("/org/bluez/hci0")
        let gone = try await withTimeout(30, "InterfacesRemoved") {
            var paths: [DBusValue] = []
            for await s in removed {
                paths.append(s.body[0])
                if paths.count == 2 { return paths }
            }
            return paths
        }
        #expect(gone == [.objectPath("/org/bluez/hci0/dev_AA"), .objectPath("/org/bluez/hci0")])
        #expect(server.paths.isEmpty)
    }

    @Test("Introspect lists interfaces and leads from / down to every object")
    func introspect() async throws {
        let t = try await TestBus.start()
        defer { t.stop() }
        let server = DBusObjectServer(connection: t.server)
        try server.add("/org/bluez/hci0", [Self.adapter()])
        let dest = t.server.uniqueName
        func xml(_ path: DBusObjectPath) async throws -> String {
            try await t.client.call(destination: dest, path: path, interface: "org.freedesktop.DBus.Introspectable", member: "Introspect").first?.stringValue ?? ""
        }
        let root = try await xml("/")
        #expect(root.contains("<node name=\"org\"/>"))
        #expect(root.contains("org.freedesktop.DBus.ObjectManager"))
        #expect(try await xml("/org").contains("<node name=\"bluez\"/>"))
        let adapter = try await xml("/org/bluez/hci0")
        #expect(adapter.contains("<interface name=\"org.bluez.Adapter1\">"))
        #expect(adapter.contains("<property name=\"Powered\" type=\"b\" access=\"readwrite\"/>"))
        #expect(adapter.contains("<method name=\"StartDiscovery\">"))
        // Peer is answered by the connection itself.
        try await t.client.call(destination: dest, path: "/", interface: "org.freedesktop.DBus.Peer", member: "Ping")
    }

    @Test("a slow method handler does not block other calls on the same connection")
    func slowHandler() async throws {
        let t = try await TestBus.start()
        defer { t.stop() }
        let server = DBusObjectServer(connection: t.server)
        let gate = Mutex<CheckedContinuation<Void, Never>?>(nil)
        try server.add("/test", [DBusInterface("org.blegate.Test1", methods: [
            DBusMethod("Block") { _ in
                await withCheckedContinuation { c in gate.withLock { $0 = c } }
                return []
            },
            DBusMethod("Fast", out: [DBusArgument("x", "u")]) { _ in [.uint32(1)] },
        ])])
        let client = t.client
        let dest = t.server.uniqueName
        let blocked = Task { try await client.call(destination: dest, path: "/test", interface: "org.blegate.Test1", member: "Block", timeout: .seconds(60)) }
        let fast = try await withTimeout(30, "fast call") {
            try await client.call(destination: dest, path: "/test", interface: "org.blegate.Test1", member: "Fast")
        }
        #expect(fast == [.uint32(1)])
        // Release the blocked one once it is really waiting.
        try await eventually("the Block call at its handler", seconds: 30, every: .milliseconds(5)) { gate.withLock { $0 != nil } }
        gate.withLock { $0?.resume(); $0 = nil }
        _ = try await withTimeout(30, "blocked call") { try await blocked.value }
    }
}

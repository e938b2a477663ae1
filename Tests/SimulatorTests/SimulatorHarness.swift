import BlegateTestSupport
import DBus
import Simulator
import Testing

/// A private dbus-daemon, the simulator on it (its own connections), and a client
/// connection driving it as blegate would.
struct SimHarness {
    let bus: PrivateBus
    let sim: SimulatedBlueZ
    let client: DBusConnection

    static let adapter: DBusObjectPath = "/org/bluez/hci0"
    static let props = "org.freedesktop.DBus.Properties"
    static let chr = "org.bluez.GattCharacteristic1"

    func call(_ path: DBusObjectPath, _ interface: String, _ member: String, _ args: [DBusValue] = [],
              destination: String = "org.bluez") async throws(DBusError) -> [DBusValue] {
        try await client.call(destination: destination, path: path, interface: interface, member: member, args, timeout: .seconds(30))
    }

    func control(_ member: String, _ args: [DBusValue] = []) async throws(DBusError) -> [DBusValue] {
        try await call("/org/blegate/Simulator", "org.blegate.Simulator1", member, args, destination: "org.blegate.Simulator")
    }

    /// A property of the control interface (`LinkLimits`, `Restarts` ...).
    func controlProperty(_ name: String) async throws(DBusError) -> DBusValue {
        try await call("/org/blegate/Simulator", Self.props, "Get", [.string("org.blegate.Simulator1"), .string(name)],
                       destination: "org.blegate.Simulator").first?.unwrapped ?? .bool(false)
    }

    func get(_ path: DBusObjectPath, _ interface: String, _ name: String) async throws(DBusError) -> DBusValue {
        try await call(path, Self.props, "Get", [.string(interface), .string(name)]).first?.unwrapped ?? .bool(false)
    }

    /// path → interface → properties.
    func managedObjects() async throws(DBusError) -> [DBusObjectPath: [String: [String: DBusValue]]] {
        let reply = try await call("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        var out: [DBusObjectPath: [String: [String: DBusValue]]] = [:]
        for entry in reply.first?.dictionaryEntries ?? [] {
            guard let path = entry.key.objectPathValue else { continue }
            var ifaces: [String: [String: DBusValue]] = [:]
            for (name, props) in entry.value.stringKeyedValue ?? [:] {
                ifaces[name] = (props.stringKeyedValue ?? [:]).mapValues(\.unwrapped)
            }
            out[path] = ifaces
        }
        return out
    }

    func devicePaths() async throws -> [DBusObjectPath] {
        try await managedObjects().filter { $0.value["org.bluez.Device1"] != nil }.map(\.key).sorted()
    }

    /// StartDiscovery and wait until `count` devices exist.
    func discover(count: Int) async throws -> [DBusObjectPath] {
        _ = try await call(Self.adapter, "org.bluez.Adapter1", "StartDiscovery")
        try await eventually("\(count) devices") { try await devicePaths().count >= count }
        return try await devicePaths()
    }

    /// Connect and wait for ServicesResolved.
    func connect(_ device: DBusObjectPath) async throws {
        _ = try await call(device, "org.bluez.Device1", "Connect")
        try await eventually("ServicesResolved on \(device)") {
            try await get(device, "org.bluez.Device1", "ServicesResolved") == .bool(true)
        }
    }

    func characteristic(_ device: DBusObjectPath, _ uuid16: UInt16) async throws -> DBusObjectPath {
        let uuid = bluetoothUUID(uuid16)
        let objects = try await managedObjects()
        guard let p = objects.first(where: { $0.key.isDescendant(of: device) && $0.value[Self.chr]?["UUID"] == .string(uuid) })?.key else {
            throw TestFailure("no characteristic \(uuid) under \(device)")
        }
        return p
    }

    func address(of device: DBusObjectPath) async throws -> String {
        try await get(device, "org.bluez.Device1", "Address").stringValue ?? ""
    }
}

/// Runs `body` against a fresh simulator and always tears everything down.
func withSimulator(_ configure: (inout SimulatorConfiguration) -> Void = { _ in },
                   _ body: (SimHarness) async throws -> Void) async throws {
    var config = SimulatorConfiguration()
    config.straps = 3
    config.rate = 20
    config.serviceDiscoveryDelay = 10...40
    configure(&config)
    let bus = try PrivateBus.start()
    let sim = try SimulatedBlueZ(configuration: config, bus: bus.busAddress)
    var client: DBusConnection?
    do {
        try await sim.start()
        let c = try await DBusConnection.connect(bus.busAddress)
        client = c
        try await body(SimHarness(bus: bus, sim: sim, client: c))
    } catch {
        await sim.stop()
        client?.close()
        bus.stop()
        throw error
    }
    await sim.stop()
    client?.close()
    bus.stop()
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// The next `count` signals of a stream, failing after `seconds`.
func collect(_ stream: DBusSignalStream, _ count: Int, _ what: String, seconds: Double = 30,
             where keep: @escaping @Sendable (DBusSignal) -> Bool = { _ in true }) async throws -> [DBusSignal] {
    try await withThrowingTaskGroup(of: [DBusSignal]?.self) { group in
        group.addTask {
            var out: [DBusSignal] = []
            for await s in stream where keep(s) {
                out.append(s)
                if out.count == count { return out }
            }
            return out
        }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        guard let first = try await group.next(), let got = first, got.count == count else {
            group.cancelAll()
            throw TestFailure("timed out waiting for \(count) \(what)")
        }
        group.cancelAll()
        return got
    }
}

/// Expects a D-Bus error with this name (and message, if given).
func expectError(_ name: String, message: String? = nil, _ body: () async throws -> Void,
                 sourceLocation: SourceLocation = #_sourceLocation) async {
    do {
        try await body()
        Issue.record("expected \(name), got success", sourceLocation: sourceLocation)
    } catch let error as DBusError {
        #expect(error.name == name, sourceLocation: sourceLocation)
        if let message { #expect(error.message == message, sourceLocation: sourceLocation) }
    } catch {
        Issue.record("expected \(name), got \(error)", sourceLocation: sourceLocation)
    }
}

/// The `Value` bytes of a GattCharacteristic1 PropertiesChanged.
func valueBytes(_ s: DBusSignal) -> [UInt8]? {
    guard s.body.count >= 2, s.body[0].stringValue == SimHarness.chr else { return nil }
    return s.body[1].stringKeyedValue?["Value"]?.bytesValue
}

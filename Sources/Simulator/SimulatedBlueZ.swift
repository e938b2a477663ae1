import DBus
import Timing

/// A stand-in for bluetoothd 5.66 on a bus: `org.bluez` with adapters, discovered
/// devices, GATT objects and notifications from virtual straps.
///
/// All state lives in this actor. The BlueZ side (adapters, device objects,
/// sessions) is rebuilt on every simulated daemon restart, on a fresh connection
/// (so clients see a new unique name, as with a real restart); the straps
/// themselves (identity, physiology, payload sequence) persist, like the people
/// wearing them.
public actor SimulatedBlueZ {
    public nonisolated let configuration: SimulatorConfiguration
    /// The virtual devices in the room, in catalog order.
    public nonisolated let devices: [VirtualDeviceIdentity]
    public nonisolated let payloadLog: PayloadLog
    public nonisolated let bus: DBusBusAddress

    public static let busName = "org.bluez"
    public static let controlBusName = "org.blegate.Simulator"

    var straps: [VirtualStrap]
    var rate: Double
    var malformedRate: Double
    var connectFailRate: Double
    var connectFailNext: Int
    var gattCache: SimulatorConfiguration.GattCache
    var faultRNG: SeededRandom
    var daemon: Daemon?
    var generation = 0
    var adapterPresent: [Bool]
    var controlConnection: DBusConnection?
    var controlServer: DBusObjectServer?
    var housekeeping: Task<Void, Never>?
    var linkLossTask: Task<Void, Never>?
    var restartTask: Task<Void, Never>?
    /// Scheduled unplugs and pending adapter returns.
    var adapterTasks: [Task<Void, Never>] = []
    /// Per-adapter LE link limits (0 or missing: none).
    var linkLimits: [Int]
    var stopped = false
    /// The next noise device's index: each one added gets an address never used before.
    var nextNoiseIndex = 0
    /// How many simulated bluetoothd restarts have completed.
    public private(set) var restarts = 0
    /// How many housekeeping rounds (every 100 ms) have run: a test that checks that
    /// something did not happen waits for rounds of the simulator's own, not for a guess.
    public private(set) var housekeepingRounds = 0
    /// AcquireNotify datagrams not sent because the client's socket buffer was full.
    /// bluetoothd drops them the same way and the payload log never sees them, so a
    /// benchmark asks for this count to know what the client missed.
    public internal(set) var droppedNotifications = 0

    public init(configuration: SimulatorConfiguration, bus: DBusBusAddress) throws(SimulatorError) {
        try configuration.validate()
        self.configuration = configuration
        self.bus = bus
        var devices = DeviceCatalog.devices(seed: configuration.seed, straps: configuration.straps, watches: configuration.watches,
                                            advertising: configuration.advertising, advertisingOnly: configuration.advertisingOnly,
                                            scales: configuration.scales)
        for i in devices.indices {
            if let name = configuration.name { devices[i].name = name }
            devices[i].deviceInformation = configuration.deviceInformation
        }
        self.devices = devices
        self.linkLimits = configuration.linkLimits
        self.payloadLog = try PayloadLog(path: configuration.payloadLogPath)
        let root = SeededRandom(seed: configuration.seed)
        self.straps = devices.map { VirtualStrap(identity: $0, root: root) }
        self.rate = configuration.rate
        self.malformedRate = configuration.malformedRate
        self.connectFailRate = configuration.connectFailRate
        self.connectFailNext = configuration.connectFailNext
        self.gattCache = configuration.gattCache
        self.faultRNG = root.derived("faults")
        self.adapterPresent = Array(repeating: true, count: configuration.adapters)
    }

    // MARK: Lifecycle

    /// Takes `org.blegate.Simulator` (control) and `org.bluez`, and exports the adapters.
    public func start() async throws(DBusError) {
        let control = try await DBusConnection.connect(bus)
        let server = DBusObjectServer(connection: control, objectManagerPath: nil)
        try server.add(FaultControl.path, [FaultControl.interface(self)])
        guard try await control.requestName(Self.controlBusName) == .primaryOwner else {
            control.close()
            throw DBusError(name: "org.freedesktop.DBus.Error.AddressInUse", message: "\(Self.controlBusName) is already owned")
        }
        controlConnection = control
        controlServer = server
        try await bringUpDaemon()
        housekeeping = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(100))
                await self?.housekeep()
            }
        }
        for unplug in configuration.unplugs {
            adapterTasks.append(Task { [weak self] in
                try? await Task.sleep(for: .seconds(unplug.at))
                guard !Task.isCancelled else { return }
                await self?.removeAdapter(unplug.adapter, returnAfter: unplug.duration)
            })
        }
        if let every = configuration.linkLossEvery, every > 0 {
            linkLossTask = Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(every))
                    await self?.randomLinkLoss()
                }
            }
        }
    }

    /// Releases the names, hangs up every socket and closes the connections.
    public func stop() async {
        guard !stopped else { return }
        stopped = true
        housekeeping?.cancel()
        linkLossTask?.cancel()
        restartTask?.cancel()
        for task in adapterTasks { task.cancel() }
        adapterTasks.removeAll()
        await tearDownDaemon()
        if let c = controlConnection {
            try? await c.releaseName(Self.controlBusName)
            c.close()
        }
        controlServer?.removeAllSilently()
        controlConnection = nil
        controlServer = nil
        payloadLog.flush()
    }

    /// The current unique name of the simulated bluetoothd (nil while it is down).
    public var daemonUniqueName: String? { daemon?.connection.uniqueName }

    public var isDaemonRunning: Bool { daemon != nil }

    /// Simulates a bluetoothd restart: the name goes away with every object and
    /// session, and after `delay` seconds a fresh daemon takes it and re-adds the
    /// adapters (previously discovered devices are gone).
    /// `adaptersAfter`: seconds between the new daemon taking its name and exporting
    /// its adapters, as bluetoothd owns `org.bluez` before mgmt reports the controllers:
    /// a client that reads the tree in between finds no adapter yet.
    public func restartDaemon(after delay: Double? = nil, adaptersAfter: Double = 0) async {
        guard !stopped, daemon != nil else { return }
        await tearDownDaemon()
        let wait = delay ?? configuration.restartDelay
        restartTask = Task { [weak self] in
            try? await Task.sleep(for: .seconds(max(0, wait)))
            guard !Task.isCancelled else { return }
            await self?.finishRestart(adaptersAfter: adaptersAfter)
        }
    }

    func finishRestart(adaptersAfter: Double = 0) async {
        guard !stopped, daemon == nil else { return }
        do {
            try await bringUpDaemon(adaptersAfter: adaptersAfter)
            restarts += 1
            noteRestart()
        } catch {
            log("restart failed: \(error)")
        }
    }

    func bringUpDaemon(adaptersAfter: Double = 0) async throws(DBusError) {
        generation += 1
        let connection = try await DBusConnection.connect(bus)
        let server = DBusObjectServer(connection: connection, objectManagerPath: .root)
        let d = Daemon(generation: generation, connection: connection, server: server)
        daemon = d
        // bluetoothd owns its name before the adapters come up through mgmt.
        let result = try await connection.requestName(Self.busName)
        guard result == .primaryOwner || result == .alreadyOwner else {
            connection.close()
            daemon = nil
            throw DBusError(name: "org.freedesktop.DBus.Error.AddressInUse", message: "org.bluez is already owned on this bus")
        }
        try server.add("/org/bluez", Self.managerInterfaces())
        if adaptersAfter > 0 {
            try? await Task.sleep(for: .seconds(adaptersAfter))
            guard daemon === d else { return }
        }
        for index in adapterPresent.indices where adapterPresent[index] {
            try addAdapter(index, to: d)
        }
        let generation = d.generation
        let changes = try await connection.signals(
            matching: DBusMatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged"),
            bufferSize: 4096)
        d.nameWatch = Task { [weak self] in
            for await signal in changes {
                guard signal.body.count == 3, let name = signal.body[0].stringValue, name.hasPrefix(":"),
                      signal.body[2].stringValue == "" else { continue }
                await self?.clientVanished(name, generation: generation)
            }
        }
    }

    func tearDownDaemon() async {
        guard let d = daemon else { return }
        daemon = nil
        d.nameWatch?.cancel()
        for adapter in d.adapters.values {
            adapter.scanTask?.cancel()
            for device in adapter.devices.values {
                releaseDeviceSilently(device)
            }
        }
        d.adapters.removeAll()
        d.server.removeAllSilently()
        try? await d.connection.releaseName(Self.busName)
        d.connection.close()
    }

    /// `/org/bluez`: the manager interfaces bluetoothd always exports there. Agents
    /// and profiles are accepted and ignored (the simulator never pairs).
    static func managerInterfaces() -> [DBusInterface] {
        [
            DBusInterface("org.bluez.AgentManager1", methods: [
                DBusMethod("RegisterAgent", in: [DBusArgument("agent", "o"), DBusArgument("capability", "s")]) { _ in [] },
                DBusMethod("UnregisterAgent", in: [DBusArgument("agent", "o")]) { _ in [] },
                DBusMethod("RequestDefaultAgent", in: [DBusArgument("agent", "o")]) { _ in [] },
            ]),
            DBusInterface("org.bluez.ProfileManager1", methods: [
                DBusMethod("RegisterProfile", in: [DBusArgument("profile", "o"), DBusArgument("UUID", "s"), DBusArgument("options", "a{sv}")]) { _ in [] },
                DBusMethod("UnregisterProfile", in: [DBusArgument("profile", "o")]) { _ in [] },
            ]),
            DBusInterface("org.bluez.HealthManager1", methods: [
                DBusMethod("CreateApplication", in: [DBusArgument("config", "a{sv}")], out: [DBusArgument("application", "o")]) { _ in
                    throw BlueZError.notSupported()
                },
                DBusMethod("DestroyApplication", in: [DBusArgument("application", "o")]) { _ in throw BlueZError.notSupported() },
            ]),
        ]
    }

    // MARK: Housekeeping

    /// Every 100 ms: notices closed AcquireNotify sockets and expires devices that
    /// have not been seen for TemporaryTimeout.
    func housekeep() {
        housekeepingRounds += 1
        guard let d = daemon else { return }
        let now = MonotonicClock.seconds() * 1000
        for adapter in d.adapters.values {
            for device in Array(adapter.devices.values) {
                for (path, sessions) in device.sessions {
                    if let socket = sessions.acquired, socket.peerClosed() {
                        releaseAcquired(device, characteristic: path, in: d)
                    }
                }
                let strap = straps[device.strap]
                let expired = now - device.lastSeen > configuration.temporaryTimeout * 1000
                if !device.connected, !device.connecting, expired, device.temporary || !strap.advertising {
                    removeDevice(device, from: adapter, in: d)
                }
            }
        }
    }

    /// A client left the bus: its discovery sessions and notification sessions end.
    func clientVanished(_ name: String, generation: Int) {
        guard let d = daemon, d.generation == generation else { return }
        for adapter in d.adapters.values {
            adapter.filters[name] = nil
            if adapter.sessions.remove(name) != nil {
                updateDiscovering(adapter, in: d)
            }
            for device in adapter.devices.values {
                for path in Array(device.sessions.keys) {
                    guard var s = device.sessions[path], s.clients.contains(name) else { continue }
                    s.clients.removeAll { $0 == name }
                    device.sessions[path] = s
                    if s.clients.isEmpty {
                        d.server.setProperty(path, "org.bluez.GattCharacteristic1", "Notifying", .bool(false))
                    }
                }
            }
        }
    }

    // MARK: Lookup

    func daemon(_ generation: Int) throws(DBusError) -> Daemon {
        guard let d = daemon, d.generation == generation else {
            throw DBusError(.unknownObject, "the object is gone")
        }
        return d
    }

    func adapter(_ generation: Int, _ index: Int) throws(DBusError) -> (Daemon, SimAdapter) {
        let d = try daemon(generation)
        guard let a = d.adapters[index] else { throw DBusError(.unknownObject, "adapter is gone") }
        return (d, a)
    }

    func device(_ generation: Int, _ adapterIndex: Int, _ address: String) throws(DBusError) -> (Daemon, SimAdapter, SimDevice) {
        let (d, a) = try adapter(generation, adapterIndex)
        guard let dev = a.devices[address] else { throw DBusError(.unknownObject, "device is gone") }
        return (d, a, dev)
    }

    /// The advertising reports of the device with this address so far (nil: no such
    /// device): how many came due on discovering adapters, whether it advertised or not,
    /// and how many reached the bus. A test that checks what a client did not see waits
    /// for reports that certainly came due, not for a guessed time.
    public func advertisingReports(_ address: String) -> AdvertisingReports? {
        straps.first { $0.identity.address == address.uppercased() }?.reports
    }

    /// Devices matching a selector: "" or "*" for all, else an address, an object
    /// path, or a name.
    func strapIndices(_ selector: String) -> [Int] {
        if selector.isEmpty || selector == "*" { return Array(straps.indices) }
        let s = selector.uppercased()
        return straps.indices.filter { i in
            let id = straps[i].identity
            return id.address == s || id.name.uppercased() == s || selector.hasSuffix(id.objectName)
        }
    }

    nonisolated func log(_ message: String) {
        var line = "blegate simulate: " + message + "\n"
        line.withUTF8 { buf in _ = write(2, buf.baseAddress, buf.count) }
    }
}

/// A strap's advertising reports: see `SimulatedBlueZ.advertisingReports(_:)`.
public struct AdvertisingReports: Sendable, Hashable {
    /// Report slots that came due on any discovering adapter (also while it did not
    /// advertise, or a filter hid it).
    public var due = 0
    /// Reports put on the bus (a new device object, or changed RSSI or advertised data).
    public var delivered = 0
}

/// One incarnation of bluetoothd: its connection, object tree and adapters.
final class Daemon {
    let generation: Int
    let connection: DBusConnection
    let server: DBusObjectServer
    var adapters: [Int: SimAdapter] = [:]
    var nameWatch: Task<Void, Never>?
    /// Foreign devices' objects (NoiseDevices.swift), in the order they appeared.
    var noise: [DBusObjectPath] = []

    init(generation: Int, connection: DBusConnection, server: DBusObjectServer) {
        self.generation = generation
        self.connection = connection
        self.server = server
    }
}

#if canImport(Glibc)
import Glibc
#endif

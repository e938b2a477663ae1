import DBus
import Timing

/// A strap in the room, independent of any bluetoothd incarnation: who it is,
/// its wearer's heart, and the faults armed against it.
struct VirtualStrap {
    let identity: VirtualDeviceIdentity
    var stream: HeartRateStream
    var heartRateSequence = 0
    var batterySequence = 0
    var advertising = true
    /// The adapter index holding its (single) link.
    var linkedAdapter: Int?
    var failNextConnects = 0
    var scanRNG: SeededRandom
    var rssiRNG: SeededRandom
    var connectRNG: SeededRandom
    var malformedRNG: SeededRandom
    var rssi: Double
    /// Off the skin (on a hook): no notifications, an advertisement without contact.
    var worn = true
    /// The live Polar heart-rate block, for models that advertise one.
    var advert: PolarAdvert?
    /// When the heart-rate stream last advanced (monotonic ms), and whether the
    /// notification pump moved it (else advertising did).
    var clockAt: Double?
    var clockByPump = false
    /// A misbehaving device: its own notification rate (nil: the simulator's), and Heart
    /// Rate values padded with RR intervals to this many bytes (0: as measured).
    var floodRate: Double?
    var floodBytes = 0
    /// A scale's measurement waiting for a central, and the count of its wake-ups (so the
    /// timer of an earlier one does nothing).
    var scaleReading: ScaleReading?
    var scaleWakes = 0
    var measurementSequence = 0
    /// Advertising reports of this strap that came due on a discovering adapter, and how
    /// many of them (with reports of new data) were put on the bus.
    var reports = AdvertisingReports()

    init(identity: VirtualDeviceIdentity, root: SeededRandom) {
        self.identity = identity
        let r = SeededRandom(seed: identity.seed)
        stream = HeartRateStream(traits: identity.model.traits, rng: r.derived("heart"))
        scanRNG = r.derived("scan")
        rssiRNG = r.derived("rssi")
        connectRNG = r.derived("connect")
        malformedRNG = r.derived("malformed")
        advertising = identity.model != .scale
        rssi = rssiRNG.uniform(-88 ... -52)
        if identity.model.advertisesHeartRate {
            let bytes = identity.manufacturerData[PolarAdvert.companyID] ?? DeviceCatalog.polarBroadcast(restingHeartRate: 60)
            advert = PolarAdvert(bytes: bytes, counter: (bytes[0] >> 2) & 0x07)
        }
    }

    /// The RSSI of the last report, for a report that only carries new data.
    var currentRSSI: Int16 { Int16(rssi.rounded()) }

    /// Manufacturer data as the strap advertises it now.
    var manufacturerData: [UInt16: [UInt8]] {
        var data = identity.manufacturerData
        if let advert { data[PolarAdvert.companyID] = advert.bytes }
        return data
    }

    /// A slow random walk around the strap's distance, with fast fading on top.
    mutating func nextRSSI() -> Int16 {
        rssi = min(-40, max(-98, rssi + 1.5 * rssiRNG.gaussian()))
        return Int16((rssi + 3 * rssiRNG.gaussian()).rounded())
    }
}

/// A device object on one adapter.
final class SimDevice {
    let strap: Int
    let adapter: Int
    let path: DBusObjectPath
    var connected = false
    var connecting = false
    var servicesResolved = false
    /// Discovered but never connected: bluetoothd drops it after TemporaryTimeout.
    var temporary = true
    var lastSeen: Double
    var reportedRSSI: Int16?
    /// The strap's `PolarAdvert.serial` this object last showed.
    var advertSerial = 0
    var gattExported = false
    var battery1 = false
    var services: [ServiceSpec] = []
    var characteristics: [DBusObjectPath: CharacteristicSpec] = [:]
    var sessions: [DBusObjectPath: NotifySessions] = [:]
    var pump: Task<Void, Never>?
    var resolve: Task<Void, Never>?
    /// Bumped on every link change, so a late timer of an old link does nothing.
    var linkEpoch = 0
    var lastBattery: UInt8?

    init(strap: Int, adapter: Int, path: DBusObjectPath, lastSeen: Double) {
        self.strap = strap
        self.adapter = adapter
        self.path = path
        self.lastSeen = lastSeen
    }

    var heartRateCharacteristic: DBusObjectPath? {
        characteristics.first { $0.value.role == .heartRateMeasurement }?.key
    }

    var batteryCharacteristic: DBusObjectPath? {
        characteristics.first { $0.value.role == .batteryLevel }?.key
    }
}

extension SimulatedBlueZ {
    /// org.bluez.Device1 with 5.66's property table; properties BlueZ leaves out for
    /// this device (Class, Icon, Modalias, ServiceData, WakeAllowed ...) stay absent.
    func deviceInterface(_ id: VirtualDeviceIdentity, _ device: SimDevice, adapter a: SimAdapter, generation g: Int, rssi: Int16) -> DBusInterface {
        let i = a.index, address = id.address, name = id.name
        let manufacturer = manufacturerValue(device.strap)
        return DBusInterface("org.bluez.Device1", methods: [
            DBusMethod("Disconnect") { [weak self] _ in
                try await self?.disconnect(g, i, address)
                return []
            },
            DBusMethod("Connect") { [weak self] _ in
                guard let self else { throw BlueZError.failed(BlueZError.leAbortByLocal) }
                try await self.connect(g, i, address)
                return []
            },
            // LE-only devices: 5.66 tries a BR/EDR profile connection and fails SDP.
            DBusMethod("ConnectProfile", in: [DBusArgument("UUID", "s")]) { _ in throw BlueZError.failed("br-connection-sdp-search") },
            DBusMethod("DisconnectProfile", in: [DBusArgument("UUID", "s")]) { _ in throw BlueZError.invalidArguments() },
            DBusMethod("Pair") { _ in throw BlueZError.notSupported() },
            DBusMethod("CancelPairing") { _ in throw BlueZError.doesNotExist() },
        ], properties: [
            DBusProperty("Address", "s", value: .string(address)),
            DBusProperty("AddressType", "s", value: .string(id.addressType)),
            DBusProperty("Name", "s", value: .string(name)),
            DBusProperty("Alias", "s", access: .readwrite, value: .string(name), onSet: { v in v.stringValue == "" ? .string(name) : v }),
            DBusProperty("Class", "u"),
            DBusProperty("Appearance", "q", value: .uint16(id.model.appearance)),
            DBusProperty("Icon", "s"),
            DBusProperty("Paired", "b", value: false),
            DBusProperty("Bonded", "b", value: false),
            DBusProperty("Trusted", "b", access: .readwrite, value: false),
            DBusProperty("Blocked", "b", access: .readwrite, value: false),
            DBusProperty("LegacyPairing", "b", value: false),
            DBusProperty("RSSI", "n", value: .int16(rssi)),
            DBusProperty("Connected", "b", value: false),
            DBusProperty("UUIDs", "as", value: .strings(id.model.advertisedServices.map(bluetoothUUID).sorted())),
            DBusProperty("Modalias", "s"),
            DBusProperty("Adapter", "o", value: .objectPath(a.path)),
            DBusProperty("ManufacturerData", "a{qv}", value: manufacturer),
            DBusProperty("ServiceData", "a{sv}"),
            DBusProperty("TxPower", "n", value: id.model.txPower.map(DBusValue.int16)),
            DBusProperty("ServicesResolved", "b", value: false),
            DBusProperty("WakeAllowed", "b", access: .readwrite),
        ])
    }

    // MARK: Connect / Disconnect

    /// LE Connect as 5.66 answers it: success at once when already connected,
    /// Failed "Operation already in progress" (EALREADY) while an attempt runs,
    /// otherwise a seeded set-up delay, then Connected, then the reply; services
    /// resolve shortly after.
    func connect(_ g: Int, _ i: Int, _ address: String) async throws(DBusError) {
        let (_, a, device) = try self.device(g, i, address)
        if device.connected { return }
        guard !device.connecting else { throw BlueZError.failed("Operation already in progress") }
        guard a.powered else { throw BlueZError.failed("le-connection-adapter-not-powered") }
        device.connecting = true
        device.temporary = false
        defer { device.connecting = false }
        let s = device.strap
        let delay = straps[s].connectRNG.uniform(straps[s].identity.model.connectDelay)
        try? await Task.sleep(for: .milliseconds(delay))
        guard (try? self.device(g, i, address)) != nil, a.powered else { throw BlueZError.failed(BlueZError.leAbortByLocal) }
        if let limit = linkLimit(i), a.devices.values.filter(\.connected).count >= limit {
            // The controller refuses LE Create Connection (Connection Limit Exceeded or
            // Memory Capacity Exceeded); 5.66's device.c reports either as this errno text.
            throw BlueZError.failed(BlueZError.leAbortByLocal)
        }
        if shouldFailConnect(s) {
            throw BlueZError.failed(BlueZError.leAbortByLocal)
        }
        if !straps[s].advertising || !straps[s].identity.model.connectable
            || (straps[s].linkedAdapter != nil && straps[s].linkedAdapter != i) {
            // Nobody answers the connection request; the kernel gives up.
            try? await Task.sleep(for: .seconds(configuration.connectTimeout))
            throw BlueZError.failed(BlueZError.leAbortByLocal)
        }
        guard let (d, _, dev) = try? self.device(g, i, address), dev === device, !device.connected else { return }
        straps[s].linkedAdapter = i
        device.connected = true
        device.linkEpoch += 1
        d.server.setProperty(device.path, "org.bluez.Device1", "Connected", .bool(true))
        let epoch = device.linkEpoch
        let resolveDelay = straps[s].connectRNG.uniform(configuration.serviceDiscoveryDelay)
        device.resolve = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(resolveDelay))
            await self?.resolveServices(g, i, address, epoch: epoch)
        }
    }

    func shouldFailConnect(_ s: Int) -> Bool {
        if straps[s].failNextConnects > 0 {
            straps[s].failNextConnects -= 1
            return true
        }
        if connectFailNext > 0 {
            connectFailNext -= 1
            return true
        }
        return faultRNG.chance(connectFailRate)
    }

    /// Service discovery finished: objects (unless cached), UUIDs, Battery1, then
    /// ServicesResolved, then the notification pump.
    func resolveServices(_ g: Int, _ i: Int, _ address: String, epoch: Int) {
        guard let (d, _, device) = try? self.device(g, i, address), device.connected, device.linkEpoch == epoch else { return }
        let identity = straps[device.strap].identity
        d.server.setProperty(device.path, "org.bluez.Device1", "UUIDs", .strings(GATTTree.resolvedUUIDs(identity)))
        if !device.gattExported {
            exportGATT(device, identity: identity, in: d)
        }
        if identity.model.hasBatteryService, !device.battery1 {
            device.battery1 = true
            let level = straps[device.strap].stream.batteryPercent
            device.lastBattery = level
            try? d.server.add(device.path, [DBusInterface("org.bluez.Battery1", properties: [
                DBusProperty("Percentage", "y", value: .byte(level)),
            ])])
        }
        device.servicesResolved = true
        d.server.setProperty(device.path, "org.bluez.Device1", "ServicesResolved", .bool(true))
        startPump(device, generation: g)
    }

    func disconnect(_ g: Int, _ i: Int, _ address: String) async throws(DBusError) {
        let (d, _, device) = try self.device(g, i, address)
        guard device.connected else { return }  // 5.66 answers success
        try? await Task.sleep(for: .milliseconds(straps[device.strap].connectRNG.uniform(20...80)))
        // 5.66 answers Disconnect first and signals Connected false after it (its property
        // changes go out when its main loop is idle): a client may see the device still
        // connected just after the reply.
        dropLink(device, in: d, signal: false)
        let epoch = device.linkEpoch
        Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(30))
            await self?.signalDropped(g, i, address, epoch: epoch)
        }
    }

    private func signalDropped(_ g: Int, _ i: Int, _ address: String, epoch: Int) {
        guard let (d, _, device) = try? self.device(g, i, address), !device.connected, device.linkEpoch == epoch else { return }
        d.server.setProperties(device.path, "org.bluez.Device1", [("ServicesResolved", .bool(false)), ("Connected", .bool(false))])
    }

    /// The link is gone (Disconnect, link loss, power off): sockets hang up, the
    /// pump stops, Battery1 goes, ServicesResolved and Connected turn false in one
    /// signal; with Cache=no the service objects go too. StartNotify sessions stay
    /// registered (with Cache=always) and resume on the next connection.
    func dropLink(_ device: SimDevice, in d: Daemon, signal: Bool = true) {
        guard device.connected else { return }
        device.linkEpoch += 1
        device.pump?.cancel()
        device.pump = nil
        device.resolve?.cancel()
        device.resolve = nil
        for (path, s) in device.sessions where s.acquired != nil {
            s.acquired?.close()
            device.sessions[path]?.acquired = nil
            d.server.setProperty(path, "org.bluez.GattCharacteristic1", "NotifyAcquired", .bool(false))
        }
        if device.battery1 {
            device.battery1 = false
            d.server.remove(device.path, interfaces: ["org.bluez.Battery1"])
        }
        device.connected = false
        device.servicesResolved = false
        device.lastSeen = MonotonicClock.seconds() * 1000
        if straps[device.strap].linkedAdapter == device.adapter { straps[device.strap].linkedAdapter = nil }
        if signal {
            d.server.setProperties(device.path, "org.bluez.Device1", [("ServicesResolved", .bool(false)), ("Connected", .bool(false))])
        }
        if gattCache == .no {
            unexportGATT(device, in: d)
        }
    }

    /// Removes the device object (and everything below it, deepest first).
    func removeDevice(_ device: SimDevice, from a: SimAdapter, in d: Daemon) {
        if device.connected { dropLink(device, in: d) }
        releaseDeviceSilently(device)
        let address = straps[device.strap].identity.address
        a.devices[address] = nil
        d.server.removeSubtree(device.path)
    }

    func removeDevice(_ g: Int, _ i: Int, path: DBusObjectPath?) throws(DBusError) {
        let (d, a) = try adapter(g, i)
        guard let path, let device = a.devices.values.first(where: { $0.path == path }) else { throw BlueZError.doesNotExist() }
        guard a.powered else { throw BlueZError.notReady() }
        removeDevice(device, from: a, in: d)
    }

    /// Stops timers and closes sockets without any signal (the daemon is going away).
    func releaseDeviceSilently(_ device: SimDevice) {
        device.linkEpoch += 1
        device.pump?.cancel()
        device.resolve?.cancel()
        for s in device.sessions.values { s.acquired?.close() }
        device.sessions.removeAll()
        if straps[device.strap].linkedAdapter == device.adapter, device.connected {
            straps[device.strap].linkedAdapter = nil
        }
        device.connected = false
    }
}

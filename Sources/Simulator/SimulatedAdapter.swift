import DBus
import Timing

/// One controller (hciN) as bluetoothd presents it.
final class SimAdapter {
    let index: Int
    let path: DBusObjectPath
    let address: String
    var powered = true
    /// Discovery sessions, one per client (bus name).
    var sessions: Set<String> = []
    /// Filters by client; a filter can be set before StartDiscovery.
    var filters: [String: DiscoveryFilter] = [:]
    var discovering = false
    var devices: [String: SimDevice] = [:]
    var scanTask: Task<Void, Never>?
    /// When each strap is next heard advertising (monotonic ms).
    var nextReport: [Int: Double] = [:]

    init(index: Int, address: String) {
        self.index = index
        self.path = DBusObjectPath.root.appending("org").appending("bluez").appending("hci\(index)")
        self.address = address
    }
}

/// A client's SetDiscoveryFilter dictionary, validated as bluetoothd does.
struct DiscoveryFilter: Sendable, Hashable {
    var uuids: [String] = []
    var rssi: Int16?
    var pathloss: UInt16?
    var transport = "auto"
    var duplicateData = true
    var discoverable = false
    var pattern: String?

    static let keys = ["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"]

    /// nil for an empty dictionary (which clears the client's filter).
    static func parse(_ value: DBusValue) throws(DBusError) -> DiscoveryFilter? {
        guard let entries = value.stringKeyedValue else { throw BlueZError.invalidArguments() }
        if entries.isEmpty { return nil }
        var f = DiscoveryFilter()
        for (key, raw) in entries {
            let v = raw.unwrapped
            switch key {
            case "UUIDs":
                guard case .array(let sig, let items) = v, sig == "s" else { throw BlueZError.invalidArguments() }
                f.uuids = try items.map { item throws(DBusError) in
                    guard let s = item.stringValue, let u = normalizeUUID(s) else { throw BlueZError.invalidArguments() }
                    return u
                }
            case "RSSI":
                guard case .int16(let r) = v else { throw BlueZError.invalidArguments() }
                f.rssi = r
            case "Pathloss":
                guard case .uint16(let p) = v else { throw BlueZError.invalidArguments() }
                f.pathloss = p
            case "Transport":
                guard case .string(let t) = v, ["auto", "le", "bredr"].contains(t) else { throw BlueZError.invalidArguments() }
                f.transport = t
            case "DuplicateData":
                guard case .bool(let b) = v else { throw BlueZError.invalidArguments() }
                f.duplicateData = b
            case "Discoverable":
                guard case .bool(let b) = v else { throw BlueZError.invalidArguments() }
                f.discoverable = b
            case "Pattern":
                guard case .string(let p) = v else { throw BlueZError.invalidArguments() }
                f.pattern = p
            default:
                throw BlueZError.invalidArguments()
            }
        }
        if f.rssi != nil && f.pathloss != nil { throw BlueZError.invalidArguments() }
        return f
    }

    /// Accepts 16-bit, 32-bit and 128-bit spellings, as bluetoothd does.
    static func normalizeUUID(_ s: String) -> String? {
        var t = s.lowercased()
        if t.hasPrefix("0x") { t.removeFirst(2) }
        let hex = t.allSatisfy { $0.isHexDigit }
        if hex, t.count == 4 { return "0000" + t + "-0000-1000-8000-00805f9b34fb" }
        if hex, t.count == 8 { return t + "-0000-1000-8000-00805f9b34fb" }
        if t.count == 36 { return t }
        return nil
    }

    func matches(_ identity: VirtualDeviceIdentity, rssi heard: Int16) -> Bool {
        if transport == "bredr" { return false }  // every simulated device is LE-only
        if !uuids.isEmpty {
            let advertised = Set(identity.model.advertisedServices.map(bluetoothUUID))
            if !uuids.contains(where: advertised.contains) { return false }
        }
        if let threshold = rssi, heard < threshold { return false }
        if let pathloss, let tx = identity.model.txPower, Int(tx) - Int(heard) > Int(pathloss) { return false }
        if let pattern, !pattern.isEmpty,
           !identity.address.hasPrefix(pattern.uppercased()), !identity.name.hasPrefix(pattern) { return false }
        return true
    }
}

extension SimulatedBlueZ {
    static let adapterUUIDs = [0x1801, 0x1800, 0x1200, 0x110C, 0x110E, 0x180A].map { bluetoothUUID(UInt16($0)) }

    /// hci0 looks like a Raspberry Pi's built-in controller, further ones like USB dongles.
    public nonisolated func adapterAddress(_ index: Int) -> String {
        var rng = SeededRandom(seed: configuration.seed).derived("adapter", index)
        let oui: [UInt8] = index == 0 ? [0xB8, 0x27, 0xEB] : [0x00, 0x1A, 0x7D]
        return DeviceCatalog.address(oui + (0..<3).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
    }

    func addAdapter(_ index: Int, to d: Daemon) throws(DBusError) {
        let adapter = SimAdapter(index: index, address: adapterAddress(index))
        d.adapters[index] = adapter
        try d.server.add(adapter.path, adapterInterfaces(adapter, generation: d.generation))
    }

    func adapterInterfaces(_ a: SimAdapter, generation g: Int) -> [DBusInterface] {
        let i = a.index
        let name = i == 0 ? "raspberrypi" : "raspberrypi #\(i + 1)"
        let notSupported: DBusMethod.Handler = { _ in throw BlueZError.notSupported() }
        return [
            DBusInterface("org.bluez.Adapter1", methods: [
                DBusMethod("StartDiscovery") { [weak self] inv in
                    guard let self else { throw BlueZError.notReady() }
                    try await self.startDiscovery(g, i, sender: inv.sender ?? "")
                    return []
                },
                DBusMethod("SetDiscoveryFilter", in: [DBusArgument("properties", "a{sv}")]) { [weak self] inv in
                    guard let self else { throw BlueZError.notReady() }
                    try await self.setDiscoveryFilter(g, i, sender: inv.sender ?? "", inv.arguments[0])
                    return []
                },
                DBusMethod("StopDiscovery") { [weak self] inv in
                    guard let self else { throw BlueZError.notReady() }
                    try await self.stopDiscovery(g, i, sender: inv.sender ?? "")
                    return []
                },
                DBusMethod("RemoveDevice", in: [DBusArgument("device", "o")]) { [weak self] inv in
                    guard let self else { throw BlueZError.notReady() }
                    try await self.removeDevice(g, i, path: inv.arguments[0].objectPathValue)
                    return []
                },
                DBusMethod("GetDiscoveryFilters", out: [DBusArgument("filters", "as")]) { _ in
                    [.strings(DiscoveryFilter.keys)]
                },
            ], properties: [
                DBusProperty("Address", "s", value: .string(a.address)),
                DBusProperty("AddressType", "s", value: "public"),
                DBusProperty("Name", "s", value: .string(name)),
                DBusProperty("Alias", "s", access: .readwrite, value: .string(name), onSet: { v in
                    v.stringValue == "" ? .string(name) : v
                }),
                DBusProperty("Class", "u", value: .uint32(0)),
                DBusProperty("Powered", "b", access: .readwrite, value: .bool(true), onSet: { [weak self] v in
                    try await self?.setPowered(g, i, v.boolValue ?? true)
                    return v
                }),
                DBusProperty("Discoverable", "b", access: .readwrite, value: .bool(false), onSet: { [weak self] v in
                    guard let self, await self.isPowered(g, i) else { throw BlueZError.notReady() }
                    return v
                }),
                DBusProperty("DiscoverableTimeout", "u", access: .readwrite, value: .uint32(180)),
                DBusProperty("Pairable", "b", access: .readwrite, value: .bool(false)),
                DBusProperty("PairableTimeout", "u", access: .readwrite, value: .uint32(0)),
                DBusProperty("Discovering", "b", value: .bool(false)),
                DBusProperty("UUIDs", "as", value: .strings(Self.adapterUUIDs)),
                DBusProperty("Modalias", "s", value: "usb:v1D6Bp0246d0542"),
                DBusProperty("Roles", "as", value: .strings(["central", "peripheral"])),
                DBusProperty("ExperimentalFeatures", "as"),
            ]),
            DBusInterface("org.bluez.GattManager1", methods: [
                DBusMethod("RegisterApplication", in: [DBusArgument("application", "o"), DBusArgument("options", "a{sv}")], handler: notSupported),
                DBusMethod("UnregisterApplication", in: [DBusArgument("application", "o")], handler: notSupported),
            ]),
            DBusInterface("org.bluez.LEAdvertisingManager1", methods: [
                DBusMethod("RegisterAdvertisement", in: [DBusArgument("advertisement", "o"), DBusArgument("options", "a{sv}")], handler: notSupported),
                DBusMethod("UnregisterAdvertisement", in: [DBusArgument("service", "o")], handler: notSupported),
            ], properties: [
                DBusProperty("ActiveInstances", "y", value: .byte(0)),
                DBusProperty("SupportedInstances", "y", value: .byte(5)),
                DBusProperty("SupportedIncludes", "as", value: .strings(["tx-power", "appearance", "local-name"])),
                DBusProperty("SupportedSecondaryChannels", "as", value: .strings([])),
            ]),
            DBusInterface("org.bluez.Media1", methods: [
                DBusMethod("RegisterEndpoint", in: [DBusArgument("endpoint", "o"), DBusArgument("properties", "a{sv}")], handler: notSupported),
                DBusMethod("UnregisterEndpoint", in: [DBusArgument("endpoint", "o")], handler: notSupported),
                DBusMethod("RegisterPlayer", in: [DBusArgument("player", "o"), DBusArgument("properties", "a{sv}")], handler: notSupported),
                DBusMethod("UnregisterPlayer", in: [DBusArgument("player", "o")], handler: notSupported),
                DBusMethod("RegisterApplication", in: [DBusArgument("application", "o"), DBusArgument("options", "a{sv}")], handler: notSupported),
                DBusMethod("UnregisterApplication", in: [DBusArgument("application", "o")], handler: notSupported),
            ], properties: [
                DBusProperty("SupportedUUIDs", "as", value: .strings([bluetoothUUID(0x110A), bluetoothUUID(0x110B)])),
            ]),
            DBusInterface("org.bluez.NetworkServer1", methods: [
                DBusMethod("Register", in: [DBusArgument("uuid", "s"), DBusArgument("bridge", "s")], handler: notSupported),
                DBusMethod("Unregister", in: [DBusArgument("uuid", "s")], handler: notSupported),
            ]),
        ]
    }

    func isPowered(_ g: Int, _ i: Int) -> Bool {
        (try? adapter(g, i).1.powered) ?? false
    }

    // MARK: Discovery

    func startDiscovery(_ g: Int, _ i: Int, sender: String) throws(DBusError) {
        let (d, a) = try adapter(g, i)
        guard a.powered else { throw BlueZError.notReady() }
        guard !a.sessions.contains(sender) else { throw BlueZError.inProgress() }
        a.sessions.insert(sender)
        updateDiscovering(a, in: d)
    }

    func stopDiscovery(_ g: Int, _ i: Int, sender: String) throws(DBusError) {
        let (d, a) = try adapter(g, i)
        guard a.powered else { throw BlueZError.notReady() }
        guard a.sessions.remove(sender) != nil else { throw BlueZError.failed("No discovery started") }
        a.filters[sender] = nil
        updateDiscovering(a, in: d)
    }

    func setDiscoveryFilter(_ g: Int, _ i: Int, sender: String, _ value: DBusValue) throws(DBusError) {
        let (_, a) = try adapter(g, i)
        guard a.powered else { throw BlueZError.notReady() }
        a.filters[sender] = try DiscoveryFilter.parse(value)
    }

    /// Discovering follows the session count; when it turns off, bluetoothd forgets
    /// the RSSI and TxPower it heard (the properties are invalidated).
    func updateDiscovering(_ a: SimAdapter, in d: Daemon) {
        let active = !a.sessions.isEmpty && a.powered
        guard active != a.discovering else { return }
        a.discovering = active
        d.server.setProperty(a.path, "org.bluez.Adapter1", "Discovering", .bool(active))
        if active {
            let now = MonotonicClock.seconds() * 1000
            for index in straps.indices {
                a.nextReport[index] = now + straps[index].scanRNG.uniform(30...450)
            }
            let g = d.generation, i = a.index
            a.scanTask = Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(50))
                    await self?.scanTick(g, i)
                }
            }
        } else {
            a.scanTask?.cancel()
            a.scanTask = nil
            for device in a.devices.values where !device.connected {
                d.server.setProperties(device.path, "org.bluez.Device1", [("RSSI", nil), ("TxPower", nil)])
            }
        }
    }

    /// Delivers the advertising reports that are due: new devices appear
    /// (InterfacesAdded), known ones get a fresh RSSI. A Polar strap's new heart-rate
    /// block is reported at once (changed data passes the controller's duplicate
    /// filter), as a ManufacturerData change on this adapter's object.
    func scanTick(_ g: Int, _ i: Int) {
        guard let (d, a) = try? adapter(g, i), a.discovering else { return }
        let now = MonotonicClock.seconds() * 1000
        let filters = a.sessions.map { a.filters[$0] }
        // Without a filter bluetoothd only reports RSSI changes of 8 dBm or more.
        let anyFilter = filters.contains { $0 != nil }
        for index in straps.indices {
            var due = false
            if let next = a.nextReport[index], next <= now {
                a.nextReport[index] = now + straps[index].scanRNG.uniform(0.6...1.4) * configuration.advertisingInterval * 1000
                due = true
                straps[index].reports.due += 1
            }
            guard straps[index].advertising else { continue }
            if straps[index].advert != nil { refreshAdvert(index, now: now) }
            let identity = straps[index].identity
            let known = a.devices[identity.address]
            let fresh = known != nil && straps[index].advert.map { $0.serial != known!.advertSerial } == true
            guard due || fresh else { continue }
            let rssi = due ? straps[index].nextRSSI() : straps[index].currentRSSI
            let visible = filters.contains { f in f.map { $0.matches(identity, rssi: rssi) } ?? true }
            guard visible else { continue }
            if let device = known {
                device.lastSeen = now
                var updates: [(String, DBusValue?)] = []
                let last = device.reportedRSSI
                if due, anyFilter || last == nil || abs(Int(last!) - Int(rssi)) >= 8 {
                    device.reportedRSSI = rssi
                    updates.append(("RSSI", .int16(rssi)))
                    if let tx = identity.model.txPower { updates.append(("TxPower", .int16(tx))) }
                }
                if fresh, let advert = straps[index].advert {
                    device.advertSerial = advert.serial
                    updates.append(("ManufacturerData", manufacturerValue(index)))
                }
                if !updates.isEmpty {
                    d.server.setProperties(device.path, "org.bluez.Device1", updates)
                    straps[index].reports.delivered += 1
                }
            } else {
                let device = SimDevice(strap: index, adapter: a.index, path: a.path.appending(identity.objectName), lastSeen: now)
                device.reportedRSSI = rssi
                device.advertSerial = straps[index].advert?.serial ?? 0
                a.devices[identity.address] = device
                try? d.server.add(device.path, [deviceInterface(identity, device, adapter: a, generation: g, rssi: rssi)])
                straps[index].reports.delivered += 1
            }
        }
    }

    // MARK: Power and presence

    /// Powered=false drops every link, ends discovery and forgets the devices
    /// (bluetoothd 5.66 removed the device objects in the VM); true brings it back.
    func setPowered(_ g: Int, _ i: Int, _ on: Bool) async throws(DBusError) {
        let (d, a) = try adapter(g, i)
        guard on != a.powered else { return }
        a.powered = on
        if !on {
            for device in Array(a.devices.values) {
                removeDevice(device, from: a, in: d)
            }
            a.sessions.removeAll()
            a.filters.removeAll()
            a.scanTask?.cancel()
            a.scanTask = nil
            let wasDiscovering = a.discovering
            a.discovering = false
            var updates: [(String, DBusValue?)] = [("Powered", .bool(false))]
            if wasDiscovering { updates.append(("Discovering", .bool(false))) }
            d.server.setProperties(a.path, "org.bluez.Adapter1", updates)
        } else {
            d.server.setProperty(a.path, "org.bluez.Adapter1", "Powered", .bool(true))
        }
    }

    /// The controller vanishes (USB unplug, hci reset), in the order 5.66 shows it:
    /// the kernel powers the controller down first (every link drops: Connected=false;
    /// then Discovering and Powered false), then Index Removed takes the devices
    /// (deepest objects first) and the adapter (InterfacesRemoved).
    func removeAdapter(_ index: Int) {
        guard adapterPresent.indices.contains(index) else { return }
        adapterPresent[index] = false
        guard let d = daemon, let a = d.adapters[index] else { return }
        a.scanTask?.cancel()
        a.scanTask = nil
        for device in a.devices.values.sorted(by: { $0.strap < $1.strap }) where device.connected {
            dropLink(device, in: d)
        }
        var updates: [(String, DBusValue?)] = [("Powered", .bool(false))]
        if a.discovering { updates.append(("Discovering", .bool(false))) }
        a.discovering = false
        a.powered = false
        d.server.setProperties(a.path, "org.bluez.Adapter1", updates)
        for device in a.devices.values.sorted(by: { $0.strap < $1.strap }) {
            removeDevice(device, from: a, in: d)
        }
        d.adapters[index] = nil
        d.server.removeSubtree(a.path)
    }

    public func returnAdapter(_ index: Int) {
        guard adapterPresent.indices.contains(index), !adapterPresent[index] else { return }
        adapterPresent[index] = true
        log("hci\(index) back")
        guard let d = daemon else { return }
        try? addAdapter(index, to: d)
    }
}

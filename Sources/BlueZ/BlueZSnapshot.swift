import DBus

/// An immutable view of everything mirrored at one moment.
///
/// The mirror's lookups and `waitFor` predicates both read one of these, so a
/// predicate sees a consistent state (never half of an InterfacesAdded).
///
/// Every lookup a client makes per signal or per strap goes through an index (by
/// address, by adapter, by device, by parent path), so its cost does not grow with
/// the thousands of foreign devices a busy neighbourhood puts on the bus; only the
/// full listings (`devices`, `adapters`) walk everything.
public struct BlueZSnapshot: Sendable {
    var adapterTable: [DBusObjectPath: Adapter] = [:]
    var deviceTable: [DBusObjectPath: Device] = [:]
    var serviceTable: [DBusObjectPath: GattService] = [:]
    var characteristicTable: [DBusObjectPath: GattCharacteristic] = [:]

    /// Devices by upper-case address (one per adapter that heard it).
    var devicesByAddress = PathIndex<String>()
    var devicesByAdapter = PathIndex<DBusObjectPath>()
    var servicesByDevice = PathIndex<DBusObjectPath>()
    var characteristicsByDevice = PathIndex<DBusObjectPath>()
    var characteristicsByService = PathIndex<DBusObjectPath>()
    /// Every mirrored object under the path one element up, for removing a subtree.
    var childrenByPath = PathIndex<DBusObjectPath>()

    public init() {}

    public var isEmpty: Bool { adapterTable.isEmpty && deviceTable.isEmpty && serviceTable.isEmpty && characteristicTable.isEmpty }

    // MARK: Lookups

    /// Sorted by path (hci0 first).
    public var adapters: [Adapter] { adapterTable.values.sorted { $0.path < $1.path } }

    public func adapter(named name: String) -> Adapter? {
        adapterTable.values.first { $0.interfaceName == name }
    }

    public func adapter(path: DBusObjectPath) -> Adapter? { adapterTable[path] }

    /// All devices, sorted by path. Walks every device: for listings, not per signal.
    public var devices: [Device] { deviceTable.values.sorted { $0.path < $1.path } }

    /// How many device objects are mirrored.
    public var deviceCount: Int { deviceTable.count }

    public func devices(on adapter: DBusObjectPath) -> [Device] {
        devicesByAdapter[adapter].compactMap { deviceTable[$0] }.sorted { $0.path < $1.path }
    }

    /// How many device objects an adapter has (every device it heard, strap or not).
    public func deviceCount(on adapter: DBusObjectPath) -> Int { devicesByAdapter.count(adapter) }

    /// Case-insensitive; on several adapters the first by path.
    public func device(address: String) -> Device? {
        devicesByAddress[address.uppercased()].compactMap { deviceTable[$0] }.min { $0.path < $1.path }
    }

    /// The device objects of one address (case-insensitive), one per adapter that heard
    /// it, sorted by path.
    public func devices(address: String) -> [Device] {
        devicesByAddress[address.uppercased()].compactMap { deviceTable[$0] }.sorted { $0.path < $1.path }
    }

    public func device(path: DBusObjectPath) -> Device? { deviceTable[path] }

    public func services(device: DBusObjectPath) -> [GattService] {
        servicesByDevice[device].compactMap { serviceTable[$0] }.sorted { $0.path < $1.path }
    }

    public func characteristics(device: DBusObjectPath) -> [GattCharacteristic] {
        characteristicsByDevice[device].compactMap { characteristicTable[$0] }.sorted { $0.path < $1.path }
    }

    public func characteristics(service: DBusObjectPath) -> [GattCharacteristic] {
        characteristicsByService[service].compactMap { characteristicTable[$0] }.sorted { $0.path < $1.path }
    }

    /// The characteristic with this UUID (any spelling) on the device; the first by
    /// path when several services carry it.
    public func characteristic(device: DBusObjectPath, uuid: String) -> GattCharacteristic? {
        let wanted = BluetoothUUID.normalized(uuid)
        return characteristicsByDevice[device].compactMap { characteristicTable[$0] }.filter { $0.uuid == wanted }.min { $0.path < $1.path }
    }

    public func characteristic(path: DBusObjectPath) -> GattCharacteristic? { characteristicTable[path] }

    public func service(path: DBusObjectPath) -> GattService? { serviceTable[path] }

    /// True when the device's GATT objects are really there: at least one service,
    /// and every UUID in `requiring` (service or characteristic UUIDs, any spelling)
    /// present under the device.
    ///
    /// `ServicesResolved` is deliberately not consulted: bluetoothd can set it before
    /// the objects are exported (and 5.66 does not always signal it), so only the
    /// objects themselves prove that a lookup by UUID will succeed. With a persistent
    /// GATT cache the objects outlive a disconnect; pair this with the link state the
    /// caller knows from its own Connect.
    public func hasResolvedGATT(device: DBusObjectPath, requiring uuids: [String] = []) -> Bool {
        let services = servicesByDevice[device].compactMap { serviceTable[$0] }
        guard !services.isEmpty else { return false }
        var present = Set(services.map(\.uuid))
        for p in characteristicsByDevice[device] { if let c = characteristicTable[p] { present.insert(c.uuid) } }
        return uuids.allSatisfy { present.contains(BluetoothUUID.normalized($0)) }
    }

    // MARK: Storing (tables and indexes together)

    private func holds(_ path: DBusObjectPath) -> Bool {
        adapterTable[path] != nil || deviceTable[path] != nil || serviceTable[path] != nil || characteristicTable[path] != nil
    }

    private mutating func linked(_ path: DBusObjectPath, wasHeld: Bool) {
        if !wasHeld, let parent = path.parent { childrenByPath.insert(path, at: parent) }
    }

    private mutating func unlinkIfGone(_ path: DBusObjectPath) {
        if !holds(path), let parent = path.parent { childrenByPath.remove(path, at: parent) }
    }

    mutating func store(_ a: Adapter) {
        let held = holds(a.path)
        adapterTable[a.path] = a
        linked(a.path, wasHeld: held)
    }

    mutating func store(_ d: Device) {
        let held = holds(d.path)
        let old = deviceTable.updateValue(d, forKey: d.path)
        linked(d.path, wasHeld: held)
        devicesByAddress.move(d.path, from: old?.address.uppercased(), to: d.address.uppercased())
        devicesByAdapter.move(d.path, from: old?.adapter, to: d.adapter)
    }

    mutating func store(_ s: GattService) {
        let held = holds(s.path)
        let old = serviceTable.updateValue(s, forKey: s.path)
        linked(s.path, wasHeld: held)
        servicesByDevice.move(s.path, from: old?.device, to: s.device)
    }

    mutating func store(_ c: GattCharacteristic) {
        let held = holds(c.path)
        let old = characteristicTable.updateValue(c, forKey: c.path)
        linked(c.path, wasHeld: held)
        characteristicsByDevice.move(c.path, from: old?.device, to: c.device)
        characteristicsByService.move(c.path, from: old?.service, to: c.service)
    }

    mutating func dropAdapter(_ path: DBusObjectPath) -> Adapter? {
        guard let a = adapterTable.removeValue(forKey: path) else { return nil }
        unlinkIfGone(path)
        return a
    }

    mutating func dropDevice(_ path: DBusObjectPath) -> Device? {
        guard let d = deviceTable.removeValue(forKey: path) else { return nil }
        devicesByAddress.remove(path, at: d.address.uppercased())
        devicesByAdapter.remove(path, at: d.adapter)
        unlinkIfGone(path)
        return d
    }

    mutating func dropService(_ path: DBusObjectPath) -> GattService? {
        guard let s = serviceTable.removeValue(forKey: path) else { return nil }
        servicesByDevice.remove(path, at: s.device)
        unlinkIfGone(path)
        return s
    }

    mutating func dropCharacteristic(_ path: DBusObjectPath) -> GattCharacteristic? {
        guard let c = characteristicTable.removeValue(forKey: path) else { return nil }
        characteristicsByDevice.remove(path, at: c.device)
        characteristicsByService.remove(path, at: c.service)
        unlinkIfGone(path)
        return c
    }

    // MARK: Updates

    static let keptInterfaces: Set<String> = [
        Adapter.interface, Device.interface, Device.batteryInterface, GattService.interface, GattCharacteristic.interface,
    ]

    static func keptProperties(of interface: String) -> Set<String> {
        switch interface {
        case Adapter.interface: Adapter.keptProperties
        case Device.interface: Device.keptProperties
        case Device.batteryInterface: Device.keptBatteryProperties
        case GattService.interface: GattService.keptProperties
        case GattCharacteristic.interface: GattCharacteristic.keptProperties
        default: []
        }
    }

    /// InterfacesAdded (or one object of GetManagedObjects). Interfaces are applied
    /// parents-first (Device1 before Battery1) whatever order the bag has.
    mutating func interfacesAdded(_ path: DBusObjectPath, _ interfaces: [String: [String: DBusValue]], into events: inout [BlueZEvent]) {
        if let props = interfaces[Adapter.interface] {
            var adapter = adapterTable[path] ?? Adapter(path: path)
            let isNew = adapterTable[path] == nil
            let changed = adapter.apply(Self.fullState(props, Adapter.keptProperties))
            store(adapter)
            if isNew { events.append(.adapterAdded(adapter)) } else if !changed.isEmpty { events.append(.adapterChanged(adapter, changed: changed)) }
        }
        if let props = interfaces[Device.interface] {
            var device = deviceTable[path] ?? Device(path: path)
            let isNew = deviceTable[path] == nil
            var changed = device.apply(Self.fullState(props, Device.keptProperties))
            if let battery = interfaces[Device.batteryInterface] {
                changed.formUnion(device.applyBattery(Self.fullState(battery, Device.keptBatteryProperties)))
            }
            store(device)
            if isNew { events.append(.deviceAdded(device)) } else if !changed.isEmpty { events.append(.deviceChanged(device, changed: changed)) }
        } else if let battery = interfaces[Device.batteryInterface], var device = deviceTable[path] {
            let changed = device.applyBattery(Self.fullState(battery, Device.keptBatteryProperties))
            store(device)
            if !changed.isEmpty { events.append(.deviceChanged(device, changed: changed)) }
        }
        if let props = interfaces[GattService.interface] {
            var service = serviceTable[path] ?? GattService(path: path)
            let isNew = serviceTable[path] == nil
            let changed = service.apply(Self.fullState(props, GattService.keptProperties))
            store(service)
            if isNew { events.append(.gattObjectAdded(.service(service))) } else if !changed.isEmpty { events.append(.gattObjectChanged(.service(service), changed: changed)) }
        }
        if let props = interfaces[GattCharacteristic.interface] {
            var characteristic = characteristicTable[path] ?? GattCharacteristic(path: path)
            let isNew = characteristicTable[path] == nil
            let changed = characteristic.apply(Self.fullState(props, GattCharacteristic.keptProperties))
            if let service = serviceTable[characteristic.service] { characteristic.device = service.device }
            store(characteristic)
            if isNew { events.append(.gattObjectAdded(.characteristic(characteristic))) } else if !changed.isEmpty { events.append(.gattObjectChanged(.characteristic(characteristic), changed: changed)) }
        }
    }

    /// An InterfacesAdded bag is the interface's whole state: a kept property it
    /// lacks is absent (this matters when a replayed signal re-adds a known object).
    static func fullState(_ props: [String: DBusValue], _ kept: Set<String>) -> [(String, PropertyUpdate)] {
        propertyUpdates(props, invalidated: kept.subtracting(props.keys).sorted())
    }

    /// InterfacesRemoved. Removing Adapter1 or Device1 also drops whatever the mirror
    /// still holds below that path (bluetoothd removes children first, so normally
    /// nothing), deepest first, each with its event.
    mutating func interfacesRemoved(_ path: DBusObjectPath, _ interfaces: [String], into events: inout [BlueZEvent]) {
        let names = Set(interfaces)
        if names.contains(GattCharacteristic.interface), let c = dropCharacteristic(path) {
            events.append(.gattObjectRemoved(.characteristic(c)))
        }
        if names.contains(GattService.interface) {
            removeBelow(path, into: &events)
            if let s = dropService(path) { events.append(.gattObjectRemoved(.service(s))) }
        }
        if names.contains(Device.interface) {
            removeBelow(path, into: &events)
            if let d = dropDevice(path) { events.append(.deviceRemoved(d)) }
        } else if names.contains(Device.batteryInterface), var device = deviceTable[path] {
            let changed = device.applyBattery([("Percentage", .invalidated)])
            store(device)
            if !changed.isEmpty { events.append(.deviceChanged(device, changed: changed)) }
        }
        if names.contains(Adapter.interface) {
            removeBelow(path, into: &events)
            if let a = dropAdapter(path) { events.append(.adapterRemoved(a)) }
        }
    }

    /// Follows the parent-path index down, so removing one device costs its own
    /// subtree, not a walk over every object mirrored.
    private mutating func removeBelow(_ path: DBusObjectPath, into events: inout [BlueZEvent]) {
        var below: [DBusObjectPath] = []
        var queue = Array(childrenByPath[path])
        while let p = queue.popLast() {
            below.append(p)
            queue.append(contentsOf: childrenByPath[p])
        }
        guard !below.isEmpty else { return }
        for p in below { if let c = dropCharacteristic(p) { events.append(.gattObjectRemoved(.characteristic(c))) } }
        for p in below { if let s = dropService(p) { events.append(.gattObjectRemoved(.service(s))) } }
        for p in below { if let d = dropDevice(p) { events.append(.deviceRemoved(d)) } }
    }

    /// PropertiesChanged of one interface; objects the mirror does not hold are
    /// ignored (their InterfacesAdded will carry the whole state).
    mutating func propertiesChanged(_ path: DBusObjectPath, interface: String, _ changed: [String: DBusValue], invalidated: [String], into events: inout [BlueZEvent]) {
        let updates = propertyUpdates(changed, invalidated: invalidated)
        switch interface {
        case Adapter.interface:
            guard var a = adapterTable[path] else { return }
            let names = a.apply(updates)
            store(a)
            if !names.isEmpty { events.append(.adapterChanged(a, changed: names)) }
        case Device.interface, Device.batteryInterface:
            guard var d = deviceTable[path] else { return }
            let names = interface == Device.interface ? d.apply(updates) : d.applyBattery(updates)
            store(d)
            if !names.isEmpty { events.append(.deviceChanged(d, changed: names)) }
        case GattService.interface:
            guard var s = serviceTable[path] else { return }
            let names = s.apply(updates)
            store(s)
            if !names.isEmpty { events.append(.gattObjectChanged(.service(s), changed: names)) }
        case GattCharacteristic.interface:
            guard var c = characteristicTable[path] else { return }
            let names = c.apply(updates)
            if let service = serviceTable[c.service] { c.device = service.device }
            store(c)
            if !names.isEmpty { events.append(.gattObjectChanged(.characteristic(c), changed: names)) }
        default:
            return
        }
    }
}

/// Object paths grouped by a key, kept beside a table so a lookup by that key costs the
/// group, not the table. Most groups hold one path (an address heard by one adapter): that
/// one is kept inline, so a foreign device costs no set of its own.
struct PathIndex<Key: Hashable & Sendable>: Sendable {
    private enum Group: Sendable {
        case one(DBusObjectPath)
        case many(Set<DBusObjectPath>)
    }

    private var groups: [Key: Group] = [:]

    subscript(key: Key) -> [DBusObjectPath] {
        switch groups[key] {
        case nil: []
        case .one(let p): [p]
        case .many(let set): Array(set)
        }
    }

    func count(_ key: Key) -> Int {
        switch groups[key] {
        case nil: 0
        case .one: 1
        case .many(let set): set.count
        }
    }

    mutating func insert(_ path: DBusObjectPath, at key: Key) {
        switch groups.removeValue(forKey: key) {
        case nil: groups[key] = .one(path)
        case .one(let p): groups[key] = p == path ? .one(p) : .many([p, path])
        case .many(var set):
            set.insert(path)
            groups[key] = .many(set)
        }
    }

    /// Files `path` under `new` instead of `old` (nil: it was not filed); nothing to do
    /// when the key did not change, which is what nearly every property update is.
    mutating func move(_ path: DBusObjectPath, from old: Key?, to new: Key) {
        guard old != new else { return }
        if let old { remove(path, at: old) }
        insert(path, at: new)
    }

    mutating func remove(_ path: DBusObjectPath, at key: Key) {
        switch groups.removeValue(forKey: key) {
        case nil: return
        case .one(let p): if p != path { groups[key] = .one(p) }
        case .many(var set):
            set.remove(path)
            if set.count == 1, let last = set.first { groups[key] = .one(last) } else if !set.isEmpty { groups[key] = .many(set) }
        }
    }
}

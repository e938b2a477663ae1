import DBus

/// An immutable view of everything mirrored at one moment.
///
/// The mirror's lookups and `waitFor` predicates both read one of these, so a
/// predicate sees a consistent state (never half of an InterfacesAdded).
public struct BlueZSnapshot: Sendable {
    var adapterTable: [DBusObjectPath: Adapter] = [:]
    var deviceTable: [DBusObjectPath: Device] = [:]
    var serviceTable: [DBusObjectPath: GattService] = [:]
    var characteristicTable: [DBusObjectPath: GattCharacteristic] = [:]

    public init() {}

    public var isEmpty: Bool { adapterTable.isEmpty && deviceTable.isEmpty && serviceTable.isEmpty && characteristicTable.isEmpty }

    // MARK: Lookups

    /// Sorted by path (hci0 first).
    public var adapters: [Adapter] { adapterTable.values.sorted { $0.path < $1.path } }

    public func adapter(named name: String) -> Adapter? {
        adapterTable.values.first { $0.interfaceName == name }
    }

    public func adapter(path: DBusObjectPath) -> Adapter? { adapterTable[path] }

    /// All devices, sorted by path.
    public var devices: [Device] { deviceTable.values.sorted { $0.path < $1.path } }

    public func devices(on adapter: DBusObjectPath) -> [Device] {
        deviceTable.values.filter { $0.adapter == adapter }.sorted { $0.path < $1.path }
    }

    /// Case-insensitive; on several adapters the first by path.
    public func device(address: String) -> Device? {
        let wanted = address.uppercased()
        return deviceTable.values.filter { $0.address.uppercased() == wanted }.min { $0.path < $1.path }
    }

    public func device(path: DBusObjectPath) -> Device? { deviceTable[path] }

    public func services(device: DBusObjectPath) -> [GattService] {
        serviceTable.values.filter { $0.device == device }.sorted { $0.path < $1.path }
    }

    public func characteristics(device: DBusObjectPath) -> [GattCharacteristic] {
        characteristicTable.values.filter { $0.device == device }.sorted { $0.path < $1.path }
    }

    public func characteristics(service: DBusObjectPath) -> [GattCharacteristic] {
        characteristicTable.values.filter { $0.service == service }.sorted { $0.path < $1.path }
    }

    /// The characteristic with this UUID (any spelling) on the device; the first by
    /// path when several services carry it.
    public func characteristic(device: DBusObjectPath, uuid: String) -> GattCharacteristic? {
        let wanted = BluetoothUUID.normalized(uuid)
        return characteristicTable.values.filter { $0.device == device && $0.uuid == wanted }.min { $0.path < $1.path }
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
        let services = serviceTable.values.filter { $0.device == device }
        guard !services.isEmpty else { return false }
        var present = Set(services.map(\.uuid))
        for c in characteristicTable.values where c.device == device { present.insert(c.uuid) }
        return uuids.allSatisfy { present.contains(BluetoothUUID.normalized($0)) }
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
            adapterTable[path] = adapter
            if isNew { events.append(.adapterAdded(adapter)) } else if !changed.isEmpty { events.append(.adapterChanged(adapter, changed: changed)) }
        }
        if let props = interfaces[Device.interface] {
            var device = deviceTable[path] ?? Device(path: path)
            let isNew = deviceTable[path] == nil
            var changed = device.apply(Self.fullState(props, Device.keptProperties))
            if let battery = interfaces[Device.batteryInterface] {
                changed.formUnion(device.applyBattery(Self.fullState(battery, Device.keptBatteryProperties)))
            }
            deviceTable[path] = device
            if isNew { events.append(.deviceAdded(device)) } else if !changed.isEmpty { events.append(.deviceChanged(device, changed: changed)) }
        } else if let battery = interfaces[Device.batteryInterface], var device = deviceTable[path] {
            let changed = device.applyBattery(Self.fullState(battery, Device.keptBatteryProperties))
            deviceTable[path] = device
            if !changed.isEmpty { events.append(.deviceChanged(device, changed: changed)) }
        }
        if let props = interfaces[GattService.interface] {
            var service = serviceTable[path] ?? GattService(path: path)
            let isNew = serviceTable[path] == nil
            let changed = service.apply(Self.fullState(props, GattService.keptProperties))
            serviceTable[path] = service
            if isNew { events.append(.gattObjectAdded(.service(service))) } else if !changed.isEmpty { events.append(.gattObjectChanged(.service(service), changed: changed)) }
        }
        if let props = interfaces[GattCharacteristic.interface] {
            var characteristic = characteristicTable[path] ?? GattCharacteristic(path: path)
            let isNew = characteristicTable[path] == nil
            let changed = characteristic.apply(Self.fullState(props, GattCharacteristic.keptProperties))
            if let service = serviceTable[characteristic.service] { characteristic.device = service.device }
            characteristicTable[path] = characteristic
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
        if names.contains(GattCharacteristic.interface), let c = characteristicTable.removeValue(forKey: path) {
            events.append(.gattObjectRemoved(.characteristic(c)))
        }
        if names.contains(GattService.interface) {
            removeBelow(path, into: &events)
            if let s = serviceTable.removeValue(forKey: path) { events.append(.gattObjectRemoved(.service(s))) }
        }
        if names.contains(Device.interface) {
            removeBelow(path, into: &events)
            if let d = deviceTable.removeValue(forKey: path) { events.append(.deviceRemoved(d)) }
        } else if names.contains(Device.batteryInterface), var device = deviceTable[path] {
            let changed = device.applyBattery([("Percentage", .invalidated)])
            deviceTable[path] = device
            if !changed.isEmpty { events.append(.deviceChanged(device, changed: changed)) }
        }
        if names.contains(Adapter.interface) {
            removeBelow(path, into: &events)
            if let a = adapterTable.removeValue(forKey: path) { events.append(.adapterRemoved(a)) }
        }
    }

    private mutating func removeBelow(_ path: DBusObjectPath, into events: inout [BlueZEvent]) {
        for c in characteristicTable.values where c.path != path && c.path.isDescendant(of: path) {
            characteristicTable[c.path] = nil
            events.append(.gattObjectRemoved(.characteristic(c)))
        }
        for s in serviceTable.values where s.path != path && s.path.isDescendant(of: path) {
            serviceTable[s.path] = nil
            events.append(.gattObjectRemoved(.service(s)))
        }
        for d in deviceTable.values where d.path != path && d.path.isDescendant(of: path) {
            deviceTable[d.path] = nil
            events.append(.deviceRemoved(d))
        }
    }

    /// PropertiesChanged of one interface; objects the mirror does not hold are
    /// ignored (their InterfacesAdded will carry the whole state).
    mutating func propertiesChanged(_ path: DBusObjectPath, interface: String, _ changed: [String: DBusValue], invalidated: [String], into events: inout [BlueZEvent]) {
        let updates = propertyUpdates(changed, invalidated: invalidated)
        switch interface {
        case Adapter.interface:
            guard var a = adapterTable[path] else { return }
            let names = a.apply(updates)
            adapterTable[path] = a
            if !names.isEmpty { events.append(.adapterChanged(a, changed: names)) }
        case Device.interface, Device.batteryInterface:
            guard var d = deviceTable[path] else { return }
            let names = interface == Device.interface ? d.apply(updates) : d.applyBattery(updates)
            deviceTable[path] = d
            if !names.isEmpty { events.append(.deviceChanged(d, changed: names)) }
        case GattService.interface:
            guard var s = serviceTable[path] else { return }
            let names = s.apply(updates)
            serviceTable[path] = s
            if !names.isEmpty { events.append(.gattObjectChanged(.service(s), changed: names)) }
        case GattCharacteristic.interface:
            guard var c = characteristicTable[path] else { return }
            let names = c.apply(updates)
            if let service = serviceTable[c.service] { c.device = service.device }
            characteristicTable[path] = c
            if !names.isEmpty { events.append(.gattObjectChanged(.characteristic(c), changed: names)) }
        default:
            return
        }
    }
}

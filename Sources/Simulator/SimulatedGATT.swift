import DBus

extension SimulatedBlueZ {
    static let characteristicInterface = "org.bluez.GattCharacteristic1"

    /// Exports services, characteristics and descriptors in attribute order, as
    /// bluetoothd does once discovery of the remote GATT database completes.
    func exportGATT(_ device: SimDevice, identity: VirtualDeviceIdentity, in d: Daemon) {
        let g = d.generation, i = device.adapter, address = identity.address
        device.services = GATTTree.layout(for: identity)
        device.characteristics = [:]
        for service in device.services {
            let sp = GATTTree.servicePath(device.path, service)
            try? d.server.add(sp, [DBusInterface("org.bluez.GattService1", properties: [
                DBusProperty("UUID", "s", value: .string(service.uuid)),
                DBusProperty("Device", "o", value: .objectPath(device.path)),
                DBusProperty("Primary", "b", value: true),
                DBusProperty("Includes", "ao", value: .array(element: "o", [])),
            ])])
            for c in service.characteristics {
                let cp = GATTTree.characteristicPath(sp, c)
                device.characteristics[cp] = c
                try? d.server.add(cp, [characteristicInterface(c, path: cp, service: sp, mtu: identity.model.mtu, g, i, address)])
                if let h = c.cccdHandle {
                    let dp = GATTTree.descriptorPath(cp, h)
                    try? d.server.add(dp, [DBusInterface("org.bluez.GattDescriptor1", methods: [
                        DBusMethod("ReadValue", in: [DBusArgument("options", "a{sv}")], out: [DBusArgument("value", "ay")]) { [weak self] _ in
                            guard let self else { throw BlueZError.failed("Not connected") }
                            return [.bytes(try await self.readCCCD(g, i, address, characteristic: cp))]
                        },
                        DBusMethod("WriteValue", in: [DBusArgument("value", "ay"), DBusArgument("options", "a{sv}")]) { _ in
                            // bluetoothd reserves the CCCD for its own notification handling.
                            throw BlueZError.notPermitted("Write not permitted")
                        },
                    ], properties: [
                        DBusProperty("UUID", "s", value: .string(bluetoothUUID(0x2902))),
                        DBusProperty("Characteristic", "o", value: .objectPath(cp)),
                        DBusProperty("Value", "ay", value: .bytes([])),
                    ])])
                }
            }
        }
        device.gattExported = true
    }

    func unexportGATT(_ device: SimDevice, in d: Daemon) {
        guard device.gattExported else { return }
        for s in device.sessions.values { s.acquired?.close() }
        device.sessions.removeAll()
        for service in device.services {
            d.server.removeSubtree(GATTTree.servicePath(device.path, service))
        }
        device.characteristics = [:]
        device.gattExported = false
    }

    func characteristicInterface(_ c: CharacteristicSpec, path cp: DBusObjectPath, service sp: DBusObjectPath, mtu: UInt16,
                                 _ g: Int, _ i: Int, _ address: String) -> DBusInterface {
        DBusInterface(Self.characteristicInterface, methods: [
            DBusMethod("ReadValue", in: [DBusArgument("options", "a{sv}")], out: [DBusArgument("value", "ay")]) { [weak self] inv in
                guard let self else { throw BlueZError.failed("Not connected") }
                return [.bytes(try await self.readValue(g, i, address, cp, options: inv.arguments[0]))]
            },
            DBusMethod("WriteValue", in: [DBusArgument("value", "ay"), DBusArgument("options", "a{sv}")]) { [weak self] inv in
                guard let self else { throw BlueZError.failed("Not connected") }
                try await self.writeValue(g, i, address, cp, inv.arguments[0].bytesValue ?? [])
                return []
            },
            DBusMethod("AcquireWrite", in: [DBusArgument("options", "a{sv}")], out: [DBusArgument("fd", "h"), DBusArgument("mtu", "q")]) { _ in
                throw BlueZError.notSupported()  // no simulated characteristic has write-without-response
            },
            DBusMethod("AcquireNotify", in: [DBusArgument("options", "a{sv}")], out: [DBusArgument("fd", "h"), DBusArgument("mtu", "q")]) { [weak self] _ in
                guard let self else { throw BlueZError.failed("Not connected") }
                let fd = try await self.acquireNotify(g, i, address, cp)
                return [.unixFD(fd), .uint16(mtu)]
            },
            DBusMethod("StartNotify") { [weak self] inv in
                try await self?.startNotify(g, i, address, cp, sender: inv.sender ?? "")
                return []
            },
            DBusMethod("StopNotify") { [weak self] inv in
                try await self?.stopNotify(g, i, address, cp, sender: inv.sender ?? "")
                return []
            },
        ], properties: [
            DBusProperty("UUID", "s", value: .string(c.uuid)),
            DBusProperty("Service", "o", value: .objectPath(sp)),
            DBusProperty("Value", "ay", value: .bytes([])),
            DBusProperty("Notifying", "b", value: c.notifies ? .bool(false) : nil),
            DBusProperty("Flags", "as", value: .strings(c.flags)),
            DBusProperty("WriteAcquired", "b", value: c.flags.contains("write-without-response") ? .bool(false) : nil),
            DBusProperty("NotifyAcquired", "b", value: c.flags.contains("notify") ? .bool(false) : nil),
            DBusProperty("MTU", "q", value: .uint16(mtu)),
        ])
    }

    // MARK: Methods

    func connectedCharacteristic(_ g: Int, _ i: Int, _ address: String, _ cp: DBusObjectPath) throws(DBusError) -> (Daemon, SimDevice, CharacteristicSpec) {
        let (d, _, device) = try self.device(g, i, address)
        guard let c = device.characteristics[cp] else { throw DBusError(.unknownObject, "no object at \(cp)") }
        return (d, device, c)
    }

    func currentValue(_ c: CharacteristicSpec, strap s: Int) -> [UInt8] {
        switch c.role {
        case .bodySensorLocation: [straps[s].identity.model.bodySensorLocation]
        case .batteryLevel: [straps[s].stream.batteryPercent]
        case .staticValue(let v): v
        case .serviceChanged, .heartRateMeasurement, .heartRateControlPoint, .vendorNotify, .weightMeasurement,
             .bodyCompositionMeasurement: []
        }
    }

    func readValue(_ g: Int, _ i: Int, _ address: String, _ cp: DBusObjectPath, options: DBusValue) throws(DBusError) -> [UInt8] {
        let (d, device, c) = try connectedCharacteristic(g, i, address, cp)
        guard device.connected else { throw BlueZError.failed("Not connected") }
        var offset = 0
        if let opts = options.stringKeyedValue, let o = opts["offset"] {
            guard case .uint16(let v) = o.unwrapped else { throw BlueZError.invalidArguments() }
            offset = Int(v)
        }
        guard c.readable else { throw BlueZError.notPermitted("Read not permitted") }
        let value = currentValue(c, strap: device.strap)
        guard offset <= value.count else { throw BlueZError.invalidArguments("Invalid offset") }
        // A read refreshes the cached value, and bluetoothd signals it every time.
        d.server.setProperties(cp, Self.characteristicInterface, [("Value", .bytes(value))], force: true)
        return Array(value[offset...])
    }

    func readCCCD(_ g: Int, _ i: Int, _ address: String, characteristic cp: DBusObjectPath) throws(DBusError) -> [UInt8] {
        let (_, device, c) = try connectedCharacteristic(g, i, address, cp)
        guard device.connected else { throw BlueZError.failed("Not connected") }
        let s = device.sessions[cp]
        let on = !(s?.isEmpty ?? true)
        let bits: UInt8 = on ? (c.flags.contains("notify") ? 0x01 : 0x02) : 0
        return [bits, 0x00]
    }

    func writeValue(_ g: Int, _ i: Int, _ address: String, _ cp: DBusObjectPath, _ value: [UInt8]) throws(DBusError) {
        let (_, device, c) = try connectedCharacteristic(g, i, address, cp)
        guard device.connected else { throw BlueZError.failed("Not connected") }
        guard c.writable else { throw BlueZError.notSupported() }
        switch c.role {
        case .heartRateControlPoint:
            // 0x01 = Reset Energy Expended; anything else is HRS error 0x80.
            guard value == [0x01] else { throw BlueZError.failed("Operation failed with ATT error: 0x80") }
            straps[device.strap].stream.resetEnergy()
        default:
            break
        }
    }

    func startNotify(_ g: Int, _ i: Int, _ address: String, _ cp: DBusObjectPath, sender: String) throws(DBusError) {
        let (d, device, c) = try connectedCharacteristic(g, i, address, cp)
        var s = device.sessions[cp] ?? NotifySessions()
        guard s.acquired == nil else { throw BlueZError.notPermitted("Notify acquired") }
        guard c.notifies else { throw BlueZError.notSupported() }
        if s.clients.contains(sender) { return }
        s.clients.append(sender)
        device.sessions[cp] = s
        // While disconnected the session is only registered (5.66 answers success)
        // and takes effect when the device is back.
        if device.connected {
            d.server.setProperty(cp, Self.characteristicInterface, "Notifying", .bool(true))
        }
    }

    func stopNotify(_ g: Int, _ i: Int, _ address: String, _ cp: DBusObjectPath, sender: String) throws(DBusError) {
        let (d, device, _) = try connectedCharacteristic(g, i, address, cp)
        if device.sessions[cp]?.acquired != nil {
            releaseAcquired(device, characteristic: cp, in: d)
            return
        }
        guard var s = device.sessions[cp], s.clients.contains(sender) else { throw BlueZError.failed("No notify session started") }
        s.clients.removeAll { $0 == sender }
        device.sessions[cp] = s
        if s.clients.isEmpty {
            d.server.setProperty(cp, Self.characteristicInterface, "Notifying", .bool(false))
        }
    }

    func acquireNotify(_ g: Int, _ i: Int, _ address: String, _ cp: DBusObjectPath) throws(DBusError) -> DBusFileDescriptor {
        let (d, device, c) = try connectedCharacteristic(g, i, address, cp)
        guard device.connected, device.servicesResolved else { throw BlueZError.failed("Not connected") }
        var s = device.sessions[cp] ?? NotifySessions()
        guard s.acquired == nil else { throw BlueZError.notPermitted("Notify acquired") }
        guard s.clients.isEmpty else { throw DBusError(name: "org.bluez.Error.InProgress", message: "In Progress") }
        guard c.flags.contains("notify"), !configuration.startNotifyOnly.contains(device.strap) else { throw BlueZError.notSupported() }
        let (mine, theirs) = try AcquiredNotifySocket.makePair()
        s.acquired = mine
        device.sessions[cp] = s
        d.server.setProperty(cp, Self.characteristicInterface, "NotifyAcquired", .bool(true))
        return theirs
    }

    /// The client closed its end (or called StopNotify): the lock is released.
    func releaseAcquired(_ device: SimDevice, characteristic cp: DBusObjectPath, in d: Daemon) {
        guard let socket = device.sessions[cp]?.acquired else { return }
        socket.close()
        device.sessions[cp]?.acquired = nil
        d.server.setProperty(cp, Self.characteristicInterface, "NotifyAcquired", .bool(false))
    }
}

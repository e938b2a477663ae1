import DBus

/// The simulator's control interface, for tests and scripts: served at
/// `/org/blegate/Simulator` (interface `org.blegate.Simulator1`) under its own
/// well-known name `org.blegate.Simulator`, on a connection of its own, so it stays
/// reachable while the simulated bluetoothd is "restarting".
///
/// Device selectors are an address, an object path ending in `dev_XX_..`, a
/// device name, or "" / "*" for every device. Methods that act on devices return
/// how many they affected.
enum FaultControl {
    static let path: DBusObjectPath = "/org/blegate/Simulator"
    static let interfaceName = "org.blegate.Simulator1"

    static func interface(_ sim: SimulatedBlueZ) -> DBusInterface {
        let c = sim.configuration
        return DBusInterface(interfaceName, methods: [
            DBusMethod("LinkLoss", in: [DBusArgument("device", "s")], out: [DBusArgument("affected", "u")]) { [weak sim] inv in
                [.uint32(UInt32(await sim?.linkLoss(inv.arguments[0].stringValue ?? "") ?? 0))]
            },
            DBusMethod("StopAdvertising", in: [DBusArgument("device", "s"), DBusArgument("remove_now", "b")],
                       out: [DBusArgument("affected", "u")]) { [weak sim] inv in
                [.uint32(UInt32(await sim?.stopAdvertising(inv.arguments[0].stringValue ?? "", removeNow: inv.arguments[1].boolValue ?? false) ?? 0))]
            },
            DBusMethod("StartAdvertising", in: [DBusArgument("device", "s")], out: [DBusArgument("affected", "u")]) { [weak sim] inv in
                [.uint32(UInt32(await sim?.startAdvertising(inv.arguments[0].stringValue ?? "") ?? 0))]
            },
            DBusMethod("FailConnect", in: [DBusArgument("device", "s"), DBusArgument("count", "u")],
                       out: [DBusArgument("affected", "u")]) { [weak sim] inv in
                let n = Int(inv.arguments[1].integerValue ?? 0)
                return [.uint32(UInt32(await sim?.failConnect(inv.arguments[0].stringValue ?? "", count: n) ?? 0))]
            },
            DBusMethod("SetConnectFailRate", in: [DBusArgument("probability", "d")]) { [weak sim] inv in
                await sim?.setConnectFailRate(inv.arguments[0].doubleValue ?? 0)
                return []
            },
            DBusMethod("SetMalformedRate", in: [DBusArgument("rate", "d")]) { [weak sim] inv in
                await sim?.setMalformedRate(inv.arguments[0].doubleValue ?? 0)
                return []
            },
            DBusMethod("SetRate", in: [DBusArgument("hz", "d")]) { [weak sim] inv in
                try await sim?.setRate(inv.arguments[0].doubleValue ?? 1)
                return []
            },
            DBusMethod("RestartDaemon", in: [DBusArgument("delay_seconds", "d")]) { [weak sim] inv in
                await sim?.restartDaemon(after: inv.arguments[0].doubleValue)
                return []
            },
            DBusMethod("RemoveAdapter", in: [DBusArgument("index", "u"), DBusArgument("return_after_seconds", "d")]) { [weak sim] inv in
                await sim?.removeAdapter(Int(inv.arguments[0].integerValue ?? 0), returnAfter: inv.arguments[1].doubleValue ?? 0)
                return []
            },
            DBusMethod("ReturnAdapter", in: [DBusArgument("index", "u")]) { [weak sim] inv in
                await sim?.returnAdapter(Int(inv.arguments[0].integerValue ?? 0))
                return []
            },
            DBusMethod("SetPowered", in: [DBusArgument("index", "u"), DBusArgument("powered", "b")]) { [weak sim] inv in
                try await sim?.setAdapterPowered(Int(inv.arguments[0].integerValue ?? 0), inv.arguments[1].boolValue ?? true)
                return []
            },
            DBusMethod("ListDevices", out: [DBusArgument("devices", "a(sssso)")]) { [weak sim] _ in
                guard let sim else { return [.array(element: "(sssso)", [])] }
                return [.array(element: "(sssso)", sim.devices.map { d in
                    .struct([.string(d.address), .string(d.addressType), .string(d.name), .string(d.model.rawValue),
                             .objectPath(DBusObjectPath.root.appending("org").appending("bluez").appending("hci0").appending(d.objectName))])
                })]
            },
            DBusMethod("DroppedNotifications", out: [DBusArgument("count", "t")]) { [weak sim] _ in
                [.uint64(UInt64(await sim?.droppedNotifications ?? 0))]
            },
            DBusMethod("FlushPayloadLog") { [weak sim] _ in
                sim?.payloadLog.flush()
                return []
            },
        ], properties: [
            DBusProperty("Seed", "t", value: .uint64(c.seed)),
            DBusProperty("GattCache", "s", value: .string(c.gattCache.rawValue)),
            DBusProperty("PayloadLog", "s", value: .string(c.payloadLogPath ?? "")),
            DBusProperty("Rate", "d", value: .double(c.rate)),
            DBusProperty("MalformedRate", "d", value: .double(c.malformedRate)),
            DBusProperty("ConnectFailRate", "d", value: .double(c.connectFailRate)),
            DBusProperty("Restarts", "u", value: .uint32(0)),
        ])
    }
}

extension SimulatedBlueZ {
    func controlProperty(_ name: String, _ value: DBusValue) {
        controlServer?.setProperty(FaultControl.path, FaultControl.interfaceName, name, value)
    }

    /// Drops the link of the selected connected devices, as a strap walking out of
    /// range does: Connected and ServicesResolved go false, sockets hang up.
    @discardableResult
    public func linkLoss(_ selector: String) -> Int {
        guard let d = daemon else { return 0 }
        let chosen = Set(strapIndices(selector))
        var n = 0
        for a in d.adapters.values {
            for device in a.devices.values where device.connected && chosen.contains(device.strap) {
                dropLink(device, in: d)
                n += 1
            }
        }
        return n
    }

    /// One connected device (seeded choice) loses its link: `--link-loss-every`.
    func randomLinkLoss() {
        guard let d = daemon else { return }
        let connected = d.adapters.values.sorted { $0.index < $1.index }
            .flatMap { a in a.devices.values.filter(\.connected).sorted { $0.strap < $1.strap } }
        guard !connected.isEmpty else { return }
        dropLink(faultRNG.pick(connected), in: d)
    }

    /// The devices stop advertising: no new discoveries; their objects go after
    /// TemporaryTimeout once unconnected, or at once with `removeNow`.
    @discardableResult
    public func stopAdvertising(_ selector: String, removeNow: Bool = false) -> Int {
        let chosen = strapIndices(selector)
        for s in chosen { straps[s].advertising = false }
        if removeNow, let d = daemon {
            for a in d.adapters.values {
                for device in Array(a.devices.values) where chosen.contains(device.strap) && !device.connected {
                    removeDevice(device, from: a, in: d)
                }
            }
        }
        return chosen.count
    }

    @discardableResult
    public func startAdvertising(_ selector: String) -> Int {
        let chosen = strapIndices(selector)
        for s in chosen { straps[s].advertising = true }
        return chosen.count
    }

    /// The next `count` Connect attempts fail with le-connection-abort-by-local
    /// (for the selected devices, or for any device with "" / "*").
    @discardableResult
    public func failConnect(_ selector: String, count: Int) -> Int {
        if selector.isEmpty || selector == "*" {
            connectFailNext = max(0, count)
            return straps.count
        }
        let chosen = strapIndices(selector)
        for s in chosen { straps[s].failNextConnects = max(0, count) }
        return chosen.count
    }

    public func setConnectFailRate(_ p: Double) {
        connectFailRate = min(1, max(0, p))
        controlProperty("ConnectFailRate", .double(connectFailRate))
    }

    public func setMalformedRate(_ p: Double) {
        malformedRate = min(1, max(0, p))
        controlProperty("MalformedRate", .double(malformedRate))
    }

    public func setRate(_ hz: Double) throws(DBusError) {
        guard hz > 0, hz <= 100_000 else { throw DBusError(.invalidArgs, "rate must be in (0, 100000]") }
        rate = hz
        controlProperty("Rate", .double(hz))
    }

    /// Removes adapter `index`; it comes back after `returnAfter` seconds (never if ≤ 0).
    public func removeAdapter(_ index: Int, returnAfter: Double) {
        removeAdapter(index)
        guard returnAfter > 0 else { return }
        Task { [weak self] in
            try? await Task.sleep(for: .seconds(returnAfter))
            await self?.returnAdapter(index)
        }
    }

    public func setAdapterPowered(_ index: Int, _ on: Bool) async throws(DBusError) {
        guard let d = daemon else { throw DBusError(.failed, "bluetoothd is down") }
        try await setPowered(d.generation, index, on)
    }

    func noteRestart() {
        controlProperty("Restarts", .uint32(UInt32(restarts)))
    }
}

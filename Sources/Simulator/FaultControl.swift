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
            DBusMethod("SetFlood", in: [DBusArgument("device", "s"), DBusArgument("hz", "d"), DBusArgument("bytes", "u")],
                       out: [DBusArgument("affected", "u")]) { [weak sim] inv in
                let n = await sim?.setFlood(inv.arguments[0].stringValue ?? "", rate: inv.arguments[1].doubleValue ?? 0,
                                            bytes: Int(inv.arguments[2].integerValue ?? 0)) ?? 0
                return [.uint32(UInt32(n))]
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
            DBusMethod("SetLinkLimit", in: [DBusArgument("index", "u"), DBusArgument("limit", "u")]) { [weak sim] inv in
                try await sim?.setLinkLimit(Int(inv.arguments[0].integerValue ?? 0), Int(inv.arguments[1].integerValue ?? 0))
                return []
            },
            DBusMethod("LinkCounts", out: [DBusArgument("counts", "au")]) { [weak sim] _ in
                let counts = await sim?.linkCounts() ?? []
                return [.array(element: "u", counts.map { .uint32(UInt32($0)) })]
            },
            DBusMethod("SetWorn", in: [DBusArgument("device", "s"), DBusArgument("worn", "b")],
                       out: [DBusArgument("affected", "u")]) { [weak sim] inv in
                [.uint32(UInt32(await sim?.setWorn(inv.arguments[0].stringValue ?? "", worn: inv.arguments[1].boolValue ?? true) ?? 0))]
            },
            DBusMethod("StepOn", in: [DBusArgument("device", "s"), DBusArgument("weight", "d"), DBusArgument("height", "d"),
                                      DBusArgument("body_fat", "d"), DBusArgument("imperial", "b")],
                       out: [DBusArgument("affected", "u")]) { [weak sim] inv in
                let a = inv.arguments
                let reading = ScaleReading(weight: a[1].doubleValue ?? 0, height: a[2].doubleValue ?? 0, bodyFat: a[3].doubleValue ?? 0,
                                           imperial: a[4].boolValue ?? false)
                return [.uint32(UInt32(try await sim?.stepOn(a[0].stringValue ?? "", reading) ?? 0))]
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
            DBusMethod("AddNoiseDevices", in: [DBusArgument("count", "u"), DBusArgument("per_second", "d")],
                       out: [DBusArgument("added", "u")]) { [weak sim] inv in
                let n = await sim?.addNoiseDevices(Int(inv.arguments[0].integerValue ?? 0), perSecond: inv.arguments[1].doubleValue ?? 0) ?? 0
                return [.uint32(UInt32(n))]
            },
            DBusMethod("RemoveNoiseDevices", out: [DBusArgument("removed", "u")]) { [weak sim] _ in
                [.uint32(UInt32(await sim?.removeNoiseDevices() ?? 0))]
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
            DBusProperty("LinkLimits", "au", value: .array(element: "u", (0..<c.adapters).map { i in
                .uint32(UInt32(c.linkLimits.indices.contains(i) ? c.linkLimits[i] : 0))
            })),
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

    /// How many of the Connects `failConnect` armed against the first selected device are
    /// still to fail (nil: no such device).
    public func connectFailuresLeft(_ selector: String) -> Int? {
        strapIndices(selector).first.map { straps[$0].failNextConnects }
    }

    public func setConnectFailRate(_ p: Double) {
        connectFailRate = min(1, max(0, p))
        controlProperty("ConnectFailRate", .double(connectFailRate))
    }

    public func setMalformedRate(_ p: Double) {
        malformedRate = min(1, max(0, p))
        controlProperty("MalformedRate", .double(malformedRate))
    }

    /// Makes the selected straps misbehave: `rate` notifications a second (0: the common
    /// rate) with Heart Rate values padded with RR intervals to `bytes` (0: as measured;
    /// up to 65,536), from their next notification on.
    public func setFlood(_ selector: String, rate: Double, bytes: Int) -> Int {
        let chosen = strapIndices(selector)
        for s in chosen {
            straps[s].floodRate = rate > 0 ? min(rate, 100_000) : nil
            straps[s].floodBytes = min(max(0, bytes), 65_536)
        }
        return chosen.count
    }

    public func setRate(_ hz: Double) throws(DBusError) {
        guard hz > 0, hz <= 100_000 else { throw DBusError(.invalidArgs, "rate must be in (0, 100000]") }
        rate = hz
        controlProperty("Rate", .double(hz))
    }

    /// Removes adapter `index`; it comes back after `returnAfter` seconds (never if ≤ 0).
    public func removeAdapter(_ index: Int, returnAfter: Double) {
        guard !stopped else { return }
        if adapterPresent.indices.contains(index), adapterPresent[index] {
            log("hci\(index) unplugged" + (returnAfter > 0 ? ", back in \(returnAfter) s" : ""))
        }
        removeAdapter(index)
        guard returnAfter > 0 else { return }
        adapterTasks.removeAll { $0.isCancelled }
        adapterTasks.append(Task { [weak self] in
            try? await Task.sleep(for: .seconds(returnAfter))
            guard !Task.isCancelled else { return }
            await self?.returnAdapter(index)
        })
    }

    /// The link limit of adapter `index` (nil: none).
    func linkLimit(_ index: Int) -> Int? {
        guard linkLimits.indices.contains(index), linkLimits[index] > 0 else { return nil }
        return linkLimits[index]
    }

    /// Changes adapter `index`'s link limit (0: none). Links above a lowered limit stay
    /// up, as a controller keeps them; only new connections are refused.
    public func setLinkLimit(_ index: Int, _ limit: Int) throws(DBusError) {
        guard (0..<configuration.adapters).contains(index) else {
            throw DBusError(.invalidArgs, "no adapter \(index) (there are \(configuration.adapters))")
        }
        guard limit >= 0 else { throw DBusError(.invalidArgs, "a link limit cannot be negative") }
        if linkLimits.count <= index { linkLimits += Array(repeating: 0, count: index + 1 - linkLimits.count) }
        linkLimits[index] = limit
        controlProperty("LinkLimits", .array(element: "u", linkLimitValues.map { .uint32(UInt32($0)) }))
    }

    /// One limit per configured adapter (0: none).
    var linkLimitValues: [Int] {
        (0..<configuration.adapters).map { linkLimits.indices.contains($0) ? linkLimits[$0] : 0 }
    }

    /// How many connected devices each configured adapter holds now (0 while absent).
    public func linkCounts() -> [Int] {
        (0..<configuration.adapters).map { index in
            daemon?.adapters[index]?.devices.values.filter(\.connected).count ?? 0
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

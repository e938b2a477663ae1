import DBus

/// The neighbourhood of a gym: phones, earbuds, watches, beacons, tags, none of them a
/// heart-rate strap. bluetoothd exports every one it hears as a Device1 object, so a
/// busy street puts thousands of objects on the bus; these let a test or a demo put
/// them there (and take them away) in seconds.
///
/// Noise devices only advertise: they have no GATT, no heart rate, and a Connect fails
/// as an out-of-range device's does. They live on the first adapter present, beside
/// the straps, until removed, the adapter goes, or the daemon restarts.
extension SimulatedBlueZ {
    /// Adds `count` noise devices (at most 100,000 at a time), `perSecond` a second
    /// (0: all in one go). Returns how many were added.
    @discardableResult
    public func addNoiseDevices(_ count: Int, perSecond: Double = 0) async -> Int {
        let count = min(max(0, count), 100_000)
        var added = 0
        let batch = perSecond > 0 ? max(1, Int(perSecond / 20)) : count
        while added < count {
            guard let d = daemon, let a = d.adapters.values.min(by: { $0.index < $1.index }), a.powered else { break }
            let n = min(batch, count - added)
            for _ in 0..<n {
                let index = nextNoiseIndex
                nextNoiseIndex += 1
                let path = a.path.appending(NoiseDevice.objectName(index))
                try? d.server.add(path, [NoiseDevice.interface(index, adapter: a.path)])
                d.noise.append(path)
            }
            added += n
            guard added < count, perSecond > 0 else { continue }
            try? await Task.sleep(for: .milliseconds(50))
            if Task.isCancelled { break }
        }
        if added > 0 { log("\(added) noise device(s) appeared (\(daemon?.noise.count ?? 0) present)") }
        return added
    }

    /// Removes every noise device (InterfacesRemoved each), as bluetoothd does when
    /// TemporaryTimeout passes for a crowd that walked away. Returns how many.
    @discardableResult
    public func removeNoiseDevices() -> Int {
        guard let d = daemon else { return 0 }
        let gone = d.noise
        d.noise = []
        for path in gone { d.server.remove(path) }
        if !gone.isEmpty { log("\(gone.count) noise device(s) removed") }
        return gone.count
    }

    /// Noise devices on the bus now.
    public var noiseDeviceCount: Int { daemon?.noise.count ?? 0 }
}

/// One foreign device's Device1, from its index alone (the same index gives the same
/// device).
enum NoiseDevice {
    /// Locally administered random static addresses (top bits 11): never a catalog strap's.
    static func address(_ index: Int) -> String {
        let bytes: [UInt8] = [0xD0 | UInt8((index >> 32) & 0x0F), 0x0E, UInt8((index >> 24) & 0xFF), UInt8((index >> 16) & 0xFF),
                              UInt8((index >> 8) & 0xFF), UInt8(index & 0xFF)]
        return bytes.map { hex2($0) }.joined(separator: ":")
    }

    static func objectName(_ index: Int) -> String { "dev_" + address(index).replacingColons() }

    /// What phones and beacons put in the air: Apple's and Microsoft's company data, an
    /// Eddystone service, a name on some.
    static func interface(_ index: Int, adapter: DBusObjectPath) -> DBusInterface {
        let kind = index % 4
        let company: UInt16 = kind == 0 ? 0x004C : kind == 1 ? 0x0006 : 0x0075
        let payload: [UInt8] = [0x10, 0x05, UInt8(index & 0xFF), UInt8((index >> 8) & 0xFF), 0x1C, 0x00]
        let rssi = Int16(-60 - index % 35)
        var properties = [
            DBusProperty("Address", "s", value: .string(address(index))),
            DBusProperty("AddressType", "s", value: .string("random")),
            DBusProperty("Alias", "s", value: .string(address(index).replacingColons(with: "-"))),
            DBusProperty("Paired", "b", value: false),
            DBusProperty("Trusted", "b", value: false),
            DBusProperty("Blocked", "b", value: false),
            DBusProperty("LegacyPairing", "b", value: false),
            DBusProperty("RSSI", "n", value: .int16(rssi)),
            DBusProperty("Connected", "b", value: false),
            DBusProperty("UUIDs", "as", value: .strings(kind == 3 ? ["0000feaa-0000-1000-8000-00805f9b34fb"] : [])),
            DBusProperty("Adapter", "o", value: .objectPath(adapter)),
            DBusProperty("ManufacturerData", "a{qv}", value: .dictionary(key: "q", value: "v", [DBusDictEntry(.uint16(company), .variant(.bytes(payload)))])),
            DBusProperty("ServicesResolved", "b", value: false),
        ]
        if kind == 2 { properties.append(DBusProperty("Name", "s", value: .string("Phone \(index)"))) }
        return DBusInterface("org.bluez.Device1", methods: [
            DBusMethod("Connect") { _ in throw BlueZError.failed(BlueZError.leAbortByLocal) },
            DBusMethod("Disconnect") { _ in [] },
        ], properties: properties)
    }

    private static func hex2(_ b: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(b >> 4)], digits[Int(b & 0x0F)]])
    }
}

private extension String {
    func replacingColons(with separator: String = "_") -> String {
        split(separator: ":", omittingEmptySubsequences: false).joined(separator: separator)
    }
}

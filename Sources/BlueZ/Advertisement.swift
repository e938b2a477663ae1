/// What a scan shows about one device, derived purely from its mirrored `Device1`
/// properties (no connection, no bus), so it is unit-testable.
public struct Advertisement: Sendable, Hashable {
    /// Services that make a device a heart-rate or fitness source.
    public static let fitnessServices: [String] = [0x180D, 0x1826, 0x1816, 0x1818, 0x1814].map(BluetoothUUID.from16)
    static let batteryService = BluetoothUUID.from16(0x180F)

    public var address: String
    public var addressKind: AddressKind
    public var name: String?
    public var rssi: Int16?
    public var uuids: [String]
    /// Percent from advertised Battery Service data, else from Battery1 (connected).
    public var battery: UInt8?
    public var polar: PolarHeartRate?
    /// true when the device is known to accept connections; nil when that cannot be
    /// told (BlueZ 5.66 exports no Connectable property, see docs/bluez-client.md).
    public var connectable: Bool?
    public var isFitness: Bool

    public init(device: Device) {
        address = device.address
        addressKind = AddressKind(addressType: device.addressType, address: device.address)
        name = device.name ?? device.alias
        // 127 is the HCI spec's "RSSI not available" (what virtual controllers report).
        rssi = device.rssi == 127 ? nil : device.rssi
        uuids = device.uuids
        battery = Self.advertisedBattery(device.serviceData) ?? device.batteryPercentage
        polar = PolarHeartRate.of(device)
        connectable = (device.connected || device.paired || device.servicesResolved) ? true : nil
        isFitness = Self.isFitness(uuids: device.uuids, appearance: device.appearance)
            || device.manufacturerData[PolarHeartRate.companyID].flatMap(PolarHeartRate.init(manufacturerData:)) != nil
    }

    /// Battery Level as a Battery Service (0x180F) data element carries it: one
    /// byte, percent. Other lengths or values above 100 are not trusted.
    static func advertisedBattery(_ serviceData: [String: [UInt8]]) -> UInt8? {
        guard let bytes = serviceData[batteryService], bytes.count == 1, bytes[0] <= 100 else { return nil }
        return bytes[0]
    }

    /// A heart-rate or fitness service among the UUIDs, or a heart-rate sensor
    /// (0x0340-0x0341) or watch (0x00C0-0x00C2) appearance.
    public static func isFitness(uuids: [String], appearance: UInt16?) -> Bool {
        if uuids.contains(where: fitnessServices.contains) { return true }
        guard let appearance else { return false }
        return (0x0340...0x0341).contains(appearance) || (0x00C0...0x00C2).contains(appearance)
    }
}

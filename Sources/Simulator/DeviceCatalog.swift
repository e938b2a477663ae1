/// The kinds of heart-rate sources the simulator can put in a room, with what each
/// shows on the air and over GATT. Values follow the published behaviour of these
/// product lines where known (names, company IDs, payload shapes); identifiers are
/// generated, so they never collide with a real device.
public enum DeviceModel: String, Sendable, CaseIterable, Codable {
    case polarH10 = "polar-h10"
    case garminHRMPro = "garmin-hrm-pro"
    case wahooTickr = "wahoo-tickr"
    case coospoH6 = "coospo-h6"
    case garminForerunner255 = "garmin-forerunner-255"

    /// The order in which `--straps N` fills the room.
    public static let straps: [DeviceModel] = [.polarH10, .garminHRMPro, .wahooTickr, .coospoH6]
    public static let watches: [DeviceModel] = [.garminForerunner255]

    public var traits: HeartRateTraits {
        switch self {
        // Polar H10: uint8 HR with RR, no contact bits and no energy (its firmware
        // reports neither, as bleakheart notes).
        case .polarH10: HeartRateTraits(contactSupported: false)
        case .garminHRMPro: HeartRateTraits(energySupported: true, zeroWithoutContact: true)
        case .wahooTickr: HeartRateTraits(energySupported: true)
        // Budget straps often send the uint16 format for any value.
        case .coospoH6: HeartRateTraits(sixteenBit: true, energySupported: true, zeroWithoutContact: true)
        // A watch re-broadcasting optical HR: no RR, no contact bits.
        case .garminForerunner255: HeartRateTraits(contactSupported: false, rrSupported: false)
        }
    }

    var manufacturer: String {
        switch self {
        case .polarH10: "Polar Electro Oy"
        case .garminHRMPro, .garminForerunner255: "Garmin International"
        case .wahooTickr: "Wahoo Fitness"
        case .coospoH6: "COOSPO"
        }
    }

    var modelNumber: String {
        switch self {
        case .polarH10: "H10"
        case .garminHRMPro: "HRM-Pro"
        case .wahooTickr: "TICKR"
        case .coospoH6: "H6"
        case .garminForerunner255: "Forerunner 255"
        }
    }

    var firmware: String {
        switch self {
        case .polarH10: "3.1.1"
        case .garminHRMPro: "4.10"
        case .wahooTickr: "2.1.5"
        case .coospoH6: "V1.2.6"
        case .garminForerunner255: "19.18"
        }
    }

    var hardware: String {
        switch self {
        case .polarH10: "00760690.03"
        case .garminHRMPro: "HRM-Pro 1"
        case .wahooTickr: "WF-TICKR-A"
        case .coospoH6: "H6_V2.0"
        case .garminForerunner255: "006-B3992-00"
        }
    }

    var software: String {
        switch self {
        case .polarH10: "3.1.1"
        case .garminHRMPro: "4.10"
        case .wahooTickr: "2.1.5"
        case .coospoH6: "V1.2.6"
        case .garminForerunner255: "19.18"
        }
    }

    /// GAP Appearance: 0x0341 heart rate belt, 0x00C1 sports watch.
    var appearance: UInt16 {
        self == .garminForerunner255 ? 0x00C1 : 0x0341
    }

    /// Body Sensor Location (0x2A38): chest for straps, wrist for the watch.
    var bodySensorLocation: UInt8 {
        self == .garminForerunner255 ? 2 : 1
    }

    var hasBatteryService: Bool { self != .garminForerunner255 }
    var hasControlPoint: Bool { traits.energySupported }
    /// The ATT MTU this model ends up with against BlueZ (which offers 517).
    var mtu: UInt16 {
        switch self {
        case .polarH10: 232
        case .garminHRMPro, .garminForerunner255: 247
        case .wahooTickr, .coospoH6: 23
        }
    }

    var txPower: Int16? {
        switch self {
        case .wahooTickr: 0
        case .garminHRMPro: 4
        default: nil
        }
    }

    /// Connection set-up (LE Create Connection → ATT ready), ms.
    var connectDelay: ClosedRange<Double> {
        switch self {
        case .polarH10: 60...260
        case .garminHRMPro, .garminForerunner255: 80...340
        case .wahooTickr: 40...180
        case .coospoH6: 50...220
        }
    }

    var advertisedServices: [UInt16] {
        switch self {
        case .polarH10: [0x180D, 0xFEEE]
        case .garminHRMPro: [0x180D]
        case .wahooTickr: [0x180D, 0x180F]
        case .coospoH6: [0x180D, 0x180F]
        case .garminForerunner255: [0x180D]
        }
    }
}

/// One virtual device: everything about it that a seed decides.
public struct VirtualDeviceIdentity: Sendable, Hashable {
    public var index: Int
    public var model: DeviceModel
    public var address: String
    public var addressType: String
    public var name: String
    public var serialNumber: String
    public var manufacturerData: [UInt16: [UInt8]]
    public var seed: UInt64

    /// `dev_AA_BB_CC_DD_EE_FF`, BlueZ's object name for the address.
    public var objectName: String { "dev_" + address.replacingColons() }
}

extension String {
    func replacingColons() -> String {
        String(map { $0 == ":" ? "_" : $0 })
    }
}

/// Builds the room: `straps` chest straps (cycling through the strap models) and
/// `watches` watches in HR-broadcast mode, all from one seed.
public enum DeviceCatalog {
    public static func devices(seed: UInt64, straps: Int, watches: Int) -> [VirtualDeviceIdentity] {
        let root = SeededRandom(seed: seed)
        var out: [VirtualDeviceIdentity] = []
        var used = Set<String>()
        var models: [DeviceModel] = (0..<max(0, straps)).map { DeviceModel.straps[$0 % DeviceModel.straps.count] }
        models += (0..<max(0, watches)).map { DeviceModel.watches[$0 % DeviceModel.watches.count] }
        for (i, model) in models.enumerated() {
            var rng = root.derived("device", i)
            var identity: VirtualDeviceIdentity
            repeat {
                identity = make(index: i, model: model, rng: &rng)
            } while used.contains(identity.address)
            used.insert(identity.address)
            out.append(identity)
        }
        return out
    }

    static func hex(_ value: UInt64, digits: Int) -> String {
        var s = String(value, radix: 16, uppercase: true)
        while s.count < digits { s = "0" + s }
        return String(s.suffix(digits))
    }

    static func address(_ bytes: [UInt8]) -> String {
        bytes.map { hex(UInt64($0), digits: 2) }.joined(separator: ":")
    }

    /// A random static address: top two bits of the most significant byte set, the
    /// rest neither all zeros nor all ones (Core spec, Vol 6 Part B 1.3.2.1).
    static func randomStatic(_ rng: inout SeededRandom) -> String {
        while true {
            var b = (0..<6).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            b[0] |= 0xC0
            let rest = [b[0] & 0x3F] + b[1...]
            if rest.allSatisfy({ $0 == 0 }) || (b[0] == 0xFF && b[1...].allSatisfy { $0 == 0xFF }) { continue }
            return address(b)
        }
    }

    /// Polar's heart-rate broadcast block as the public Polar BLE SDK reads it: flags
    /// (bit 1 sensor contact, bits 2-4 a frame counter, bit 6 clear = heart rate), a
    /// 5 kHz code, then fast- and slow-average heart rate. Advertisement data is fixed
    /// per device here (it does not follow the physiology), so it carries a resting rate.
    static func polarBroadcast(restingHeartRate hr: UInt8) -> [UInt8] {
        [0x02 | (1 << 2), 0x00, hr, hr]
    }

    static func make(index: Int, model: DeviceModel, rng: inout SeededRandom) -> VirtualDeviceIdentity {
        let seed = rng.next()
        switch model {
        case .polarH10:
            // Polar uses its public OUI; the printed device ID doubles as the name suffix.
            let tail = (0..<3).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let id = hex(rng.next() & 0xFFFF_FFFF, digits: 8)
            return VirtualDeviceIdentity(
                index: index, model: model, address: address([0xA0, 0x9E, 0x1A] + tail), addressType: "public",
                name: "Polar H10 \(id)", serialNumber: String(rng.next() % 10_000_000_000),
                manufacturerData: [0x006B: polarBroadcast(restingHeartRate: UInt8(55 + rng.next() % 30))], seed: seed)
        case .garminHRMPro:
            let ant = rng.int(100_000...999_999)
            return VirtualDeviceIdentity(
                index: index, model: model, address: randomStatic(&rng), addressType: "random",
                name: "HRM-Pro:\(ant)", serialNumber: String(3_300_000_000 + UInt64(ant)),
                manufacturerData: [0x0087: [0x00, 0x12, 0x10, UInt8(truncatingIfNeeded: rng.next())]], seed: seed)
        case .wahooTickr:
            let id = hex(rng.next() & 0xFFFF, digits: 4)
            return VirtualDeviceIdentity(
                index: index, model: model, address: randomStatic(&rng), addressType: "random",
                name: "TICKR \(id)", serialNumber: "TK" + hex(rng.next() & 0xFF_FFFF, digits: 6),
                manufacturerData: [:], seed: seed)
        case .coospoH6:
            let id = hex(rng.next() & 0xFFFF, digits: 4)
            return VirtualDeviceIdentity(
                index: index, model: model, address: randomStatic(&rng), addressType: "random",
                name: "COOSPO H6 \(id)", serialNumber: "H6" + String(rng.int(10_000_000...99_999_999)),
                manufacturerData: [:], seed: seed)
        case .garminForerunner255:
            return VirtualDeviceIdentity(
                index: index, model: model, address: randomStatic(&rng), addressType: "random",
                name: "Forerunner 255", serialNumber: String(rng.int(3_400_000_000...3_499_999_999)),
                manufacturerData: [0x0087: [0x00, 0x0E, 0x10, UInt8(truncatingIfNeeded: rng.next())]], seed: seed)
        }
    }
}

/// The 128-bit form BlueZ uses for a SIG 16-bit UUID.
public func bluetoothUUID(_ short: UInt16) -> String {
    "0000" + DeviceCatalog.hex(UInt64(short), digits: 4).lowercased() + "-0000-1000-8000-00805f9b34fb"
}

import Timing
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
    /// A Polar strap that is only heard: heart rate in its advertisements, no
    /// connectable Heart Rate service (a strap in broadcast mode, or one whose two
    /// connections are taken by other centrals).
    case polarBroadcast = "polar-broadcast"
    /// A bathroom-style scale (Weight Scale 0x181D and Body Composition 0x181B services):
    /// silent until someone steps on it (`SimulatedBlueZ.stepOn`), then it advertises,
    /// indicates one measurement to the central that subscribes, and goes back to sleep.
    case scale

    /// The order in which `--straps N` fills the room.
    public static let straps: [DeviceModel] = [.polarH10, .garminHRMPro, .wahooTickr, .coospoH6]
    /// The straps that carry no heart rate in their advertisements, in the order that
    /// fills the rest of the room when `--advertising` is given.
    public static let silentStraps: [DeviceModel] = [.garminHRMPro, .wahooTickr, .coospoH6]
    public static let watches: [DeviceModel] = [.garminForerunner255]
    public static let scales: [DeviceModel] = [.scale]

    /// Puts Polar's heart-rate block (company 0x006B) in its advertisements.
    public var advertisesHeartRate: Bool { self == .polarH10 || self == .polarBroadcast }

    /// Answers an LE connection request.
    public var connectable: Bool { self != .polarBroadcast }

    public var traits: HeartRateTraits {
        switch self {
        // Polar H10: uint8 HR with RR, no contact bits and no energy (its firmware
        // reports neither, as bleakheart notes).
        case .polarH10, .polarBroadcast: HeartRateTraits(contactSupported: false)
        case .garminHRMPro: HeartRateTraits(energySupported: true, zeroWithoutContact: true)
        case .wahooTickr: HeartRateTraits(energySupported: true)
        // Budget straps often send the uint16 format for any value.
        case .coospoH6: HeartRateTraits(sixteenBit: true, energySupported: true, zeroWithoutContact: true)
        // A watch re-broadcasting optical HR: no RR, no contact bits.
        case .garminForerunner255: HeartRateTraits(contactSupported: false, rrSupported: false)
        case .scale: HeartRateTraits(contactSupported: false, rrSupported: false)
        }
    }

    var manufacturer: String {
        switch self {
        case .polarH10, .polarBroadcast: "Polar Electro Oy"
        case .garminHRMPro, .garminForerunner255: "Garmin International"
        case .wahooTickr: "Wahoo Fitness"
        case .coospoH6: "COOSPO"
        case .scale: "A&D Medical"
        }
    }

    var modelNumber: String {
        switch self {
        case .polarH10: "H10"
        case .polarBroadcast: "H9"
        case .garminHRMPro: "HRM-Pro"
        case .wahooTickr: "TICKR"
        case .coospoH6: "H6"
        case .garminForerunner255: "Forerunner 255"
        case .scale: "UC-352BLE"
        }
    }

    var firmware: String {
        switch self {
        case .polarH10, .polarBroadcast: "3.1.1"
        case .garminHRMPro: "4.10"
        case .wahooTickr: "2.1.5"
        case .coospoH6: "V1.2.6"
        case .garminForerunner255: "19.18"
        case .scale: "1.05"
        }
    }

    var hardware: String {
        switch self {
        case .polarH10, .polarBroadcast: "00760690.03"
        case .garminHRMPro: "HRM-Pro 1"
        case .wahooTickr: "WF-TICKR-A"
        case .coospoH6: "H6_V2.0"
        case .garminForerunner255: "006-B3992-00"
        case .scale: "UC-352 rev B"
        }
    }

    var software: String {
        switch self {
        case .polarH10, .polarBroadcast: "3.1.1"
        case .garminHRMPro: "4.10"
        case .wahooTickr: "2.1.5"
        case .coospoH6: "V1.2.6"
        case .garminForerunner255: "19.18"
        case .scale: "1.05"
        }
    }

    /// GAP Appearance: 0x0341 heart rate belt, 0x00C1 sports watch, 0x0C80 weight scale.
    var appearance: UInt16 {
        switch self {
        case .garminForerunner255: 0x00C1
        case .scale: 0x0C80
        default: 0x0341
        }
    }

    /// Body Sensor Location (0x2A38): chest for straps, wrist for the watch.
    var bodySensorLocation: UInt8 {
        self == .garminForerunner255 ? 2 : 1
    }

    var hasBatteryService: Bool { self != .garminForerunner255 && self != .scale }
    var hasControlPoint: Bool { traits.energySupported }
    /// The ATT MTU this model ends up with against BlueZ (which offers 517).
    var mtu: UInt16 {
        switch self {
        case .polarH10, .polarBroadcast: 232
        case .garminHRMPro, .garminForerunner255: 247
        case .wahooTickr, .coospoH6, .scale: 23
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
        case .polarH10, .polarBroadcast, .scale: 60...260
        case .garminHRMPro, .garminForerunner255: 80...340
        case .wahooTickr: 40...180
        case .coospoH6: 50...220
        }
    }

    public var advertisedServices: [UInt16] {
        switch self {
        case .polarH10: [0x180D, 0xFEEE]
        // Polar's own 16-bit UUID only: nothing a Heart Rate filter would match.
        case .polarBroadcast: [0xFEEE]
        case .garminHRMPro: [0x180D]
        case .wahooTickr: [0x180D, 0x180F]
        case .coospoH6: [0x180D, 0x180F]
        case .garminForerunner255: [0x180D]
        case .scale: [0x181D, 0x181B]
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
    /// Device Information values that replace the model's (16-bit UUID → bytes).
    public var deviceInformation: [UInt16: [UInt8]] = [:]

    /// `dev_AA_BB_CC_DD_EE_FF`, BlueZ's object name for the address.
    public var objectName: String { "dev_" + address.replacingColons() }
}

extension String {
    func replacingColons() -> String {
        String(map { $0 == ":" ? "_" : $0 })
    }
}

/// Builds the room: `straps` chest straps and `watches` watches in HR-broadcast
/// mode, all from one seed. Without `advertising` the straps cycle through
/// `DeviceModel.straps`; with it, exactly `advertising` straps carry heart rate in
/// their advertisements (`advertisingOnly` of them the broadcast-only model), spread
/// evenly through the room, and the rest cycle through `DeviceModel.silentStraps`.
/// A device's identity depends only on the seed, its index and its model.
public enum DeviceCatalog {
    public static func devices(seed: UInt64, straps: Int, watches: Int,
                               advertising: Int? = nil, advertisingOnly: Int = 0, scales: Int = 0) -> [VirtualDeviceIdentity] {
        let root = SeededRandom(seed: seed)
        var out: [VirtualDeviceIdentity] = []
        var used = Set<String>()
        var models = strapModels(straps: max(0, straps), advertising: advertising, advertisingOnly: advertisingOnly)
        models += (0..<max(0, watches)).map { DeviceModel.watches[$0 % DeviceModel.watches.count] }
        models += (0..<max(0, scales)).map { DeviceModel.scales[$0 % DeviceModel.scales.count] }
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

    /// The strap models in room order. Advertisers are placed where `k * n / count`
    /// steps (an even spread); among them, the broadcast-only ones the same way.
    static func strapModels(straps n: Int, advertising: Int?, advertisingOnly: Int) -> [DeviceModel] {
        guard let advertising else { return (0..<n).map { DeviceModel.straps[$0 % DeviceModel.straps.count] } }
        let a = min(max(0, advertising), n), m = min(max(0, advertisingOnly), a)
        func spread(_ k: Int, _ count: Int, _ total: Int) -> Bool { (k + 1) * count / total > k * count / total }
        var models: [DeviceModel] = []
        var heard = 0, silent = 0
        for i in 0..<n {
            if spread(i, a, n) {
                models.append(spread(heard, m, a) ? .polarBroadcast : .polarH10)
                heard += 1
            } else {
                models.append(DeviceModel.silentStraps[silent % DeviceModel.silentStraps.count])
                silent += 1
            }
        }
        return models
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
    /// 5 kHz code, then fast- and slow-average heart rate. The catalog's value (a
    /// resting rate, counter 1) is what a strap advertises until its first live one.
    static func polarBroadcast(restingHeartRate hr: UInt8) -> [UInt8] {
        polarBlock(contact: true, counter: 1, fast: hr, slow: hr)
    }

    static func polarBlock(contact: Bool, counter: UInt8, fast: UInt8, slow: UInt8) -> [UInt8] {
        [(contact ? 0x02 : 0x00) | ((counter & 0x07) << 2), 0x00, fast, slow]
    }

    static func make(index: Int, model: DeviceModel, rng: inout SeededRandom) -> VirtualDeviceIdentity {
        let seed = rng.next()
        switch model {
        case .polarH10, .polarBroadcast:
            // Polar uses its public OUI; the printed device ID doubles as the name suffix.
            let tail = (0..<3).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let id = hex(rng.next() & 0xFFFF_FFFF, digits: 8)
            return VirtualDeviceIdentity(
                index: index, model: model, address: address([0xA0, 0x9E, 0x1A] + tail), addressType: "public",
                name: "Polar \(model.modelNumber) \(id)", serialNumber: String(rng.next() % 10_000_000_000),
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
        case .scale:
            let id = hex(rng.next() & 0xFFFF, digits: 4)
            return VirtualDeviceIdentity(
                index: index, model: model, address: randomStatic(&rng), addressType: "random",
                name: "UC-352BLE \(id)", serialNumber: "5" + String(rng.int(10_000_000...99_999_999)),
                manufacturerData: [:], seed: seed)
        }
    }
}

/// The 128-bit form BlueZ uses for a SIG 16-bit UUID.
public func bluetoothUUID(_ short: UInt16) -> String {
    "0000" + DeviceCatalog.hex(UInt64(short), digits: 4).lowercased() + "-0000-1000-8000-00805f9b34fb"
}

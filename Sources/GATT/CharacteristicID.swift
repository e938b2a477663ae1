// SPDX-License-Identifier: MIT

/// The SIG characteristics blegate decodes, keyed by their 16-bit UUID.
public enum GATTCharacteristic: UInt16, CaseIterable, Sendable, Hashable {
    case heartRateMeasurement = 0x2A37
    case bodySensorLocation = 0x2A38
    case batteryLevel = 0x2A19
    case manufacturerName = 0x2A29
    case modelNumber = 0x2A24
    case serialNumber = 0x2A25
    case firmwareRevision = 0x2A26
    case hardwareRevision = 0x2A27
    case softwareRevision = 0x2A28
    case rscMeasurement = 0x2A53
    case cscMeasurement = 0x2A5B
    case cyclingPowerMeasurement = 0x2A63
    case treadmillData = 0x2ACD
    case crossTrainerData = 0x2ACE
    case rowerData = 0x2AD1
    case indoorBikeData = 0x2AD2
    case plxContinuousMeasurement = 0x2A5F
    case temperatureMeasurement = 0x2A1C
    /// Same layout as 0x2A1C, notified while the reading settles.
    case intermediateTemperature = 0x2A1E
    case weightMeasurement = 0x2A9D
    case bodyCompositionMeasurement = 0x2A9C

    /// snake_case name, accepted by the CLI and used in logs and JSON.
    public var name: String {
        switch self {
        case .heartRateMeasurement: "heart_rate_measurement"
        case .bodySensorLocation: "body_sensor_location"
        case .batteryLevel: "battery_level"
        case .manufacturerName: "manufacturer_name_string"
        case .modelNumber: "model_number_string"
        case .serialNumber: "serial_number_string"
        case .firmwareRevision: "firmware_revision_string"
        case .hardwareRevision: "hardware_revision_string"
        case .softwareRevision: "software_revision_string"
        case .rscMeasurement: "rsc_measurement"
        case .cscMeasurement: "csc_measurement"
        case .cyclingPowerMeasurement: "cycling_power_measurement"
        case .treadmillData: "treadmill_data"
        case .crossTrainerData: "cross_trainer_data"
        case .rowerData: "rower_data"
        case .indoorBikeData: "indoor_bike_data"
        case .plxContinuousMeasurement: "plx_continuous_measurement"
        case .temperatureMeasurement: "temperature_measurement"
        case .intermediateTemperature: "intermediate_temperature"
        case .weightMeasurement: "weight_measurement"
        case .bodyCompositionMeasurement: "body_composition_measurement"
        }
    }

    /// Shorter names people type (`manufacturer_name`, `plx_continuous`, ...).
    var aliases: [String] {
        switch self {
        case .manufacturerName: ["manufacturer_name"]
        case .modelNumber: ["model_number"]
        case .serialNumber: ["serial_number"]
        case .firmwareRevision: ["firmware_revision"]
        case .hardwareRevision: ["hardware_revision"]
        case .softwareRevision: ["software_revision"]
        case .plxContinuousMeasurement: ["plx_continuous"]
        case .bodyCompositionMeasurement: ["body_composition"]
        case .cyclingPowerMeasurement: ["cycling_power"]
        case .heartRateMeasurement: ["heart_rate"]
        case .batteryLevel: ["battery"]
        default: []
        }
    }

    /// `0x2A37`
    public var hex16: String { "0x" + hex4(rawValue, uppercase: true) }

    /// Lowercase 128-bit form, as BlueZ exposes it on D-Bus.
    public var uuidString: String { GATTUUID.uuid128String(uuid16: rawValue) }

    public init?(uuid16: UInt16) { self.init(rawValue: uuid16) }

    /// Accepts a 16-bit UUID (`2a37`, `0x2A37`), a 32-bit SIG alias, a full 128-bit
    /// UUID in the Bluetooth Base UUID range, or a name (`heart_rate_measurement`).
    /// Vendor 128-bit UUIDs return nil: their payloads are not SIG-formatted.
    public init?(identifier: String) {
        let lowered = String(identifier.lowercased().filter { !$0.isWhitespace })
        if let c = GATTCharacteristic.allCases.first(where: { $0.name == lowered || $0.aliases.contains(lowered) }) {
            self = c
            return
        }
        guard let value = GATTUUID.sigAlias(lowered), value <= 0xFFFF,
              let c = GATTCharacteristic(rawValue: UInt16(value)) else { return nil }
        self = c
    }
}

/// The 16/32-bit ↔ 128-bit rule: SIG UUIDs are aliases inside the Bluetooth Base UUID
/// `0000xxxx-0000-1000-8000-00805f9b34fb`.
public enum GATTUUID {
    public static let baseSuffix = "-0000-1000-8000-00805f9b34fb"

    public static func uuid128String(uuid16: UInt16) -> String {
        "0000" + hex4(uuid16, uppercase: false) + baseSuffix
    }

    /// The SIG alias (16 or 32 bit) of `text`, or nil for vendor UUIDs and garbage.
    /// Accepts `2a37`, `0x2a37`, `00002a37`, and the 128-bit string in any case.
    public static func sigAlias(_ text: String) -> UInt32? {
        var s = text.lowercased()
        if s.hasPrefix("0x") { s.removeFirst(2) }
        if s.count == 36 {
            guard s.hasSuffix(baseSuffix) else { return nil }
            s = String(s.prefix(8))
        }
        guard (1...8).contains(s.count), s.allSatisfy(\.isHexDigit) else { return nil }
        return UInt32(s, radix: 16)
    }
}

func hex4(_ v: UInt16, uppercase: Bool) -> String {
    let digits: [Character] = uppercase ? Array("0123456789ABCDEF") : Array("0123456789abcdef")
    var out = ""
    for shift in stride(from: 12, through: 0, by: -4) {
        out.append(digits[Int((v >> UInt16(shift)) & 0xF)])
    }
    return out
}

/// Lowercase hex of a byte string, used for diagnostics (`raw_flags`, undecodable strings).
public func hexString<C: Collection<UInt8>>(_ bytes: C, separator: String = "") -> String {
    let digits = Array("0123456789abcdef")
    var out = ""
    var first = true
    for b in bytes {
        if !first { out += separator }
        first = false
        out.append(digits[Int(b >> 4)])
        out.append(digits[Int(b & 0xF)])
    }
    return out
}

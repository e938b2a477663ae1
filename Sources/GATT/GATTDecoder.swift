// SPDX-License-Identifier: MIT

/// The single entry point for the gateway and the CLI.
///
/// Selection is by UUID only; the gateway must additionally make sure the characteristic
/// sits in the matching SIG service on a device it trusts (e.g. never run the Body
/// Composition parser on a Xiaomi scale that reuses its RFU bits).
public enum GATTDecoder {
    /// Decodes `bytes` received on the characteristic with the given UUID string
    /// (BlueZ's lowercase 128-bit form, a 16-bit hex form, or a name).
    public static func decode<C: Collection<UInt8>>(
        uuid: String, bytes: C, heartRateOptions: HeartRateDecodingOptions = .lenient
    ) throws(GATTDecodeError) -> DecodedCharacteristic {
        guard let characteristic = GATTCharacteristic(identifier: uuid) else {
            throw GATTDecodeError(characteristic: nil, field: "uuid", offset: 0, reason: .unsupportedCharacteristic(uuid))
        }
        return try decode(characteristic, bytes: bytes, heartRateOptions: heartRateOptions)
    }

    public static func decode<C: Collection<UInt8>>(
        _ characteristic: GATTCharacteristic, bytes: C, heartRateOptions: HeartRateDecodingOptions = .lenient
    ) throws(GATTDecodeError) -> DecodedCharacteristic {
        try withPayload(bytes) { buffer in
            Result { () throws(GATTDecodeError) in
                try decode(characteristic, buffer: buffer, heartRateOptions: heartRateOptions)
            }
        }
    }

    public static func decode(
        _ characteristic: GATTCharacteristic, buffer: UnsafeRawBufferPointer,
        heartRateOptions: HeartRateDecodingOptions = .lenient
    ) throws(GATTDecodeError) -> DecodedCharacteristic {
        switch characteristic {
        case .heartRateMeasurement:
            return .heartRateMeasurement(try HeartRateMeasurement(bytes: buffer, options: heartRateOptions))
        case .bodySensorLocation:
            return .bodySensorLocation(try BodySensorLocation(bytes: buffer))
        case .batteryLevel:
            return .batteryLevel(try BatteryLevel(bytes: buffer))
        case .manufacturerName, .modelNumber, .serialNumber, .firmwareRevision, .hardwareRevision, .softwareRevision:
            return .deviceInformation(DeviceInformationString(characteristic: characteristic, bytes: buffer))
        case .rscMeasurement:
            return .rscMeasurement(try RSCMeasurement(bytes: buffer))
        case .cscMeasurement:
            return .cscMeasurement(try CSCMeasurement(bytes: buffer))
        case .cyclingPowerMeasurement:
            return .cyclingPowerMeasurement(try CyclingPowerMeasurement(bytes: buffer))
        case .treadmillData:
            return .fitnessMachine(try FitnessMachineData(machine: .treadmill, bytes: buffer))
        case .crossTrainerData:
            return .fitnessMachine(try FitnessMachineData(machine: .crossTrainer, bytes: buffer))
        case .rowerData:
            return .fitnessMachine(try FitnessMachineData(machine: .rower, bytes: buffer))
        case .indoorBikeData:
            return .fitnessMachine(try FitnessMachineData(machine: .indoorBike, bytes: buffer))
        case .plxContinuousMeasurement:
            return .plxContinuousMeasurement(try PLXContinuousMeasurement(bytes: buffer))
        case .temperatureMeasurement, .intermediateTemperature:
            return .temperatureMeasurement(try TemperatureMeasurement(bytes: buffer, characteristic: characteristic))
        case .weightMeasurement:
            return .weightMeasurement(try WeightMeasurement(bytes: buffer))
        case .bodyCompositionMeasurement:
            return .bodyCompositionMeasurement(try BodyCompositionMeasurement(bytes: buffer))
        }
    }
}

/// Parses hex text as typed by people: `16 48 10 03`, `16:48:10:03`, `0x1648`, `164810`.
public func parseHex(_ text: String) -> [UInt8]? {
    var digits: [UInt8] = []
    var s = Substring(text)
    while !s.isEmpty {
        if s.hasPrefix("0x") || s.hasPrefix("0X") { s = s.dropFirst(2); continue }
        let c = s.first!
        s = s.dropFirst()
        if c == " " || c == ":" || c == "-" || c == "," || c == "\t" || c == "\n" { continue }
        guard let v = c.hexDigitValue else { return nil }
        digits.append(UInt8(v))
    }
    guard digits.count % 2 == 0 else { return nil }
    return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
}

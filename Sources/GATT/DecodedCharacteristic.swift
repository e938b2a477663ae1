// SPDX-License-Identifier: MIT

/// The result of decoding any supported characteristic.
public enum DecodedCharacteristic: Sendable, Equatable {
    case heartRateMeasurement(HeartRateMeasurement)
    case bodySensorLocation(BodySensorLocation)
    case batteryLevel(BatteryLevel)
    case deviceInformation(DeviceInformationString)
    case rscMeasurement(RSCMeasurement)
    case cscMeasurement(CSCMeasurement)
    case cyclingPowerMeasurement(CyclingPowerMeasurement)
    case fitnessMachine(FitnessMachineData)
    case plxContinuousMeasurement(PLXContinuousMeasurement)
    case temperatureMeasurement(TemperatureMeasurement)
    case weightMeasurement(WeightMeasurement)
    case bodyCompositionMeasurement(BodyCompositionMeasurement)

    public var payload: any Encodable & Sendable {
        switch self {
        case let .heartRateMeasurement(v): v
        case let .bodySensorLocation(v): v
        case let .batteryLevel(v): v
        case let .deviceInformation(v): v
        case let .rscMeasurement(v): v
        case let .cscMeasurement(v): v
        case let .cyclingPowerMeasurement(v): v
        case let .fitnessMachine(v): v
        case let .plxContinuousMeasurement(v): v
        case let .temperatureMeasurement(v): v
        case let .weightMeasurement(v): v
        case let .bodyCompositionMeasurement(v): v
        }
    }
}

/// The decoded fields under their snake_case names, absent ones left out (`blegate
/// decode` prints them with `JSONEncoder`).
extension DecodedCharacteristic: Encodable {
    public func encode(to encoder: any Encoder) throws { try payload.encode(to: encoder) }
}

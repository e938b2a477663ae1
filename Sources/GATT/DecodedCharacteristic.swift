// SPDX-License-Identifier: MIT
import JSON

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

    public var payload: any JSONRepresentable & Sendable {
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

extension DecodedCharacteristic: JSONRepresentable {
    public var json: JSONValue { payload.json }
}

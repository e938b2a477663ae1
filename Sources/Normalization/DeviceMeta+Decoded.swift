// SPDX-License-Identifier: MIT
import GATT
import WearMetrics

extension DeviceMeta {
    /// Absorbs a decoded Battery Level, Body Sensor Location or DIS string; returns false
    /// for any other characteristic.
    @discardableResult
    public mutating func absorb(_ decoded: DecodedCharacteristic) -> Bool {
        switch decoded {
        case let .batteryLevel(b):
            entries["battery"] = formatFixed(b.fraction, decimals: 2)
        case let .bodySensorLocation(l):
            entries["body_sensor_location"] = l.label
        case let .deviceInformation(s):
            entries[s.metaKey] = s.value
        default:
            return false
        }
        return true
    }
}

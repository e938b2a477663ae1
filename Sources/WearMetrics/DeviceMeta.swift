// SPDX-License-Identifier: MIT
import GATT

/// Per-device facts read once per connection (battery, body sensor location, Device
/// Information strings), merged into every record's `meta`.
public struct DeviceMeta: Sendable, Equatable {
    public var entries = KeyValueList<String>()

    public init() {}

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

    /// `"<manufacturer>:<serial>"` when both are known: the only identity that survives
    /// BLE address rotation.
    public var stableDeviceID: String? {
        guard let m = entries["manufacturer_name"], let s = entries["serial_number"], !m.isEmpty, !s.isEmpty else { return nil }
        return m + ":" + s
    }
}

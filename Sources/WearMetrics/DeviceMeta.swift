// SPDX-License-Identifier: MIT

/// Per-device facts read once per connection (battery, body sensor location, Device
/// Information strings), merged into every record's `meta`.
public struct DeviceMeta: Sendable, Equatable {
    public var entries = KeyValueList<String>()

    public init() {}

    /// `"<manufacturer>:<serial>"` when both are known: the only identity that survives
    /// BLE address rotation.
    public var stableDeviceID: String? {
        guard let m = entries["manufacturer_name"], let s = entries["serial_number"], !m.isEmpty, !s.isEmpty else { return nil }
        return m + ":" + s
    }
}

import DBus

/// Collects the names of the properties an update actually changed, so that
/// events name only real changes (a replayed signal that repeats a value is silent).
struct ChangeSet {
    var names: Set<String> = []

    mutating func set<T: Equatable>(_ field: inout T, _ value: T, _ name: String) {
        if field != value {
            field = value
            names.insert(name)
        }
    }
}

/// One property from a PropertiesChanged or InterfacesAdded bag: `.value` when
/// present, `.invalidated` when BlueZ dropped it (RSSI once discovery stops).
enum PropertyUpdate {
    case value(DBusValue)
    case invalidated

    var value: DBusValue? {
        if case .value(let v) = self { return v.unwrapped }
        return nil
    }
}

extension DBusValue {
    var int16Value: Int16? { integerValue.flatMap { Int16(exactly: $0) } }
    var uint16Value: UInt16? { integerValue.flatMap { UInt16(exactly: $0) } }
    var uint8Value: UInt8? { integerValue.flatMap { UInt8(exactly: $0) } }

    /// `a{qv}` with `ay` values (Device1.ManufacturerData).
    var manufacturerData: [UInt16: [UInt8]] {
        var out: [UInt16: [UInt8]] = [:]
        for entry in dictionaryEntries ?? [] {
            guard let id = entry.key.uint16Value, let bytes = entry.value.bytesValue else { continue }
            out[id] = bytes
        }
        return out
    }

    /// `a{sv}` with `ay` values keyed by UUID (Device1.ServiceData).
    var serviceData: [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        for entry in dictionaryEntries ?? [] {
            guard let uuid = entry.key.stringValue, let bytes = entry.value.bytesValue else { continue }
            out[BluetoothUUID.normalized(uuid)] = bytes
        }
        return out
    }
}

/// The changed and invalidated properties of one interface as one ordered list
/// (invalidated first, so a value in the same signal wins).
func propertyUpdates(_ changed: [String: DBusValue], invalidated: [String]) -> [(String, PropertyUpdate)] {
    invalidated.map { ($0, PropertyUpdate.invalidated) } + changed.map { ($0.key, PropertyUpdate.value($0.value)) }
}

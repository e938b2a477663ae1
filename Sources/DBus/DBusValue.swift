/// A D-Bus value with its type kept, so that a round trip through the bus
/// preserves the exact wire signature (an `int32` never comes back as an `int64`).
///
/// `ay` has its own case because byte arrays are the hot path of a BLE gateway
/// (every GATT notification is one) and must not pay for a boxed array of values.
public enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(DBusObjectPath)
    case signature(DBusSignature)
    case unixFD(DBusFileDescriptor)
    /// `ay`.
    case bytes([UInt8])
    /// Any other array; the element signature is kept so that empty arrays are typed.
    case array(element: DBusSignature, [DBusValue])
    /// `a{..}`; entries keep their order.
    case dictionary(key: DBusSignature, value: DBusSignature, [DBusDictEntry])
    case `struct`([DBusValue])
    /// The only recursive case that needs a box; arrays already live on the heap,
    /// so every other case stays unboxed (one allocation less per value).
    indirect case variant(DBusValue)

    /// The single complete type of this value.
    public var signature: DBusSignature {
        DBusSignature(unchecked: signatureString)
    }

    var signatureString: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .bytes: "ay"
        case .array(let element, _): "a" + element.rawValue
        case .dictionary(let key, let value, _): "a{" + key.rawValue + value.rawValue + "}"
        case .struct(let fields): "(" + fields.map(\.signatureString).joined() + ")"
        case .variant: "v"
        }
    }
}

public struct DBusDictEntry: Sendable, Hashable {
    public var key: DBusValue
    public var value: DBusValue
    public init(_ key: DBusValue, _ value: DBusValue) {
        self.key = key
        self.value = value
    }
}

extension DBusValue {
    /// `a{sv}`, the shape of every BlueZ property bag and option dictionary.
    public static func properties(_ entries: [(String, DBusValue)]) -> DBusValue {
        .dictionary(key: "s", value: "v", entries.map { DBusDictEntry(.string($0.0), .variant($0.1)) })
    }

    /// `as`.
    public static func strings(_ values: [String]) -> DBusValue {
        .array(element: "s", values.map(DBusValue.string))
    }

    /// Looks through any number of variant wrappers.
    public var unwrapped: DBusValue {
        var value = self
        while case .variant(let inner) = value { value = inner }
        return value
    }

    public var stringValue: String? {
        switch unwrapped {
        case .string(let s): s
        case .objectPath(let p): p.rawValue
        case .signature(let g): g.rawValue
        default: nil
        }
    }

    public var boolValue: Bool? {
        if case .bool(let b) = unwrapped { return b }
        return nil
    }

    public var objectPathValue: DBusObjectPath? {
        if case .objectPath(let p) = unwrapped { return p }
        return nil
    }

    /// Any integer case widened to Int64 (uint64 above Int64.max gives nil).
    public var integerValue: Int64? {
        switch unwrapped {
        case .byte(let v): Int64(v)
        case .int16(let v): Int64(v)
        case .uint16(let v): Int64(v)
        case .int32(let v): Int64(v)
        case .uint32(let v): Int64(v)
        case .int64(let v): v
        case .uint64(let v): Int64(exactly: v)
        default: nil
        }
    }

    public var doubleValue: Double? {
        if case .double(let d) = unwrapped { return d }
        return integerValue.map(Double.init)
    }

    /// `ay` as bytes; also accepts an `av`/`ay` spelled as a generic array of bytes.
    public var bytesValue: [UInt8]? {
        switch unwrapped {
        case .bytes(let b): return b
        case .array(_, let items):
            var out: [UInt8] = []
            out.reserveCapacity(items.count)
            for item in items {
                guard case .byte(let b) = item.unwrapped else { return nil }
                out.append(b)
            }
            return out
        default: return nil
        }
    }

    public var arrayValue: [DBusValue]? {
        switch unwrapped {
        case .array(_, let items): items
        case .bytes(let b): b.map(DBusValue.byte)
        case .struct(let fields): fields
        default: nil
        }
    }

    public var stringArrayValue: [String]? {
        arrayValue?.compactMap(\.stringValue)
    }

    /// Dictionary entries keyed by string (for `a{sv}`, `a{sa{sv}}` ...), later keys winning.
    public var stringKeyedValue: [String: DBusValue]? {
        guard case .dictionary(_, _, let entries) = unwrapped else { return nil }
        var out: [String: DBusValue] = [:]
        out.reserveCapacity(entries.count)
        for entry in entries {
            guard let key = entry.key.stringValue else { continue }
            out[key] = entry.value
        }
        return out
    }

    public var dictionaryEntries: [DBusDictEntry]? {
        if case .dictionary(_, _, let entries) = unwrapped { return entries }
        return nil
    }
}

extension DBusValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension DBusValue: CustomStringConvertible {
    public var description: String {
        switch self {
        case .byte(let v): "byte \(v)"
        case .bool(let v): "\(v)"
        case .int16(let v): "int16 \(v)"
        case .uint16(let v): "uint16 \(v)"
        case .int32(let v): "int32 \(v)"
        case .uint32(let v): "uint32 \(v)"
        case .int64(let v): "int64 \(v)"
        case .uint64(let v): "uint64 \(v)"
        case .double(let v): "double \(v)"
        case .string(let v): "\"\(v)\""
        case .objectPath(let v): "objpath \(v.rawValue)"
        case .signature(let v): "signature \(v.rawValue)"
        case .unixFD(let fd): "fd \(fd)"
        case .bytes(let b): "ay [" + b.map { String($0, radix: 16) }.joined(separator: " ") + "]"
        case .array(_, let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(_, _, let entries): "{" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .struct(let fields): "(" + fields.map(\.description).joined(separator: ", ") + ")"
        case .variant(let inner): "<\(inner)>"
        }
    }
}

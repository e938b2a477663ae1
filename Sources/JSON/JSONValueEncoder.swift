// SPDX-License-Identifier: MIT

/// `Encodable` → `JSONValue`, for the gateway's own JSON (status answers, saved state)
/// without Foundation's `JSONEncoder`: every library the running gateway calls at all
/// stays resident, and Foundation is the largest.
///
/// Object keys come out sorted by their UTF-8 bytes, so the text is deterministic and
/// matches what `JSONEncoder` with `.sortedKeys` writes; nil optionals are left out.
/// With `snakeCaseKeys`, property names are converted as `JSONEncoder`'s
/// `.convertToSnakeCase` converts them (`gatewayID` → `gateway_id`); the keys of a
/// `[String: V]` are kept as they are.
public struct JSONValueEncoder: Sendable {
    public var snakeCaseKeys: Bool

    public init(snakeCaseKeys: Bool = false) {
        self.snakeCaseKeys = snakeCaseKeys
    }

    public func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        let root = EncodedNode()
        try value.encode(to: NodeEncoder(node: root, codingPath: [], snakeCaseKeys: snakeCaseKeys))
        return root.value
    }

    /// `gatewayID` → `gateway_id`, `oldestPendingAgeSeconds` → `oldest_pending_age_seconds`:
    /// words start at an upper-case letter, and a run of capitals is one word up to the
    /// capital that begins the next lower-case word (`HTTPStatus` → `http_status`).
    public static func snakeCase(_ key: String) -> String {
        let chars = Array(key)
        guard chars.count > 1 else { return key }
        var out = ""
        out.reserveCapacity(chars.count + 4)
        for (i, c) in chars.enumerated() {
            if i > 0, c.isUppercase {
                let previousLower = !chars[i - 1].isUppercase
                let nextLower = i + 1 < chars.count && chars[i + 1].isLowercase
                if previousLower || nextLower { out += "_" }
            }
            out += c.lowercased()
        }
        return out
    }
}

/// One value being encoded: a leaf, an object or an array, finished into a `JSONValue`.
final class EncodedNode {
    var leaf: JSONValue = .null
    var members: [String: EncodedNode]?
    var items: [EncodedNode]?

    var value: JSONValue {
        if let members {
            return .object(members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { ($0.key, $0.value.value) })
        }
        if let items { return .array(items.map(\.value)) }
        return leaf
    }
}

private struct NodeEncoder: Encoder, SingleValueEncodingContainer {
    let node: EncodedNode
    let codingPath: [any CodingKey]
    let snakeCaseKeys: Bool
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if node.members == nil { node.members = [:] }
        return KeyedEncodingContainer(KeyedNodeEncoder<Key>(node: node, codingPath: codingPath, snakeCaseKeys: snakeCaseKeys))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if node.items == nil { node.items = [] }
        return UnkeyedNodeEncoder(node: node, codingPath: codingPath, snakeCaseKeys: snakeCaseKeys)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    mutating func encodeNil() throws { node.leaf = .null }
    mutating func encode(_ value: Bool) throws { node.leaf = .bool(value) }
    mutating func encode(_ value: String) throws { node.leaf = .string(value) }
    mutating func encode(_ value: Double) throws { node.leaf = .double(value) }
    /// As its own shortest form (0.1, not 0.10000000149011612).
    mutating func encode(_ value: Float) throws { node.leaf = .double(Double(value.description) ?? Double(value)) }
    mutating func encode(_ value: Int) throws { node.leaf = .int(value) }
    mutating func encode(_ value: Int8) throws { node.leaf = .int(Int(value)) }
    mutating func encode(_ value: Int16) throws { node.leaf = .int(Int(value)) }
    mutating func encode(_ value: Int32) throws { node.leaf = .int(Int(value)) }
    mutating func encode(_ value: Int64) throws { node.leaf = .int(Int(value)) }
    mutating func encode(_ value: UInt) throws { try encodeUnsigned(value) }
    mutating func encode(_ value: UInt8) throws { node.leaf = .int(Int(value)) }
    mutating func encode(_ value: UInt16) throws { node.leaf = .int(Int(value)) }
    mutating func encode(_ value: UInt32) throws { node.leaf = .int(Int(value)) }
    mutating func encode(_ value: UInt64) throws { try encodeUnsigned(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try value.encode(to: self) }

    private func encodeUnsigned<T: UnsignedInteger>(_ value: T) throws {
        guard let i = Int(exactly: value) else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(value) does not fit a JSON integer"))
        }
        node.leaf = .int(i)
    }
}

private struct KeyedNodeEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodedNode
    let codingPath: [any CodingKey]
    let snakeCaseKeys: Bool

    private func child(_ key: Key) -> NodeEncoder {
        let name = snakeCaseKeys ? JSONValueEncoder.snakeCase(key.stringValue) : key.stringValue
        let c = EncodedNode()
        node.members![name] = c
        return NodeEncoder(node: c, codingPath: codingPath + [key], snakeCaseKeys: snakeCaseKeys)
    }

    mutating func encodeNil(forKey key: Key) throws { var c = child(key); try c.encodeNil() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { var c = child(key); try c.encode(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { var c = child(key); try c.encode(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { var c = child(key); try c.encode(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { var c = child(key); try c.encode(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { var c = child(key); try c.encode(value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { var c = child(key); try c.encode(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { var c = child(key); try c.encode(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { var c = child(key); try c.encode(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { var c = child(key); try c.encode(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { var c = child(key); try c.encode(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { var c = child(key); try c.encode(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { var c = child(key); try c.encode(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { var c = child(key); try c.encode(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { var c = child(key); try c.encode(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try value.encode(to: child(key)) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        child(key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { child(key).unkeyedContainer() }
    mutating func superEncoder() -> any Encoder { child(Key(stringValue: "super")!) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { child(key) }
}

private struct UnkeyedNodeEncoder: UnkeyedEncodingContainer {
    let node: EncodedNode
    let codingPath: [any CodingKey]
    let snakeCaseKeys: Bool
    var count: Int { node.items!.count }

    private func next() -> NodeEncoder {
        let c = EncodedNode()
        let index = node.items!.count
        node.items!.append(c)
        return NodeEncoder(node: c, codingPath: codingPath + [IndexKey(index)], snakeCaseKeys: snakeCaseKeys)
    }

    mutating func encodeNil() throws { var c = next(); try c.encodeNil() }
    mutating func encode(_ value: Bool) throws { var c = next(); try c.encode(value) }
    mutating func encode(_ value: String) throws { var c = next(); try c.encode(value) }
    mutating func encode(_ value: Double) throws { var c = next(); try c.encode(value) }
    mutating func encode(_ value: Float) throws { var c = next(); try c.encode(value) }
    mutating func encode(_ value: Int) throws { var c = next(); try c.encode(value) }
    mutating func encode(_ value: Int8) throws { var c = next(); try c.encode(value) }
    mutating func encode(_ value: Int16) throws { var c = next(); try c.encode(value) }
    mutating func encode(_ value: Int32) throws { var c = next(); try c.encode(value) }
    mutating func encode(_ value: Int64) throws { var c = next(); try c.encode(value) }
    mutating func encode(_ value: UInt) throws { var c = next(); try c.encode(value) }
    mutating func encode(_ value: UInt8) throws { var c = next(); try c.encode(value) }
    mutating func encode(_ value: UInt16) throws { var c = next(); try c.encode(value) }
    mutating func encode(_ value: UInt32) throws { var c = next(); try c.encode(value) }
    mutating func encode(_ value: UInt64) throws { var c = next(); try c.encode(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try value.encode(to: next()) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        next().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { next().unkeyedContainer() }
    mutating func superEncoder() -> any Encoder { next() }
}

/// An array position in a coding path.
struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

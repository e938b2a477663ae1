import CDBus

/// An object path, validated on construction: libdbus aborts the process on an
/// invalid one, and a gateway must not die because a config or a peer sent a bad path.
public struct DBusObjectPath: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    public init?(_ rawValue: String) {
        guard DBusObjectPath.isValid(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    /// For literals in code: an invalid literal is a programming error.
    public init(stringLiteral value: String) {
        precondition(DBusObjectPath.isValid(value), "invalid D-Bus object path literal \(value)")
        self.rawValue = value
    }

    init(unchecked rawValue: String) { self.rawValue = rawValue }

    public static let root = DBusObjectPath(unchecked: "/")

    public var description: String { rawValue }

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// Appends one element; characters a path may not hold become `_`.
    public func appending(_ element: String) -> DBusObjectPath {
        let cleaned = String(element.utf8.map { DBusObjectPath.isElementByte($0) ? Character(Unicode.Scalar($0)) : "_" })
        let safe = cleaned.isEmpty ? "_" : cleaned
        return DBusObjectPath(unchecked: rawValue == "/" ? "/" + safe : rawValue + "/" + safe)
    }

    /// The parent path, nil for the root.
    public var parent: DBusObjectPath? {
        guard rawValue != "/" else { return nil }
        guard let slash = rawValue.lastIndex(of: "/") else { return nil }
        let head = rawValue[..<slash]
        return DBusObjectPath(unchecked: head.isEmpty ? "/" : String(head))
    }

    /// The last element ("" for the root).
    public var lastElement: Substring {
        guard let slash = rawValue.lastIndex(of: "/") else { return Substring(rawValue) }
        return rawValue[rawValue.index(after: slash)...]
    }

    /// True when `self` is `other` or lies below it.
    public func isDescendant(of other: DBusObjectPath) -> Bool {
        if other.rawValue == "/" { return true }
        return rawValue == other.rawValue || rawValue.hasPrefix(other.rawValue + "/")
    }

    static func isElementByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F
    }

    public static func isValid(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.first == 0x2F else { return false }
        if u.count == 1 { return true }
        guard u.last != 0x2F else { return false }
        var previousSlash = true
        for b in u.dropFirst() {
            if b == 0x2F {
                if previousSlash { return false }
                previousSlash = true
            } else if isElementByte(b) {
                previousSlash = false
            } else {
                return false
            }
        }
        return true
    }
}

/// A type signature, validated with libdbus's own checker.
public struct DBusSignature: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    public init?(_ rawValue: String) {
        guard DBusSignature.isValid(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) {
        precondition(DBusSignature.isValid(value), "invalid D-Bus signature literal \(value)")
        self.rawValue = value
    }

    init(unchecked rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    public static func isValid(_ s: String) -> Bool {
        guard !s.utf8.contains(0) else { return false }
        return dbus_signature_validate(s, nil) != 0
    }

    /// True when the signature is exactly one complete type. The one-letter and
    /// common cases are answered without calling into libdbus (hot path of every emit).
    public var isSingleCompleteType: Bool {
        let u = rawValue.utf8
        if u.count == 1, let c = u.first { return MessageCodec.isBasic(c) || c == UInt8(ascii: "v") }
        if rawValue == "ay" || rawValue == "as" || rawValue == "a{sv}" || rawValue == "ao" { return true }
        return dbus_signature_validate_single(rawValue, nil) != 0
    }
}

/// Validation of the names libdbus would otherwise abort on.
enum DBusNameCheck {
    static func isValidInterface(_ s: String) -> Bool {
        !s.utf8.contains(0) && dbus_validate_interface(s, nil) != 0
    }

    static func isValidMember(_ s: String) -> Bool {
        !s.utf8.contains(0) && dbus_validate_member(s, nil) != 0
    }

    static func isValidBusName(_ s: String) -> Bool {
        !s.utf8.contains(0) && dbus_validate_bus_name(s, nil) != 0
    }

    static func isValidErrorName(_ s: String) -> Bool {
        !s.utf8.contains(0) && dbus_validate_error_name(s, nil) != 0
    }
}

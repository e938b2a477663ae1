/// A D-Bus error: an error reply from a peer, or a failure of the local connection
/// expressed the way libdbus does (`org.freedesktop.DBus.Error.NoReply` for a
/// timeout, `...Disconnected` for a lost bus).
///
/// The name is kept as a string, so error names this code has never heard of
/// (any `org.bluez.Error.*` BlueZ adds later) are carried, not crashed on.
public struct DBusError: Error, Sendable, Hashable, CustomStringConvertible {
    public var name: String
    public var message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public init(_ name: Name, _ message: String) {
        self.init(name: name.rawValue, message: message)
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    /// Error names as typed constants; any string is a valid `Name`.
    public struct Name: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { self.rawValue = value }

        public static let failed: Name = "org.freedesktop.DBus.Error.Failed"
        public static let noReply: Name = "org.freedesktop.DBus.Error.NoReply"
        public static let timeout: Name = "org.freedesktop.DBus.Error.Timeout"
        public static let disconnected: Name = "org.freedesktop.DBus.Error.Disconnected"
        public static let noMemory: Name = "org.freedesktop.DBus.Error.NoMemory"
        public static let serviceUnknown: Name = "org.freedesktop.DBus.Error.ServiceUnknown"
        public static let nameHasNoOwner: Name = "org.freedesktop.DBus.Error.NameHasNoOwner"
        public static let unknownMethod: Name = "org.freedesktop.DBus.Error.UnknownMethod"
        public static let unknownObject: Name = "org.freedesktop.DBus.Error.UnknownObject"
        public static let unknownInterface: Name = "org.freedesktop.DBus.Error.UnknownInterface"
        public static let unknownProperty: Name = "org.freedesktop.DBus.Error.UnknownProperty"
        public static let propertyReadOnly: Name = "org.freedesktop.DBus.Error.PropertyReadOnly"
        public static let invalidArgs: Name = "org.freedesktop.DBus.Error.InvalidArgs"
        public static let invalidSignature: Name = "org.freedesktop.DBus.Error.InvalidSignature"
        public static let accessDenied: Name = "org.freedesktop.DBus.Error.AccessDenied"
        public static let notSupported: Name = "org.freedesktop.DBus.Error.NotSupported"
        public static let limitsExceeded: Name = "org.freedesktop.DBus.Error.LimitsExceeded"
    }

    public func `is`(_ name: Name) -> Bool { self.name == name.rawValue }

    static func disconnected(_ why: String = "the bus connection is closed") -> DBusError {
        DBusError(.disconnected, why)
    }
}

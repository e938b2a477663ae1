/// The description of one exported interface: its methods, properties and signals.
/// Values live in the `DBusObjectServer`; this type says what exists and how it behaves.
public struct DBusInterface: Sendable {
    public var name: String
    public var methods: [DBusMethod]
    public var properties: [DBusProperty]
    public var signals: [DBusSignalSpec]

    public init(_ name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [], signals: [DBusSignalSpec] = []) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }
}

public struct DBusArgument: Sendable, Hashable {
    public var name: String
    public var signature: DBusSignature
    public init(_ name: String, _ signature: DBusSignature) {
        self.name = name
        self.signature = signature
    }
}

/// What a method handler is given.
public struct DBusMethodInvocation: Sendable {
    public var message: DBusMessage
    public var path: DBusObjectPath
    public var interface: String
    public var arguments: [DBusValue] { message.body }
    public var sender: String? { message.sender }
}

public struct DBusMethod: Sendable {
    public typealias Handler = @Sendable (DBusMethodInvocation) async throws -> [DBusValue]

    public var name: String
    public var inArgs: [DBusArgument]
    public var outArgs: [DBusArgument]
    /// Runs in a task of its own, so a slow handler (a simulated Connect that takes
    /// a second) never holds up the connection's other traffic.
    public var handler: Handler

    public init(_ name: String, in inArgs: [DBusArgument] = [], out outArgs: [DBusArgument] = [], handler: @escaping Handler) {
        self.name = name
        self.inArgs = inArgs
        self.outArgs = outArgs
        self.handler = handler
    }

    var inSignature: String { inArgs.map(\.signature.rawValue).joined() }
}

public struct DBusProperty: Sendable {
    public enum Access: String, Sendable {
        case read, write, readwrite
    }

    /// org.freedesktop.DBus.Property.EmitsChangedSignal.
    public enum EmitsChange: Sendable {
        case yes, invalidates, no
    }

    public typealias Setter = @Sendable (DBusValue) async throws -> DBusValue

    public var name: String
    public var signature: DBusSignature
    public var access: Access
    /// nil: the property does not exist at the moment (BlueZ leaves out optional
    /// properties such as RSSI until they have a value).
    public var value: DBusValue?
    public var emitsChange: EmitsChange
    /// Called for Set from the bus; returns the value to store (or throws to refuse).
    public var onSet: Setter?

    public init(_ name: String, _ signature: DBusSignature, access: Access = .read, value: DBusValue? = nil,
                emitsChange: EmitsChange = .yes, onSet: Setter? = nil) {
        self.name = name
        self.signature = signature
        self.access = access
        self.value = value
        self.emitsChange = emitsChange
        self.onSet = onSet
    }
}

public struct DBusSignalSpec: Sendable, Hashable {
    public var name: String
    public var args: [DBusArgument]
    public init(_ name: String, _ args: [DBusArgument] = []) {
        self.name = name
        self.args = args
    }
}

import CDBus

/// A received message: header fields plus the decoded body.
public struct DBusMessage: Sendable {
    public enum Kind: Sendable, Hashable {
        case methodCall, methodReturn, error, signal
    }

    public var kind: Kind
    public var serial: UInt32
    public var replySerial: UInt32
    public var sender: String?
    public var destination: String?
    public var path: DBusObjectPath?
    public var interface: String?
    public var member: String?
    public var errorName: String?
    /// The body's signature as sent.
    public var signature: String
    public var body: [DBusValue]
    /// Set when the caller asked for no reply (method calls only).
    public var noReplyExpected: Bool
    /// Wall-clock milliseconds since 1970 when the connection's dispatcher read the
    /// message off the socket: the time it arrived, however long its consumer took to
    /// get to it. nil for messages not received from a bus.
    public var receivedAt: Int64?

    init(_ m: OpaquePointer, receivedAt: Int64? = nil) {
        self.init(header: m)
        body = MessageCodec.read(m)
        self.receivedAt = receivedAt
    }

    /// Header fields only: routing decides on these before any body is decoded.
    init(header m: OpaquePointer) {
        switch dbus_message_get_type(m) {
        case CDBUS_MESSAGE_TYPE_METHOD_CALL: kind = .methodCall
        case CDBUS_MESSAGE_TYPE_METHOD_RETURN: kind = .methodReturn
        case CDBUS_MESSAGE_TYPE_ERROR: kind = .error
        default: kind = .signal
        }
        serial = dbus_message_get_serial(m)
        replySerial = dbus_message_get_reply_serial(m)
        sender = dbus_message_get_sender(m).map { String(cString: $0) }
        destination = dbus_message_get_destination(m).map { String(cString: $0) }
        path = dbus_message_get_path(m).map { DBusObjectPath(unchecked: String(cString: $0)) }
        interface = dbus_message_get_interface(m).map { String(cString: $0) }
        member = dbus_message_get_member(m).map { String(cString: $0) }
        errorName = dbus_message_get_error_name(m).map { String(cString: $0) }
        signature = dbus_message_get_signature(m).map { String(cString: $0) } ?? ""
        noReplyExpected = dbus_message_get_no_reply(m) != 0
        body = []
    }

    /// The error this message carries, for error replies.
    var asError: DBusError {
        DBusError(name: errorName ?? DBusError.Name.failed.rawValue, message: body.first?.stringValue ?? "")
    }
}

/// A signal as delivered to subscribers.
public typealias DBusSignal = DBusMessage

/// Owns a libdbus message built on any thread and handed to the dispatcher.
final class OutgoingMessage: @unchecked Sendable {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }
    deinit { dbus_message_unref(pointer) }

    static func methodCall(destination: String?, path: DBusObjectPath, interface: String?, member: String, body: [DBusValue]) throws(DBusError) -> OutgoingMessage {
        if let destination, !DBusNameCheck.isValidBusName(destination) {
            throw DBusError(.invalidArgs, "invalid bus name '\(destination)'")
        }
        if let interface, !DBusNameCheck.isValidInterface(interface) {
            throw DBusError(.invalidArgs, "invalid interface name '\(interface)'")
        }
        guard DBusNameCheck.isValidMember(member) else { throw DBusError(.invalidArgs, "invalid member name '\(member)'") }
        guard let m = dbus_message_new_method_call(destination, path.rawValue, interface, member) else {
            throw DBusError(.noMemory, "out of memory")
        }
        let out = OutgoingMessage(taking: m)
        try MessageCodec.append(body, to: m)
        return out
    }

    static func signal(path: DBusObjectPath, interface: String, member: String, destination: String? = nil, body: [DBusValue]) throws(DBusError) -> OutgoingMessage {
        guard DBusNameCheck.isValidInterface(interface) else { throw DBusError(.invalidArgs, "invalid interface name '\(interface)'") }
        guard DBusNameCheck.isValidMember(member) else { throw DBusError(.invalidArgs, "invalid member name '\(member)'") }
        guard let m = dbus_message_new_signal(path.rawValue, interface, member) else {
            throw DBusError(.noMemory, "out of memory")
        }
        let out = OutgoingMessage(taking: m)
        if let destination {
            guard DBusNameCheck.isValidBusName(destination) else { throw DBusError(.invalidArgs, "invalid bus name '\(destination)'") }
            dbus_message_set_destination(m, destination)
        }
        try MessageCodec.append(body, to: m)
        return out
    }

    static func methodReturn(replySerial: UInt32, destination: String?, body: [DBusValue]) throws(DBusError) -> OutgoingMessage {
        guard let m = dbus_message_new(CDBUS_MESSAGE_TYPE_METHOD_RETURN) else { throw DBusError(.noMemory, "out of memory") }
        let out = OutgoingMessage(taking: m)
        dbus_message_set_reply_serial(m, replySerial)
        dbus_message_set_no_reply(m, 1)
        if let destination { dbus_message_set_destination(m, destination) }
        try MessageCodec.append(body, to: m)
        return out
    }

    static func errorReply(replySerial: UInt32, destination: String?, error: DBusError) -> OutgoingMessage? {
        guard let m = dbus_message_new(CDBUS_MESSAGE_TYPE_ERROR) else { return nil }
        let out = OutgoingMessage(taking: m)
        let name = DBusNameCheck.isValidErrorName(error.name) ? error.name : DBusError.Name.failed.rawValue
        dbus_message_set_error_name(m, name)
        dbus_message_set_reply_serial(m, replySerial)
        dbus_message_set_no_reply(m, 1)
        if let destination { dbus_message_set_destination(m, destination) }
        let text = error.message.replacingNULs()
        _ = cdbus_message_append_string(m, text)
        return out
    }
}

extension String {
    func replacingNULs() -> String {
        utf8.contains(0) ? String(decoding: utf8.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self) : self
    }
}

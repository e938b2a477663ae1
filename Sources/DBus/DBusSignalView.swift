import CDBus

/// A received signal seen in place, without decoding it into Swift values.
///
/// Given to `subscribeRaw` handlers on the dispatcher thread and valid only during
/// that call: it lets the hot path (a GATT `Value` in PropertiesChanged, once per
/// notification) read the bytes it needs through libdbus's iterator, as a C
/// program would, instead of building a tree of values and strings per signal.
public struct DBusSignalView {
    let raw: OpaquePointer
    /// Wall-clock milliseconds since 1970 when the dispatcher read the signal off the
    /// socket (see `DBusMessage.receivedAt`).
    public let receivedAt: Int64

    init(_ raw: OpaquePointer, receivedAt: Int64) {
        self.raw = raw
        self.receivedAt = receivedAt
    }

    public var path: DBusObjectPath? {
        dbus_message_get_path(raw).map { DBusObjectPath(unchecked: String(cString: $0)) }
    }

    public var member: String? { dbus_message_get_member(raw).map { String(cString: $0) } }
    public var interface: String? { dbus_message_get_interface(raw).map { String(cString: $0) } }
    public var sender: String? { dbus_message_get_sender(raw).map { String(cString: $0) } }

    /// True when the path equals `path`, compared without allocating.
    public func hasPath(_ path: DBusObjectPath) -> Bool {
        guard let p = dbus_message_get_path(raw) else { return false }
        return path.rawValue.withCString { strcmp($0, p) == 0 }
    }

    /// The whole message, decoded (allocates: for anything but the hot path).
    public func decoded() -> DBusMessage { DBusMessage(raw, receivedAt: receivedAt) }

    /// For PropertiesChanged (`sa{sv}as`): true when `name` is the only property
    /// changed and none is invalidated, read without decoding: lets a mirror of
    /// object state skip a notification's `Value` yet never miss a state change
    /// bluetoothd sent in the same signal.
    public func changes(only name: String) -> Bool {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iter) != 0,
              dbus_message_iter_get_arg_type(&iter) == CDBUS_TYPE_STRING,
              dbus_message_iter_next(&iter) != 0,
              dbus_message_iter_get_arg_type(&iter) == CDBUS_TYPE_ARRAY else { return false }
        var dict = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &dict)
        var matched = 0
        let onlyWanted = name.withCString { wanted -> Bool in
            while dbus_message_iter_get_arg_type(&dict) == CDBUS_TYPE_DICT_ENTRY {
                var entry = DBusMessageIter()
                dbus_message_iter_recurse(&dict, &entry)
                var key: UnsafePointer<CChar>? = nil
                guard dbus_message_iter_get_arg_type(&entry) == CDBUS_TYPE_STRING else { return false }
                dbus_message_iter_get_basic(&entry, &key)
                guard let key, strcmp(key, wanted) == 0 else { return false }
                matched += 1
                dbus_message_iter_next(&dict)
            }
            return true
        }
        guard onlyWanted, matched == 1 else { return false }
        // The invalidated list must be empty.
        if dbus_message_iter_next(&iter) != 0, dbus_message_iter_get_arg_type(&iter) == CDBUS_TYPE_ARRAY {
            var invalidated = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &invalidated)
            return dbus_message_iter_get_arg_type(&invalidated) == CDBUS_TYPE_INVALID
        }
        return true
    }

    /// For PropertiesChanged (`sa{sv}as`): calls `body` with the bytes of the
    /// changed `ay` property `name`, if present, without copying them; returns nil
    /// when the signal does not carry it.
    public func withChangedBytes<R>(_ name: String, _ body: (UnsafeRawBufferPointer) -> R) -> R? {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iter) != 0,
              dbus_message_iter_get_arg_type(&iter) == CDBUS_TYPE_STRING,
              dbus_message_iter_next(&iter) != 0,
              dbus_message_iter_get_arg_type(&iter) == CDBUS_TYPE_ARRAY else { return nil }
        var dict = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &dict)
        return name.withCString { wanted -> R? in
            while dbus_message_iter_get_arg_type(&dict) == CDBUS_TYPE_DICT_ENTRY {
                var entry = DBusMessageIter()
                dbus_message_iter_recurse(&dict, &entry)
                if dbus_message_iter_get_arg_type(&entry) == CDBUS_TYPE_STRING {
                    var key: UnsafePointer<CChar>? = nil
                    dbus_message_iter_get_basic(&entry, &key)
                    if let key, strcmp(key, wanted) == 0, dbus_message_iter_next(&entry) != 0,
                       dbus_message_iter_get_arg_type(&entry) == CDBUS_TYPE_VARIANT {
                        var variant = DBusMessageIter()
                        dbus_message_iter_recurse(&entry, &variant)
                        guard dbus_message_iter_get_arg_type(&variant) == CDBUS_TYPE_ARRAY,
                              dbus_message_iter_get_element_type(&variant) == CDBUS_TYPE_BYTE else { return nil }
                        var array = DBusMessageIter()
                        dbus_message_iter_recurse(&variant, &array)
                        var base: UnsafeRawPointer? = nil
                        var count: Int32 = 0
                        withUnsafeMutablePointer(to: &base) { pp in
                            pp.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 1) { dbus_message_iter_get_fixed_array(&array, $0, &count) }
                        }
                        return body(UnsafeRawBufferPointer(start: count > 0 ? base : nil, count: Int(count)))
                    }
                }
                dbus_message_iter_next(&dict)
            }
            return nil
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif

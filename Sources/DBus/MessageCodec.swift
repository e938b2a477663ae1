import CDBus

/// Writes and reads message bodies through libdbus iterators.
///
/// Every check libdbus would turn into an abort (wrong element type in an array,
/// a non-basic dictionary key, a NUL inside a string) is made here first and
/// reported as `org.freedesktop.DBus.Error.InvalidArgs` instead.
enum MessageCodec {
    static func append(_ values: [DBusValue], to message: OpaquePointer) throws(DBusError) {
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        for value in values {
            try append(value, to: &iter)
        }
    }

    static func append(_ value: DBusValue, to iter: inout DBusMessageIter) throws(DBusError) {
        var ok: dbus_bool_t = 1
        switch value {
        case .byte(var v): ok = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_BYTE, &v)
        case .bool(let b):
            var v: dbus_bool_t = b ? 1 : 0
            ok = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_BOOLEAN, &v)
        case .int16(var v): ok = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_INT16, &v)
        case .uint16(var v): ok = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UINT16, &v)
        case .int32(var v): ok = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_INT32, &v)
        case .uint32(var v): ok = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UINT32, &v)
        case .int64(var v): ok = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_INT64, &v)
        case .uint64(var v): ok = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UINT64, &v)
        case .double(var v): ok = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_DOUBLE, &v)
        case .string(let s): ok = try appendString(s, type: CDBUS_TYPE_STRING, to: &iter)
        case .objectPath(let p): ok = try appendString(p.rawValue, type: CDBUS_TYPE_OBJECT_PATH, to: &iter)
        case .signature(let g): ok = try appendString(g.rawValue, type: CDBUS_TYPE_SIGNATURE, to: &iter)
        case .unixFD(let fd):
            var raw = fd.rawValue
            guard raw >= 0 else { throw DBusError(.invalidArgs, "cannot send a closed file descriptor") }
            ok = dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UNIX_FD, &raw)
        case .bytes(let bytes):
            var sub = DBusMessageIter()
            guard dbus_message_iter_open_container(&iter, CDBUS_TYPE_ARRAY, "y", &sub) != 0 else { throw oom() }
            bytes.withUnsafeBufferPointer { buf in
                var base = buf.baseAddress
                if buf.count > 0 {
                    ok = dbus_message_iter_append_fixed_array(&sub, CDBUS_TYPE_BYTE, &base, Int32(buf.count))
                }
            }
            if dbus_message_iter_close_container(&iter, &sub) == 0 { ok = 0 }
        case .array(let element, let items):
            guard element.isSingleCompleteType else {
                throw DBusError(.invalidArgs, "array element signature '\(element)' is not a single complete type")
            }
            var sub = DBusMessageIter()
            guard dbus_message_iter_open_container(&iter, CDBUS_TYPE_ARRAY, element.rawValue, &sub) != 0 else { throw oom() }
            do throws(DBusError) {
                for item in items {
                    guard item.signatureString == element.rawValue else {
                        throw DBusError(.invalidArgs, "array of '\(element)' holds a '\(item.signatureString)'")
                    }
                    try append(item, to: &sub)
                }
            } catch {
                dbus_message_iter_abandon_container(&iter, &sub)
                throw error
            }
            if dbus_message_iter_close_container(&iter, &sub) == 0 { ok = 0 }
        case .dictionary(let key, let valueSignature, let entries):
            guard key.rawValue.utf8.count == 1, isBasic(key.rawValue.utf8.first!) else {
                throw DBusError(.invalidArgs, "dictionary key signature '\(key)' is not a basic type")
            }
            guard valueSignature.isSingleCompleteType else {
                throw DBusError(.invalidArgs, "dictionary value signature '\(valueSignature)' is not a single complete type")
            }
            var sub = DBusMessageIter()
            let entrySig = "{" + key.rawValue + valueSignature.rawValue + "}"
            guard dbus_message_iter_open_container(&iter, CDBUS_TYPE_ARRAY, entrySig, &sub) != 0 else { throw oom() }
            do throws(DBusError) {
                for entry in entries {
                    guard entry.key.signatureString == key.rawValue, entry.value.signatureString == valueSignature.rawValue else {
                        throw DBusError(.invalidArgs, "dictionary a\(entrySig) holds a {\(entry.key.signatureString)\(entry.value.signatureString)}")
                    }
                    var entryIter = DBusMessageIter()
                    guard dbus_message_iter_open_container(&sub, CDBUS_TYPE_DICT_ENTRY, nil, &entryIter) != 0 else { throw oom() }
                    do throws(DBusError) {
                        try append(entry.key, to: &entryIter)
                        try append(entry.value, to: &entryIter)
                    } catch {
                        dbus_message_iter_abandon_container(&sub, &entryIter)
                        throw error
                    }
                    guard dbus_message_iter_close_container(&sub, &entryIter) != 0 else { throw oom() }
                }
            } catch {
                dbus_message_iter_abandon_container(&iter, &sub)
                throw error
            }
            if dbus_message_iter_close_container(&iter, &sub) == 0 { ok = 0 }
        case .struct(let fields):
            guard !fields.isEmpty else { throw DBusError(.invalidArgs, "a D-Bus struct needs at least one field") }
            var sub = DBusMessageIter()
            guard dbus_message_iter_open_container(&iter, CDBUS_TYPE_STRUCT, nil, &sub) != 0 else { throw oom() }
            do throws(DBusError) {
                for field in fields { try append(field, to: &sub) }
            } catch {
                dbus_message_iter_abandon_container(&iter, &sub)
                throw error
            }
            if dbus_message_iter_close_container(&iter, &sub) == 0 { ok = 0 }
        case .variant(let inner):
            var sub = DBusMessageIter()
            guard dbus_message_iter_open_container(&iter, CDBUS_TYPE_VARIANT, inner.signatureString, &sub) != 0 else { throw oom() }
            do throws(DBusError) {
                try append(inner, to: &sub)
            } catch {
                dbus_message_iter_abandon_container(&iter, &sub)
                throw error
            }
            if dbus_message_iter_close_container(&iter, &sub) == 0 { ok = 0 }
        }
        guard ok != 0 else { throw oom() }
    }

    private static func appendString(_ s: String, type: Int32, to iter: inout DBusMessageIter) throws(DBusError) -> dbus_bool_t {
        guard !s.utf8.contains(0) else { throw DBusError(.invalidArgs, "D-Bus strings cannot contain NUL") }
        return s.withCString { c in
            var p: UnsafePointer<CChar>? = c
            return dbus_message_iter_append_basic(&iter, type, &p)
        }
    }

    static func isBasic(_ code: UInt8) -> Bool {
        switch code {
        case UInt8(ascii: "y"), UInt8(ascii: "b"), UInt8(ascii: "n"), UInt8(ascii: "q"), UInt8(ascii: "i"),
             UInt8(ascii: "u"), UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "s"),
             UInt8(ascii: "o"), UInt8(ascii: "g"), UInt8(ascii: "h"):
            true
        default: false
        }
    }

    private static func oom() -> DBusError { DBusError(.noMemory, "libdbus could not append to the message") }

    // MARK: Reading

    static func read(_ message: OpaquePointer) -> [DBusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
        var out: [DBusValue] = []
        repeat {
            guard let v = read(&iter) else { break }
            out.append(v)
        } while dbus_message_iter_next(&iter) != 0
        return out
    }

    /// Reads the value under the iterator (nil at the end of a container).
    static func read(_ iter: inout DBusMessageIter) -> DBusValue? {
        let type = dbus_message_iter_get_arg_type(&iter)
        switch type {
        case CDBUS_TYPE_INVALID: return nil
        case CDBUS_TYPE_BYTE:
            var v: UInt8 = 0; dbus_message_iter_get_basic(&iter, &v); return .byte(v)
        case CDBUS_TYPE_BOOLEAN:
            var v: dbus_bool_t = 0; dbus_message_iter_get_basic(&iter, &v); return .bool(v != 0)
        case CDBUS_TYPE_INT16:
            var v: Int16 = 0; dbus_message_iter_get_basic(&iter, &v); return .int16(v)
        case CDBUS_TYPE_UINT16:
            var v: UInt16 = 0; dbus_message_iter_get_basic(&iter, &v); return .uint16(v)
        case CDBUS_TYPE_INT32:
            var v: Int32 = 0; dbus_message_iter_get_basic(&iter, &v); return .int32(v)
        case CDBUS_TYPE_UINT32:
            var v: UInt32 = 0; dbus_message_iter_get_basic(&iter, &v); return .uint32(v)
        case CDBUS_TYPE_INT64:
            var v: Int64 = 0; dbus_message_iter_get_basic(&iter, &v); return .int64(v)
        case CDBUS_TYPE_UINT64:
            var v: UInt64 = 0; dbus_message_iter_get_basic(&iter, &v); return .uint64(v)
        case CDBUS_TYPE_DOUBLE:
            var v: Double = 0; dbus_message_iter_get_basic(&iter, &v); return .double(v)
        case CDBUS_TYPE_STRING:
            return .string(readString(&iter))
        case CDBUS_TYPE_OBJECT_PATH:
            return .objectPath(DBusObjectPath(unchecked: readString(&iter)))
        case CDBUS_TYPE_SIGNATURE:
            return .signature(DBusSignature(unchecked: readString(&iter)))
        case CDBUS_TYPE_UNIX_FD:
            // libdbus hands out a fresh dup for every get_basic: we own it now.
            var fd: Int32 = -1
            dbus_message_iter_get_basic(&iter, &fd)
            return .unixFD(DBusFileDescriptor(owning: fd))
        case CDBUS_TYPE_VARIANT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            guard let inner = read(&sub) else { return nil }
            return .variant(inner)
        case CDBUS_TYPE_STRUCT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var fields: [DBusValue] = []
            repeat {
                guard let v = read(&sub) else { break }
                fields.append(v)
            } while dbus_message_iter_next(&sub) != 0
            return .struct(fields)
        case CDBUS_TYPE_ARRAY:
            return readArray(&iter)
        default:
            return nil
        }
    }

    private static func readString(_ iter: inout DBusMessageIter) -> String {
        var p: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &p)
        guard let p else { return "" }
        return String(cString: p)
    }

    private static func readArray(_ iter: inout DBusMessageIter) -> DBusValue? {
        let elementType = dbus_message_iter_get_element_type(&iter)
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &sub)
        if elementType == CDBUS_TYPE_BYTE {
            var base: UnsafePointer<UInt8>? = nil
            var count: Int32 = 0
            withUnsafeMutablePointer(to: &base) { pp in
                pp.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 1) { raw in
                    dbus_message_iter_get_fixed_array(&sub, raw, &count)
                }
            }
            guard let base, count > 0 else { return .bytes([]) }
            return .bytes(Array(UnsafeBufferPointer(start: base, count: Int(count))))
        }
        if elementType == CDBUS_TYPE_DICT_ENTRY {
            var entries: [DBusDictEntry] = []
            while dbus_message_iter_get_arg_type(&sub) == CDBUS_TYPE_DICT_ENTRY {
                var entryIter = DBusMessageIter()
                dbus_message_iter_recurse(&sub, &entryIter)
                guard let key = read(&entryIter) else { break }
                dbus_message_iter_next(&entryIter)
                guard let value = read(&entryIter) else { break }
                entries.append(DBusDictEntry(key, value))
                dbus_message_iter_next(&sub)
            }
            if let first = entries.first {
                return .dictionary(key: first.key.signature, value: first.value.signature, entries)
            }
            let sig = elementSignature(of: &iter)
            // "a{kv}" → key is one char after "a{", value is the rest minus "}".
            let u = Array(sig.utf8)
            guard u.count >= 5 else { return .dictionary(key: "s", value: "v", []) }
            let key = String(decoding: u[2..<3], as: UTF8.self)
            let value = String(decoding: u[3..<(u.count - 1)], as: UTF8.self)
            return .dictionary(key: DBusSignature(unchecked: key), value: DBusSignature(unchecked: value), [])
        }
        var items: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID {
            guard let v = read(&sub) else { break }
            items.append(v)
            dbus_message_iter_next(&sub)
        }
        if let first = items.first {
            return .array(element: first.signature, items)
        }
        // Empty: a basic element type is its own one-letter signature; only
        // containers need libdbus to spell theirs (which costs an allocation).
        if elementType != CDBUS_TYPE_ARRAY, elementType != CDBUS_TYPE_STRUCT, elementType != CDBUS_TYPE_VARIANT,
           let scalar = Unicode.Scalar(UInt32(elementType)) {
            return .array(element: DBusSignature(unchecked: String(Character(scalar))), [])
        }
        let sig = elementSignature(of: &iter)
        return .array(element: DBusSignature(unchecked: String(sig.dropFirst())), [])
    }

    /// The full signature of the array under `iter` (only needed for empty arrays).
    private static func elementSignature(of iter: inout DBusMessageIter) -> String {
        guard let c = dbus_message_iter_get_signature(&iter) else { return "av" }
        defer { dbus_free(c) }
        return String(cString: c)
    }
}

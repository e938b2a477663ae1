import CDBus
import PrintableText
#if canImport(Glibc)
import Glibc
#endif

/// A match rule, both as the string the bus daemon is sent (quoted as the D-Bus
/// specification says) and as a local predicate, because one connection receives
/// the union of all its rules and must route each message to the right subscribers.
public struct DBusMatchRule: Sendable, Hashable {
    public var type: DBusMessage.Kind? = .signal
    public var sender: String?
    public var interface: String?
    public var member: String?
    public var path: DBusObjectPath?
    public var pathNamespace: DBusObjectPath?
    public var destination: String?
    /// argN: exact match of string argument N (0...63).
    public var arguments: [Int: String] = [:]
    /// argNpath: path-prefix match of string or object-path argument N.
    public var argumentPaths: [Int: String] = [:]
    public var arg0Namespace: String?

    public init(
        type: DBusMessage.Kind? = .signal, sender: String? = nil, interface: String? = nil, member: String? = nil,
        path: DBusObjectPath? = nil, pathNamespace: DBusObjectPath? = nil, destination: String? = nil,
        arguments: [Int: String] = [:], argumentPaths: [Int: String] = [:], arg0Namespace: String? = nil
    ) {
        self.type = type
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.destination = destination
        self.arguments = arguments
        self.argumentPaths = argumentPaths
        self.arg0Namespace = arg0Namespace
    }

    /// The rule text for AddMatch/RemoveMatch, with keys in a fixed order so equal
    /// rules give equal strings (the connection reference-counts them by string).
    public var ruleString: String {
        var parts: [String] = []
        if let type {
            let t: String = switch type {
            case .signal: "signal"
            case .methodCall: "method_call"
            case .methodReturn: "method_return"
            case .error: "error"
            }
            parts.append("type=" + Self.quote(t))
        }
        if let sender { parts.append("sender=" + Self.quote(sender)) }
        if let interface { parts.append("interface=" + Self.quote(interface)) }
        if let member { parts.append("member=" + Self.quote(member)) }
        if let path { parts.append("path=" + Self.quote(path.rawValue)) }
        if let pathNamespace { parts.append("path_namespace=" + Self.quote(pathNamespace.rawValue)) }
        if let destination { parts.append("destination=" + Self.quote(destination)) }
        for (n, v) in arguments.sorted(by: { $0.key < $1.key }) { parts.append("arg\(n)=" + Self.quote(v)) }
        for (n, v) in argumentPaths.sorted(by: { $0.key < $1.key }) { parts.append("arg\(n)path=" + Self.quote(v)) }
        if let arg0Namespace { parts.append("arg0namespace=" + Self.quote(arg0Namespace)) }
        return parts.joined(separator: ",")
    }

    /// The specification's quoting: inside single quotes everything is literal, and an
    /// apostrophe is written outside them as \' (so a'b becomes 'a'\''b').
    public static func quote(_ value: String) -> String {
        "'" + value.replacing("'", with: "'\\''") + "'"
    }

    /// True when the rule looks at the body (argN, argNpath, arg0namespace).
    var needsBody: Bool { !arguments.isEmpty || !argumentPaths.isEmpty || arg0Namespace != nil }

    /// The header test on libdbus's own strings, so a signal nobody wants costs no
    /// Swift allocation at all. `resolvedSender` is the current unique owner of a
    /// well-known `sender` (nil when not known yet: the daemon's filtering is trusted).
    func matchesHeader(raw m: OpaquePointer, kind: DBusMessage.Kind, resolvedSender: String?) -> Bool {
        if let type, type != kind { return false }
        if let sender {
            let actual = dbus_message_get_sender(m)
            if !Self.equal(sender, actual) {
                if sender.hasPrefix(":") { return false }
                if let resolvedSender, !Self.equal(resolvedSender, actual) { return false }
            }
        }
        if let interface, !Self.equal(interface, dbus_message_get_interface(m)) { return false }
        if let member, !Self.equal(member, dbus_message_get_member(m)) { return false }
        if let path, !Self.equal(path.rawValue, dbus_message_get_path(m)) { return false }
        if let pathNamespace, pathNamespace.rawValue != "/" {
            guard let p = dbus_message_get_path(m) else { return false }
            let matched = pathNamespace.rawValue.withCString { ns -> Bool in
                let n = strlen(ns)
                return strncmp(ns, p, n) == 0 && (p[n] == 0 || p[n] == 0x2F)
            }
            if !matched { return false }
        }
        if let destination, !Self.equal(destination, dbus_message_get_destination(m)) { return false }
        return true
    }

    private static func equal(_ s: String, _ c: UnsafePointer<CChar>?) -> Bool {
        guard let c else { return false }
        return s.withCString { strcmp($0, c) == 0 }
    }

    func matchesArguments(_ m: DBusMessage) -> Bool {
        for (n, v) in arguments {
            guard n < m.body.count, case .string(let s) = m.body[n], s == v else { return false }
        }
        for (n, v) in argumentPaths {
            guard n < m.body.count else { return false }
            let s: String
            switch m.body[n] {
            case .string(let x): s = x
            case .objectPath(let p): s = p.rawValue
            default: return false
            }
            let ok = s == v || (v.hasSuffix("/") && s.hasPrefix(v)) || (s.hasSuffix("/") && v.hasPrefix(s))
            if !ok { return false }
        }
        if let ns = arg0Namespace {
            guard case .string(let s)? = m.body.first, s == ns || s.hasPrefix(ns + ".") else { return false }
        }
        return true
    }
}

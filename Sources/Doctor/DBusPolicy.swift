// SPDX-License-Identifier: MIT

/// Whether the system bus's policy files let a user call bluetoothd, worked out the
/// way dbus-daemon does for `send_destination="org.bluez"`: default-context policies
/// first, then group, then user, then mandatory ones, later rules winning; nothing
/// matching means the system bus's default, deny. Rules narrowed by further attributes
/// (`send_interface`, ...) are left out: they do not grant general access. The live
/// call in `blegate doctor` is the final word; this explains *why* and checks the
/// service user when the doctor runs as root.
public struct DBusPolicy: Sendable {
    public struct Rule: Sendable, Hashable {
        public var allow: Bool
        public var file: String
    }

    enum Scope: Hashable {
        case defaultContext, mandatory, user(String), group(String), atConsole, other
    }

    struct Policy {
        var scope: Scope
        var rules: [Rule]
    }

    var policies: [Policy] = []

    public static let directories = ["/usr/share/dbus-1/system.d", "/etc/dbus-1/system.d"]

    public init() {}

    /// Adds one busconfig file's policies (files are read in directory, then name, order).
    public mutating func add(xml: String, file: String) {
        var current: Policy?
        for tag in XMLTags(xml) {
            switch tag.name {
            case "policy" where !tag.closing:
                let a = tag.attributes
                let scope: Scope
                if a["context"] == "default" { scope = .defaultContext }
                else if a["context"] == "mandatory" { scope = .mandatory }
                else if let u = a["user"] { scope = .user(u) }
                else if let g = a["group"] { scope = .group(g) }
                else if a["at_console"] != nil { scope = .atConsole }
                else { scope = .other }
                current = Policy(scope: scope, rules: [])
                if tag.selfClosing { policies.append(current!); current = nil }
            case "policy":
                if let p = current { policies.append(p) }
                current = nil
            case "allow", "deny":
                guard current != nil else { continue }
                var a = tag.attributes
                guard let destination = a.removeValue(forKey: "send_destination"), destination == "org.bluez" else { continue }
                a.removeValue(forKey: "send_type")
                guard a.isEmpty else { continue }
                current!.rules.append(Rule(allow: tag.name == "allow", file: file))
            default:
                continue
            }
        }
    }

    /// The deciding rule for `user` in `groups` (nil: no rule, so denied).
    public func decidingRule(user: String, groups: [String]) -> Rule? {
        var last: Rule?
        func apply(_ scope: (Scope) -> Bool) {
            for p in policies where scope(p.scope) { if let r = p.rules.last { last = r } }
        }
        apply { $0 == .defaultContext }
        apply { if case .group(let g) = $0 { groups.contains(g) } else { false } }
        apply { if case .user(let u) = $0 { u == user || u == "*" } else { false } }
        apply { $0 == .mandatory }
        return last
    }

    public func allows(user: String, groups: [String]) -> Bool {
        decidingRule(user: user, groups: groups)?.allow ?? false
    }

    /// Groups that are granted access by a group policy (what to add a user to).
    public var grantingGroups: [String] {
        policies.compactMap { p in
            if case .group(let g) = p.scope, p.rules.last?.allow == true { g } else { nil }
        }
    }
}

/// A tag scanner for the small, regular XML of busconfig files; comments and the
/// DOCTYPE are skipped.
struct XMLTags: Sequence, IteratorProtocol {
    struct Tag {
        var name: String
        var closing: Bool
        var selfClosing: Bool
        var attributes: [String: String]
    }

    let chars: [Character]
    var i = 0

    init(_ text: String) { chars = Array(text) }

    mutating func next() -> Tag? {
        while i < chars.count {
            guard chars[i] == "<" else { i += 1; continue }
            if starts("<!--") {
                i += 4
                while i < chars.count && !starts("-->") { i += 1 }
                i += 3
                continue
            }
            guard let end = chars[i...].firstIndex(of: ">") else { i = chars.count; return nil }
            let body = String(chars[(i + 1)..<end])
            i = end + 1
            if body.hasPrefix("!") || body.hasPrefix("?") { continue }
            return parse(body)
        }
        return nil
    }

    private func starts(_ s: String) -> Bool {
        let p = Array(s)
        return i + p.count <= chars.count && Array(chars[i..<(i + p.count)]) == p
    }

    private func parse(_ body: String) -> Tag {
        var text = Substring(body)
        let closing = text.hasPrefix("/")
        if closing { text = text.dropFirst() }
        let selfClosing = text.hasSuffix("/")
        if selfClosing { text = text.dropLast() }
        let name = String(text.prefix { !$0.isWhitespace })
        text = text.dropFirst(name.count)
        var attributes: [String: String] = [:]
        while true {
            text = text.drop { $0.isWhitespace }
            guard let eq = text.firstIndex(of: "=") else { break }
            let key = text[..<eq].trimmed()
            text = text[text.index(after: eq)...].drop { $0.isWhitespace }
            guard let quote = text.first, quote == "\"" || quote == "'" else { break }
            text = text.dropFirst()
            guard let close = text.firstIndex(of: quote) else { break }
            attributes[key] = String(text[..<close])
            text = text[text.index(after: close)...]
        }
        return Tag(name: name, closing: closing, selfClosing: selfClosing, attributes: attributes)
    }
}

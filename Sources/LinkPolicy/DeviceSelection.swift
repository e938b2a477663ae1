// SPDX-License-Identifier: MIT

/// Which devices a gateway follows: every heart-rate device it sees (`auto`), or only
/// those on an allow list; a deny list wins over both. Entries are Bluetooth addresses
/// (any case) or name patterns where `*` matches any run of characters.
public struct DeviceSelection: Sendable, Hashable {
    public enum Mode: String, Sendable, Hashable {
        case auto
        case list
    }

    public var mode: Mode
    public var allow: [String]
    public var deny: [String]

    public init(mode: Mode = .auto, allow: [String] = [], deny: [String] = []) {
        self.mode = mode
        self.allow = allow
        self.deny = deny
    }

    /// `isHeartRate`: the device advertises or exposes the Heart Rate service.
    public func accepts(address: String, name: String?, isHeartRate: Bool) -> Bool {
        if deny.contains(where: { Self.matches($0, address: address, name: name) }) { return false }
        if allow.contains(where: { Self.matches($0, address: address, name: name) }) { return true }
        return mode == .auto && isHeartRate
    }

    public static func matches(_ pattern: String, address: String, name: String?) -> Bool {
        if isAddress(pattern) { return pattern.uppercased() == address.uppercased() }
        guard let name else { return false }
        return glob(Array(pattern.unicodeScalars), Array(name.unicodeScalars))
    }

    public static func isAddress(_ s: String) -> Bool {
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }

    /// `*` matches any run (also empty); everything else literally.
    static func glob(_ p: [Unicode.Scalar], _ s: [Unicode.Scalar]) -> Bool {
        var pi = 0, si = 0
        var star = -1, mark = 0
        while si < s.count {
            if pi < p.count, p[pi] != "*", p[pi] == s[si] {
                pi += 1; si += 1
            } else if pi < p.count, p[pi] == "*" {
                star = pi; mark = si; pi += 1
            } else if star >= 0 {
                pi = star + 1; mark += 1; si = mark
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}

// SPDX-License-Identifier: MIT

/// Where a request goes, taken apart from an `http://` or `https://` URL: the origin a
/// connection is opened to, and the path sent in the request line.
public struct HTTPTarget: Sendable, Hashable {
    public let secure: Bool
    /// A name or an address; IPv6 without its brackets.
    public let host: String
    public let port: Int
    /// Path and query, at least "/".
    public let path: String

    /// The connection a request can reuse: same scheme, host and port.
    struct Origin: Hashable, Sendable {
        var secure: Bool
        var host: String
        var port: Int
    }

    var origin: Origin { Origin(secure: secure, host: host, port: port) }

    /// nil for anything that is not `http(s)://host[:port][/path]`. Credentials in the URL
    /// (`user:secret@`) are dropped: the backend's token goes in a header.
    public init?(url: String) {
        let lower = url.lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") {
            secure = true
            rest = url.dropFirst("https://".count)
        } else if lower.hasPrefix("http://") {
            secure = false
            rest = url.dropFirst("http://".count)
        } else {
            return nil
        }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        var tail = rest[authorityEnd...]
        if let fragment = tail.firstIndex(of: "#") { tail = tail[..<fragment] }
        path = tail.isEmpty ? "/" : (tail.hasPrefix("/") ? String(tail) : "/" + tail)
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            portText = authority[authority.index(after: colon)...]
        } else {
            host = String(authority)
        }
        guard !host.isEmpty else { return nil }
        if let portText {
            guard let p = Int(portText), (1...65535).contains(p) else { return nil }
            port = p
        } else {
            port = secure ? 443 : 80
        }
    }

    /// The `Host` header: the port only when it is not the scheme's own.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? name : "\(name):\(port)"
    }

    /// Whether `host` is an IPv4 or IPv6 address (TLS then sends no server name and checks
    /// the certificate against the address).
    var hostIsAddress: Bool {
        if host.contains(":") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }
}

// SPDX-License-Identifier: MIT

/// Text from outside (a device's advertised name, a backend's error body) made safe to
/// print on a terminal, in the journal or on a page: control characters (terminal escape
/// sequences start with one), DEL, C1 controls and bidirectional overrides become U+FFFD,
/// and the length is capped. Anyone within radio range chooses a strap's name.
public enum PrintableText {
    /// Longest device name kept (BLE allows 248 bytes; no strap needs more than this).
    public static let nameLimit = 64
    /// Longest backend message kept.
    public static let messageLimit = 300

    public static func clean(_ text: String, limit: Int) -> String {
        var out = String.UnicodeScalarView()
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit {
                out.append("…")
                break
            }
            out.append(isSafe(scalar) ? scalar : "\u{FFFD}")
            count += 1
        }
        return String(out)
    }

    /// Whether a name or message needs no cleaning (the common case costs no copy).
    public static func isClean(_ text: String, limit: Int) -> Bool {
        var count = 0
        for scalar in text.unicodeScalars {
            count += 1
            if count > limit || !isSafe(scalar) { return false }
        }
        return true
    }

    static func isSafe(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0..<0x20, 0x7F...0x9F: false
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: false   // direction marks and overrides
        default: true
        }
    }

    /// `https://user:secret@host/` → `https://***@host/`: a URL as it may be printed.
    public static func redactingCredentials(_ url: String) -> String {
        guard let scheme = url.firstRange(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return url }
        return String(url[..<scheme.upperBound]) + "***" + String(rest[at...])
    }

    /// `text` with every occurrence of `secret` replaced (a backend echoing the token).
    public static func redacting(_ secret: String?, in text: String) -> String {
        guard let secret, secret.count >= 4, text.contains(secret) else { return text }
        return text.replacing(secret, with: "<token>")
    }
}

extension PrintableText {
    /// `text` as HTML text or an attribute value in double or single quotes: the pages
    /// (wall summary, coach page, staff page) show names members and staff typed.
    public static func html(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }
}

// SPDX-License-Identifier: MIT

extension StringProtocol {
    /// Whether `part` occurs in this text, compared as UTF-8 bytes (the error messages,
    /// URLs and tokens it is used on are ASCII). `contains(_:)` on strings is
    /// _StringProcessing's, or Foundation's where Foundation is imported: libraries the
    /// running gateway would otherwise touch for a few substring tests.
    public func includes(_ part: some StringProtocol) -> Bool {
        let needle = Array(part.utf8)
        guard let first = needle.first else { return true }
        let hay = Array(utf8)
        guard hay.count >= needle.count else { return false }
        var i = 0
        while i <= hay.count - needle.count {
            if hay[i] == first {
                var j = 1
                while j < needle.count, hay[i + j] == needle[j] { j += 1 }
                if j == needle.count { return true }
            }
            i += 1
        }
        return false
    }
}

extension String {
    /// This text with every occurrence of `target` replaced by `replacement` (compared as
    /// characters), without _StringProcessing or Foundation, for the same reason as `includes`.
    public func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty, includes(target) else { return self }
        var out = ""
        var rest = Substring(self)
        while let r = rest.textRange(of: target) {
            out += rest[..<r.lowerBound]
            out += replacement
            rest = rest[r.upperBound...]
        }
        return out + rest
    }
}

extension Substring {
    /// Where `target` first occurs in this text (compared as characters); nil when it does not.
    func textRange(of target: String) -> Range<Index>? {
        guard let first = target.first else { return nil }
        var i = startIndex
        while i < endIndex {
            if self[i] == first, self[i...].hasPrefix(target) { return i..<index(i, offsetBy: target.count) }
            i = index(after: i)
        }
        return nil
    }
}

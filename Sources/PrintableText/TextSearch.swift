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

// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// Writes a line to standard error (file descriptor 2) directly: the C `stderr` global
/// is shared mutable state that Swift 6 strict concurrency rejects.
public func printError(_ message: String) {
    writeAll(2, message + "\n")
}

/// Writes all of `text` to `descriptor`, without going through C's stdio.
func writeAll(_ descriptor: Int32, _ text: String) {
    var text = text
    text.withUTF8 { buffer in
        var offset = 0
        while offset < buffer.count {
            let n = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if n <= 0 { break }
            offset += n
        }
    }
}

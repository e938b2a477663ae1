// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// Writes to file descriptor 2 directly: the C `stderr` global is shared mutable state
/// that Swift 6 strict concurrency rejects.
public func printError(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { buffer in
        var offset = 0
        while offset < buffer.count {
            let n = write(2, buffer.baseAddress! + offset, buffer.count - offset)
            if n <= 0 { break }
            offset += n
        }
    }
}

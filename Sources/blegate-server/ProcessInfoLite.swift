// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// The environment and stderr without Foundation.
enum ProcessInfoLite {
    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}

func printErr(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

// SPDX-License-Identifier: MIT
import Glibc

/// The few path operations the cache needs, on POSIX calls.
enum FilePath {
    /// The directory part of `path` ("" for a bare file name, "/" for a file at the root).
    static func parent(of path: String) -> String {
        var bytes = Array(path.utf8)
        while bytes.count > 1, bytes.last == 0x2F { bytes.removeLast() }
        guard let slash = bytes.lastIndex(of: 0x2F) else { return "" }
        var end = slash
        while end > 0, bytes[end - 1] == 0x2F { end -= 1 }
        return end == 0 ? "/" : String(decoding: bytes[..<end], as: UTF8.self)
    }

    /// Creates `directory` and any missing parents with `mode`; nil on success, else
    /// the system's reason.
    static func makeDirectories(_ directory: String, mode: mode_t) -> String? {
        var s = stat()
        if stat(directory, &s) == 0 {
            return (s.st_mode & S_IFMT) == S_IFDIR ? nil : "\(directory) exists and is not a directory"
        }
        let up = parent(of: directory)
        if !up.isEmpty, up != directory, let failure = makeDirectories(up, mode: mode) { return failure }
        if mkdir(directory, mode) != 0, errno != EEXIST { return String(cString: strerror(errno)) }
        return nil
    }

    /// The file's size in bytes, nil when it does not exist.
    static func size(_ path: String) -> Int64? {
        var s = stat()
        guard stat(path, &s) == 0 else { return nil }
        return Int64(s.st_size)
    }
}

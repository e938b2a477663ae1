// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// The few path operations `blegate run` needs, on plain strings and mkdir(2), so
/// starting the gateway calls no Foundation.
enum FilePaths {
    /// `directory/name`, with one slash between; `name` alone when `directory` is empty.
    static func join(_ directory: String, _ name: String) -> String {
        if directory.isEmpty { return name }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// The directory part: `/run/blegate` of `/run/blegate/status.sock`, `/` of
    /// `/status.sock`, empty for a bare name.
    static func parent(_ path: String) -> String {
        var bytes = Array(path.utf8)
        while bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        var end = slash
        while end > 0, bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        return end == 0 ? "/" : String(decoding: bytes[..<end], as: UTF8.self)
    }

    /// Makes `path` and any missing parents with `mode` whatever the umask (as
    /// `mkdir -p -m`); true when the directory exists afterwards.
    @discardableResult
    static func makeDirectories(_ path: String, mode: mode_t = 0o755) -> Bool {
        if isDirectory(path) { return true }
        let up = parent(path)
        if !up.isEmpty, up != path, !isDirectory(up) { makeDirectories(up, mode: mode) }
        if mkdir(path, mode) == 0 {
            chmod(path, mode)
            return true
        }
        return isDirectory(path)
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}

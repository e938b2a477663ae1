// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// The few path operations the gateway needs (the cache's directory, the status socket's,
/// the state directory's files), on plain strings and POSIX calls, so that opening the
/// cache or starting `blegate run` calls no Foundation.
public enum FilePaths {
    /// `directory/name`, with one slash between; `name` alone when `directory` is empty.
    public static func join(_ directory: String, _ name: String) -> String {
        if directory.isEmpty { return name }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// The directory part: `/run/blegate` of `/run/blegate/status.sock`, `/` of
    /// `/status.sock`, empty for a bare name.
    public static func parent(_ path: String) -> String {
        var bytes = Array(path.utf8)
        while bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        var end = slash
        while end > 0, bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        return end == 0 ? "/" : String(decoding: bytes[..<end], as: UTF8.self)
    }

    /// Makes `path` and any missing parents with `mode` (as `mkdir -p`). With
    /// `exactMode` every directory made gets `mode` whatever the umask (as `mkdir -p -m`):
    /// a socket's directory that others must reach; without, the umask narrows it, as it
    /// should for private data. Nil when the directory exists afterwards, else the reason.
    @discardableResult
    public static func makeDirectories(_ path: String, mode: mode_t, exactMode: Bool = false) -> String? {
        var info = stat()
        if stat(path, &info) == 0 {
            return (info.st_mode & S_IFMT) == S_IFDIR ? nil : "\(path) exists and is not a directory"
        }
        let up = parent(path)
        if !up.isEmpty, up != path, let failure = makeDirectories(up, mode: mode, exactMode: exactMode) { return failure }
        if mkdir(path, mode) == 0 {
            if exactMode { chmod(path, mode) }
            return nil
        }
        return errno == EEXIST && isDirectory(path) ? nil : String(cString: strerror(errno))
    }

    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The file's size in bytes, nil when it does not exist.
    public static func size(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }
}

// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif
import SystemPackage

/// The directory operations the gateway needs on POSIX calls (the cache's directory, the
/// status socket's): swift-system's `FilePath` joins and splits paths, but makes none.
public enum FilePaths {
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
        let up = FilePath(path).removingLastComponent().string
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

    /// The file system holding `path`, as `df` shows it: bytes free to an unprivileged
    /// user, and its size. Nil when `path` does not exist.
    public static func fileSystem(_ path: String) -> (free: UInt64, size: UInt64)? {
        var st = statvfs()
        guard statvfs(path, &st) == 0 else { return nil }
        return (UInt64(st.f_bavail) * UInt64(st.f_frsize), UInt64(st.f_blocks) * UInt64(st.f_frsize))
    }
}

// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif
import SystemSupport

/// Room for the record cache. When the backend is unreachable the cache grows until
/// `cache.max_size`; a disk that fills first makes SQLite refuse writes, which is the
/// one way records get lost.
public enum DiskSpace {
    /// Bytes available to an unprivileged user on the file system holding `path`, or
    /// on the nearest existing parent (the state directory may not exist yet). Returns
    /// the directory actually measured.
    public static func available(at path: String) -> (bytes: UInt64, measured: String)? {
        var candidate = path
        while true {
            if let fs = FilePaths.fileSystem(candidate) { return (fs.free, candidate) }
            guard errno == ENOENT, candidate != "/" else { return nil }
            let parent = candidate.split(separator: "/").dropLast().joined(separator: "/")
            candidate = "/" + parent
        }
    }

    public static let mebibyte: UInt64 = 1 << 20

    /// fail below 100 MiB; warn below twice the cache limit (room for the cache and for
    /// SQLite to rewrite it); ok otherwise.
    public static func check(stateDirectory: String, cacheLimit: UInt64 = 512 << 20, available: (bytes: UInt64, measured: String)?) -> DoctorCheck {
        let name = "disk"
        guard let available else {
            return .warn(name, "cannot measure free space for \(stateDirectory): \(String(cString: strerror(errno)))", fix: "df -h \(stateDirectory)")
        }
        let where_ = available.measured == stateDirectory ? stateDirectory : "\(available.measured) (\(stateDirectory) does not exist yet)"
        let free = format(available.bytes)
        if available.bytes < 100 * mebibyte {
            return .fail(name, "\(free) free on \(where_): the cache cannot hold records while the backend is away",
                         fix: "free space (sudo journalctl --vacuum-size=50M; sudo apt-get clean) or move [gateway] state_directory to a larger disk")
        }
        if available.bytes < 2 * cacheLimit {
            return .warn(name, "\(free) free on \(where_), less than twice the cache limit (\(format(cacheLimit)))",
                         fix: "free space, or lower [cache] max_size in /etc/blegate/blegate.toml (e.g. max_size = \"\(format(max(available.bytes / 4, 64 * mebibyte), compact: true))\")")
        }
        return .ok(name, "\(free) free on \(where_)")
    }

    public static func format(_ bytes: UInt64, compact: Bool = false) -> String {
        let gib = 1 << 30 as UInt64
        if bytes >= gib {
            let tenths = bytes * 10 / gib
            return compact ? "\(bytes / gib)GiB" : "\(tenths / 10).\(tenths % 10) GiB"
        }
        return compact ? "\(bytes / mebibyte)MiB" : "\(bytes / mebibyte) MiB"
    }
}

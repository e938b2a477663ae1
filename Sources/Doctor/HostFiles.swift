// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// Reads the small text files of /proc, /sys and /etc the checks look at. Every path
/// goes through `root`, so tests give a directory laid out like a Raspberry Pi's and
/// the real command gives "/".
public struct HostFiles: Sendable {
    public var root: String

    public init(root: String = "/") {
        self.root = root.hasSuffix("/") ? String(root.dropLast()) : root
    }

    public func path(_ absolute: String) -> String { root + absolute }

    /// The whole file, or nil when it cannot be read. NULs (device-tree strings) end it.
    public func read(_ absolute: String) -> String? {
        guard var bytes = readRaw(absolute) else { return nil }
        if let nul = bytes.firstIndex(of: 0) { bytes.removeSubrange(nul...) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A file's bytes as they are (/proc/PID/cmdline is NUL-separated), or nil when it
    /// cannot be read.
    public func readRaw(_ absolute: String) -> [UInt8]? {
        guard let f = fopen(path(absolute), "r") else { return nil }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buf, 1, buf.count, f)
            if n <= 0 { break }
            bytes.append(contentsOf: buf[0..<n])
        }
        if ferror(f) != 0 { return nil }
        return bytes
    }

    /// The first line without its newline and surrounding blanks.
    public func readLine(_ absolute: String) -> String? {
        guard let text = read(absolute) else { return nil }
        let first = text.split(separator: "\n", omittingEmptySubsequences: false).first ?? ""
        return String(first).trimmed()
    }

    /// Entry names of a directory, sorted, without "." and "..".
    public func list(_ absolute: String) -> [String] {
        guard let d = opendir(path(absolute)) else { return [] }
        defer { closedir(d) }
        var names: [String] = []
        while let entry = readdir(d) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    public func exists(_ absolute: String) -> Bool { access(path(absolute), F_OK) == 0 }

    public func isDirectory(_ absolute: String) -> Bool {
        var st = stat()
        return stat(path(absolute), &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Where a symlink chain ends, relative to `root` (sysfs class entries point into
    /// /sys/devices, and the device path tells USB from UART).
    public func resolved(_ absolute: String) -> String? {
        guard let real = realpath(path(absolute), nil) else { return nil }
        defer { free(real) }
        let full = String(cString: real)
        if root.isEmpty { return full }
        var rootReal = root
        if let r = realpath(root, nil) { rootReal = String(cString: r); free(r) }
        return full.hasPrefix(rootReal) ? String(full.dropFirst(rootReal.count)) : full
    }
}

extension StringProtocol {
    func trimmed() -> String {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" || c == "\r" || c == "\n" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" || c == "\r" || c == "\n" { s.removeLast() }
        return String(s)
    }
}

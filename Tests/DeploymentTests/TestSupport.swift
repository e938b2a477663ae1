// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Glibc

/// Paths and process helpers for tests that drive the system's own tools.
enum Support {
    /// The checkout this test was built from (Tests/DeploymentTests/ is two levels down).
    static let projectRoot: String = {
        let parts = #filePath.split(separator: "/").dropLast(3)
        return "/" + parts.joined(separator: "/")
    }()

    static var blegateBinary: String { BlegateBinary.path }

    static func hasTool(_ name: String) -> Bool {
        ["/usr/bin", "/bin", "/usr/sbin", "/sbin"].contains { access("\($0)/\(name)", X_OK) == 0 }
    }

    static func quote(_ s: String) -> String { "'" + s.replacing("'", with: "'\\''") + "'" }

    /// Runs a shell command line, stderr merged into stdout, on a Dispatch thread (so
    /// the cooperative pool, which other suites share, is never blocked).
    static func shell(_ command: String) async -> (out: String, status: Int32) {
        await BlegateTestSupport.shell("(" + command + ") 2>&1")
    }

    /// The blocking form, for static facts read once (a tool's `--help`).
    static func shellSync(_ command: String) -> (out: String, status: Int32) {
        BlegateTestSupport.shellBlocking("(" + command + ") 2>&1")
    }

    static func read(_ path: String) -> String? {
        guard let f = fopen(path, "r") else { return nil }
        defer { fclose(f) }
        var out = ""
        var buf = [CChar](repeating: 0, count: 8192)
        while fgets(&buf, Int32(buf.count), f) != nil {
            out += String(decoding: buf[0..<strlen(buf)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return out
    }

    static func write(_ path: String, _ text: String) {
        guard let f = fopen(path, "w") else { return }
        fputs(text, f)
        fclose(f)
    }

    static func makeTempDirectory(_ prefix: String) -> String {
        var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
        guard let p = mkdtemp(&template) else { return "/tmp" }
        return String(cString: p)
    }

    static func removeTree(_ path: String) {
        guard path.hasPrefix("/tmp/") else { return }
        _ = shellSync("rm -rf " + quote(path))
    }

    struct FileInfo { var mode: UInt32; var uid: UInt32; var gid: UInt32; var isLink: Bool }

    static func info(_ path: String) -> FileInfo? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return FileInfo(mode: st.st_mode & 0o7777, uid: st.st_uid, gid: st.st_gid, isLink: (st.st_mode & S_IFMT) == S_IFLNK)
    }

    static func linkTarget(_ path: String) -> String? {
        var buf = [CChar](repeating: 0, count: 4096)
        let n = readlink(path, &buf, buf.count - 1)
        guard n >= 0 else { return nil }
        return String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

// SPDX-License-Identifier: MIT
import SystemSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("File paths on POSIX calls")
struct FilePathsTests {
    @Test("parent and join")
    func parentAndJoin() {
        #expect(FilePaths.parent("/run/blegate/status.sock") == "/run/blegate")
        #expect(FilePaths.parent("/run/blegate//status.sock") == "/run/blegate")
        #expect(FilePaths.parent("/run/blegate/") == "/run")
        #expect(FilePaths.parent("/status.sock") == "/")
        #expect(FilePaths.parent("status.sock") == "")
        #expect(FilePaths.join("/var/lib/blegate", "link-limits.json") == "/var/lib/blegate/link-limits.json")
        #expect(FilePaths.join("/var/lib/blegate/", "x") == "/var/lib/blegate/x")
        #expect(FilePaths.join("", "x") == "x")
    }

    @Test("makeDirectories: parents made; the umask narrows the mode unless exactMode; a file in the way is named")
    func makeDirectories() throws {
        var template = Array("/tmp/blegate-paths-XXXXXX".utf8CString)
        let root = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }.map { String(cString: $0) })
        defer { _ = system("rm -rf '\(root)'") }
        let old = umask(0o077)
        defer { umask(old) }

        #expect(FilePaths.makeDirectories(root + "/a/b/c", mode: 0o755) == nil)
        #expect(FilePaths.isDirectory(root + "/a/b/c"))
        #expect(mode(root + "/a/b/c") == 0o700)
        #expect(FilePaths.makeDirectories(root + "/s/t", mode: 0o755, exactMode: true) == nil)
        #expect(mode(root + "/s") == 0o755 && mode(root + "/s/t") == 0o755)
        #expect(FilePaths.makeDirectories(root + "/a/b/c", mode: 0o755) == nil)

        let file = root + "/f"
        close(open(file, O_CREAT | O_WRONLY, 0o600))
        #expect(FilePaths.size(file) == 0)
        #expect(FilePaths.size(root + "/none") == nil)
        #expect(FilePaths.makeDirectories(file, mode: 0o755) == "\(file) exists and is not a directory")
        #expect(FilePaths.makeDirectories(file + "/d", mode: 0o755) != nil)
    }

    private func mode(_ path: String) -> mode_t {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o777 : 0
    }
}

// SPDX-License-Identifier: MIT
import SystemPackage
import SystemSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("File paths on POSIX calls")
struct FilePathsTests {
    @Test("FilePath splits and joins as the gateway's directories need")
    func parentAndJoin() {
        #expect(FilePath("/run/blegate/status.sock").removingLastComponent().string == "/run/blegate")
        #expect(FilePath("/run/blegate//status.sock").removingLastComponent().string == "/run/blegate")
        #expect(FilePath("/run/blegate/").removingLastComponent().string == "/run")
        #expect(FilePath("/status.sock").removingLastComponent().string == "/")
        #expect(FilePath("status.sock").removingLastComponent().string == "")
        #expect(FilePath("/var/lib/blegate").appending("link-limits.json").string == "/var/lib/blegate/link-limits.json")
        #expect(FilePath("/var/lib/blegate/").appending("x").string == "/var/lib/blegate/x")
        #expect(FilePath("").appending("x").string == "x")
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

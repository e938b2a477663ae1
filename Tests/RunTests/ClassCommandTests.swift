// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `blegate class` with no gateway to talk to.
@Suite("blegate class without a running gateway")
struct ClassCommandTests {
    static let commands = ["class", "class --json", "class start --name \"Spin 07:00\" --type cycle", "class stop"]

    @Test("no socket file, or one a dead gateway left behind: every class command says the gateway is not running and exits 1")
    func noGateway() async throws {
        let f = try RunFixture()
        try f.writeConfig(backendURL: nil)
        for stale in [false, true] {
            if stale {
                try Self.leaveSocket(f.socketPath)
                #expect(access(f.socketPath, F_OK) == 0, "the socket file exists")
            }
            for command in Self.commands {
                let r = await f.cli(command)
                #expect(r.status == 1, "\(command) (stale socket: \(stale)) exited \(r.status): \(r.out)")
                #expect(r.out.contains("the gateway is not running") && r.out.contains(f.socketPath) && r.out.contains("blegate run"),
                        "\(command) (stale socket: \(stale)): \(r.out)")
                #expect(!r.out.contains("started") && !r.out.contains("stopped") && !r.out.contains("no class is running"))
            }
        }
    }

    /// A Unix socket bound at `path` and closed without listening: the file a gateway that
    /// was killed leaves behind, on which a connect is refused.
    static func leaveSocket(_ path: String) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw TestSupportError("socket path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw TestSupportError("bind \(path): \(String(cString: strerror(errno)))") }
    }
}

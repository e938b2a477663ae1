// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Foundation
import Testing
import TestBackend
#if canImport(Glibc)
import Glibc
#endif

/// The status socket as a shared machine meets it: other users of the socket's group and
/// clients that connect and say nothing.
@Suite("The status socket: who may change the gateway, and slow clients", .serialized)
struct StatusSocketTests {
    @Test("a user other than root or the gateway's may read the status but not pair or run classes",
          .enabled(if: getuid() == 0, "needs root to act as another user"), .timeLimit(.minutes(3)))
    func unprivilegedChangesAreRefused() async throws {
        try await withSimulator({ c in
            c.straps = 1
            c.seed = 2
        }) { bus, sim in
            let f = try RunFixture()
            try f.writeConfig(backendURL: nil)
            let run = try await f.run(bus: bus.address)
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")
            // Let "nobody" reach the socket, as a member of its group would.
            chmod(f.dir, 0o755)
            chmod(f.socketPath, 0o666)
            let nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups"
            let config = f.dir + "/blegate.toml"
            chmod(config, 0o644)
            let status = await shell("\(nobody) \(f.blegate) status --json --config '\(config)' 2>&1")
            #expect(status.status == 0 && status.out.contains("\"source\":\"service\""), "\(status.out)")
            let start = await shell("\(nobody) \(f.blegate) class start --name Spin --config '\(config)' 2>&1")
            #expect(start.status == 2 && start.out.contains("only root or the gateway's own user"), "\(start.out)")
            #expect(await f.cli("class").out.contains("no class is running"), "nothing changed")
            let asks = "{\"command\":\"pair\",\"address\":\"\(sim.devices[0].address)\",\"client_id\":\"intruder\"}"
            let script = "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode()+b'\\n'); print(s.makefile().readline())"
            let pair = await shell("\(nobody) /usr/bin/python3 -c \"\(script)\" '\(f.socketPath)' '\(asks)' 2>&1")
            #expect(pair.out.contains("\"code\":\"forbidden\""), "\(pair.out)")
            // Root (the gateway's own user here) may.
            #expect(await f.cli("class start --name Spin").status == 0)
            #expect(run.stdout.contains("a change refused to an unprivileged client") || run.stderr.contains("a change refused to an unprivileged client"))
            run.signal(SIGTERM)
            _ = await run.wait(timeout: 30)
        }
    }

    @Test("300 clients that connect and say nothing, and 100 that send half a line: status still answers, sync goes on", .timeLimit(.minutes(3)))
    func slowClients() async throws {
        let backend = try TestBackend(.init(token: RunFixture.token))
        try await backend.start()
        defer { Task { await backend.stop() } }
        try await withSimulator({ c in
            c.straps = 2
            c.seed = 4
            c.rate = 2
        }) { bus, _ in
            let f = try RunFixture()
            try f.writeConfig(backendURL: backend.baseURL, backendExtra: "interval = \"1s\"")
            let run = try await f.run(bus: bus.address)
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")
            #expect(await run.waitForStdout("] connected ", count: 2, timeout: 90))
            var held: [Int32] = []
            defer { held.forEach { close($0) } }
            for i in 0..<400 {
                let fd = try Self.connect(f.socketPath)
                if i >= 300 { _ = "{\"command\":\"sta".withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) } }
                held.append(fd)
            }
            let before = backend.store.records.count
            for _ in 0..<5 {
                let started = ContinuousClock.now
                let status = await shell("\(f.blegate) status --json --config '\(f.configPath)' 2>&1")
                let took = ContinuousClock.now - started
                #expect(status.status == 0 && status.out.contains("\"source\":\"service\""), "\(status.out.prefix(300))")
                print("status with 400 slow clients held: \(took)")
            }
            #expect(await backend.waitForRecords(before + 20, timeout: .seconds(30)), "sync goes on while slow clients hold the socket")
            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 30) == 0)
        }
    }

    static func connect(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in path.utf8.enumerated() { raw[i] = b }
        }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            close(fd)
            throw TestSupportError("connect \(path): \(String(cString: strerror(errno)))")
        }
        return fd
    }
}

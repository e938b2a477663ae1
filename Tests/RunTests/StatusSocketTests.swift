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

    @Test("300 slow clients for the whole stretch (silent or half a line, each replaced as soon as it is shed) and a burst past the bound: status answers within 1 s, the gateway holds at most 512, sync goes on",
          .timeLimit(.minutes(3)))
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
            let sockets = Self.socketCount(run.pid)

            // The crowd: 200 silent clients and 100 that send half a line, each replaced at
            // once when the gateway sheds it (after its 2 s read deadline), for the whole stretch.
            let crowd = SlowCrowd(path: f.socketPath, silent: 200, halfLine: 100)
            defer { crowd.stop() }
            #expect(await eventually(timeout: 30) { crowd.held >= 300 }, "the crowd connected: \(crowd.held)")
            let poller = StatusPoller(socket: f.socketPath, pid: run.pid)
            poller.start()
            let shedBefore = crowd.replaced
            let before = backend.store.records.count
            // The stretch: until every slow client was shed and replaced twice over and the
            // backend took 20 more records (2 straps at 2 Hz: about 5 s of them).
            let stretch = await eventually(timeout: 90) {
                crowd.replaced >= shedBefore + 600 && backend.store.records.count >= before + 20
            }
            #expect(stretch, "replaced \(crowd.replaced - shedBefore) slow clients, backend took \(backend.store.records.count - before) records")
            let cli = await f.cli("status --json")
            #expect(cli.status == 0 && cli.out.contains("\"source\":\"service\""), "\(cli.out.prefix(300))")

            // A burst past the bound: 700 more connections on top of the crowd. The gateway
            // holds at most 512 clients (the oldest silent one makes room for each newcomer).
            var burst: [Int32] = []
            defer { burst.forEach { close($0) } }
            let opening = ContinuousClock.now
            while burst.count < 700, ContinuousClock.now - opening < .seconds(10) {
                if let fd = SlowCrowd.open(f.socketPath) { burst.append(fd) } else { try await Task.sleep(for: .milliseconds(1)) }
            }
            var most = 0
            for _ in 0..<40 {
                most = max(most, Self.socketCount(run.pid) - sockets)
                try await Task.sleep(for: .milliseconds(25))
            }
            #expect(burst.count == 700, "opened \(burst.count) of 700")
            #expect(most <= StatusServerBound.connections + 8, "the gateway held \(most) more sockets than before the crowd")
            #expect(most >= StatusServerBound.connections - 100, "the burst reached the bound: \(most) more sockets held")
            // Status is still answered with the burst held (the poller asks every 250 ms).
            let answeredBefore = poller.answers.count
            #expect(await eventually(timeout: 30) { poller.answers.count >= answeredBefore + 3 || !poller.failures.isEmpty },
                    "status answers while the burst is held")
            poller.stop()
            crowd.stop()

            let answers = poller.answers
            let slowest = answers.map(\.seconds).max() ?? .infinity
            #expect(answers.count >= 10 && poller.failures.isEmpty, "\(answers.count) answers, failures: \(poller.failures)")
            #expect(slowest < 1, "the slowest status answer took \(slowest) s")
            print("""
                slow clients: \(crowd.replaced - shedBefore) shed and replaced, \(backend.store.records.count - before) records synced meanwhile; \
                status: \(answers.count) answers, slowest \(String(format: "%.3f", slowest)) s; burst of \(burst.count): at most \(most) client sockets held
                """)
            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 30) == 0)
        }
    }

    /// Sockets the process holds (`/proc/PID/fd` links to `socket:`).
    static func socketCount(_ pid: Int32) -> Int {
        guard let dir = opendir("/proc/\(pid)/fd") else { return 0 }
        defer { closedir(dir) }
        var count = 0
        var target = [CChar](repeating: 0, count: 64)
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            guard name != ".", name != ".." else { continue }
            let n = readlink("/proc/\(pid)/fd/\(name)", &target, target.count - 1)
            if n > 7, String(decoding: target[0..<7].map { UInt8(bitPattern: $0) }, as: UTF8.self) == "socket:" { count += 1 }
        }
        return count
    }
}

/// The status server's connection bound (docs/status.md).
enum StatusServerBound {
    static let connections = 512
}

/// Clients that connect to the status socket and never finish a request: `silent` say
/// nothing, `halfLine` send half a line. One thread holds them all with poll(2); each one
/// the gateway sheds (closes) is replaced at once, so the load lasts as long as the crowd.
final class SlowCrowd: @unchecked Sendable {
    let path: String
    private let lock = NSLock()
    private var stopped = false
    private var _held = 0
    private var _replaced = 0
    private var thread: Thread?

    init(path: String, silent: Int, halfLine: Int) {
        self.path = path
        let t = Thread { [self] in run(kinds: Array(repeating: false, count: silent) + Array(repeating: true, count: halfLine)) }
        thread = t
        t.start()
    }

    /// Connections open now.
    var held: Int { lock.withLock { _held } }
    /// Connections the gateway closed and the crowd opened again.
    var replaced: Int { lock.withLock { _replaced } }

    func stop() {
        lock.withLock { stopped = true }
        while thread?.isFinished == false { Thread.sleep(forTimeInterval: 0.02) }
    }

    /// A non-blocking connection (a full backlog fails it instead of blocking), or nil.
    static func open(_ path: String) -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
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
            return nil
        }
        return fd
    }

    private func run(kinds: [Bool]) {
        var fds = [Int32](repeating: -1, count: kinds.count)
        var first = [Bool](repeating: true, count: kinds.count)
        var scratch = [UInt8](repeating: 0, count: 256)
        while !lock.withLock({ stopped }) {
            // (Re)connect every empty slot; a half-line client sends its half at once.
            for i in fds.indices where fds[i] < 0 {
                guard let fd = Self.open(path) else { break }
                if kinds[i] { _ = "{\"command\":\"sta".withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) } }
                fds[i] = fd
                if !first[i] { lock.withLock { _replaced += 1 } }
                first[i] = false
            }
            lock.withLock { _held = fds.filter { $0 >= 0 }.count }
            var polled = fds.filter { $0 >= 0 }.map { pollfd(fd: $0, events: Int16(POLLIN) | 0x2000, revents: 0) }
            guard poll(&polled, nfds_t(polled.count), 50) > 0 else { continue }
            let closed = Set(polled.filter { p in
                guard p.revents != 0 else { return false }
                // The gateway never answers these: readable means closed (or an error line before closing).
                return recv(p.fd, &scratch, scratch.count, Int32(MSG_DONTWAIT)) <= 0 || p.revents & (Int16(POLLHUP) | 0x2000) != 0
            }.map(\.fd))
            for i in fds.indices where closed.contains(fds[i]) {
                close(fds[i])
                fds[i] = -1
            }
        }
        for fd in fds where fd >= 0 { close(fd) }
        lock.withLock { _held = 0 }
    }
}

// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `blegate run` under a stand-in for systemd: a datagram socket in NOTIFY_SOCKET, and
/// WATCHDOG_USEC as `WatchdogSec=2s` would set it.
@Suite("systemd notification and watchdog", .serialized)
struct WatchdogTests {
    /// Collects what the gateway sends to its notify socket.
    final class NotifyListener: @unchecked Sendable {
        let path: String
        let fd: Int32
        let received = Mutex<[String]>([])

        init(_ path: String) throws {
            self.path = path
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var addr = sockaddr_un()
            addr.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &addr.sun_path) { raw in
                for (i, b) in path.utf8.enumerated() { raw[i] = b }
            }
            let rc = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard rc == 0 else { throw TestSupportError("bind \(path)") }
            let thread = Thread { [self] in
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    if n <= 0 { return }
                    let text = String(decoding: buffer[0..<n], as: UTF8.self)
                    received.withLock { $0.append(text) }
                }
            }
            thread.start()
        }

        func count(_ message: String) -> Int { received.withLock { $0.filter { $0 == message }.count } }

        func stop() {
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
        }
    }

    @Test("READY=1 once started, WATCHDOG=1 while every loop answers, none while the D-Bus daemon is frozen, STOPPING=1 on SIGTERM",
          .timeLimit(.minutes(3)))
    func watchdog() async throws {
        try await withSimulator({ c in
            c.straps = 1
            c.seed = 12
        }) { bus, _ in
            let f = try RunFixture()
            try f.writeConfig(backendURL: nil)
            let listener = try NotifyListener(f.dir + "/notify.sock")
            defer { listener.stop() }
            let run = try await BackgroundProcess.start(
                "NOTIFY_SOCKET='\(listener.path)' WATCHDOG_USEC=2000000 \(f.blegate) run --config '\(f.configPath)' --bus '\(bus.address)'")
            #expect(await eventually(timeout: 60) { listener.count("READY=1") == 1 }, "\(run.stdout)\n\(run.stderr)")
            #expect(await eventually(timeout: 30) { listener.count("WATCHDOG=1") >= 3 })

            // Freeze the bus daemon: the dispatcher's ping gets no answer, the watchdog goes hungry.
            let daemon = await shell("pgrep -P \(bus.pid) dbus-daemon").out.split(separator: "\n").first.flatMap { Int32($0) }
            let pid = try #require(daemon, "no dbus-daemon under \(bus.pid)")
            kill(pid, SIGSTOP)
            let hungry = await run.waitForStdout("watchdog: not fed", timeout: 30) || run.stderr.contains("watchdog: not fed")
            #expect(hungry, "\(run.stdout.suffix(2000))")
            let fedBefore = listener.count("WATCHDOG=1")
            kill(pid, SIGCONT)
            #expect(await run.waitForStdout("watchdog: every loop answers again", timeout: 30), "\(run.stdout.suffix(2000))")
            #expect(listener.count("WATCHDOG=1") - fedBefore <= 1, "fed while the daemon was frozen")
            #expect(await eventually(timeout: 30) { listener.count("WATCHDOG=1") >= fedBefore + 2 })

            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 30) == 0)
            #expect(listener.count("STOPPING=1") == 1)
        }
    }
}

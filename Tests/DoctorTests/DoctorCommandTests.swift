// SPDX-License-Identifier: MIT
import BlegateTestSupport
import DBus
import Dispatch
import Glibc
import Simulator
import Synchronization
import Testing

/// The real `blegate doctor` binary against the simulator on a private bus, and its
/// backend probe against a real HTTP server on loopback.
@Suite("blegate doctor as a command", .serialized)
struct DoctorCommandTests {
    static var binary: String { BlegateBinary.path }

    static func shell(_ command: String) async -> (out: String, status: Int32) {
        await BlegateTestSupport.shell(command)
    }

    /// The JSON object of one check, by plain string search on `--json` output.
    static func check(_ out: String, _ name: String) -> String? {
        // A check is a flat object; its keys are sorted, so "name" comes after "fix" and "message".
        guard let named = out.range(of: "\"name\":\"\(name)\"") else { return nil }
        guard let start = out[..<named.lowerBound].lastIndex(of: "{"), let end = out[named.upperBound...].firstIndex(of: "}") else { return nil }
        return String(out[start...end])
    }

    static func withSimulator(_ body: (PrivateBus, SimulatedBlueZ) async throws -> Void) async throws {
        try await withSimulatorOnPrivateBus({ c in
            c.straps = 1
            c.seed = 5
        }, body)
    }

    static func doctor(_ bus: PrivateBus, _ extra: String = "") async -> (out: String, status: Int32) {
        // A main.conf with nothing to complain about, so only the bus decides.
        let conf = "/tmp/blegate-doctor-main-\(getpid()).conf"
        if let f = fopen(conf, "w") {
            fputs("[LE]\nConnectionSupervisionTimeout = 400\n[GATT]\nCache = always\n", f)
            fclose(f)
        }
        defer { unlink(conf) }
        return await shell("'\(binary)' doctor --bus '\(bus.address)' --json --main-conf '\(conf)' --state-directory /tmp \(extra) 2>&1")
    }

    @Test("all fine: bluetoothd and a powered adapter are ok, exit 0")
    func allFine() async throws {
        try await Self.withSimulator { bus, _ in
            let (out, status) = await Self.doctor(bus)
            #expect(status == 0, "\(out)")
            #expect(Self.check(out, "bluetoothd running")?.contains("\"status\":\"ok\"") == true, "\(out)")
            let adapter = try #require(Self.check(out, "adapter hci0"), "\(out)")
            #expect(adapter.contains("\"status\":\"ok\"") && adapter.contains("powered"), "\(adapter)")
            #expect(out.contains("\"fail\":0,"), "\(out)")
        }
    }

    @Test("adapter powered off: fail with `bluetoothctl power on`, exit 1")
    func adapterOff() async throws {
        try await Self.withSimulator { bus, sim in
            try await sim.setAdapterPowered(0, false)
            let (out, status) = await Self.doctor(bus)
            #expect(status == 1, "\(out)")
            let adapter = try #require(Self.check(out, "adapter hci0"), "\(out)")
            #expect(adapter.contains("\"status\":\"fail\""), "\(adapter)")
            #expect(adapter.contains("powered off") && adapter.contains("bluetoothctl power on"), "\(adapter)")
            // Text output: the fail line and its fix line.
            let (text, _) = await Self.shell("'\(Self.binary)' doctor --bus '\(bus.address)' --state-directory /tmp 2>&1")
            #expect(text.contains("fail  adapter hci0: "), "\(text)")
            #expect(text.contains("      fix: bluetoothctl power on"), "\(text)")
        }
    }

    @Test("bluetoothd gone (no owner of org.bluez): fail with the fix, exit 1")
    func bluetoothdGone() async throws {
        try await Self.withSimulator { bus, sim in
            // The simulator's own restart: org.bluez released for 30 s.
            await sim.restartDaemon(after: 30)
            let (out, status) = await Self.doctor(bus)
            #expect(status == 1, "\(out)")
            let running = try #require(Self.check(out, "bluetoothd running"), "\(out)")
            #expect(running.contains("\"status\":\"fail\"") && running.contains("bluetoothd is not running"), "\(running)")
        }
        // And on a bus where it never was.
        let bus = try PrivateBus.start()
        defer { bus.stop() }
        let (out, status) = await Self.doctor(bus)
        #expect(status == 1, "\(out)")
        #expect(Self.check(out, "bluetoothd running")?.contains("\"status\":\"fail\"") == true, "\(out)")
    }

    @Test("backend: 200 ok with the token and a gzip body; 401 refused; nothing listening unreachable")
    func backend() async throws {
        try await Self.withSimulator { bus, _ in
            var template = Array("/tmp/blegate-doctor-token.XXXXXX".utf8CString)
            let fd = mkstemp(&template)
            let tokenPath = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            defer { unlink(tokenPath) }
            _ = "tok-123\n".withCString { write(fd, $0, 8) }
            fchmod(fd, 0o600)
            close(fd)

            for (code, expected) in [(200, "\"status\":\"ok\""), (401, "refused the token")] {
                let server = try LoopbackHTTPServer(status: code)
                defer { server.stop() }
                let (out, status) = await Self.doctor(bus, "--backend-url http://127.0.0.1:\(server.port)/ --token-file '\(tokenPath)' --gateway-id gym-test")
                let backend = try #require(Self.check(out, "backend"), "\(out)")
                #expect(backend.contains(expected), "\(backend)")
                #expect(status == (code == 200 ? 0 : 1), "\(out)")
                let request = try #require(server.requests.first, "no request reached the server: \(out)")
                #expect(request.head.hasPrefix("POST /api/v1/metrics HTTP/1.1"), "\(request.head)")
                let head = request.head.lowercased()
                #expect(head.contains("authorization: bearer tok-123"), "\(request.head)")
                #expect(head.contains("content-encoding: gzip"), "\(request.head)")
                #expect(request.body.starts(with: [0x1F, 0x8B]))
            }
            // A port nobody listens on (bound, then closed).
            let closed = try LoopbackHTTPServer(status: 200)
            let port = closed.port
            closed.stop()
            let (out, status) = await Self.doctor(bus, "--backend-url http://127.0.0.1:\(port) --token-file '\(tokenPath)' --backend-timeout 5")
            #expect(status == 1, "\(out)")
            #expect(Self.check(out, "backend")?.contains("unreachable") == true, "\(out)")
        }
    }

    @Test("bad options are refused before anything runs")
    func badOptions() async throws {
        try #require(access(Self.binary, X_OK) == 0)
        let (out, status) = await Self.shell("'\(Self.binary)' doctor --backend-url ftp://x --token-file /dev/null 2>&1")
        #expect(status != 0 && status != 1, "\(out)")
        #expect(out.contains("https://"), "\(out)")
        let (out2, status2) = await Self.shell("'\(Self.binary)' doctor --backend-url http://127.0.0.1 2>&1")
        #expect(status2 != 0 && status2 != 1, "\(out2)")
        #expect(out2.contains("--token-file"), "\(out2)")
    }
}

/// A one-request-at-a-time HTTP/1.1 server on 127.0.0.1 that answers every request
/// with a fixed status and records what it got.
final class LoopbackHTTPServer: Sendable {
    struct Request: Sendable { var head: String; var body: [UInt8] }

    let port: UInt16
    private let fd: Int32
    private let received = Mutex<[Request]>([])
    private let done = DispatchSemaphore(value: 0)

    var requests: [Request] { received.withLock { $0 } }

    init(status: Int) throws {
        let (fd, port) = try boundLoopbackSocket()
        guard listen(fd, 8) == 0 else { close(fd); throw ServerError(message: "listen: \(errno)") }
        self.fd = fd
        self.port = port
        let reason = status == 200 ? "OK" : "Unauthorized"
        let body = status == 200 ? "{\"inserted\":0,\"duplicates\":0,\"rejected\":[]}" : "{\"error\":\"bad token\"}"
        Thread.detach { [self] in
            while true {
                let client = accept(fd, nil, nil)
                if client >= 0 { _ = fcntl(client, F_SETFD, FD_CLOEXEC) }
                if client < 0 { break }
                var data: [UInt8] = []
                var buf = [UInt8](repeating: 0, count: 65536)
                var request: Request?
                while request == nil {
                    let n = read(client, &buf, buf.count)
                    if n <= 0 { break }
                    data += buf[0..<n]
                    request = Self.parse(data)
                }
                if let request {
                    self.received.withLock { $0.append(request) }
                    let response = "HTTP/1.1 \(status) \(reason)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
                    _ = response.withCString { write(client, $0, strlen($0)) }
                }
                close(client)
            }
            self.done.signal()
        }
    }

    /// The request once its head and Content-Length bytes of body are in.
    static func parse(_ data: [UInt8]) -> Request? {
        let crlf2: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, data.count - 3)).first(where: { Array(data[$0..<$0 + 4]) == crlf2 }) else { return nil }
        let head = String(decoding: data[..<end], as: UTF8.self)
        let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].filter { !$0.isWhitespace }) } ?? 0
        guard data.count >= end + 4 + length else { return nil }
        return Request(head: head, body: Array(data[(end + 4)..<(end + 4 + length)]))
    }

    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        done.wait()
    }

    struct ServerError: Error { var message: String }
}

/// A plain detached thread: the accept loop blocks, so it stays off the cooperative pool.
enum Thread {
    static func detach(_ body: @escaping @Sendable () -> Void) {
        DispatchQueue(label: "loopback-http").async(execute: body)
    }
}

extension String {
    func range(of target: String) -> Range<String.Index>? {
        var i = startIndex
        while i < endIndex {
            if self[i...].hasPrefix(target) { return i..<index(i, offsetBy: target.count) }
            i = index(after: i)
        }
        return nil
    }
}

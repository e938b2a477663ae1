// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Logging
import ServiceLifecycle
import Synchronization
import Testing
import Wall
import WearMetrics

/// The wall's HTTP server on a loopback port, asked with Python's urllib (what the
/// browser tests already need): the page, the event stream, and nothing else.
@Suite("The wall's HTTP server")
struct WallServiceTests {
    @Test("GET / is the page; /events streams frames; other paths 404, other methods 405; a taken port is reported, not fatal",
          .timeLimit(.minutes(2)))
    func server() async throws {
        let settings = WallSettings(host: "127.0.0.1", port: 0, gymName: "Test Gym")
        let board = WallBoard(settings: settings)
        let port = Mutex<Int?>(nil)
        let service = WallService(board: board, settings: settings, logger: Logger(label: "wall-test"),
                                  onListening: { p in port.withLock { $0 = p } })
        let group = ServiceGroup(configuration: .init(services: [service], gracefulShutdownSignals: [], logger: Logger(label: "wall-test")))
        let running = Task { try await group.run() }
        #expect(await eventually(timeout: 10) { port.withLock { $0 } != nil })
        let p = try #require(port.withLock { $0 })
        let base = "http://127.0.0.1:\(p)"

        func ask(_ method: String, _ path: String) async -> String {
            let code = """
                import urllib.request, urllib.error
                try:
                    r = urllib.request.urlopen(urllib.request.Request("\(base)\(path)", method="\(method)"), timeout=5)
                    print(r.status, r.headers.get("Content-Type"), r.read(200).decode(errors="replace").replace("\\n", " "))
                except urllib.error.HTTPError as e:
                    print(e.code)
                """
            return await shell("\(WallBrowserTests.python) -c '\(code)' 2>&1").out
        }
        let page = await ask("GET", "/")
        #expect(page.hasPrefix("200 text/html") && page.contains("<!doctype html>"), "\(page)")
        #expect(await ask("GET", "/config").hasPrefix("404"))
        #expect(await ask("POST", "/").hasPrefix("405"))

        // A heart rate in, a frame out, on the stream.
        board.ingest(WearMetrics(timestamp: .now, deviceID: "A0:9E:1A:00:12:34", source: "ble_hrm",
                                 metrics: KeyValueList([("hr", 141)])), isDeviceRecord: false)
        let stream = await shell("""
            \(WallBrowserTests.python) -c 'import urllib.request
            r = urllib.request.urlopen("\(base)/events", timeout=5)
            print(r.headers.get("Content-Type"))
            for line in r:
                line = line.decode()
                if line.startswith("data: ") and "A0:9E:1A:00:12:34" in line:
                    print(line); break' 2>&1
            """).out
        #expect(stream.hasPrefix("text/event-stream"), "\(stream)")
        #expect(stream.contains("\"hr\":141") && stream.contains("\"short\":\"1234\""), "\(stream)")

        // A second wall on the same port cannot listen: it says so, and takes the port
        // once the first lets it go.
        let failure = Mutex<String?>(nil)
        let secondPort = Mutex<Int?>(nil)
        let taken = WallSettings(host: "127.0.0.1", port: p, gymName: "Test Gym")
        let second = WallService(board: WallBoard(settings: taken), settings: taken, logger: Logger(label: "wall-test"),
                                 onListening: { p in secondPort.withLock { $0 = p } },
                                 onFailure: { m in failure.withLock { $0 = m } })
        let group2 = ServiceGroup(configuration: .init(services: [second], gracefulShutdownSignals: [], logger: Logger(label: "wall-test")))
        let running2 = Task { try await group2.run() }
        #expect(await eventually(timeout: 10) { failure.withLock { $0 } != nil })
        #expect(failure.withLock { $0 }?.contains("cannot listen on 127.0.0.1:\(p)") == true)
        #expect(secondPort.withLock { $0 } == nil)

        await group.triggerGracefulShutdown()
        try await running.value
        #expect(service.broadcaster.isClosed)
        #expect(await eventually(timeout: 30) { secondPort.withLock { $0 } == p }, "the second wall listens once the port is free")
        #expect(await ask("GET", "/").hasPrefix("200 text/html"))
        await group2.triggerGracefulShutdown()
        try await running2.value
    }
}

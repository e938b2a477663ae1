// SPDX-License-Identifier: MIT
import BlegateTestSupport
#if canImport(Glibc)
import Glibc
#endif
import Outbox
import Sync
import Synchronization
import TestBackend
import Timing
import WearMetrics

/// Collects an engine's events so a test can wait for a condition (generous timeouts; the
/// condition, not the clock, decides).
final class EventLog: Sendable {
    private final class Store: Sendable {
        let events = Mutex<[SyncEvent]>([])
    }

    private let store = Store()
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<SyncEvent>) {
        let store = self.store
        task = Task { for await e in stream { store.events.withLock { $0.append(e) } } }
    }

    var all: [SyncEvent] { store.events.withLock { $0 } }

    /// Waits until `condition` holds over the events so far; false after `timeout`.
    func wait(timeout: Double = 30, until condition: ([SyncEvent]) -> Bool) async -> Bool {
        await eventually(timeout: timeout, every: .milliseconds(10)) { condition(all) }
    }

    /// The engine finished a pass with nothing left: every report before it is in the log.
    func waitForCaughtUp(timeout: Double = 30) async -> Bool {
        await wait(timeout: timeout) { $0.contains { if case .caughtUp = $0 { true } else { false } } }
    }

    var reports: [SyncReport] {
        all.compactMap { if case let .delivered(r, _) = $0 { r } else { nil } }
    }
}

/// A backend, an outbox, a client and a running engine, torn down by `finish()`.
struct Harness {
    let backend: TestBackend
    let outbox: InMemoryOutbox
    let client: BackendClient
    let engine: SyncEngine
    let log: EventLog
    let run: Task<Void, any Error>

    static let token = "test-token-5f2c"

    static func start(records: [OutboxRecord] = [], backend: TestBackend? = nil, token: TokenStore = TokenStore(token: Harness.token),
                      sink: SyncSink = .wearmetrics, batchSize: Int = 100, interval: Duration = .milliseconds(200),
                      backoff: Backoff = Backoff(base: .milliseconds(50), cap: .milliseconds(400)),
                      outbox: InMemoryOutbox? = nil, clock: any Clock<Duration> = ContinuousClock()) async throws -> Harness {
        let backend = try backend ?? TestBackend(.init(token: Harness.token))
        if await !backend.isListening { try await backend.start() }
        let outbox = outbox ?? InMemoryOutbox(records)
        let client = try BackendClient(baseURL: backend.baseURL, token: token, requestTimeout: .seconds(10), connectTimeout: .seconds(2))
        let engine = SyncEngine(outbox: outbox, client: client,
                                configuration: SyncConfiguration(gatewayID: "gym-test-1", sink: sink, batchSize: batchSize,
                                                                 interval: interval, backoff: backoff),
                                clock: clock)
        let log = EventLog(engine.events())
        let run = Task { try await engine.run() }
        return Harness(backend: backend, outbox: outbox, client: client, engine: engine, log: log, run: run)
    }

    /// Waits until the outbox has nothing pending.
    func waitForCaughtUp(timeout: Double = 30) async -> Bool {
        await eventually(timeout: timeout, every: .milliseconds(10)) { await outbox.pendingCount == 0 }
    }

    func finish() async {
        await engine.stop()
        _ = try? await run.value
        try? await client.shutdown()
        await backend.stop()
    }
}

/// A private temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() {
        var template = Array("/tmp/blegate-sync-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    /// Writes `text` to `name` with `mode`, replacing any file there (a new inode, as an
    /// operator's editor or `install -m 600` would).
    @discardableResult
    func write(_ name: String, _ text: String, mode: mode_t = 0o600) -> String {
        let file = path + "/" + name
        let temporary = file + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        precondition(fd >= 0, "cannot create \(temporary)")
        _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
        fchmod(fd, mode)
        close(fd)
        rename(temporary, file)
        return file
    }

    func remove() {
        if let dir = opendir(path) {
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
                if name != "." && name != ".." { unlink(path + "/" + name) }
            }
            closedir(dir)
        }
        rmdir(path)
    }
}

/// Records per device in the order the backend stored them must be in timestamp order.
func devicesInOrder(_ records: [StoredRecord]) -> Bool {
    var last: [String: String] = [:]
    for r in records {
        if let previous = last[r.deviceID], previous >= r.timestamp { return false }
        last[r.deviceID] = r.timestamp
    }
    return true
}

/// A loopback port that refuses connections for as long as this value lives: bound but
/// never listening, so no other test's server can take it meanwhile (a port freed by a
/// stopped server can be handed to the next one that binds port 0).
final class ClosedPort: Sendable {
    let fd: Int32
    let port: UInt16

    init() throws {
        let socket = try boundLoopbackSocket()
        fd = socket.fd
        port = socket.port
    }

    var url: String { "http://127.0.0.1:\(port)" }

    deinit { close(fd) }
}

extension OutboxRecord {
    /// Changes the stored record, as a cache holding a different one would hand it out.
    mutating func change(_ body: (inout WearMetrics) -> Void) {
        body(&record)
    }
}

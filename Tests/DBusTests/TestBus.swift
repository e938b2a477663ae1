import DBus
import Testing

/// A private dbus-daemon with a serving and a client connection: every D-Bus test
/// runs against the real daemon, never a mock.
struct TestBus {
    let bus: PrivateBus
    let server: DBusConnection
    let client: DBusConnection

    static func start() async throws -> TestBus {
        let bus = try PrivateBus.start()
        let server = try await DBusConnection.connect(bus.busAddress)
        let client = try await DBusConnection.connect(bus.busAddress)
        return TestBus(bus: bus, server: server, client: client)
    }

    func stop() {
        server.close()
        client.close()
        bus.stop()
    }
}

/// Fails the test instead of hanging when an awaited event never comes.
func withTimeout<T: Sendable>(_ seconds: Double = 30, _ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        guard let first = try await group.next(), let value = first else {
            group.cancelAll()
            throw TimeoutError(what: what)
        }
        group.cancelAll()
        return value
    }
}

struct TimeoutError: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// The next signal of a stream, or a failure after `seconds`.
func nextSignal(_ stream: DBusSignalStream, _ what: String, seconds: Double = 30) async throws -> DBusSignal {
    try await withTimeout(seconds, what) {
        for await s in stream { return s }
        throw TimeoutError(what: what + " (stream ended)")
    }
}

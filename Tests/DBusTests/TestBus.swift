import BlegateTestSupport
import DBus
import Testing

/// A private dbus-daemon with a serving and a client connection: every D-Bus test
/// runs against the real daemon, never a mock.
struct TestBus {
    let bus: PrivateBus
    let server: DBusConnection
    let client: DBusConnection

    /// `gatherSignals`: the client connection's signal gathering window.
    static func start(gatherSignals: Duration = .zero) async throws -> TestBus {
        let bus = try PrivateBus.start()
        let server = try await DBusConnection.connect(bus.busAddress)
        let client = try await DBusConnection.connect(bus.busAddress, gatherSignals: gatherSignals)
        return TestBus(bus: bus, server: server, client: client)
    }

    func stop() {
        server.close()
        client.close()
        bus.stop()
    }
}

/// The next signal of a stream, or a failure after `seconds`.
func nextSignal(_ stream: DBusSignalStream, _ what: String, seconds: Double = 30) async throws -> DBusSignal {
    try await withTimeout(seconds, what) {
        for await s in stream { return s }
        throw TestSupportError("\(what): the stream ended")
    }
}

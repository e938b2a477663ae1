import BlegateTestSupport
import DBus
import Testing

@Suite("Error replies become typed DBusErrors")
struct ErrorMappingTests {
    @Test("a peer's error name and message are carried, known or not")
    func peerErrors() async throws {
        let t = try await TestBus.start()
        defer { t.stop() }
        let server = DBusObjectServer(connection: t.server)
        try server.add("/test", [DBusInterface("org.blegate.Test1", methods: [
            DBusMethod("Busy") { _ in throw DBusError(name: "org.bluez.Error.InProgress", message: "Operation already in progress") },
            DBusMethod("Weird") { _ in throw DBusError(name: "com.example.Never.Heard.Of", message: "strange") },
            DBusMethod("Plain") { _ in throw CancellationError() },
            DBusMethod("Slow") { _ in
                try await Task.sleep(for: .seconds(30))
                return []
            },
        ])])
        let dest = t.server.uniqueName

        do throws(DBusError) {
            try await t.client.call(destination: dest, path: "/test", interface: "org.blegate.Test1", member: "Busy")
            Issue.record("Busy did not throw")
        } catch {
            #expect(error.name == "org.bluez.Error.InProgress")
            #expect(error.message == "Operation already in progress")
        }
        do throws(DBusError) {
            try await t.client.call(destination: dest, path: "/test", interface: "org.blegate.Test1", member: "Weird")
            Issue.record("Weird did not throw")
        } catch {
            #expect(error.name == "com.example.Never.Heard.Of")
            #expect(error.message == "strange")
        }
        do throws(DBusError) {
            try await t.client.call(destination: dest, path: "/test", interface: "org.blegate.Test1", member: "Plain")
            Issue.record("Plain did not throw")
        } catch {
            #expect(error.is(.failed))
        }
        do throws(DBusError) {
            try await t.client.call(destination: dest, path: "/test", interface: "org.blegate.Test1", member: "Missing")
            Issue.record("Missing did not throw")
        } catch {
            #expect(error.is(.unknownMethod))
        }
        do throws(DBusError) {
            try await t.client.call(destination: dest, path: "/nothing/here", interface: "org.blegate.Test1", member: "Busy")
            Issue.record("unknown object did not throw")
        } catch {
            #expect(error.is(.unknownObject))
        }
        do throws(DBusError) {
            try await t.client.call(destination: dest, path: "/test", interface: "org.blegate.Test1", member: "Busy", [.int32(1)])
            Issue.record("wrong signature did not throw")
        } catch {
            #expect(error.is(.invalidArgs))
        }
        do throws(DBusError) {
            try await t.client.call(destination: "org.bluez", path: "/", interface: "org.bluez.Adapter1", member: "StartDiscovery")
            Issue.record("absent service did not throw")
        } catch {
            #expect(error.is(.serviceUnknown))
        }
        do throws(DBusError) {
            try await t.client.call(destination: dest, path: "/test", interface: "org.blegate.Test1", member: "Slow", timeout: .milliseconds(200))
            Issue.record("Slow did not time out")
        } catch {
            #expect(error.is(.noReply))
        }
    }

    @Test("a cancelled call ends with NoReply and leaves the connection usable")
    func cancellation() async throws {
        let t = try await TestBus.start()
        defer { t.stop() }
        // The server says when the call reached it, so the cancel hits a call in flight.
        let started = AsyncStream<Void>.makeStream()
        let server = DBusObjectServer(connection: t.server)
        try server.add("/test", [DBusInterface("org.blegate.Test1", methods: [
            DBusMethod("Slow") { _ in
                started.continuation.yield()
                try await Task.sleep(for: .seconds(60))
                return []
            },
            DBusMethod("Fast", out: [DBusArgument("x", "u")]) { _ in [.uint32(42)] },
        ])])
        let client = t.client
        let dest = t.server.uniqueName
        let task = Task {
            try await client.call(destination: dest, path: "/test", interface: "org.blegate.Test1", member: "Slow", timeout: .seconds(120))
        }
        try await withTimeout(30, "the Slow call at the server") { for await _ in started.stream { return } }
        task.cancel()
        let result = await task.result
        #expect(throws: DBusError.self) { try result.get() }
        let fast = try await client.call(destination: dest, path: "/test", interface: "org.blegate.Test1", member: "Fast")
        #expect(fast == [.uint32(42)])
    }

    @Test("losing the bus fails pending calls with Disconnected and is reported, the process lives on")
    func disconnect() async throws {
        let t = try await TestBus.start()
        let started = AsyncStream<Void>.makeStream()
        let server = DBusObjectServer(connection: t.server)
        try server.add("/test", [DBusInterface("org.blegate.Test1", methods: [
            DBusMethod("Slow") { _ in
                started.continuation.yield()
                try await Task.sleep(for: .seconds(60))
                return []
            },
        ])])
        let client = t.client
        let dest = t.server.uniqueName
        let pending = Task {
            try await client.call(destination: dest, path: "/test", interface: "org.blegate.Test1", member: "Slow", timeout: .seconds(120))
        }
        let signals = try await client.signals(matching: DBusMatchRule(interface: "org.blegate.Never"))
        try await withTimeout(30, "the Slow call at the server") { for await _ in started.stream { return } }
        t.bus.stop()  // the daemon goes away under both connections
        let reason = try await withTimeout(30, "disconnect report") { await client.disconnected() }
        #expect(!reason.isEmpty)
        #expect(!client.isConnected)
        let result = await pending.result
        do {
            _ = try result.get()
            Issue.record("pending call survived the bus")
        } catch {
            #expect((error as? DBusError)?.is(.disconnected) == true)
        }
        // Streams end instead of hanging.
        let ended = try await withTimeout(30, "stream end") {
            for await _ in signals {}
            return true
        }
        #expect(ended)
        await #expect(throws: DBusError.self) {
            try await client.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetId")
        }
        t.server.close()
    }
}

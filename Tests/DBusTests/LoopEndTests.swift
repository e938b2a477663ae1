// SPDX-License-Identifier: MIT
import BlegateTestSupport
@testable import DBus
import Synchronization
import Testing

/// Once a connection's dispatcher has ended (the bus went away, or `close`), whatever is
/// still handed to it is answered at once: a call that passed the connected check just
/// before the end would otherwise wait for its reply forever, and with it whatever awaits
/// the call (a gateway's shutdown, for one).
@Suite("A dispatcher that has ended")
struct LoopEndTests {
    @Test("a call handed over after the end fails as disconnected, and a flush returns")
    func commandsAfterEnd() async throws {
        let bus = try PrivateBus.start()
        defer { bus.stop() }
        let connection = try await DBusConnection.connect(bus.busAddress)
        connection.close()
        _ = try await withTimeout(30, "the end of the connection") { await connection.disconnected() }
        // Past the connected check, as a call is when the bus goes away between its check
        // and its send.
        let loop = connection.loop
        let message = try OutgoingMessage.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                     interface: "org.freedesktop.DBus.Peer", member: "Ping", body: [])
        // Answered, or given up after 30 s: a continuation nobody resumes cannot be
        // cancelled, so the test resumes it itself rather than hang.
        let answer: Result<DBusMessage, DBusError>? = await withCheckedContinuation { cont in
            let once = Once(cont)
            loop.submit(.send(message, pending: EventLoop.PendingCall(id: 1, deadline: .max) { once.resume($0) }))
            Task { try? await Task.sleep(for: .seconds(30)); once.resume(nil) }
        }
        guard case .failure(let error)? = answer else {
            Issue.record("the late call: \(answer.map { "\($0)" } ?? "no answer in 30 s")")
            return
        }
        #expect(error.is(.disconnected), "\(error)")
        let flushed: Bool = await withCheckedContinuation { cont in
            let once = Once(cont)
            loop.submit(.flush { once.resume(true) })
            Task { try? await Task.sleep(for: .seconds(30)); once.resume(false) }
        }
        #expect(flushed, "the late flush returned")
    }
}

/// Resumes a continuation once, whoever comes first.
final class Once<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<T, Never>?>
    init(_ c: CheckedContinuation<T, Never>) { continuation = Mutex(c) }
    func resume(_ value: T) {
        continuation.withLock { c in
            c?.resume(returning: value)
            c = nil
        }
    }
}

import BlueZ
import DBus
import Simulator
import Synchronization
import Testing

/// A private dbus-daemon, the simulator on it, a client connection that drives the
/// simulator as the gateway would, and a started mirror on a connection of its own
/// (so its match rules can be counted alone).
struct MirrorHarness {
    let bus: PrivateBus
    let sim: SimulatedBlueZ
    let client: DBusConnection
    let mirrorConnection: DBusConnection
    let mirror: BlueZMirror
    let recorder: EventRecorder

    static let adapter: DBusObjectPath = "/org/bluez/hci0"

    func call(_ path: DBusObjectPath, _ interface: String, _ member: String, _ args: [DBusValue] = [],
              destination: String = "org.bluez") async throws(DBusError) -> [DBusValue] {
        try await client.call(destination: destination, path: path, interface: interface, member: member, args, timeout: .seconds(30))
    }

    /// StartDiscovery, then wait (on the mirror) until `count` devices exist.
    func discover(count: Int) async throws -> [Device] {
        _ = try await call(Self.adapter, "org.bluez.Adapter1", "StartDiscovery")
        return try await mirror.waitFor(timeout: .seconds(60)) { s in
            let devices = s.devices(on: Self.adapter)
            return devices.count >= count ? devices : nil
        }
    }

    /// The match rules the mirror's connection holds on the bus, from the daemon's
    /// Debug.Stats interface; nil when the daemon was built without it.
    func mirrorMatchRules() async -> Int? {
        guard let name = mirrorConnection.uniqueName,
              let reply = try? await client.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                 interface: "org.freedesktop.DBus.Debug.Stats", member: "GetConnectionStats",
                                                 [.string(name)]) else { return nil }
        return reply.first?.stringKeyedValue?["MatchRules"]?.integerValue.map { Int($0) }
    }
}

/// Runs `body` against a fresh simulator and mirror and always tears everything down.
func withMirror(_ configure: (inout SimulatorConfiguration) -> Void = { _ in },
                _ body: (MirrorHarness) async throws -> Void) async throws {
    var config = SimulatorConfiguration()
    config.straps = 3
    config.rate = 20
    config.serviceDiscoveryDelay = 10...40
    configure(&config)
    let bus = try PrivateBus.start()
    let sim = try SimulatedBlueZ(configuration: config, bus: bus.busAddress)
    var connections: [DBusConnection] = []
    var mirror: BlueZMirror?
    do {
        try await sim.start()
        let client = try await DBusConnection.connect(bus.busAddress)
        connections.append(client)
        let mirrorConnection = try await DBusConnection.connect(bus.busAddress)
        connections.append(mirrorConnection)
        let m = BlueZMirror(connection: mirrorConnection)
        mirror = m
        let recorder = EventRecorder(m.events())
        try await m.start()
        try await body(MirrorHarness(bus: bus, sim: sim, client: client, mirrorConnection: mirrorConnection, mirror: m, recorder: recorder))
    } catch {
        mirror?.stop()
        await sim.stop()
        for c in connections { c.close() }
        bus.stop()
        throw error
    }
    mirror?.stop()
    await sim.stop()
    for c in connections { c.close() }
    bus.stop()
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// Keeps every event of a mirror and lets a test wait for one, without polling.
final class EventRecorder: Sendable {
    private struct Waiter {
        let id: Int
        let predicate: @Sendable (BlueZEvent) -> Bool
        let continuation: CheckedContinuation<BlueZEvent?, Never>
    }

    private struct State {
        var events: [BlueZEvent] = []
        var waiters: [Waiter] = []
        var nextID = 0
    }

    private let state = Mutex(State())
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(_ stream: AsyncStream<BlueZEvent>) {
        let t = Task { [weak self] in
            for await event in stream {
                guard let self else { return }
                self.append(event)
            }
        }
        task.withLock { $0 = t }
    }

    deinit { task.withLock { $0?.cancel() } }

    var events: [BlueZEvent] { state.withLock { $0.events } }

    private func append(_ event: BlueZEvent) {
        let ready = state.withLock { s -> [Waiter] in
            s.events.append(event)
            let ready = s.waiters.filter { $0.predicate(event) }
            s.waiters.removeAll { $0.predicate(event) }
            return ready
        }
        for w in ready { w.continuation.resume(returning: event) }
    }

    /// How many events were recorded so far: a mark for `next(after:)`.
    var count: Int { state.withLock { $0.events.count } }

    /// The first event at or after index `mark` that satisfies `predicate` (already
    /// recorded or still to come); fails after `seconds`.
    func next(after mark: Int, _ what: String, seconds: Double = 60,
              where predicate: @escaping @Sendable (BlueZEvent) -> Bool) async throws -> BlueZEvent {
        if let found = state.withLock({ s in s.events.dropFirst(mark).first(where: predicate) }) { return found }
        let id = state.withLock { s in
            s.nextID += 1
            return s.nextID
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: .seconds(seconds))
            guard !Task.isCancelled, let self else { return }
            let w = self.state.withLock { s -> Waiter? in
                guard let i = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return s.waiters.remove(at: i)
            }
            w?.continuation.resume(returning: nil)
        }
        defer { timer.cancel() }
        let event = await withCheckedContinuation { (cont: CheckedContinuation<BlueZEvent?, Never>) in
            let found = state.withLock { s -> BlueZEvent? in
                if let e = s.events.dropFirst(mark).first(where: predicate) { return e }
                s.waiters.append(Waiter(id: id, predicate: predicate, continuation: cont))
                return nil
            }
            if let found { cont.resume(returning: found) }
        }
        guard let event else { throw TestFailure("timed out waiting for \(what)") }
        return event
    }
}

// SPDX-License-Identifier: MIT
import DBus
import LinkPolicy

/// One adapter's shared resources: its connect turn (one Connect at a time: controllers
/// handle one LE create-connection at a time, and a second one makes BlueZ answer
/// "in progress"), its discovery session (paused during a connect, because scanning while
/// a link is being set up is the most common cause of `le-connection-abort-by-local`), and
/// its connection slots.
actor AdapterController {
    let path: DBusObjectPath
    let name: String
    private let connection: DBusConnection
    private let events: @Sendable (LinkEvent) -> Void

    private(set) var slots: ConnectionSlots
    private var busy = false
    private var queue: [CheckedContinuation<Void, Never>] = []
    /// Someone needs discovery (a wanted device not streaming, or auto mode).
    private var wanted = false
    /// Our discovery session is running on bluetoothd.
    private var active = false
    private var filterSet = false
    private(set) var health: AdapterHealth

    init(path: DBusObjectPath, connection: DBusConnection, slots: Int, health: AdapterHealth.Settings,
         events: @escaping @Sendable (LinkEvent) -> Void) {
        self.path = path
        self.name = String(path.lastElement)
        self.connection = connection
        self.slots = ConnectionSlots(configured: slots)
        self.events = events
        self.health = AdapterHealth(settings: health)
    }

    // MARK: Health

    func noteAdvertisement() { health.advertisement(at: WallClock.monotonic()) }
    func noteFailure(_ kind: ConnectFailureKind) { health.connectFailed(kind, at: WallClock.monotonic()) }
    func noteConnected() { health.connected(at: WallClock.monotonic()) }

    /// Judges the adapter and, when it has stalled, recovers it in its own turn (no
    /// connect runs meanwhile). Returns the action taken.
    func checkHealth(waiting: Int, streaming: Int, reset: (@Sendable (String) async throws -> Void)?) async -> AdapterHealth.Action? {
        guard let (action, cause) = health.evaluate(now: WallClock.monotonic(), waiting: waiting, streaming: streaming,
                                                    canReset: reset != nil) else { return nil }
        await acquire()
        var failure: String?
        switch action {
        case .powerCycle:
            do {
                try await setPowered(false)
                try? await Task.sleep(for: .seconds(1))
                try await setPowered(true)
            } catch {
                failure = error.description
            }
        case .hciReset:
            do {
                try await reset?(name)
            } catch {
                failure = "\(error)"
            }
        }
        // Every session bluetoothd had on the adapter is gone with the power.
        active = false
        filterSet = false
        await reconcileDiscovery()
        release()
        events(.adapterRecovery(adapter: name, action: action.rawValue, cause: cause.rawValue, error: failure))
        return action
    }

    private func setPowered(_ on: Bool) async throws(DBusError) {
        try await connection.call(destination: GATTNames.bluez, path: path, interface: "org.freedesktop.DBus.Properties", member: "Set",
                                  [.string(GATTNames.adapter), .string("Powered"), .variant(.bool(on))])
    }

    // MARK: Turn

    /// Runs `body` alone among this adapter's turns (connects and discovery changes), with
    /// discovery paused while it runs when `pauseDiscovery`.
    func withTurn<T: Sendable>(pauseDiscovery: Bool, _ body: @Sendable () async -> T) async -> T {
        await acquire()
        if pauseDiscovery, active { await setDiscovery(false) }
        let result = await body()
        await reconcileDiscovery()
        release()
        return result
    }

    private func acquire() async {
        if !busy {
            busy = true
            return
        }
        await withCheckedContinuation { queue.append($0) }
    }

    private func release() {
        if queue.isEmpty {
            busy = false
        } else {
            queue.removeFirst().resume()
        }
    }

    // MARK: Slots

    func takeSlot() -> Bool {
        slots.probe(now: WallClock.monotonic())
        return slots.acquire()
    }

    func giveSlot() { slots.release() }

    func slotRejected() {
        let before = slots.limit
        slots.rejected(at: WallClock.monotonic())
        if slots.limit != before { events(.slotsLearned(adapter: name, limit: slots.limit)) }
    }

    // MARK: Discovery

    func setWanted(_ value: Bool) async {
        guard value != wanted else { return }
        wanted = value
        // The silence clock runs while scanning is wanted, across the short pauses
        // for connects: a stalled controller stays silent through all of them.
        health.scanning(value, at: WallClock.monotonic())
        if !busy {
            await acquire()
            await reconcileDiscovery()
            release()
        }
    }

    /// bluetoothd restarted (or the adapter came back): every session it had is gone.
    func reset() {
        active = false
        filterSet = false
        slots = ConnectionSlots(configured: slots.configured)
    }

    /// Re-applies the wanted state (after power on, after a restart).
    func refresh() async {
        await acquire()
        await reconcileDiscovery()
        release()
    }

    private func reconcileDiscovery() async {
        if wanted != active { await setDiscovery(wanted) }
    }

    private func setDiscovery(_ on: Bool) async {
        do {
            if on {
                if !filterSet {
                    try await connection.call(destination: GATTNames.bluez, path: path, interface: GATTNames.adapter,
                                              member: "SetDiscoveryFilter", [.properties([("Transport", .string("le"))])])
                    filterSet = true
                }
                do {
                    try await connection.call(destination: GATTNames.bluez, path: path, interface: GATTNames.adapter, member: "StartDiscovery")
                } catch where error.name.hasSuffix(".InProgress") {
                    // Already ours.
                }
                active = true
            } else {
                active = false
                do {
                    try await connection.call(destination: GATTNames.bluez, path: path, interface: GATTNames.adapter, member: "StopDiscovery")
                } catch where error.message.contains("No discovery started") {
                }
            }
        } catch {
            if on { active = false }
            events(.discovery(adapter: name, active: active, error: error.description))
        }
    }
}

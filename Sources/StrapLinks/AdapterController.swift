// SPDX-License-Identifier: MIT
import BlueZ
import DBus
import LinkPolicy
import Synchronization
import Timing

/// One adapter's shared resources: its connect turn (one Connect at a time: controllers
/// handle one LE create-connection at a time, and a second one makes BlueZ answer "in
/// progress"), its discovery session and its health. Discovery keeps running through
/// connects: straps heard only by advertisement would lose their records in every gap.
/// How many links it may hold is `LinkScheduler`'s business.
actor AdapterController {
    let path: DBusObjectPath
    let name: String
    private let adapter: BlueZAdapter
    private let events: @Sendable (LinkEvent) -> Void

    private var busy = false
    private var queue: [CheckedContinuation<Void, Never>] = []
    /// Someone needs discovery (a wanted device not streaming, advertisement records, auto mode).
    private var wanted = false
    /// Our discovery session is running on bluetoothd.
    private var active = false
    private var filterSet = false
    private(set) var health: AdapterHealth

    init(path: DBusObjectPath, connection: DBusConnection, health: AdapterHealth.Settings,
         events: @escaping @Sendable (LinkEvent) -> Void) {
        self.path = path
        self.name = String(path.lastElement)
        self.adapter = BlueZAdapter(connection, path)
        self.events = events
        self.health = AdapterHealth(settings: health)
    }

    // MARK: Health

    /// When an advertisement was last heard here (monotonic milliseconds, 0: never),
    /// stored without a hop onto the actor: while scanning, every advertising report of
    /// every device in the room comes through, and the health only needs the latest
    /// when it judges the adapter.
    private nonisolated let heardAt = Atomic<Int64>(0)
    private var heardApplied: Int64 = 0

    nonisolated func noteAdvertisement() { heardAt.store(MonotonicClock.milliseconds(), ordering: .relaxed) }

    private func applyHeard() {
        let at = heardAt.load(ordering: .relaxed)
        guard at > heardApplied else { return }
        heardApplied = at
        health.advertisement(at: Double(at) / 1000)
    }

    func noteFailure(_ kind: ConnectFailureKind) { health.connectFailed(kind, at: MonotonicClock.seconds()) }
    func noteConnected() { health.connected(at: MonotonicClock.seconds()) }

    /// Judges the adapter and, when it has stalled, recovers it in its own turn (no
    /// connect runs meanwhile). Returns the action taken.
    func checkHealth(waiting: Int, streaming: Int, reset: (@Sendable (String) async throws -> Void)?) async -> AdapterHealth.Action? {
        applyHeard()
        guard let (action, cause) = health.evaluate(now: MonotonicClock.seconds(), waiting: waiting, streaming: streaming,
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
        try await adapter.setPowered(on)
    }

    // MARK: Turn

    /// Runs `body` alone among this adapter's turns (connects and discovery changes).
    func withTurn<T: Sendable>(_ body: @Sendable () async -> T) async -> T {
        await acquire()
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

    // MARK: Discovery

    func setWanted(_ value: Bool) async {
        guard value != wanted else { return }
        wanted = value
        // The silence clock runs while scanning is wanted, across the short pauses
        // for connects: a stalled controller stays silent through all of them.
        health.scanning(value, at: MonotonicClock.seconds())
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
                    try await adapter.setLEDiscoveryFilter()
                    filterSet = true
                }
                do {
                    try await adapter.startDiscovery()
                } catch where BlueZErrorKind.classify(name: error.name, message: error.message) == .inProgress {
                    // Already ours.
                }
                active = true
            } else {
                try await stopDiscovery()
                active = false
                // The filter may go with the session (the simulator drops it, as
                // bluetoothd does when the client's watch ends): every session sets it
                // again, or it could scan BR/EDR too and report an RSSI only when it
                // moved by 8 dBm, starving the scales that are linked when heard.
                filterSet = false
            }
        } catch {
            if on { active = false }
            events(.discovery(adapter: name, active: active, error: error.description))
        }
    }

    /// bluetoothd answers "in progress" while a request of ours is still pending: the
    /// session is still on then, so ask again after a moment instead of believing it off.
    private func stopDiscovery() async throws(DBusError) {
        var attempt = 0
        while true {
            do {
                try await adapter.stopDiscovery()
                return
            } catch {
                switch BlueZErrorKind.classify(name: error.name, message: error.message) {
                case .noDiscoveryStarted, .notReady, .rfkillBlocked, .doesNotExist, .noBluetoothd:
                    return
                case .inProgress where attempt < 10:
                    attempt += 1
                    try? await Task.sleep(for: .milliseconds(200))
                default:
                    throw error
                }
            }
        }
    }
}

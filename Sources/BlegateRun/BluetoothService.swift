// SPDX-License-Identifier: MIT
import Cache
import DBus
import StrapLinks
import Logging
import ServiceLifecycle
import Synchronization

/// Keeps the strap manager running for as long as the gateway runs: it connects to the
/// bus, follows straps into the cache, and if the bus goes away or cannot be reached it
/// tries again (1 s, doubling to 30 s) while the cache and sync carry on.
///
/// Shut down first of all services: the manager stops notifications and disconnects
/// every strap, then the cache commits what it buffered, so nothing received is left
/// uncommitted when sync makes its last pass.
final class BluetoothService: Service, Sendable {
    let bus: DBusBusAddress
    let configuration: LinkConfiguration
    let sink: any RecordSink
    let cache: RecordCache
    let errors: ErrorLog
    let facts: DeviceFacts
    let logger: Logger
    private let manager = Mutex<StrapManager?>(nil)
    /// The bus connection in use, for the watchdog's probe.
    private let connection = Mutex<DBusConnection?>(nil)
    private let lastLinks = Mutex<[LinkStatus]>([])
    /// The notification window in force (`setGather`), kept for the managers to come.
    private let gather: Mutex<Duration>

    init(bus: DBusBusAddress, configuration: LinkConfiguration, sink: any RecordSink, cache: RecordCache,
         errors: ErrorLog, facts: DeviceFacts, logger: Logger) {
        self.bus = bus
        self.configuration = configuration
        self.sink = sink
        self.cache = cache
        self.errors = errors
        self.facts = facts
        self.logger = logger
        self.gather = Mutex(configuration.notifyGather)
    }

    /// How long notifications may gather once they come densely: short while the wall
    /// has a screen to keep live, longer while nobody watches (`GatewayRuntime`).
    func setGather(_ window: Duration) {
        let m = gather.withLock { g -> StrapManager? in
            g = window
            return manager.withLock { $0 }
        }
        m?.setGather(window)
    }

    var notifyGather: Duration { gather.withLock { $0 } }

    private let recoveries = Mutex<[String: Int]>([:])

    /// Stall recoveries (power-cycles, HCI resets) per adapter since the gateway started,
    /// across restarts of the connection manager.
    var adapterRecoveries: [String: Int] { recoveries.withLock { $0 } }

    /// Every followed device now (or as they were when the manager last stopped).
    var links: [LinkStatus] {
        manager.withLock { $0 }?.links ?? lastLinks.withLock { $0 }
    }

    var adapterLinks: [AdapterLinks] { manager.withLock { $0 }?.adapterLinks ?? [] }

    /// Totals of the managers that ended (bluetoothd restarted, the bus came back).
    private let carried = Mutex(LinkTotals())

    /// What the straps sent since the gateway started, across restarts of the manager.
    var totals: LinkTotals {
        carried.withLock { carried in carried + (manager.withLock { $0 }?.totals ?? LinkTotals()) }
    }

    func run() async throws {
        await cancelWhenGracefulShutdown { await self.follow() }
        logger.info("bluetooth stopped: notifications released, straps disconnected")
        do {
            try await cache.flush()
            logger.info("cache flushed", metadata: ["file": "\(cache.path)"])
        } catch {
            errors.add(.storage, "cannot commit the last records to the cache", detail: "\(error)")
            logger.error("cannot commit the last records to the cache", metadata: ["error": "\(error)"])
        }
    }

    private func follow() async {
        var delay = Duration.seconds(1)
        while !Task.isCancelled {
            let connection: DBusConnection
            do {
                // Advertisements and StartNotify values gather as AcquireNotify datagrams do.
                connection = try await DBusConnection.connect(bus, gatherSignals: notifyGather)
            } catch {
                errors.add(.dbus, "cannot reach the \(bus)", detail: "\(error)")
                logger.error("cannot reach the D-Bus bus; retrying", metadata: ["bus": "\(bus)", "error": "\(error)", "retry_in": "\(delay)"])
                guard await pause(&delay) else { return }
                continue
            }
            self.connection.withLock { $0 = connection }
            do {
                var configuration = self.configuration
                configuration.notifyGather = notifyGather
                let m = try StrapManager(connection: connection, configuration: configuration, sink: sink)
                gather.withLock { g in
                    // A change between reading the window and publishing the manager.
                    if g != configuration.notifyGather { m.setGather(g) }
                    manager.withLock { $0 = m }
                }
                let events = m.events()
                let reporter = Task { for await e in events { self.report(e) } }
                do {
                    try await m.run()
                    delay = .seconds(1)
                } catch {
                    errors.add(.dbus, "cannot read bluetoothd's objects", detail: "\(error)")
                    logger.error("cannot read bluetoothd's objects; retrying", metadata: ["error": "\(error)", "retry_in": "\(delay)"])
                }
                reporter.cancel()
                lastLinks.withLock { $0 = m.links }
                carried.withLock { carried in
                    carried = carried + m.totals
                    manager.withLock { $0 = nil }
                }
            } catch {
                errors.add(.dbus, "cannot start the notification reader", detail: "\(error)")
                logger.error("cannot start the notification reader; retrying", metadata: ["error": "\(error)"])
            }
            self.connection.withLock { $0 = nil }
            connection.close()
            if Task.isCancelled { return }
            guard await pause(&delay) else { return }
        }
    }

    /// The watchdog's probe: the connection's dispatcher thread answers a ping through the
    /// bus within `within`. With no connection (the bus is being reconnected) the loop
    /// that retries is alive, which is what counts; only a ping that gets no answer is
    /// a wedged dispatcher or bus.
    func answers(within: Duration) async -> Bool {
        guard let c = connection.withLock({ $0 }) else { return true }
        do {
            _ = try await c.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus.Peer",
                                 member: "Ping", timeout: within)
            return true
        } catch {
            return error.name != "org.freedesktop.DBus.Error.NoReply"
        }
    }

    /// The watchdog's probe of the AcquireNotify reader thread: why it is not keeping up,
    /// or nil while it is, or while no manager (and so no reader) runs.
    func notifyReaderStall(within: Duration) -> String? {
        manager.withLock { $0 }?.notifyReaderStall(within: within)
    }

    /// Sleeps `delay` and doubles it (up to 30 s); false when cancelled meanwhile.
    private func pause(_ delay: inout Duration) async -> Bool {
        do {
            try await Task.sleep(for: delay)
        } catch {
            return false
        }
        delay = min(delay * 2, .seconds(30))
        return true
    }

    /// Link news: to the log, to the registry (names) and, for failures, to the error list.
    private func report(_ event: LinkEvent) {
        switch event {
        case let .found(address, name, _):
            if let name { facts.named(address, name) }
            logger.info("\(event.message)")
        case let .connected(address, name, _, _):
            if let name { facts.named(address, name) }
            logger.info("\(event.message)")
        case .connectFailed:
            // Every retry: the journal gets the change of state (stateChanged) instead.
            logger.debug("\(event.message)")
        case let .disconnected(address, reason, _, flapping):
            errors.add(.bluetooth, "\(address) disconnected" + (flapping ? " (flapping)" : ""), detail: reason)
            logger.warning("\(event.message)")
        case let .stateChanged(address, state, reason):
            // A refusal at an adapter's limit leaves the strap waiting for a link
            // (`waiting-for-link`), not backing off: routine, not an error.
            if state == .backingOff { errors.add(.bluetooth, "\(address): connect failed", detail: reason) }
            logger.info("\(event.message)")
        case .limitLearned:
            // Routine: status shows it as the adapter's learned limit.
            logger.notice("\(event.message)")
        case .adapterReady, .limitProbe:
            logger.info("\(event.message)")
        case let .staleCache(address):
            errors.add(.bluetooth, "\(address): stale GATT cache", detail: event.message)
            logger.warning("\(event.message)")
        case .bluetoothdVanished:
            errors.add(.dbus, "bluetoothd left the bus", detail: nil)
            logger.error("\(event.message)")
        case let .discovery(adapter, _, error?):
            errors.add(.bluetooth, "\(adapter): discovery failed", detail: error)
            logger.warning("\(event.message)")
        case .discovery:
            logger.debug("\(event.message)")
        case .connecting:
            logger.debug("\(event.message)")
        case let .adapterRecovery(adapter, action, cause, error):
            recoveries.withLock { $0[adapter, default: 0] += 1 }
            errors.add(.bluetooth, "\(adapter) stalled (\(cause)): \(action)", detail: error ?? "done")
            logger.warning("\(event.message)")
        case .resubscribed, .bluetoothdAppeared:
            logger.info("\(event.message)")
        case let .notificationsDropped(address, reason, _, _, _, _):
            errors.add(.bluetooth, "\(address) \(reason)", detail: event.message)
            logger.warning("\(event.message)")
        }
    }
}

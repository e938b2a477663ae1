// SPDX-License-Identifier: MIT
import DBus
import Synchronization
import WearMetrics

/// Delivers StartNotify values (PropertiesChanged `Value` signals) to the characteristic
/// that subscribed, through one raw subscription for all devices, with the time the
/// dispatcher read the signal off the bus.
///
/// The rule is the mirror's own PropertiesChanged rule, so the bus still carries one set
/// of match rules per connection (the D-Bus layer reference-counts identical rules).
final class NotifyRoutes: Sendable {
    typealias Handler = @Sendable (UnsafeRawBufferPointer, UTCTimestamp) -> Void

    private let routes = Mutex<[String: Handler]>([:])
    private let subscription = Mutex<DBusSubscription?>(nil)

    func start(connection: DBusConnection, rule: DBusMatchRule) async throws(DBusError) {
        let sub = try await connection.subscribeRaw(matching: rule) { [weak self] view in
            self?.deliver(view)
        }
        subscription.withLock { $0 = sub }
    }

    func stop(connection: DBusConnection) {
        if let sub = subscription.withLock({ s -> DBusSubscription? in defer { s = nil }; return s }) {
            connection.unsubscribe(sub)
        }
        routes.withLock { $0.removeAll() }
    }

    func add(_ path: DBusObjectPath, _ handler: @escaping Handler) {
        routes.withLock { $0[path.rawValue] = handler }
    }

    func remove(_ path: DBusObjectPath) {
        _ = routes.withLock { $0.removeValue(forKey: path.rawValue) }
    }

    private func deliver(_ view: DBusSignalView) {
        guard let path = view.path else { return }
        guard let handler = routes.withLock({ $0[path.rawValue] }) else { return }
        let arrival = UTCTimestamp(millisecondsSince1970: view.receivedAt)
        _ = view.withChangedBytes("Value") { handler($0, arrival) }
    }
}

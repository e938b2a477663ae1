// SPDX-License-Identifier: MIT
import BlueZ
import DBus
import NotifySocket
import Synchronization

/// What every link shares: the bus, the mirror, the readers and the adapters.
struct LinkContext: Sendable {
    let connection: DBusConnection
    let mirror: BlueZMirror
    let reader: NotifySocketReader
    let routes: NotifyRoutes
    let pipeline: RecordPipeline
    let configuration: LinkConfiguration
    let adapters: AdapterRegistry
    let scheduler: LinkScheduler
    let emit: @Sendable (LinkEvent) -> Void
}

/// The adapter controllers by path, replaced as adapters come and go.
final class AdapterRegistry: Sendable {
    private let table = Mutex<[DBusObjectPath: AdapterController]>([:])

    func controller(_ path: DBusObjectPath) -> AdapterController? { table.withLock { $0[path] } }

    func controller(for path: DBusObjectPath, make: () -> AdapterController) -> AdapterController {
        table.withLock { t in
            if let c = t[path] { return c }
            let c = make()
            t[path] = c
            return c
        }
    }

    var all: [AdapterController] { table.withLock { Array($0.values) } }

    func remove(_ path: DBusObjectPath) { _ = table.withLock { $0.removeValue(forKey: path) } }
}

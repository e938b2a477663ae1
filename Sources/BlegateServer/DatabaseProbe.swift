// SPDX-License-Identifier: MIT
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// `SELECT 1` every `interval` with `deadline` to answer, whatever requests come: the
/// database is seen down (`blegate_server_database_up` 0, the staff page's Server panel)
/// as soon as a probe fails or its deadline passes, not only when a request fails. It asks
/// the pool as requests do, so a pool that cannot connect reads as down.
struct DatabaseProbe: Service {
    let client: PostgresClient
    let metrics: ServerMetrics
    let logger: Logger
    var interval: Duration = .seconds(5)
    var deadline: Duration = .seconds(2)

    /// Probes until the group shuts down; ends without an error then.
    func run() async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await probe()
                try? await Task.sleep(for: interval)
            }
        }
    }

    /// One probe. The verdict is given at the deadline even when the query does not end
    /// when cancelled; the next probe waits for it.
    func probe() async {
        let started = ContinuousClock.now
        let once = Once()
        let decide: @Sendable (Bool) -> Void = { [metrics] up in
            guard once.first() else { return }
            let elapsed = ContinuousClock.now - started
            metrics.probe(up: up, seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await client.query("SELECT 1", logger: logger)
                    decide(true)
                } catch {
                    decide(false)
                }
            }
            group.addTask {
                try? await Task.sleep(for: deadline)
                decide(false)
            }
            await group.next()
            group.cancelAll()
        }
    }
}

/// True the first time it is asked, false after.
private final class Once: Sendable {
    private let done = Mutex(false)

    func first() -> Bool {
        done.withLock { d in
            defer { d = true }
            return !d
        }
    }
}

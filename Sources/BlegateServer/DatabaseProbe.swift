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

    /// One probe, its verdict given at the deadline however long the query runs on.
    func probe() async {
        let started = ContinuousClock.now
        let up = await Self.ping(client, within: deadline, logger: logger) == .up
        let elapsed = ContinuousClock.now - started
        metrics.probe(up: up, seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    enum Ping: Equatable {
        case up
        /// The query failed (no connection, refused), or did not end by the deadline.
        case down
        case late
    }

    /// `SELECT 1` through the pool, as requests ask it. Returns by `deadline` even when
    /// the query does not end when cancelled (a pool waiting on a dead host), so a
    /// caller with a deadline of its own (a load balancer's health check) is answered in
    /// time.
    static func ping(_ client: PostgresClient, within deadline: Duration, logger: Logger) async -> Ping {
        do {
            _ = try await ServerResponder.within(deadline) { try await client.query("SELECT 1", logger: logger) }
            return .up
        } catch is ServerResponder.DeadlineExceeded {
            return .late
        } catch {
            return .down
        }
    }
}

/// True the first time it is asked, false after.
final class Once: Sendable {
    private let done = Mutex(false)

    func first() -> Bool {
        done.withLock { d in
            defer { d = true }
            return !d
        }
    }
}

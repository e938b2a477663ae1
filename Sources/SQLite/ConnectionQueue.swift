// SPDX-License-Identifier: MIT
import Dispatch

/// A connection with the serial queue it is used on. Database work runs on that queue,
/// never on Swift's cooperative pool: a commit's fsync under `synchronous = FULL` can
/// take tens of milliseconds on an SD card, and a pool thread blocked that long stalls
/// every task behind it.
public final class ConnectionQueue: @unchecked Sendable {
    // Touched only on `queue`.
    private let connection: Connection
    private let queue: DispatchQueue

    public init(_ connection: Connection, label: String) {
        self.connection = connection
        queue = DispatchQueue(label: label)
    }

    /// Runs `body` on the queue and waits for it (from a thread of one's own, never from
    /// a task: it blocks the calling thread).
    public func sync<T>(_ body: (Connection) throws -> T) rethrows -> T {
        try queue.sync { try body(connection) }
    }

    /// Runs `body` on the queue; the task is suspended meanwhile, its thread free.
    public func run<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
            queue.async {
                c.resume(with: Result { try body(self.connection) })
            }
        }
    }

    /// `body` in a deferred transaction: every statement sees the same snapshot (in WAL
    /// mode a read never waits for a writer).
    public func read<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await run { db in try db.transaction(.deferred) { try body(db) } }
    }

    /// `body` in an immediate transaction, committed when it returns.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await run { db in try db.transaction(.immediate) { try body(db) } }
    }
}

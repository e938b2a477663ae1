// SPDX-License-Identifier: MIT
import Logging
import PostgresNIO

/// The one way the store takes connections from the pool: each query and transaction
/// borrows a connection through `withConnection`, so the time from asking for one to
/// getting it (the wait) and the connections lent at a moment (in use) are measured in one
/// place (`ServerMetrics`).
struct ServerDatabase: Sendable {
    let client: PostgresClient
    let metrics: ServerMetrics?

    /// Lends a connection to `body`, measuring the wait for it and its time in use.
    func withConnection<R: Sendable>(_ body: (PostgresConnection) async throws -> R) async throws -> R {
        let asked = ContinuousClock.now
        return try await client.withConnection { connection in
            metrics?.connectionLent(after: ContinuousClock.now - asked)
            defer { metrics?.connectionReturned() }
            return try await body(connection)
        }
    }

    /// `body` in a transaction on one borrowed connection (committed when it returns).
    func withTransaction<R: Sendable>(logger: Logger, _ body: (PostgresConnection) async throws -> R) async throws -> R {
        try await withConnection { connection in
            try await connection.withTransaction(logger: logger) { try await body($0) }
        }
    }

    /// Runs `query` and reads its rows whole before the connection goes back to the pool,
    /// so the connection is counted in use for as long as the query holds it.
    @discardableResult
    func query(_ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line) async throws -> CollectedRows {
        try await withConnection { connection in
            CollectedRows(rows: try await connection.query(query, logger: logger, file: file, line: line).collect())
        }
    }
}

/// A query's rows, read whole: iterated and decoded like PostgresNIO's row sequence.
struct CollectedRows: AsyncSequence, Sendable {
    typealias Element = PostgresRow

    let rows: [PostgresRow]

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: IndexingIterator<[PostgresRow]>

        mutating func next() async throws -> PostgresRow? { base.next() }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: rows.makeIterator()) }
}

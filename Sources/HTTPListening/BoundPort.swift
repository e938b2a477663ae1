// SPDX-License-Identifier: MIT
import Synchronization

/// Resolves once, whichever comes first: the port a server bound, or why it did not
/// start listening. Whoever started the server waits on it.
public final class BoundPort: Sendable {
    private let state = Mutex<(result: Result<Int, any Error>?, waiter: CheckedContinuation<Int, any Error>?)>((nil, nil))

    public init() {}

    /// The first call counts; later ones are ignored.
    public func resolve(_ result: Result<Int, any Error>) {
        let waiter = state.withLock { s -> CheckedContinuation<Int, any Error>? in
            guard s.result == nil else { return nil }
            s.result = result
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(with: result)
    }

    /// The bound port, or the error the server stopped with. One waiter at a time.
    public func wait() async throws -> Int {
        try await withCheckedThrowingContinuation { c in
            let ready = state.withLock { s -> Result<Int, any Error>? in
                if let r = s.result { return r }
                s.waiter = c
                return nil
            }
            if let ready { c.resume(with: ready) }
        }
    }
}

// SPDX-License-Identifier: MIT
import ServiceLifecycle

/// A chore the gateway repeats while it runs (device facts, saved state, retention), and
/// does one last time on shutdown so nothing learned in the last period is dropped.
struct PeriodicTask: Service {
    let name: String
    let every: Duration
    let body: @Sendable () async -> Void
    /// Run once more after the loop ends (graceful shutdown).
    let finally: (@Sendable () async -> Void)?
    /// Run the body once at start, before the first wait.
    let immediately: Bool

    init(_ name: String, every: Duration, immediately: Bool = false, body: @escaping @Sendable () async -> Void,
         finally: (@Sendable () async -> Void)? = nil) {
        self.name = name
        self.every = every
        self.immediately = immediately
        self.body = body
        self.finally = finally
    }

    func run() async throws {
        let every = self.every, body = self.body, immediately = self.immediately
        await cancelWhenGracefulShutdown {
            if immediately { await body() }
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: every)
                } catch {
                    return
                }
                await body()
            }
        }
        if let finally { await finally() }
    }
}

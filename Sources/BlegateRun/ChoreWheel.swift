// SPDX-License-Identifier: MIT
import ServiceLifecycle

/// The gateway's small repeated chores (saved state, the device registry, the cache's
/// write health, classes, memory) on one task that sleeps until the next is due.
///
/// Each chore sleeping on a task of its own woke the process once per chore and period
/// (about twice a second together), and every wake-up costs more than the chore itself.
/// Here one wake-up serves every chore due within a quarter of its period, so they fall
/// together, and a chore that knows when it next has work (`next`) sleeps until then.
/// Chores run one after another: each must be short (a slow one, such as retention's
/// prune, keeps a `PeriodicTask` of its own).
struct ChoreWheel: Service {
    struct Chore: Sendable {
        let name: String
        /// Seconds between runs.
        let every: Double
        /// Run once at start, before the first wait.
        let immediately: Bool
        let body: @Sendable () async -> Void
        /// Run once more on graceful shutdown.
        let finally: (@Sendable () async -> Void)?
        /// Seconds until the chore next has work, asked after each run; nil for `every`.
        let next: (@Sendable () -> Double?)?

        init(_ name: String, every: Double, immediately: Bool = false, body: @escaping @Sendable () async -> Void,
             finally: (@Sendable () async -> Void)? = nil, next: (@Sendable () -> Double?)? = nil) {
            self.name = name
            self.every = every
            self.immediately = immediately
            self.body = body
            self.finally = finally
            self.next = next
        }
    }

    let chores: [Chore]

    init(_ chores: [Chore]) { self.chores = chores }

    func run() async throws {
        let chores = self.chores
        let clock = ContinuousClock()
        await cancelWhenGracefulShutdown {
            let start = clock.now
            var due = chores.map { start + .milliseconds(Int64(($0.immediately ? 0 : $0.every) * 1000)) }
            while !Task.isCancelled {
                let now = clock.now
                for (i, chore) in chores.enumerated() {
                    // A fixed chore runs up to a quarter period early, with the others.
                    let early = chore.next == nil ? Duration.milliseconds(Int64(chore.every * 250)) : .zero
                    guard due[i] <= now + early else { continue }
                    await chore.body()
                    let wait = chore.next?() ?? chore.every
                    due[i] = clock.now + .milliseconds(Int64(max(0, wait) * 1000))
                }
                guard let first = due.min() else { return }
                do {
                    try await Task.sleep(until: first, clock: clock)
                } catch {
                    return
                }
            }
        }
        for chore in chores {
            if let finally = chore.finally { await finally() }
        }
    }
}

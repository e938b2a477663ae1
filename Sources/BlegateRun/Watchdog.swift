// SPDX-License-Identifier: MIT
import Logging
import ServiceLifecycle
import Synchronization

/// Feeds systemd's watchdog only while the gateway's loops are alive, so a gateway that
/// hangs (a wedged D-Bus dispatcher, a status thread stuck, a cache writer or notify
/// reader thread stuck, a starved task pool) is restarted by systemd instead of sitting
/// there with its straps unfollowed.
///
/// Each period it checks every probe; `WATCHDOG=1` goes out only when all answered in
/// time. This task running at all shows the task pool is not starved.
struct Watchdog: Service {
    /// A named liveness check: nil when the loop it watches answered, else why not ("" when
    /// there is nothing more to say than its name).
    struct Probe: Sendable {
        var name: String
        var problem: @Sendable (_ within: Duration) async -> String?

        /// A check that answers yes or no.
        init(name: String, check: @escaping @Sendable (_ within: Duration) async -> Bool) {
            self.name = name
            problem = { within in await check(within) ? nil : "" }
        }

        /// A check that says what is wrong.
        init(name: String, problem: @escaping @Sendable (_ within: Duration) async -> String?) {
            self.name = name
            self.problem = problem
        }
    }

    let notifier: SystemdNotifier
    let interval: Duration
    let probes: [Probe]
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var failing: Set<String> = []
            while !Task.isCancelled {
                var stuck: [(name: String, problem: String)] = []
                for probe in probes {
                    if let problem = await probe.problem(interval / 2) { stuck.append((probe.name, problem)) }
                }
                if stuck.isEmpty {
                    notifier.notify("WATCHDOG=1")
                    if !failing.isEmpty { logger.notice("watchdog: every loop answers again") }
                    failing = []
                } else if Set(stuck.map(\.name)) != failing {
                    failing = Set(stuck.map(\.name))
                    let list = stuck.map { $0.problem.isEmpty ? $0.name : "\($0.name) (\($0.problem))" }.joined(separator: ", ")
                    logger.error("watchdog: not fed, these loops do not answer: \(list); systemd restarts the gateway if it lasts")
                }
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
            }
        }
    }
}

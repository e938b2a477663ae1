// SPDX-License-Identifier: MIT
import Logging
import ServiceLifecycle
import Synchronization

/// Feeds systemd's watchdog only while the gateway's loops are alive, so a gateway that
/// hangs (a wedged D-Bus dispatcher, a status thread stuck, a starved task pool) is
/// restarted by systemd instead of sitting there with its straps unfollowed.
///
/// Each period it checks every probe; `WATCHDOG=1` goes out only when all answered in
/// time. This task running at all shows the task pool is not starved.
struct Watchdog: Service {
    /// A named liveness check: true when the loop it watches answered.
    struct Probe: Sendable {
        var name: String
        var check: @Sendable (_ within: Duration) async -> Bool
    }

    let notifier: SystemdNotifier
    let interval: Duration
    let probes: [Probe]
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var failing: Set<String> = []
            while !Task.isCancelled {
                var stuck: [String] = []
                for probe in probes where !(await probe.check(interval / 2)) { stuck.append(probe.name) }
                if stuck.isEmpty {
                    notifier.notify("WATCHDOG=1")
                    if !failing.isEmpty { logger.notice("watchdog: every loop answers again") }
                    failing = []
                } else if Set(stuck) != failing {
                    failing = Set(stuck)
                    logger.error("watchdog: not fed, these loops do not answer: \(stuck.joined(separator: ", ")); systemd restarts the gateway if it lasts")
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

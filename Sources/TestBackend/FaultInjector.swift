// SPDX-License-Identifier: MIT
import Synchronization

/// The faults in force, shared by the request handler and whoever steers the test
/// (in-process calls or `POST /_admin/faults`).
public final class FaultInjector: Sendable {
    private struct Active {
        var fault: Fault
        var remaining: Int?
        var expires: ContinuousClock.Instant?
    }

    private let active = Mutex<[Active]>([])

    public init() {}

    public func add(_ fault: Fault) {
        let entry = Active(fault: fault, remaining: fault.count, expires: fault.duration.map { .now + $0 })
        active.withLock { $0.append(entry) }
    }

    public func clear() {
        active.withLock { $0.removeAll() }
    }

    /// The faults still in force.
    public var faults: [Fault] {
        active.withLock { list in
            prune(&list)
            return list.map { a in
                var f = a.fault
                f.count = a.remaining
                return f
            }
        }
    }

    /// Before the body is read: how long to stall, and which status to answer instead.
    func beforeHandling() -> (delay: Duration, status: (code: Int, retryAfter: String?)?) {
        active.withLock { list in
            prune(&list)
            var delay = Duration.zero
            var status: (Int, String?)?
            for i in list.indices {
                switch list[i].fault.mode {
                case let .delay(d):
                    delay += d
                    list[i].remaining? -= 1
                case let .status(code, retryAfter) where status == nil:
                    status = (code, retryAfter)
                    list[i].remaining? -= 1
                default:
                    break
                }
            }
            prune(&list)
            return (delay, status)
        }
    }

    /// After parsing: whether a batch of `items` is refused as too large.
    func refusesBatch(of items: Int) -> Bool {
        active.withLock { list in
            prune(&list)
            guard let i = list.firstIndex(where: { if case let .maxBatch(n) = $0.fault.mode { return items > n } else { return false } }) else {
                return false
            }
            list[i].remaining? -= 1
            prune(&list)
            return true
        }
    }

    /// After storing a batch: whether its answer must miscount it.
    func miscounts() -> Bool {
        active.withLock { list in
            prune(&list)
            guard let i = list.firstIndex(where: { $0.fault.mode == .miscount }) else { return false }
            list[i].remaining? -= 1
            prune(&list)
            return true
        }
    }

    private func prune(_ list: inout [Active]) {
        let now = ContinuousClock.now
        list.removeAll { a in (a.remaining.map { $0 <= 0 } ?? false) || (a.expires.map { now >= $0 } ?? false) }
    }
}

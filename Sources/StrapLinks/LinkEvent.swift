// SPDX-License-Identifier: MIT
import LinkPolicy

/// What happened to a link, for people (stream's stderr, logs) and for status.
public enum LinkEvent: Sendable, Equatable {
    case found(address: String, name: String?, adapter: String)
    case connecting(address: String, attempt: Int)
    case connected(address: String, name: String?, adapter: String, notify: NotifyMethod)
    case connectFailed(address: String, kind: ConnectFailureKind, message: String, retryIn: Double)
    case disconnected(address: String, reason: String, retryIn: Double, flapping: Bool)
    case resubscribed(address: String, notify: NotifyMethod)
    case staleCache(address: String)
    /// An adapter is usable, starting from this limit (`learned`: from an earlier refusal).
    case adapterReady(adapter: String, limit: Int, learned: Bool)
    /// Refusals showed the adapter's limit (or a probe above it linked: `raised`).
    case limitLearned(adapter: String, limit: Int, raised: Bool)
    /// One link above the learned limit is being tried.
    case limitProbe(adapter: String, limit: Int)
    /// A followed strap's state changed (logged once per change, not per retry).
    case stateChanged(address: String, state: LinkState, reason: String?)
    case bluetoothdVanished
    case bluetoothdAppeared
    case discovery(adapter: String, active: Bool, error: String?)
    case adapterRecovery(adapter: String, action: String, cause: String, error: String?)
    /// A device's notifications were dropped (too fast, or values longer than BLE allows):
    /// totals since start, drops since the last report and how long ago that was.
    case notificationsDropped(address: String, reason: String, tooFast: Int, oversized: Int, newDrops: Int, overSeconds: Double?)

    /// One line for stderr.
    public var message: String {
        switch self {
        case let .found(a, n, ad): return "found \(label(a, n)) on \(ad)"
        case let .connecting(a, attempt): return "connecting \(a)" + (attempt > 1 ? " (attempt \(attempt))" : "")
        case let .connected(a, n, ad, m): return "connected \(label(a, n)) on \(ad), notifications via \(m == .acquire ? "AcquireNotify" : "StartNotify")"
        case let .connectFailed(a, k, msg, r): return "connect \(a) failed (\(k.rawValue): \(msg)); retrying in \(seconds(r))"
        case let .disconnected(a, reason, r, f): return "\(a) disconnected (\(reason))" + (f ? ", flapping" : "") + "; reconnecting in \(seconds(r))"
        case let .resubscribed(a, m): return "\(a): notification socket closed, resubscribed via \(m == .acquire ? "AcquireNotify" : "StartNotify")"
        case let .staleCache(a): return "\(a): GATT cache is stale (Heart Rate Measurement missing after resolve); removing the device to rediscover it"
        case let .adapterReady(ad, l, learned): return "\(ad): ready, up to \(l) link(s)" + (learned ? " (learned earlier)" : " (limit not known yet)")
        case let .limitLearned(ad, l, raised):
            return raised ? "\(ad): holds \(l) link(s) (one more than before linked)" : "\(ad): refuses links beyond \(l): its limit is \(l)"
        case let .limitProbe(ad, l): return "\(ad): trying one more link (\(l))"
        case let .stateChanged(a, state, reason): return "\(a): \(state.rawValue)" + (reason.map { " (\($0))" } ?? "")
        case .bluetoothdVanished: return "bluetoothd left the bus; waiting for it to come back"
        case .bluetoothdAppeared: return "bluetoothd is on the bus; resuming every device"
        case let .adapterRecovery(ad, action, cause, err):
            return "\(ad) looks stalled (\(cause)): \(action)" + (err.map { " failed: \($0)" } ?? " done")
        case let .notificationsDropped(a, reason, fast, big, new, over):
            var parts: [String] = []
            if fast > 0 { parts.append("\(fast) too fast") }
            if big > 0 { parts.append("\(big) oversized") }
            return "\(a) \(reason): notifications dropped (\(parts.joined(separator: ", ")) since start"
                + (over.map { ", \(new) in the last \(Int($0)) s" } ?? "") + ")"
        case let .discovery(ad, active, err): return "\(ad): discovery \(active ? "on" : "off")" + (err.map { " (\($0))" } ?? "")
        }
    }

    private func label(_ a: String, _ n: String?) -> String { n.map { "\($0) (\(a))" } ?? a }
    private func seconds(_ s: Double) -> String {
        let tenths = Int((s * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) s"
    }
}

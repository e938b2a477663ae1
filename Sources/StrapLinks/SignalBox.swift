// SPDX-License-Identifier: MIT
import DBus
import Synchronization

/// Why a link's streaming phase ends (or needs attention).
enum LinkSignal: Sendable, Equatable {
    /// The AcquireNotify socket of this characteristic hung up.
    case hangup(characteristic: DBusObjectPath)
    /// Connected turned false, or the adapter went away or off.
    case disconnected
    /// The device object was removed.
    case removed
    /// bluetoothd left the bus.
    case vanished
    /// Give the link to a strap that cannot be heard by advertisement.
    case yield
    /// The adapter holding the link went away or off: not the strap's doing.
    case adapterGone
}

/// A one-reader mailbox: posts from any thread, `wait` from the link's task. Unlike an
/// AsyncStream it can be cleared, so a stale "disconnected" from an earlier session
/// never ends the next one.
final class SignalBox: Sendable {
    private struct State {
        var pending: [LinkSignal] = []
        var waiter: CheckedContinuation<LinkSignal?, Never>?
    }

    private let state = Mutex(State())

    func post(_ signal: LinkSignal) {
        let waiter = state.withLock { s -> CheckedContinuation<LinkSignal?, Never>? in
            if let w = s.waiter {
                s.waiter = nil
                return w
            }
            s.pending.append(signal)
            return nil
        }
        waiter?.resume(returning: signal)
    }

    func clear() {
        state.withLock { $0.pending.removeAll() }
    }

    /// The next signal, or nil when the task is cancelled.
    func wait() async -> LinkSignal? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<LinkSignal?, Never>) in
                let immediate = state.withLock { s -> LinkSignal?? in
                    if !s.pending.isEmpty { return .some(s.pending.removeFirst()) }
                    if Task.isCancelled { return .some(nil) }
                    s.waiter = c
                    return nil
                }
                if let value = immediate { c.resume(returning: value) }
            }
        } onCancel: {
            let w = state.withLock { s -> CheckedContinuation<LinkSignal?, Never>? in
                defer { s.waiter = nil }
                return s.waiter
            }
            w?.resume(returning: nil)
        }
    }
}

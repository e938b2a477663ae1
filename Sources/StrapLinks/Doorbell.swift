// SPDX-License-Identifier: MIT
import Synchronization

/// A sleep that something else can cut short.
///
/// The housekeeping sleeps until its next deadline, which can be minutes away when every
/// strap streams; a link that changes state rings so the housekeeping looks at once
/// rather than at that deadline. A ring while nobody sleeps is kept for the next sleep,
/// so none is lost between two.
final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var sleeper: Task<Void, Never>?
    }

    private let state = Mutex(State())

    func ring() {
        let sleeper = state.withLock { s -> Task<Void, Never>? in
            guard let t = s.sleeper else {
                s.rung = true
                return nil
            }
            s.sleeper = nil
            return t
        }
        sleeper?.cancel()
    }

    /// Returns after `duration`, at a ring, or when the calling task is cancelled.
    func sleep(for duration: Duration) async {
        let sleeper = Task<Void, Never> { _ = try? await Task.sleep(for: duration) }
        let rung = state.withLock { s -> Bool in
            if s.rung {
                s.rung = false
                return true
            }
            s.sleeper = sleeper
            return false
        }
        if rung { sleeper.cancel() }
        await withTaskCancellationHandler {
            await sleeper.value
        } onCancel: {
            sleeper.cancel()
        }
        state.withLock { s in
            if s.sleeper == sleeper { s.sleeper = nil }
        }
    }
}

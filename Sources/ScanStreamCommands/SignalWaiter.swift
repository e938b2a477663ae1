// SPDX-License-Identifier: MIT
import UnixSignals

/// SIGINT/SIGTERM end a command cleanly (simulate releases its names, stream its
/// straps; exit status 0).
///
/// The signals arrive through swift-service-lifecycle's `UnixSignalsSequence` (a
/// dispatch signal source), so nothing polls for them: an idle stream does not wake ten
/// times a second, which at 500 notifications/s was a measurable share of its CPU.
public struct SignalWaiter: Sendable {
    let signals: UnixSignalsSequence

    public static func install() async -> SignalWaiter {
        SignalWaiter(signals: await UnixSignalsSequence(trapping: .sigint, .sigterm))
    }

    /// Returns at the first SIGINT or SIGTERM, or when the calling task is cancelled.
    public func wait() async {
        for await _ in signals { return }
    }
}

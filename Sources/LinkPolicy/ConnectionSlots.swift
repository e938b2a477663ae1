// SPDX-License-Identifier: MIT

/// How many links an adapter can hold. Controllers differ (a Pi's built-in radio
/// manages far fewer than its advertised maximum once Wi-Fi shares it), so the
/// configured number is only the start: a rejection for lack of resources lowers the
/// limit to what was actually held, and after a quiet spell one more is tried again.
public struct ConnectionSlots: Sendable, Hashable {
    public let configured: Int
    public private(set) var limit: Int
    public private(set) var inUse = 0
    /// Seconds after a rejection before probing one slot higher.
    public var probeAfter: Double
    private var loweredAt: Double?

    public init(configured: Int, probeAfter: Double = 600) {
        self.configured = max(1, configured)
        self.limit = max(1, configured)
        self.probeAfter = probeAfter
    }

    public var hasFree: Bool { inUse < limit }

    public mutating func acquire() -> Bool {
        guard hasFree else { return false }
        inUse += 1
        return true
    }

    public mutating func release() {
        inUse = max(0, inUse - 1)
    }

    /// The adapter refused a link for lack of resources while `inUse` were held
    /// (not counting the refused one): that is the real limit for now.
    public mutating func rejected(at now: Double) {
        limit = max(1, min(limit, inUse))
        loweredAt = now
    }

    /// Raises a learned limit by one after `probeAfter` seconds without a rejection.
    public mutating func probe(now: Double) {
        guard let at = loweredAt, limit < configured, now - at >= probeAfter else { return }
        limit += 1
        loweredAt = limit < configured ? now : nil
    }
}

// SPDX-License-Identifier: MIT

/// How many LE links one adapter can hold, learned from where its connects fail.
///
/// Controllers differ (a Pi's built-in radio holds roughly 5 to 10 links, USB dongles
/// other numbers) and BlueZ 5.66 words a refusal for lack of resources exactly like a
/// radio failure (`le-connection-abort-by-local`). What tells them apart is where the
/// failures happen: connects that fail whenever the adapter holds N links, from more
/// than one strap, while connects succeed below N, mean the limit is N. Noise fails at
/// any count and is interrupted by successes; a full controller fails at one count.
///
/// Both ways: the limit is lowered when refusals show it, and when straps wait and the
/// adapter has been stable for `probeAfter`, one link above it is tried. A failed probe
/// doubles the wait before the next (up to `probeCap`); a probe that links raises the
/// limit. The configured `ceiling` is an upper bound, never the answer.
public struct LinkLimit: Sendable {
    public struct Settings: Sendable, Hashable {
        /// Distinct straps refused at one link count that make it the limit, when the
        /// adapter never held more (one more below the most it ever held). One strap
        /// alone never does: it could be out of range or broken, and must not cap an
        /// adapter for the whole class.
        public var distinctRefusals: Int
        /// Stable seconds with straps waiting before one link above the limit is tried.
        public var probeAfter: Double
        public var probeCap: Double

        public init(distinctRefusals: Int = 2, probeAfter: Double = 60, probeCap: Double = 1800) {
            self.distinctRefusals = distinctRefusals
            self.probeAfter = probeAfter
            self.probeCap = probeCap
        }
    }

    /// What a failed connect says about the adapter.
    public enum Verdict: Sendable, Hashable {
        /// Not about capacity (no link held, or a kind a full controller does not give).
        case notCapacity
        /// At the highest count the adapter ever held: maybe the limit, not yet proven.
        case suspect
        /// This strap was refused at this count before, and no other strap was: more
        /// likely the strap than the adapter, so it backs off as for any failure.
        case repeated
        /// The refusals proved it: the limit is now this many links.
        case learned(Int)
    }

    public let settings: Settings
    public let ceiling: Int
    /// Links allowed now.
    public private(set) var limit: Int
    /// What refusals (or a successful probe) established; nil while never refused.
    public private(set) var learned: Int?
    /// Established links.
    public private(set) var held = 0
    /// Connects granted and not finished yet.
    public private(set) var pending = 0
    /// Most links held at once since this adapter was first seen.
    public private(set) var mostHeld = 0
    /// One link above the learned limit is being tried.
    public private(set) var probing = false
    private var refusals: (atHeld: Int, devices: [String: Int])?
    private var stableSince: Double
    private var probeWait: Double

    /// - Parameters:
    ///   - ceiling: the configured bound (`max_links`), at least 1.
    ///   - remembered: the limit learned on an earlier run, if any.
    public init(ceiling: Int, remembered: Int? = nil, settings: Settings = Settings(), now: Double = 0) {
        self.settings = settings
        self.ceiling = max(1, ceiling)
        let start = remembered.map { min(max(1, $0), max(1, ceiling)) }
        self.learned = start
        self.limit = start ?? max(1, ceiling)
        self.stableSince = now
        self.probeWait = settings.probeAfter
    }

    public var inUse: Int { held + pending }
    /// Connects granted ahead: enough to keep the adapter's turn busy, few enough that a
    /// limit learned meanwhile does not leave a queue of connects bound to be refused.
    public static let maxPending = 2
    public var free: Int { max(0, min(limit - inUse, Self.maxPending - pending)) }

    /// Whether a granted connect should still go ahead: the limit may have been learned
    /// lower since it was granted.
    public var roomForOneMore: Bool { held < limit }

    /// Reserves room for one connect; false when the adapter is full. `existing`: the
    /// link is already up on the controller (left by an earlier run of the gateway, or
    /// made before bluetoothd restarted), so taking it over needs no room.
    public mutating func reserve(existing: Bool = false) -> Bool {
        guard existing || free > 0 else { return false }
        pending += 1
        return true
    }

    /// A reserved connect was abandoned before it said anything about the adapter.
    public mutating func cancel() {
        pending = max(0, pending - 1)
    }

    /// A reserved connect linked. Returns the new learned limit when a probe succeeded.
    @discardableResult
    public mutating func linked(now: Double) -> Int? {
        pending = max(0, pending - 1)
        held += 1
        mostHeld = max(mostHeld, held)
        if let r = refusals, held - 1 >= r.atHeld { refusals = nil }
        guard probing, held >= limit else { return nil }
        probing = false
        learned = limit
        probeWait = settings.probeAfter
        stableSince = now
        return limit
    }

    /// An established link ended.
    public mutating func unlinked() {
        held = max(0, held - 1)
    }

    /// A reserved connect of `device` failed with `kind` while `held` links were up.
    public mutating func refused(device: String, couldBeCapacity: Bool, now: Double) -> Verdict {
        pending = max(0, pending - 1)
        let n = held
        guard couldBeCapacity, n > 0 else { return .notCapacity }
        // Already known: a connect granted before the limit was learned.
        if n >= limit, !probing { return .suspect }
        let atTop = n >= mostHeld
        if refusals?.atHeld != n { refusals = (n, [:]) }
        refusals!.devices[device, default: 0] += 1
        let distinct = refusals!.devices.count
        // Below the most ever held the adapter has proven more room: it takes more
        // evidence to believe it shrank (radio noise clusters less).
        let extra = atTop ? 0 : 1
        guard distinct >= settings.distinctRefusals + extra else {
            if refusals!.devices[device]! > 1 { return .repeated }
            return atTop ? .suspect : .notCapacity
        }
        if probing { probeWait = min(settings.probeCap, probeWait * 2) }
        probing = false
        limit = n
        learned = n
        refusals = nil
        stableSince = now
        return .learned(n)
    }

    /// Tries one link above the limit when straps wait for this adapter, it is full, and
    /// nothing changed its limit for a while. Returns true when the limit was raised.
    public mutating func probe(now: Double, demand: Bool) -> Bool {
        guard demand, !probing, limit < ceiling, inUse >= limit, now - stableSince >= probeWait else { return false }
        limit += 1
        probing = true
        stableSince = now
        return true
    }

    /// Seconds until the next probe may run (for status); nil when none is due.
    public func nextProbe(now: Double) -> Double? {
        guard !probing, limit < ceiling else { return nil }
        return max(0, probeWait - (now - stableSince))
    }
}

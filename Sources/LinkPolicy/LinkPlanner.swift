// SPDX-License-Identifier: MIT

/// Who gets a link when there are more straps than links, and on which adapter.
///
/// The rule, in order: straps that cannot be heard any other way (no heart rate in
/// their advertisements) first; then paired members before unknown straps; then the
/// configured `priority` list; then a strap whose delivering link just dropped (so a
/// class keeps its links through the everyday drops); then the longest waiting. A
/// strap is placed on the reachable adapter with the most free links, the stronger
/// signal breaking ties. A linked strap that can be heard by advertisement gives up
/// its link when a strap that cannot be heard otherwise waits and no adapter it
/// reaches has room.
public enum LinkPlanner {
    /// An adapter a strap's device object lives on, with the signal heard there.
    public struct Reach: Sendable, Hashable {
        public var adapter: String
        public var rssi: Int16?

        public init(adapter: String, rssi: Int16? = nil) {
            self.adapter = adapter
            self.rssi = rssi
        }
    }

    /// What orders straps: the same for waiting and linked ones.
    public struct Standing: Sendable, Hashable {
        /// Its advertisements carry heart rate, so it is followed without a link.
        public var heardByAdvertisement: Bool
        public var paired: Bool
        /// Index in the configured priority list; nil when not on it.
        public var rank: Int?

        public init(heardByAdvertisement: Bool = false, paired: Bool = false, rank: Int? = nil) {
            self.heardByAdvertisement = heardByAdvertisement
            self.paired = paired
            self.rank = rank
        }
    }

    public struct Candidate: Sendable, Hashable {
        public var address: String
        public var standing: Standing
        /// Its last link delivered data and dropped recently.
        public var justDropped: Bool
        public var waitingSince: Double
        public var reach: [Reach]

        public init(address: String, standing: Standing, justDropped: Bool = false, waitingSince: Double, reach: [Reach]) {
            self.address = address
            self.standing = standing
            self.justDropped = justDropped
            self.waitingSince = waitingSince
            self.reach = reach
        }
    }

    public struct Link: Sendable, Hashable {
        public var address: String
        public var adapter: String
        public var standing: Standing

        public init(address: String, adapter: String, standing: Standing) {
            self.address = address
            self.adapter = adapter
            self.standing = standing
        }
    }

    public struct Plan: Sendable, Hashable {
        /// Strap address → adapter name.
        public var grants: [String: String] = [:]
        /// Linked strap address → the waiting strap it gives its link to.
        public var yields: [String: String] = [:]
    }

    /// Sort key: smaller goes first.
    static func key(_ s: Standing) -> (Int, Int, Int) {
        (s.heardByAdvertisement ? 1 : 0, s.paired ? 0 : 1, s.rank ?? Int.max)
    }

    public static func goesBefore(_ a: Candidate, _ b: Candidate) -> Bool {
        let ka = key(a.standing), kb = key(b.standing)
        if ka != kb { return ka < kb }
        if a.justDropped != b.justDropped { return a.justDropped }
        if a.waitingSince != b.waitingSince { return a.waitingSince < b.waitingSince }
        return a.address < b.address
    }

    /// - Parameters:
    ///   - waiting: straps ready for a link now (not backing off).
    ///   - free: links that may be granted now per adapter name (ready adapters only).
    ///   - full: adapters at their limit (links held and under way). Only there does a
    ///     strap heard by advertisement give way: an adapter with room that merely has
    ///     enough connects queued fills without anyone losing a link. Nil: those with
    ///     nothing free.
    ///   - links: established links (and connects under way), for yielding.
    ///   - yielding: linked straps already asked to give up their link.
    public static func plan(waiting: [Candidate], free: [String: Int], full: Set<String>? = nil, links: [Link],
                            yielding: Set<String> = []) -> Plan {
        let full = full ?? Set(free.filter { $0.value <= 0 }.map(\.key))
        var plan = Plan()
        var room = free
        // Links already giving up their place: each frees room for one waiting strap.
        var unclaimed = yielding
        var asked = yielding
        for c in waiting.sorted(by: goesBefore) {
            let options = c.reach.filter { (room[$0.adapter] ?? 0) > 0 }
            if let best = options.max(by: { a, b in
                let fa = room[a.adapter] ?? 0, fb = room[b.adapter] ?? 0
                if fa != fb { return fa < fb }
                return (a.rssi ?? -127) < (b.rssi ?? -127)
            }) {
                plan.grants[c.address] = best.adapter
                room[best.adapter, default: 0] -= 1
                continue
            }
            guard !c.standing.heardByAdvertisement, c.reach.allSatisfy({ full.contains($0.adapter) }) else { continue }
            let reachable = Set(c.reach.map(\.adapter))
            if let l = links.first(where: { unclaimed.contains($0.address) && reachable.contains($0.adapter) }) {
                unclaimed.remove(l.address)
                continue
            }
            let givers = links.filter { $0.standing.heardByAdvertisement && reachable.contains($0.adapter) && !asked.contains($0.address) }
            guard let giver = givers.max(by: { a, b in
                key(a.standing) != key(b.standing) ? key(a.standing) < key(b.standing) : a.address < b.address
            }) else { continue }
            plan.yields[giver.address] = c.address
            asked.insert(giver.address)
        }
        return plan
    }
}
